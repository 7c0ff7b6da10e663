#!/bin/sh
# Installs the Debian packages the build and the test suite need.
# Idempotent: does nothing (and needs no network) when everything is present.
set -eu
PKGS="build-essential pkg-config git libgit2-dev libseccomp-dev libopenblas-dev check libcjson-dev libcurl4-openssl-dev libmicrohttpd-dev python3 python3-pytest openmpi-bin libopenmpi-dev"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "install-deps: missing Debian packages:$missing (run as root, or: sudo apt-get install$missing)" >&2
  exit 1
fi
echo "install-deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends $missing >/dev/null
