#!/bin/sh
# Grows tasks/generated/ on the upstream repositories, fastest test suites
# first: SEED (default 3) with the mutation kinds KINDS (default all), COUNT
# tasks per repository at most. Tasks already there (other seeds) are not
# made again. Runs niced, one repository at a time, WORKERS workers (1); each
# validated candidate is logged to results/validation/gen-DATE-seedSEED.log.
set -eu
cd "$(dirname "$0")/.."
SEED=${SEED:-3}
KINDS=${KINDS:-all}
COUNT=${COUNT:-40}
REPOS=${REPOS:-"jsmn inih sds idna six tomli more-itertools cjson"}
for repo in $REPOS; do
  nice -n 19 bin/harness gen --repo "$repo" --count "$COUNT" --seed "$SEED" --mutations "$KINDS" \
    --log "results/validation/gen-$(date -u +%Y-%m-%d)-seed$SEED.log" \
    --workers "${WORKERS:-1}" --progress plain || true
done
