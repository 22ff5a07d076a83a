#!/usr/bin/env bash
# Build a release (DEBUG_LEVEL=0, no assertions, stripped) db_bench once, into the cache the tuner
# searches:   ${XDG_CACHE_HOME:-~/.cache}/rocksdb-tuner/db_bench/<version>-release/db_bench
# Several versions live side by side; `rocksdb-tuner tune --rocksdb-version V` picks one.
#
# Source, one of:
#   ROCKSDB_VERSION=X.Y   Debian's rocksdb source package of that version when a suite carries one (deb-src
#                         entries for bookworm, trixie and sid are added: source packages only, nothing
#                         installed on this system comes from them). Seen 2026-11: bookworm 7.8.3, trixie
#                         9.10.0, sid 9.11.2.
#                         Otherwise the crates.io package librocksdb-sys whose build metadata is X.Y.*
#                         (it ships RocksDB's whole source tree under rocksdb/), checked against the
#                         SHA-256 the registry's index lists. Seen 2026-11: 7.4.4, 7.9.2, 8.1.1, 8.5.3,
#                         8.6.7, 8.8.1, 8.9.1, 8.10.0, 9.9.3, 10.4.2, 11.8.1.
#   ROCKSDB_SRC=PATH      your own RocksDB checkout (any version); builds in place, never patched.
set -euo pipefail

cache="${XDG_CACHE_HOME:-$HOME/.cache}/rocksdb-tuner/db_bench"
here="$(cd "$(dirname "$0")" && pwd)"
want="${ROCKSDB_VERSION:-11.8}"
jobs="$(nproc)"
# PORTABLE=1: no -march=native, so a build runs on any x86-64 node of a cluster and versions compare
# with the same code generation. DISABLE_WARNING_AS_ERROR: gcc 12 flags xxhash's AVX-512 path in 7.8.3.
make_flags=(DEBUG_LEVEL=0 DISABLE_WARNING_AS_ERROR=1 PORTABLE=1)
sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
say() { echo "build-db-bench: $*"; }
apt_install() { DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null; }

install_build_deps() {
  local missing=()
  for pkg in build-essential dpkg-dev binutils libsnappy-dev libzstd-dev liblz4-dev zlib1g-dev libbz2-dev libgflags-dev; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" || missing+=("$pkg")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    say "installing ${missing[*]}"
    $sudo apt-get update -qq && apt_install "${missing[@]}"
  fi
}

# Source-package entries for the suites that carry rocksdb; Types: deb-src only, so no binary package
# of this system can come from a newer suite.
ensure_deb_src() {
  local list=/etc/apt/sources.list.d/rocksdb-tuner-src.sources
  local suites="bookworm trixie sid"
  if ! grep -qs "Suites: $suites" "$list"; then
    say "adding deb-src entries for $suites ($list; source packages only)"
    printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
      "$suites" | $sudo tee "$list" >/dev/null
    $sudo apt-get update -qq
  fi
}

# The newest Debian source version of rocksdb whose upstream version is $want or starts with "$want.".
debian_version() {
  apt-cache showsrc rocksdb 2>/dev/null | awk '/^Version:/ {print $2}' | sort -uV \
    | awk -v w="$want" '{up=$0; sub(/^[0-9]+:/, "", up); sub(/-[^-]*$/, "", up); if (up == w || index(up, w ".") == 1) v=$0} END {print v}'
}

built_version() {  # $1: binary -> its RocksDB version
  "$1" --version 2>/dev/null | awk '{print $NF}'
}

progress_build() {  # $1: source tree; prints compiled/total files and an ETA every 30 s
  local tree="$1" log="$1/build-db_bench.log" total started pid done rate eta
  total=$(make -C "$tree" -n "${make_flags[@]}" db_bench 2>/dev/null | grep -cE '(^| )-c ' || true)
  started=$(date +%s)
  make -C "$tree" "${make_flags[@]}" -j"$jobs" db_bench >"$log" 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    sleep 30
    kill -0 "$pid" 2>/dev/null || break
    done=$(grep -cE '^\s+CC(LD)?\s' "$log" || true)
    if [ "$done" -gt 0 ] && [ "$total" -gt 0 ]; then
      rate=$(( ($(date +%s) - started) * 1000 / done ))  # ms per file
      eta=$(( (total > done ? total - done : 0) * rate / 1000 ))
      printf 'build-db-bench: %d/%d files compiled, %dm%02ds elapsed, ETA %dm%02ds\n' "$done" "$total" \
        $(( ($(date +%s) - started) / 60 )) $(( ($(date +%s) - started) % 60 )) $((eta / 60)) $((eta % 60))
    fi
  done
  wait "$pid"
}

