#!/usr/bin/env bash
# Build a release (DEBUG_LEVEL=0, no assertions) db_bench once, into the cache the tuner searches:
#   ${XDG_CACHE_HOME:-~/.cache}/rocksdb-tuner/db_bench/<version>-release/db_bench
# Source: Debian's rocksdb source package (a deb-src entry for this system's suite is added if none
# exists), or ROCKSDB_SRC=PATH for your own RocksDB checkout (any version).
set -euo pipefail

cache="${XDG_CACHE_HOME:-$HOME/.cache}/rocksdb-tuner/db_bench"
jobs="$(nproc)"
sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
apt_install() { DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null; }

install_build_deps() {
  local missing=()
  for pkg in build-essential dpkg-dev libsnappy-dev libzstd-dev liblz4-dev zlib1g-dev libbz2-dev libgflags-dev; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" || missing+=("$pkg")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "build-db-bench: installing ${missing[*]}"
    $sudo apt-get update -qq && apt_install "${missing[@]}"
  fi
}

ensure_deb_src() {
  if grep -rqsE '^(deb-src|Types:.*deb-src)' /etc/apt/sources.list /etc/apt/sources.list.d/; then return; fi
  . /etc/os-release
  local uri="http://deb.debian.org/debian"
  echo "build-db-bench: adding a deb-src entry for ${VERSION_CODENAME} (/etc/apt/sources.list.d/rocksdb-tuner-src.sources)"
  printf 'Types: deb-src\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    "$uri" "$VERSION_CODENAME" | $sudo tee /etc/apt/sources.list.d/rocksdb-tuner-src.sources >/dev/null
  $sudo apt-get update -qq
}

build_in() {  # $1: RocksDB source tree
  echo "build-db-bench: DEBUG_LEVEL=0 make -j${jobs} db_bench in $1 (about 12 minutes on 2 cores)"
  # DISABLE_WARNING_AS_ERROR: gcc 12 flags xxhash's AVX-512 path (-Werror=maybe-uninitialized) in 7.8.3.
  make -C "$1" DEBUG_LEVEL=0 DISABLE_WARNING_AS_ERROR=1 -j"$jobs" db_bench >"$1/build-db_bench.log" 2>&1 \
    || { tail -n 30 "$1/build-db_bench.log" >&2; echo "build-db-bench: build failed, log: $1/build-db_bench.log" >&2; exit 1; }
  local version
  version="$("$1/db_bench" --version | awk '{print $NF}')"
  mkdir -p "$cache/${version}-release"
  cp "$1/db_bench" "$cache/${version}-release/db_bench.tmp"
  mv "$cache/${version}-release/db_bench.tmp" "$cache/${version}-release/db_bench"
  echo "build-db-bench: release db_bench ${version} at $cache/${version}-release/db_bench"
}

install_build_deps
if [ -n "${ROCKSDB_SRC:-}" ]; then
  [ -f "$ROCKSDB_SRC/Makefile" ] || { echo "build-db-bench: ROCKSDB_SRC=$ROCKSDB_SRC has no Makefile" >&2; exit 2; }
  build_in "$ROCKSDB_SRC"
  exit 0
fi
if ls "$cache"/*-release/db_bench >/dev/null 2>&1; then
  echo "build-db-bench: already built: $(ls "$cache"/*-release/db_bench | tr '\n' ' ')"
  exit 0
fi
ensure_deb_src
src="$cache/src"
mkdir -p "$src"
if ! ls -d "$src"/rocksdb-*/ >/dev/null 2>&1; then
  echo "build-db-bench: fetching Debian's rocksdb source package"
  (cd "$src" && apt-get source -qq rocksdb >/dev/null)
fi
build_in "$(ls -d "$src"/rocksdb-*/ | head -n 1)"
