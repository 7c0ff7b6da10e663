#!/bin/sh
# Regenerates tasks/generated/, 28 validated mutation tasks per repository
# with seed 1 and the operator mutations (the committed gen1 corpus). Same seed
# and kinds, same tasks.
set -eu
cd "$(dirname "$0")/.."
COUNT=${COUNT:-28}
for repo in $(ls repos); do
  bin/harness gen --repo "$repo" --count "$COUNT" --seed 1 --mutations ops --progress plain
done