# What this script changes in db_bench's source before building (recorded as "patches" in BUILD_INFO.json):
#   waitforcompaction-no-sleep  From 8.7 on, db_bench's waitforcompaction sleeps 5 s ("give background
#     threads a chance to wake") before DB::WaitForCompact, which itself waits, under the DB mutex, until
#     no flush or compaction is scheduled or pending: exact without the sleep, which only cost every run
#     5 s of wall time (the tuner times the drain from the LOG, so no score changes). Before 8.7 the
#     sleeps are part of a polling heuristic and stay.
PATCHES_MARK="rocksdb-tuner: waitforcompaction-no-sleep"
patch_source() {  # $1: source tree -> prints the patches applied (a JSON list's items)
  local cc="$1/tools/db_bench_tool.cc"
  if grep -q "db.db->WaitForCompact(" "$cc" && [ "$(grep -c 'SleepForMicroseconds(5 \* 1000000);' "$cc")" = 1 ]; then
    sed -i "s|^\(\s*\)FLAGS_env->SleepForMicroseconds(5 \* 1000000);|\1// $PATCHES_MARK (DB::WaitForCompact waits exactly)|" "$cc"
  fi
  grep -q "$PATCHES_MARK" "$cc" && printf '"waitforcompaction-no-sleep"' || true
}

# library_defaults (objectives/build/library_defaults.cc) opens a DB with the library's default options, linked
# with the same tree's objects as static_lib (an archive of what db_bench compiled already): the tuner
# reads its OPTIONS and LOG to run db_bench with what an application gets (objectives/defaults.py).
build_library_probe() {  # $1: RocksDB source tree, $2: the build's directory in the cache
  local tree="$1" dest="$2" cxxflags ldflags
  make -C "$tree" "${make_flags[@]}" -j"$jobs" static_lib >>"$tree/build-db_bench.log" 2>&1 \
    || { tail -n 20 "$tree/build-db_bench.log" >&2; say "make static_lib failed, log: $tree/build-db_bench.log" >&2; exit 1; }
  cxxflags="$(sed -n 's/^PLATFORM_CXXFLAGS=//p' "$tree/make_config.mk")"
  ldflags="$(sed -n 's/^PLATFORM_LDFLAGS=//p' "$tree/make_config.mk")"
  # shellcheck disable=SC2086  # the flags are words
  ${CXX:-g++} -O2 $cxxflags -I"$tree/include" -o "$dest/library_defaults.tmp" "$here/library_defaults.cc" \
    "$tree/librocksdb.a" $ldflags
  strip --strip-unneeded "$dest/library_defaults.tmp"
  mv "$dest/library_defaults.tmp" "$dest/library_defaults"
}

build_in() {  # $1: RocksDB source tree; $2: the package it came from; $3: "patch" to patch it (our cached
              # copies only); $4: the SHA-256 of the package's source archive
  local tree="$1" origin="$2" sha256="${4:-}" started seconds version dest stamp patches=""
  [ "${3:-}" = patch ] && patches="$(patch_source "$tree")"
  stamp="$tree/.rocksdb-tuner-build-flags"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" != "${make_flags[*]}" ]; then
    say "objects in $tree were built with other flags ($(cat "$stamp")): make clean"
    make -C "$tree" clean >/dev/null 2>&1 || true
  fi
  echo "${make_flags[*]}" >"$stamp"
  say "${make_flags[*]} make -j${jobs} db_bench in $tree (about 25 minutes on 2 cores; progress every 30 s)"
  started=$(date +%s)
  if ! progress_build "$tree"; then
    tail -n 30 "$tree/build-db_bench.log" >&2
    say "build failed, log: $tree/build-db_bench.log" >&2
    exit 1
  fi
  seconds=$(( $(date +%s) - started ))
  version="$(built_version "$tree/db_bench")"
  dest="$cache/${version}-release"
  # nothing compiled (a build completed before, now given library_defaults): its build time stays
  if ! grep -qE '^\s+CC\s' "$tree/build-db_bench.log" && grep -qs '"build_seconds"' "$dest/BUILD_INFO.json"; then
    seconds="$(sed -n 's/.*"build_seconds": \([0-9]*\).*/\1/p' "$dest/BUILD_INFO.json")"
  fi
  mkdir -p "$dest"
  strip --strip-unneeded -o "$dest/db_bench.tmp" "$tree/db_bench"
  mv "$dest/db_bench.tmp" "$dest/db_bench"
  say "library_defaults: a DB opened with the library's default options (make static_lib, then g++)"
  build_library_probe "$tree" "$dest"
  printf '{"version": "%s", "package": "%s", "source_sha256": "%s", "make_flags": "%s", "patches": [%s], "library_defaults": "library_defaults", "compiler": "%s", "build_seconds": %d, "built": "%s"}\n' \
    "$version" "$origin" "$sha256" "${make_flags[*]}" "$patches" "$(${CXX:-g++} --version | head -n 1)" "$seconds" \
    "$(date -u +%FT%TZ)" >"$dest/BUILD_INFO.json"
  say "release db_bench ${version} at $dest/db_bench ($(du -h "$dest/db_bench" | cut -f1), stripped), built in $((seconds / 60))m$(printf %02d $((seconds % 60)))s"
}

