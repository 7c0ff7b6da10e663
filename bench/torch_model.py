"""torch_model.py - the PyTorch baseline for bench/bench_model.c.

The same architecture as model/model.c, written plainly in PyTorch (CPU,
fp32): per layer RMSNorm -> q/k/v projections (with biases for Qwen2) ->
per-head q/k RMSNorm (Qwen3) -> rotary embeddings ("rotate half") -> causal
grouped-query attention -> o projection -> residual; RMSNorm -> SwiGLU MLP
-> residual; final RMSNorm; logits = h @ wte^T (tied) or h @ lm_head^T.
Tensor names and layouts match the C checkpoints and Hugging Face's Qwen3,
Qwen2 and Llama models, so `--logp` can load a C checkpoint and `--hf-logp`
a Hugging Face directory (both through bench/st_read.py) and recompute
log-probabilities: a check that both sides compute the same function.
`--hf-random` writes a small random checkpoint in Hugging Face layout for
the tests.

  python3 bench/torch_model.py --train B T STEPS   # training tokens/s
  python3 bench/torch_model.py --gen BATCH PROMPT NEW REPS [WARM_NEW]  # KV-cache generation
      tokens/s (median of REPS after a warm-up run of WARM_NEW new tokens, default NEW)
  python3 bench/torch_model.py --shape qwen3-0.6b --train ... | --gen ...  # the same at the
      shape of Qwen3-0.6B (bench/bench_hf.c)
  python3 bench/torch_model.py --logp CKPT TOKENS_FILE TEMP  # logprobs of a C checkpoint
  python3 bench/torch_model.py --hf-logp DIR TOKENS_FILE     # log-softmax rows (T-1 x vocab) of a HF directory
  python3 bench/torch_model.py --hf-random DIR ARCH KEY=VALUE...  # random HF checkpoint
      ARCH: Qwen3ForCausalLM, Qwen2ForCausalLM or LlamaForCausalLM; keys: vocab,
      d_model, n_layer, n_head, n_kv_head, head_dim, d_ff, tie (0/1), dtype
      (F32, BF16, F16), shards (files), seed; tokens=FILE also reloads the
      directory and adds the --hf-logp rows of those tokens
  python3 bench/torch_model.py --batch FILE   # each line of FILE is one of the
      commands above (torch starts once); one JSON line per command

Each mode prints one JSON object; --train and --gen include the process's
peak RSS ("peak_rss_mb", from getrusage). Run with Debian's /usr/bin/python3 and
python3-torch (scripts/install-bench-deps.sh).
"""
import json
import math
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class Config:
    vocab = 4096
    d_model = 256
    n_layer = 6
    n_head = 8
    n_kv_head = 4
    d_ff = 768
    max_seq = 4096
    qk_norm = 1
    rope_theta = 1e6
    norm_eps = 1e-6
    head_dim = 0   # 0: d_model // n_head
    untied = 0     # 1: a separate lm_head.weight
    qkv_bias = 0   # 1: q, k and v projections have biases (Qwen2)


# Qwen3-0.6B's shape (its config.json), with a 512-token window: only the
# rotary tables depend on the window.
SHAPES = {"qwen3-0.6b": dict(vocab=151936, d_model=1024, n_layer=28, n_head=16, n_kv_head=8,
                             head_dim=128, d_ff=3072, max_seq=512, qk_norm=1, untied=0,
                             qkv_bias=0, rope_theta=1e6, norm_eps=1e-6)}


def peak_rss_mb():
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def head_dim(cfg):
    return cfg.head_dim or cfg.d_model // cfg.n_head


