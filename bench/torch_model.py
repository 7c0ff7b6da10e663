"""torch_model.py - the PyTorch baseline for bench/bench_model.c.

The same architecture as model/model.c, written plainly in PyTorch (CPU,
fp32): tied embeddings, per layer RMSNorm -> q/k/v projections -> per-head
q/k RMSNorm -> rotary embeddings ("rotate half") -> causal grouped-query
attention -> o projection -> residual; RMSNorm -> SwiGLU MLP -> residual;
final RMSNorm; logits = h @ wte^T. Tensor names and layouts match the C
checkpoints, so `--logp` can load one (through bench/st_read.py) and
recompute its log-probabilities: a check that both sides compute the same
function.

  python3 bench/torch_model.py --train B T STEPS   # training tokens/s
  python3 bench/torch_model.py --gen BATCH PROMPT NEW REPS  # KV-cache generation tokens/s (median of REPS)
  python3 bench/torch_model.py --logp CKPT TOKENS_FILE TEMP  # logprobs of a C checkpoint

Each mode prints one JSON object. Run with Debian's /usr/bin/python3 and
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


class RMSNorm(nn.Module):
    def __init__(self, n, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope_tables(cfg, T):
    hd = cfg.d_model // cfg.n_head
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
        d, hd = cfg.d_model, cfg.d_model // cfg.n_head
        self.nh, self.nkv, self.hd = cfg.n_head, cfg.n_kv_head, hd
        self.q_proj = nn.Linear(d, cfg.n_head * hd, bias=False)
        self.k_proj = nn.Linear(d, cfg.n_kv_head * hd, bias=False)
        self.v_proj = nn.Linear(d, cfg.n_kv_head * hd, bias=False)
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
        return x @ self.model.embed_tokens.weight.t()


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
            "threads": torch.get_num_threads(), "torch": torch.__version__}


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
def bench_gen(batch, prompt, new, reps, temperature=1.0, top_p=0.95):
    """One warm-up run, then the median of `reps` timed runs (as bench_model.c)."""
    cfg = Config()
    torch.manual_seed(0)
    m = Model(cfg).eval()
    gen_once(m, cfg, batch, prompt, new, temperature, top_p)
    runs = sorted(gen_once(m, cfg, batch, prompt, new, temperature, top_p) for _ in range(reps))
    dt, dc = runs[len(runs) // 2]
    return {"mode": "gen", "batch": batch, "prompt": prompt, "new": new, "reps": reps,
            "seconds": dt, "tokens_per_s": batch * new / dt, "tokens_per_cpu_s": batch * new / dc,
            "threads": torch.get_num_threads()}


@torch.no_grad()
def logp_of_ckpt(path, tokens_file, temperature):
    import st_read
    meta, tensors = st_read.read(path)
    cfg = Config()
    for key in ("vocab", "d_model", "n_layer", "n_head", "n_kv_head", "d_ff", "max_seq",
                "qk_norm"):
        setattr(cfg, key, int(meta[key]))
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


def main(argv):
    torch.set_num_threads(os.cpu_count() or 1)
    if len(argv) == 4 and argv[0] == "--train":
        res = bench_train(int(argv[1]), int(argv[2]), int(argv[3]))
    elif len(argv) == 5 and argv[0] == "--gen":
        res = bench_gen(int(argv[1]), int(argv[2]), int(argv[3]), int(argv[4]))
    elif len(argv) == 4 and argv[0] == "--logp":
        res = logp_of_ckpt(argv[1], argv[2], float(argv[3]))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    print(json.dumps(res))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