# When the mirror no longer serves the .dsc of the suite's version (seen for trixie's and sid's), fetch
# the two tarballs the index lists, check their SHA-256 against it, and unpack as dpkg-source would:
# the upstream tree, debian/ inside it, and Debian's patches applied in series order.
unpack_from_pool() {  # $1: Debian version, $2: upstream version
  local debver="$1" upstream="$2" dir mirror name sum tree
  dir=$(apt-cache showsrc "rocksdb" | awk -v v="$debver" '/^Version:/ {on = ($2 == v)} on && /^Directory:/ {print $2; exit}')
  mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/rocksdb-tuner-src.sources)
  say "the mirror has no .dsc for $debver: fetching its tarballs from $mirror/$dir"
  apt-cache showsrc rocksdb | awk -v v="$debver" '/^Version:/ {on = ($2 == v)} /^Checksums-Sha256:/ {c = on; next} /^[^ ]/ {c = 0} c {print $1, $3}' \
    | grep -v '\.dsc$' | while read -r sum name; do
      [ -f "$src/$name" ] || curl -fsS -o "$src/$name" "$mirror/$dir/$name" || { rm -f "$src/$name"; continue; }
      echo "$sum  $src/$name" | sha256sum -c --quiet - || { echo "build-db-bench: $name: checksum mismatch" >&2; exit 1; }
    done
  [ -f "$src/rocksdb_${upstream}.orig.tar.gz" ] \
    || { echo "build-db-bench: the mirror serves no rocksdb_${upstream}.orig.tar.gz" >&2; exit 1; }
  tree="$src/rocksdb-$upstream"
  rm -rf "$tree.tmp"
  mkdir -p "$tree.tmp"
  tar -xzf "$src/rocksdb_${upstream}.orig.tar.gz" -C "$tree.tmp" --strip-components=1
  if [ -f "$src/rocksdb_${debver}.debian.tar.xz" ]; then
    tar -xJf "$src/rocksdb_${debver}.debian.tar.xz" -C "$tree.tmp"
  else
    say "the mirror serves no rocksdb_${debver}.debian.tar.xz: building the upstream source without Debian's patches"
  fi
  if [ -f "$tree.tmp/debian/patches/series" ]; then
    grep -vE '^\s*(#|$)' "$tree.tmp/debian/patches/series" | while read -r patch _; do
      patch -d "$tree.tmp" -p1 -s <"$tree.tmp/debian/patches/$patch" || { echo "build-db-bench: Debian patch $patch does not apply" >&2; exit 1; }
    done
  fi
  mv "$tree.tmp" "$tree"
}

# crates.io's sparse index of librocksdb-sys: one "<crate version> <sha256>" line per version not yanked.
crate_index() {
  curl -fsS --retry 2 -m 60 https://index.crates.io/li/br/librocksdb-sys \
    | python3 -c 'import json, sys; [print(d["vers"], d["cksum"]) for d in map(json.loads, sys.stdin) if not d["yanked"]]'
}

# The newest librocksdb-sys whose build metadata (the RocksDB version, "0.19.0+11.8.1") is $want or $want.*.
crate_version() {
  crate_index | awk -v w="$want" '{up=$1; sub(/.*\+/, "", up); if (up == w || index(up, w ".") == 1) print up, $1}' \
    | sort -V | tail -n 1 | cut -d' ' -f2
}

