#!/usr/bin/env node
// env_client.mjs - a client of `harness serve` (docs/env-server.md) on
// Node 20's built-ins (fetch), no packages.
//
// As a module:
//   import { EnvClient } from "./env_client.mjs";
//   const env = new EnvClient("http://127.0.0.1:8100", process.env.RL_ENV_TOKEN);
//   const ep = await env.reset("leapyear", { seed: 1 });       // {episode_id, messages, tools, info}
//   const out = await env.step(ep.episode_id, assistantText);  // {messages, done, reward, info}
//
// As a program it replays the moves of recorded episodes (the oracle's,
// from `harness run --policy oracle`) through the server, K open at once,
// and checks every reward against the recorded one:
//   node env_client.mjs --url URL --replay REF.jsonl [--episodes N] [--parallel K]
//                       [--as-messages] [--token-env VAR]
// Exit 0 when every episode ended with its recorded reward, 1 otherwise,
// 2 on a usage error.
import { readFileSync } from "node:fs";
import { argv, env as procEnv, exit, stderr } from "node:process";
import { pathToFileURL } from "node:url";

export class EnvError extends Error {
  constructor(status, param, message) {
    super(`HTTP ${status}: ${message}`);
    this.status = status;
    this.param = param;
  }
}

export class EnvClient {
  constructor(baseUrl, token = null, { retries = 5 } = {}) {
    this.base = baseUrl.replace(/\/+$/, "");
    this.token = token;
    this.retries = retries;
  }

  async call(method, path, body) {
    const headers = {};
    if (body !== undefined) headers["Content-Type"] = "application/json";
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    for (let attempt = 0; ; attempt++) {
      const r = await fetch(this.base + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await r.text();
      if (r.status === 429 && attempt < this.retries) {
        // every episode slot is taken: wait for one to end
        await new Promise((res) => setTimeout(res, 1000 * Number(r.headers.get("retry-after") || 1)));
        continue;
      }
      if (!r.ok) {
        let e = { message: text, param: null };
        try {
          e = JSON.parse(text).error;
        } catch {}
        throw new EnvError(r.status, e.param, e.message);
      }
      return (r.headers.get("content-type") || "").startsWith("application/json") ? JSON.parse(text) : text;
    }
  }

  reset(task, { seed, config } = {}) {
    const body = { task };
    if (seed !== undefined) body.seed = seed;
    if (config) body.config = config;
    return this.call("POST", "/v1/reset", body);
  }
  step(episodeId, message, finishReason) {
    const body = { episode_id: episodeId, message };
    if (finishReason) body.finish_reason = finishReason;
    return this.call("POST", "/v1/step", body);
  }
  close(episodeId) {
    return this.call("POST", "/v1/close", { episode_id: episodeId });
  }
  state(episodeId) {
    return this.call("GET", `/v1/state?episode_id=${encodeURIComponent(episodeId)}`);
  }
  async tasks(select = "all") {
    return (await this.call("GET", `/v1/tasks?select=${encodeURIComponent(select)}`)).tasks;
  }
  health() {
    return this.call("GET", "/health");
  }
  metrics() {
    return this.call("GET", "/metrics");
  }
}

// One episode of ref's task and seed with its turns replayed: [reward, id].
async function play(env, ref, asMessages) {
  const ep = await env.reset(ref.task, { seed: ref.config.seed ?? 1 });
  if (ep.messages[0].role !== "system" || ep.messages[1].role !== "user") throw new Error("reset: expected system + user");
  const names = new Set(ep.tools.map((t) => t.function.name));
  for (const n of ["read_file", "edit_file", "run_tests", "submit"])
    if (!names.has(n)) throw new Error(`reset: tool ${n} missing`);
  const assistant = (ref.messages || []).filter((m) => m.role === "assistant");
  let out = null;
  for (let k = 0; k < ref.turns.length; k++) {
    let msg = ref.turns[k].generated;
    if (asMessages && k % 2 === 1 && k < assistant.length) {
      const { raw, ...m } = assistant[k]; // the fields only: the server renders the text
      msg = m;
    }
    out = await env.step(ep.episode_id, msg);
    if (out.done) break;
  }
  if (!out || !out.done) {
    await env.close(ep.episode_id);
    return [null, ep.episode_id];
  }
  const final = await env.state(ep.episode_id); // the finished episode's record, as the server wrote it
  if (final.episode_id !== ep.episode_id || final.reward !== out.reward)
    throw new Error(`${ep.episode_id}: state reward ${final.reward}, step reward ${out.reward}`);
  return [out.reward, ep.episode_id];
}

async function main(args) {
  const opt = { episodes: 0, parallel: 4, asMessages: false };
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--as-messages") opt.asMessages = true;
    else if (["--url", "--replay", "--episodes", "--parallel", "--token-env"].includes(a) && i + 1 < args.length)
      opt[a.slice(2).replace("-e", "E")] = args[++i];
    else {
      stderr.write(`env_client.mjs: ${a}: unexpected argument\n`);
      return 2;
    }
  }
  if (!opt.url || !opt.replay) {
    stderr.write("usage: node env_client.mjs --url URL --replay REF.jsonl [--episodes N] [--parallel K] [--as-messages] [--token-env VAR]\n");
    return 2;
  }
  const refs = readFileSync(opt.replay, "utf8").split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
  if (!refs.length) {
    stderr.write("env_client.mjs: --replay: no records\n");
    return 2;
  }
  const n = Number(opt.episodes) || refs.length;
  const env = new EnvClient(opt.url, opt.tokenEnv ? procEnv[opt.tokenEnv] : null);
  let next = 0, played = 0;
  const problems = [];
  const worker = async () => {
    while (next < n) {
      const ref = refs[next++ % refs.length];
      try {
        const [reward, id] = await play(env, ref, opt.asMessages);
        played++;
        if (reward !== ref.reward) problems.push(`${id} ${ref.task}: reward ${reward}, recorded ${ref.reward}`);
      } catch (e) {
        problems.push(`${ref.task}: ${e.message}`);
      }
    }
  };
  const t0 = Date.now();
  await Promise.all(Array.from({ length: Math.max(1, Number(opt.parallel)) }, worker));
  for (const p of problems) stderr.write(`env_client.mjs: ${p}\n`);
  console.log(`env_client.mjs: ${played} episodes, ${problems.length} problems, ${(Date.now() - t0) / 1000} s`);
  return problems.length === 0 && played === n ? 0 : 1;
}

if (import.meta.url === pathToFileURL(argv[1]).href) exit(await main(argv.slice(2)));
