#!/bin/sh
# Installs what `make bench` needs beyond the build: Debian's PyTorch (CPU)
# and NumPy, for the baseline in bench/torch_model.py and the safetensors
# compatibility check, and bubblewrap, the baseline of the sandbox startup line.
# Idempotent: does nothing when all are present.
# Only the benchmarks use these; the build and the tests never need them.
set -eu
PKGS="python3-torch python3-numpy bubblewrap"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "install-bench-deps: missing Debian packages:$missing (run as root, or: sudo apt-get install$missing)" >&2
  exit 1
fi
echo "install-bench-deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y -qq --no-install-recommends $missing >/dev/null 2>&1; then
  apt-get update -qq >/dev/null 2>&1 || true
  if ! apt-get install -y -qq --no-install-recommends $missing >/dev/null; then
    echo "install-bench-deps: could not install$missing; the benchmarks will report baseline null" >&2
    exit 1
  fi
fi