class RMSNorm(nn.Module):
    def __init__(self, n, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope_tables(cfg, T):
    hd = head_dim(cfg)
    j = torch.arange(hd // 2, dtype=torch.float64)
    freq = cfg.rope_theta ** (-2.0 * j / hd)
    ang = torch.arange(T, dtype=torch.float64)[:, None] * freq[None, :]
    return ang.cos().float(), ang.sin().float()


def apply_rope(x, cos, sin):
    # x: (B, H, T, hd); pairs (j, j + hd/2)
    half = x.shape[-1] // 2
    a, b = x[..., :half], x[..., half:]
    return torch.cat([a * cos - b * sin, b * cos + a * sin], dim=-1)


class Attention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d, hd, bias = cfg.d_model, head_dim(cfg), bool(cfg.qkv_bias)
        self.nh, self.nkv, self.hd = cfg.n_head, cfg.n_kv_head, hd
        self.q_proj = nn.Linear(d, cfg.n_head * hd, bias=bias)
        self.k_proj = nn.Linear(d, cfg.n_kv_head * hd, bias=bias)
        self.v_proj = nn.Linear(d, cfg.n_kv_head * hd, bias=bias)
        self.o_proj = nn.Linear(cfg.n_head * hd, d, bias=False)
        self.q_norm = RMSNorm(hd, cfg.norm_eps) if cfg.qk_norm else None
        self.k_norm = RMSNorm(hd, cfg.norm_eps) if cfg.qk_norm else None

    def forward(self, x, cos, sin, cache=None):
        B, T, _ = x.shape
        q = self.q_proj(x).view(B, T, self.nh, self.hd)
        k = self.k_proj(x).view(B, T, self.nkv, self.hd)
        v = self.v_proj(x).view(B, T, self.nkv, self.hd)
        if self.q_norm is not None:
            q, k = self.q_norm(q), self.k_norm(k)
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        if cache is not None:
            if "k" in cache:
                k = torch.cat([cache["k"], k], dim=2)
                v = torch.cat([cache["v"], v], dim=2)
            cache["k"], cache["v"] = k, v
        rep = self.nh // self.nkv
        k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
        S = k.shape[2]
        att = (q @ k.transpose(-2, -1)) / math.sqrt(self.hd)
        if T > 1:
            mask = torch.ones(T, S, dtype=torch.bool).tril(S - T)
            att = att.masked_fill(~mask, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, self.nh * self.hd)
        return self.o_proj(y)


class MLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.gate_proj = nn.Linear(cfg.d_model, cfg.d_ff, bias=False)
        self.up_proj = nn.Linear(cfg.d_model, cfg.d_ff, bias=False)
        self.down_proj = nn.Linear(cfg.d_ff, cfg.d_model, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Layer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.input_layernorm = RMSNorm(cfg.d_model, cfg.norm_eps)
        self.self_attn = Attention(cfg)
        self.post_attention_layernorm = RMSNorm(cfg.d_model, cfg.norm_eps)
        self.mlp = MLP(cfg)

    def forward(self, x, cos, sin, cache=None):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin, cache)
        return x + self.mlp(self.post_attention_layernorm(x))


class Inner(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.embed_tokens = nn.Embedding(cfg.vocab, cfg.d_model)
        self.layers = nn.ModuleList([Layer(cfg) for _ in range(cfg.n_layer)])
        self.norm = RMSNorm(cfg.d_model, cfg.norm_eps)


class Model(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.model = Inner(cfg)
        if cfg.untied:
            self.lm_head = nn.Linear(cfg.d_model, cfg.vocab, bias=False)
        cos, sin = rope_tables(cfg, cfg.max_seq)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)
        for name, p in self.named_parameters():
            if p.dim() == 2:
                std = 0.02
                if name.endswith("o_proj.weight") or name.endswith("down_proj.weight"):
                    std = 0.02 / math.sqrt(2 * cfg.n_layer)
                nn.init.normal_(p, 0.0, std)

    def forward(self, idx, pos0=0, caches=None):
        T = idx.shape[1]
        cos, sin = self.cos[pos0:pos0 + T], self.sin[pos0:pos0 + T]
        x = self.model.embed_tokens(idx)
        for i, layer in enumerate(self.model.layers):
            x = layer(x, cos, sin, caches[i] if caches is not None else None)
        x = self.model.norm(x)
        head = self.lm_head.weight if self.cfg.untied else self.model.embed_tokens.weight
        return x @ head.t()


def bench_train(B, T, steps):
    cfg = Config()
    torch.manual_seed(0)
    m = Model(cfg)
    decay = [p for n, p in m.named_parameters() if p.dim() == 2]
    no_decay = [p for n, p in m.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=3e-4, betas=(0.9, 0.95))
    x = torch.randint(0, cfg.vocab, (B, T + 1))
    inp, tgt = x[:, :-1], x[:, 1:]

    def step():
        logits = m(inp)
        logp = F.log_softmax(logits, dim=-1).gather(-1, tgt[..., None]).squeeze(-1)
        loss = -logp.mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
        opt.step()
        return loss.item()

    step()  # warm-up
    t0, c0 = time.time(), time.process_time()
    for _ in range(steps):
        step()
    dt, dc = time.time() - t0, time.process_time() - c0
    return {"mode": "train", "B": B, "T": T, "steps": steps, "seconds": dt,
            "tokens_per_s": B * T * steps / dt, "tokens_per_cpu_s": B * T * steps / dc,
            "threads": torch.get_num_threads(), "torch": torch.__version__,
            "peak_rss_mb": peak_rss_mb()}


@torch.no_grad()
def gen_once(m, cfg, batch, prompt, new, temperature, top_p):
    idx = torch.randint(0, cfg.vocab, (batch, prompt))
    gen = torch.Generator().manual_seed(0)
    t0, c0 = time.time(), time.process_time()
    caches = [dict() for _ in range(cfg.n_layer)]
    logits = m(idx, 0, caches)[:, -1]
    pos = prompt
    out = []
    for _ in range(new):
        probs = F.softmax(logits / temperature, dim=-1)
        sp, si = probs.sort(dim=-1, descending=True)
        keep = (sp.cumsum(-1) - sp) < top_p
        sp = sp * keep
        choice = torch.multinomial(sp / sp.sum(-1, keepdim=True), 1, generator=gen)
        tok = si.gather(-1, choice)
        out.append(tok)
        logits = m(tok, pos, caches)[:, -1]
        pos += 1
    return time.time() - t0, time.process_time() - c0


@torch.no_grad()
def bench_gen(batch, prompt, new, reps, warm_new=None, temperature=1.0, top_p=0.95):
    """One warm-up run (of warm_new new tokens, default new), then the median
    of `reps` timed runs (as bench_model.c)."""
    cfg = Config()
    torch.manual_seed(0)
    m = Model(cfg).eval()
    gen_once(m, cfg, batch, prompt, new if warm_new is None else warm_new, temperature, top_p)
    runs = sorted(gen_once(m, cfg, batch, prompt, new, temperature, top_p) for _ in range(reps))
    dt, dc = runs[len(runs) // 2]
    return {"mode": "gen", "batch": batch, "prompt": prompt, "new": new, "reps": reps,
            "seconds": dt, "tokens_per_s": batch * new / dt, "tokens_per_cpu_s": batch * new / dc,
            "threads": torch.get_num_threads(), "peak_rss_mb": peak_rss_mb()}


@torch.no_grad()
def logp_of_ckpt(path, tokens_file, temperature):
    import st_read
    meta, tensors = st_read.read(path)
    cfg = Config()
    for key in ("vocab", "d_model", "n_layer", "n_head", "n_kv_head", "d_ff", "max_seq",
                "qk_norm"):
        setattr(cfg, key, int(meta[key]))
    for key in ("head_dim", "untied", "qkv_bias"):
        setattr(cfg, key, int(meta.get(key, 0)))
    cfg.rope_theta = float(meta["rope_theta"])
    cfg.norm_eps = float(meta["norm_eps"])
    m = Model(cfg)
    state = {name: torch.tensor(vals.tolist(), dtype=torch.float32).view(*shape)
             for name, (shape, vals) in tensors.items()}
    missing, unexpected = m.load_state_dict(state, strict=False)
    if missing or unexpected:
        raise SystemExit("checkpoint does not match: missing %s unexpected %s"
                         % (missing, unexpected))
    with open(tokens_file) as f:
        toks = [int(t) for t in f.read().split()]
    x = torch.tensor(toks)[None]
    logits = m(x[:, :-1]) / temperature
    lp = F.log_softmax(logits, -1).gather(-1, x[:, 1:, None]).squeeze(-1)[0]
    return {"mode": "logp", "logp": [float(v) for v in lp]}


ARCHS = ("Qwen3ForCausalLM", "Qwen2ForCausalLM", "LlamaForCausalLM")


def config_of_hf(hf):
    """A Hugging Face config.json (dict) -> Config."""
    arch = hf["architectures"][0]
    if arch not in ARCHS:
        raise SystemExit("architecture %s, expected one of %s" % (arch, ", ".join(ARCHS)))
    cfg = Config()
    cfg.vocab, cfg.d_model = hf["vocab_size"], hf["hidden_size"]
    cfg.n_layer, cfg.n_head = hf["num_hidden_layers"], hf["num_attention_heads"]
    cfg.n_kv_head = hf.get("num_key_value_heads", cfg.n_head)
    cfg.d_ff = hf["intermediate_size"]
    cfg.head_dim = hf.get("head_dim") or 0
    cfg.max_seq = min(hf.get("max_position_embeddings", 4096), 65536)
    cfg.rope_theta = hf.get("rope_theta", 10000.0)
    cfg.norm_eps = hf.get("rms_norm_eps", 1e-6)
    cfg.untied = 0 if hf.get("tie_word_embeddings", False) else 1
    cfg.qk_norm = 1 if arch == ARCHS[0] else 0
    cfg.qkv_bias = 1 if arch == ARCHS[1] else 0
    return cfg


def load_hf(path):
    import st_read
    hf, tensors = st_read.read_hf_dir(path)
    cfg = config_of_hf(hf)
    m = Model(cfg)
    state = {name: torch.tensor(vals.tolist(), dtype=torch.float32).view(*shape)
             for name, (shape, vals) in tensors.items()
             if not (name == "lm_head.weight" and not cfg.untied)}
    missing, unexpected = m.load_state_dict(state, strict=False)
    if missing or unexpected:
        raise SystemExit("checkpoint does not match: missing %s unexpected %s"
                         % (missing, unexpected))
    return m


@torch.no_grad()
def hf_logp(path, tokens_file):
    m = load_hf(path)
    with open(tokens_file) as f:
        toks = [int(t) for t in f.read().split()]
    x = torch.tensor(toks)[None]
    lp = F.log_softmax(m(x[:, :-1]), -1)[0]
    return {"mode": "hf-logp", "vocab": m.cfg.vocab, "logp": [[float(v) for v in row] for row in lp]}


def hf_random(path, arch, opts):
    """Random weights in Hugging Face layout: config.json plus one or more
    safetensors files (with the index when sharded). Values are larger than
    an initialization's so every tensor visibly moves the logits."""
    import st_read
    if arch not in ARCHS:
        raise SystemExit("architecture %s, expected one of %s" % (arch, ", ".join(ARCHS)))
    o = {"vocab": 160, "d_model": 48, "n_layer": 2, "n_head": 4, "n_kv_head": 2, "head_dim": 0,
         "d_ff": 64, "tie": 1, "dtype": "F32", "shards": 1, "seed": 1}
    for kv in opts:
        k, v = kv.split("=", 1)
        if k not in o and k != "tokens":
            raise SystemExit("unknown key %s" % k)
        o[k] = v if k in ("dtype", "tokens") else int(v)
    hf = {"architectures": [arch], "model_type": {"Qwen3ForCausalLM": "qwen3", "Qwen2ForCausalLM": "qwen2",
                                                  "LlamaForCausalLM": "llama"}[arch],
          "vocab_size": o["vocab"], "hidden_size": o["d_model"], "num_hidden_layers": o["n_layer"],
          "num_attention_heads": o["n_head"], "num_key_value_heads": o["n_kv_head"],
          "intermediate_size": o["d_ff"], "max_position_embeddings": 256, "rope_theta": 10000.0,
          "rms_norm_eps": 1e-5, "hidden_act": "silu", "tie_word_embeddings": bool(o["tie"]),
          "rope_scaling": None, "torch_dtype": "bfloat16"}
    if o["head_dim"]:
        hf["head_dim"] = o["head_dim"]
    cfg = config_of_hf(hf)
    torch.manual_seed(o["seed"])
    m = Model(cfg)
    tensors = {}
    dt = {"F32": torch.float32, "BF16": torch.bfloat16, "F16": torch.float16}[o["dtype"]]
    for name, p in m.state_dict().items():
        if name in ("cos", "sin"):
            continue
        if name.endswith("norm.weight"):
            w = 1.0 + 0.2 * torch.randn(p.shape)
        elif name.endswith(".bias"):
            w = 0.3 * torch.randn(p.shape)
        else:
            w = 0.15 * torch.randn(p.shape)
        raw = w.to(dt).contiguous().view(torch.int16 if dt != torch.float32 else torch.int32).numpy().tobytes()
        tensors[name] = (o["dtype"], list(p.shape), raw)
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "config.json"), "w") as f:
        json.dump(hf, f, indent=2)
    names = list(tensors)
    if o["shards"] <= 1:
        st_read.write(os.path.join(path, "model.safetensors"), tensors, {"format": "pt"})
    else:
        n = o["shards"]
        weight_map = {}
        for i in range(n):
            fname = "model-%05d-of-%05d.safetensors" % (i + 1, n)
            part = {k: tensors[k] for k in names[i::n]}
            st_read.write(os.path.join(path, fname), part, {"format": "pt"})
            weight_map.update({k: fname for k in part})
        with open(os.path.join(path, "model.safetensors.index.json"), "w") as f:
            json.dump({"metadata": {}, "weight_map": weight_map}, f, indent=2)
    res = {"mode": "hf-random", "dir": path, "tensors": len(tensors)}
    if "tokens" in o:
        res["logp"] = hf_logp(path, o["tokens"])["logp"]
    return res


def main(argv):
    torch.set_num_threads(os.cpu_count() or 1)
    if len(argv) == 2 and argv[0] == "--batch":
        with open(argv[1]) as f:
            for line in f:
                if line.strip():
                    rc = main(line.split())
                    if rc:
                        return rc
        return 0
    if len(argv) >= 2 and argv[0] == "--shape":
        if argv[1] not in SHAPES:
            print("unknown shape %s, expected one of %s" % (argv[1], ", ".join(SHAPES)),
                  file=sys.stderr)
            return 2
        for k, v in SHAPES[argv[1]].items():
            setattr(Config, k, v)
        argv = argv[2:]
    if len(argv) == 4 and argv[0] == "--train":
        res = bench_train(int(argv[1]), int(argv[2]), int(argv[3]))
    elif len(argv) in (5, 6) and argv[0] == "--gen":
        res = bench_gen(int(argv[1]), int(argv[2]), int(argv[3]), int(argv[4]),
                        int(argv[5]) if len(argv) == 6 else None)
    elif len(argv) == 4 and argv[0] == "--logp":
        res = logp_of_ckpt(argv[1], argv[2], float(argv[3]))
    elif len(argv) == 3 and argv[0] == "--hf-logp":
        res = hf_logp(argv[1], argv[2])
    elif len(argv) >= 3 and argv[0] == "--hf-random":
        res = hf_random(argv[1], argv[2], argv[3:])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    print(json.dumps(res))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