unpack_crate() {  # $1: crate version -> prints the RocksDB tree it unpacked (once) under $src
  local crate="$1" sum file tree
  tree="$src/rocksdb-${crate#*+}"
  if [ ! -d "$tree" ]; then
    sum="$(crate_index | awk -v c="$crate" '$1 == c {print $2}')"
    file="$src/librocksdb-sys-$crate.crate"
    say "fetching crates.io librocksdb-sys $crate (RocksDB ${crate#*+}, ~8 MB)" >&2
    [ -f "$file" ] || curl -fsS --retry 2 -m 600 -o "$file.tmp" "https://static.crates.io/crates/librocksdb-sys/librocksdb-sys-${crate/+/%2B}.crate" \
      || { echo "build-db-bench: could not download librocksdb-sys $crate" >&2; exit 1; }
    [ -f "$file" ] || mv "$file.tmp" "$file"
    echo "$sum  $file" | sha256sum -c --quiet - >&2 || { rm -f "$file"; echo "build-db-bench: librocksdb-sys $crate: checksum mismatch" >&2; exit 1; }
    rm -rf "$tree.tmp" && mkdir -p "$tree.tmp"
    tar -xzf "$file" -C "$tree.tmp" --strip-components=2 "librocksdb-sys-$crate/rocksdb"
    [ -f "$tree.tmp/tools/db_bench_tool.cc" ] || { echo "build-db-bench: librocksdb-sys $crate holds no tools/db_bench_tool.cc" >&2; exit 1; }
    mv "$tree.tmp" "$tree"
  fi
  echo "$tree"
}

install_build_deps
if [ -n "${ROCKSDB_SRC:-}" ]; then
  [ -f "$ROCKSDB_SRC/Makefile" ] && [ -f "$ROCKSDB_SRC/tools/db_bench_tool.cc" ] \
    || { echo "build-db-bench: ROCKSDB_SRC=$ROCKSDB_SRC is not a RocksDB source tree (no Makefile, tools/db_bench_tool.cc)" >&2; exit 2; }
  build_in "$(cd "$ROCKSDB_SRC" && pwd)" "ROCKSDB_SRC=$ROCKSDB_SRC"
  exit 0
fi
case "$want" in
  [0-9]*.[0-9]*) ;;
  *) echo "build-db-bench: ROCKSDB_VERSION=$want: expected MAJOR.MINOR such as 9.11 or 7.8" >&2; exit 2 ;;
esac
existing=$(ls -d "$cache/$want"-release "$cache/$want".*-release 2>/dev/null | head -n 1 || true)
# A build this script made before it patched the source (no "patches" in its BUILD_INFO.json) is rebuilt:
# only db_bench_tool.cc compiles again when the source tree is still in the cache.
# So is one without library_defaults (before it was built): only static_lib and the probe are made.
if [ -n "$existing" ] && [ -x "$existing/db_bench" ] && grep -qs '"patches"' "$existing/BUILD_INFO.json" \
    && [ -x "$existing/library_defaults" ]; then
  say "already built: $existing/db_bench"
  exit 0
fi
src="$cache/src"
mkdir -p "$src"
ensure_deb_src
debver="$(debian_version)"
if [ -z "$debver" ]; then
  crate="$(crate_version)"
  if [ -z "$crate" ]; then
    echo "build-db-bench: ROCKSDB_VERSION=$want: neither a Debian source package (available: $(apt-cache showsrc rocksdb 2>/dev/null | awk '/^Version:/ {printf "%s ", $2}')) nor a crates.io librocksdb-sys (available: $(crate_index | awk '{sub(/.*\+/, "", $1); printf "%s ", $1}')) carries it" >&2
    exit 2
  fi
  tree="$(unpack_crate "$crate")"
  build_in "$tree" "crates.io librocksdb-sys $crate" patch "$(crate_index | awk -v c="$crate" '$1 == c {print $2}')"
  exit 0
fi
upstream="${debver#*:}"; upstream="${upstream%-*}"
if [ ! -d "$src/rocksdb-$upstream" ]; then
  say "fetching Debian's rocksdb source package $debver"
  if ! (cd "$src" && apt-get source -qq "rocksdb=$debver" >/dev/null 2>&1); then
    unpack_from_pool "$debver" "$upstream"
  fi
fi
orig="$(ls "$src/rocksdb_${upstream}".orig.tar.* 2>/dev/null | head -n 1 || true)"
build_in "$src/rocksdb-$upstream" "Debian source package rocksdb $debver" patch "$([ -n "$orig" ] && sha256sum "$orig" | cut -d' ' -f1)"
