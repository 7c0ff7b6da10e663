// sdk_test.js - the official OpenAI Node SDK drives `grpo serve`: chat
// with a tool, logprobs, streaming of both endpoints. Usage:
//   node sdk_test.js BASE_URL MODEL      (prints "ok" and exits 0, else throws)
const OpenAI = require("openai").default;
const assert = require("assert");

async function main() {
  const [baseURL, model] = process.argv.slice(2);
  const client = new OpenAI({ baseURL, apiKey: "none", maxRetries: 0, timeout: 60000 });

  const models = await client.models.list();
  assert.strictEqual(models.data[0].id, model);

  const tools = [{ type: "function", function: { name: "read_file", description: "read a file",
    parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } } }];
  const messages = [
    { role: "system", content: "fix the bug" },
    { role: "user", content: "leap.c is wrong" },
    { role: "assistant", content: null, tool_calls: [{ id: "call_0", type: "function",
      function: { name: "read_file", arguments: JSON.stringify({ path: "leap.c" }) } }] },
    { role: "tool", tool_call_id: "call_0", content: "int leap(int y);" },
  ];
  const chat = await client.chat.completions.create({ model, messages, tools, max_tokens: 16, seed: 4,
    logprobs: true, top_logprobs: 2 });
  const ch = chat.choices[0];
  assert.strictEqual(ch.message.role, "assistant");
  assert.ok(ch.logprobs.content.length >= 1);
  assert.strictEqual(ch.logprobs.content[0].top_logprobs.length, 2);
  assert.ok(["stop", "length", "tool_calls"].includes(ch.finish_reason));
  assert.ok(chat.usage.prompt_tokens > 0);

  // the same request streamed: the same tokens
  const stream = await client.chat.completions.create({ model, messages, tools, max_tokens: 16, seed: 4,
    logprobs: true, stream: true, stream_options: { include_usage: true } });
  let lps = [], text = "", finish = null, usage = null;
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    for (const c of chunk.choices) {
      if (c.delta && c.delta.content) text += c.delta.content;
      if (c.logprobs && c.logprobs.content) lps.push(...c.logprobs.content.map((e) => e.logprob));
      if (c.finish_reason) finish = c.finish_reason;
    }
  }
  assert.deepStrictEqual(lps.map((x) => x.toFixed(4)), ch.logprobs.content.map((e) => e.logprob.toFixed(4)));
  assert.strictEqual(finish, ch.finish_reason);
  assert.strictEqual(usage.completion_tokens, chat.usage.completion_tokens);

  // completions: token ids in, streamed text equals the whole answer
  const whole = await client.completions.create({ model, prompt: [20, 30, 40], max_tokens: 12, seed: 9, logprobs: 1 });
  let streamed = "";
  const cs = await client.completions.create({ model, prompt: [20, 30, 40], max_tokens: 12, seed: 9, stream: true });
  for await (const chunk of cs) for (const c of chunk.choices) streamed += c.text;
  assert.strictEqual(streamed, whole.choices[0].text);
  assert.strictEqual(whole.choices[0].logprobs.token_logprobs.length, whole.usage.completion_tokens);

  // an error surfaces as the SDK's typed error
  await assert.rejects(client.completions.create({ model: "nope", prompt: "x" }), (e) => e.status === 404);
  console.log("ok");
}
main().catch((e) => { console.error(e && e.stack ? e.stack : e); process.exit(1); });
