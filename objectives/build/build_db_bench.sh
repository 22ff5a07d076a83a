#!/usr/bin/env bash
# Build a release (DEBUG_LEVEL=0, no assertions, stripped) db_bench once, into the cache the tuner
# searches:   ${XDG_CACHE_HOME:-~/.cache}/rocksdb-tuner/db_bench/<version>-release/db_bench
# Several versions live side by side; `rocksdb-tuner tune --rocksdb-version V` picks one.
#
# Source, one of:
#   ROCKSDB_VERSION=X.Y   Debian's rocksdb source package of that version when a suite carries one, fetched
#                         by apt-get source (deb-src entries for bookworm, trixie and sid are added, on the
#                         Debian mirrors the system's apt sources already name: source packages only,
#                         nothing installed on this system comes from them). Seen 2026-11: bookworm 7.8.3,
#                         trixie 9.10.0, sid 9.11.2.
#                         Otherwise the Rust crate registry's package librocksdb-sys whose build metadata
#                         is X.Y.* (it ships RocksDB's whole source tree under rocksdb/), fetched by cargo
#                         as this machine configures it (CARGO_HOME, its mirrors), which checks it against
#                         the SHA-256 the registry's index lists. Seen 2026-11: 7.4.4, 7.9.2, 8.1.1, 8.5.3,
#                         8.6.7, 8.8.1, 8.9.1, 8.10.0, 9.9.3, 10.4.2, 11.8.1.
#   ROCKSDB_SRC=PATH      your own RocksDB checkout (any version); builds in place, never patched.
# FETCH_ONLY=1: fetch and unpack the source tree (once, under the cache's src/), print its path and stop
# before compiling anything.
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

deb_src_list=/etc/apt/sources.list.d/rocksdb-tuner-src.sources

# The Debian archive mirrors apt already uses: the URIs of the system's entries (deb822 *.sources, one-line
# sources.list and *.list, disabled ones aside) for one of Debian's suites; the security archive's
# (bookworm-security) carry no rocksdb source and are left out. One URI a line.
debian_mirrors() {
  local files=() f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] && [ "$f" != "$deb_src_list" ] && files+=("$f")
  done
  [ ${#files[@]} -gt 0 ] || return 0
  awk -v debian='^(buster|bullseye|bookworm|trixie|forky|duke|sid|oldoldstable|oldstable|stable|testing|unstable)(-updates|-backports)?$' '
    function entry(uris, suites, types, enabled,   n, s, i, u) {
      if (types !~ /(^|[ \t])deb(-src)?([ \t]|$)/ || tolower(enabled) ~ /^[ \t]*no/) return
      n = split(suites, s, /[ \t]+/)
      for (i = 1; i <= n; i++) if (s[i] ~ debian) break
      if (i > n) return
      n = split(uris, u, /[ \t]+/)
      for (i = 1; i <= n; i++) if (u[i] != "" && u[i] !~ /^cdrom:/ && !seen[u[i]]++) print u[i]
    }
    function flush() { entry(uris, suites, types, enabled); uris = suites = types = enabled = field = "" }
    FNR == 1 { flush(); deb822 = (FILENAME ~ /\.sources$/) }
    /^[ \t]*#/ { next }
    deb822 && /^[ \t]*$/ { flush(); next }
    deb822 && /^[ \t]/ { if (field == "uris") uris = uris " " $0; else if (field == "suites") suites = suites " " $0; next }
    deb822 { field = tolower($0); sub(/:.*/, "", field); v = $0; sub(/^[^:]*:[ \t]*/, "", v)
             if (field == "uris") uris = v; else if (field == "suites") suites = v
             else if (field == "types") types = v; else if (field == "enabled") enabled = v
             next }
    { line = $0; sub(/#.*/, "", line); gsub(/\[[^]]*\]/, " ", line); $0 = line
      if ($1 ~ /^deb(-src)?$/) entry($2, $3, $1, "") }
    END { flush() }' "${files[@]}"
}

# Source-package entries for the suites that carry rocksdb, on the Debian mirrors the system's apt sources
# name (so apt-get source reaches Debian's archive the way apt does here); Types: deb-src only, so no
# binary package of this system can come from a newer suite. Without a Debian mirror among apt's sources
# no entries are added: the Rust crate registry's librocksdb-sys is the source then.
ensure_deb_src() {
  local list="$deb_src_list" suites="bookworm trixie sid" uris entry
  uris="$(debian_mirrors | tr '\n' ' ' | sed 's/ *$//')"
  if [ -z "$uris" ]; then
    say "no Debian archive among apt's sources: no deb-src entries, so no Debian source packages"
    return 0
  fi
  entry="$(printf 'Types: deb-src\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg' \
    "$uris" "$suites")"
  if [ "$(cat "$list" 2>/dev/null)" != "$entry" ]; then
    say "adding deb-src entries for $suites on the Debian mirrors of apt's sources ($list; source packages only)"
    printf '%s\n' "$entry" | $sudo tee "$list" >/dev/null
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
  build_open_loop "$tree" "$dest"
}

# open_loop (objectives/build/open_loop.cc): the same RocksDB at a fixed offered rate, each request timed
# from when it was due (objectives/open_loop.py runs it). open_loop.sha256 beside it names its source.
open_loop_source() { cat "$here/open_loop.cc" "$here/latency_histogram.h" | sha256sum | cut -d' ' -f1; }
build_open_loop() {  # $1: RocksDB source tree with librocksdb.a, $2: the build's directory in the cache
  local tree="$1" dest="$2" cxxflags ldflags
  cxxflags="$(sed -n 's/^PLATFORM_CXXFLAGS=//p' "$tree/make_config.mk")"
  ldflags="$(sed -n 's/^PLATFORM_LDFLAGS=//p' "$tree/make_config.mk")"
  say "open_loop: a fixed offered rate, latency from each request's due time (g++)"
  # shellcheck disable=SC2086  # the flags are words
  if ! ${CXX:-g++} -O2 $cxxflags -I"$tree/include" -I"$here" -o "$dest/open_loop.tmp" "$here/open_loop.cc" \
      "$tree/librocksdb.a" $ldflags -lpthread >"$tree/build-open_loop.log" 2>&1; then
    # db_bench stays usable; only `rocksdb-tuner measure` lacks this version
    say "open_loop did not build against RocksDB in $tree (log: $tree/build-open_loop.log): measure cannot use this version"
    rm -f "$dest/open_loop.tmp"
    return 0
  fi
  strip --strip-unneeded "$dest/open_loop.tmp"
  mv "$dest/open_loop.tmp" "$dest/open_loop"
  open_loop_source >"$dest/open_loop.sha256"
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
# the two tarballs the index lists with apt's own downloader (apt-helper download-file: apt's transports,
# proxies and credentials, from the deb-src entries' mirrors), which checks their SHA-256 against the
# index, and unpack as dpkg-source would: the upstream tree, debian/ inside it, and Debian's patches
# applied in series order.
unpack_from_pool() {  # $1: Debian version, $2: upstream version
  local debver="$1" upstream="$2" dir mirrors name sum tree
  dir=$(apt-cache showsrc "rocksdb" | awk -v v="$debver" '/^Version:/ {on = ($2 == v)} on && /^Directory:/ {print $2; exit}')
  mirrors=$(awk '/^URIs:/ {$1 = ""; print}' "$deb_src_list")
  say "the mirror has no .dsc for $debver: fetching its tarballs from $dir with apt-helper"
  apt-cache showsrc rocksdb | awk -v v="$debver" '/^Version:/ {on = ($2 == v)} /^Checksums-Sha256:/ {c = on; next} /^[^ ]/ {c = 0} c {print $1, $3}' \
    | grep -v '\.dsc$' | while read -r sum name; do
      for mirror in $mirrors; do
        [ -f "$src/$name" ] && break
        /usr/lib/apt/apt-helper download-file "$mirror/$dir/$name" "$src/$name" "SHA256:$sum" >/dev/null 2>&1 \
          || rm -f "$src/$name" "$src/$name.FAILED"
      done
      [ -f "$src/$name" ] || continue
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

# cargo, the Rust crate registry's client, fetches librocksdb-sys as this machine configures it (CARGO_HOME,
# a mirror by source replacement, proxies); Debian's cargo is installed when none is on PATH.
cargo_home="${CARGO_HOME:-$HOME/.cargo}"
ensure_cargo() {
  command -v cargo >/dev/null 2>&1 && return 0
  say "installing cargo (Debian's package) to fetch librocksdb-sys from the Rust crate registry"
  { $sudo apt-get update -qq && apt_install cargo; } || true
  command -v cargo >/dev/null 2>&1 \
    || { echo "build-db-bench: ROCKSDB_VERSION=$want needs cargo to fetch librocksdb-sys: install it (apt-get install cargo, or rustup) and run again" >&2; exit 1; }
}

# A throwaway Cargo project in $1 (its own workspace) that depends on librocksdb-sys $2 (a requirement):
# cargo resolves it against the registry it is configured with, which refreshes cargo's index cache of the
# crate, and writes Cargo.lock.
cargo_lock() {  # $1: an empty directory, $2: a version requirement
  local dir="$1" out
  mkdir -p "$dir/src" && : >"$dir/src/lib.rs"
  printf '[package]\nname = "rocksdb-tuner-fetch"\nversion = "0.0.0"\nedition = "2018"\npublish = false\n\n[dependencies]\nlibrocksdb-sys = { version = "%s", default-features = false }\n\n[workspace]\n' \
    "$2" >"$dir/Cargo.toml"
  out="$(cd "$dir" && cargo generate-lockfile 2>&1)" || { echo "build-db-bench: cargo could not resolve librocksdb-sys $2: $(
    grep -vE '^\s*(Updating|Locking|Adding)\s' <<<"$out" | tr -s ' \n' '  ' | sed 's/ *$//')" >&2; exit 1; }
}

# librocksdb-sys in the Rust crate registry: one "<crate version> <sha256>" line per version not yanked,
# read from cargo's cache of the registry's index (a small binary header, then "<version>\0<JSON>\0"
# records with "vers", "cksum", "yanked"), which resolving any requirement on the crate refreshes.
crate_index() (  # a subshell: its EXIT trap removes the throwaway project
  dir="$(mktemp -d "$src/cargo-index.XXXXXX")"
  trap 'rm -rf "$dir"' EXIT
  cargo_lock "$dir" "*"
  file="$(ls -t "$cargo_home"/registry/index/*/.cache/li/br/librocksdb-sys 2>/dev/null | head -n 1 || true)"
  [ -n "$file" ] || { echo "build-db-bench: cargo left no index entry of librocksdb-sys under $cargo_home/registry/index" >&2; exit 1; }
  python3 -c 'import json, sys
for r in open(sys.argv[1], "rb").read().split(b"\0"):
    d = json.loads(r) if r.startswith(b"{") else {}
    if d.get("name") == "librocksdb-sys" and not d.get("yanked"): print(d["vers"], d["cksum"])' "$file"
)

# The newest librocksdb-sys whose build metadata (the RocksDB version, "0.19.0+11.8.1") is $want or $want.*.
crate_version() {  # stdin: crate_index's lines
  awk -v w="$want" '{up=$1; sub(/.*\+/, "", up); if (up == w || index(up, w ".") == 1) print up, $1}' \
    | sort -V | tail -n 1 | cut -d' ' -f2
}

# cargo fetches the crate pinned exactly (=X.Y.Z: a requirement ignores build metadata, so Cargo.lock must
# name the version wanted and the index's SHA-256) and checks it against the index; the tree is unpacked
# from cargo's download cache.
unpack_crate() (  # $1: crate version, $2: its SHA-256 -> prints the RocksDB tree it unpacked (once) under $src
  crate="$1" sum="$2"
  tree="$src/rocksdb-${crate#*+}"
  if [ ! -d "$tree" ]; then
    dir="$(mktemp -d "$src/cargo-fetch.XXXXXX")"
    trap 'rm -rf "$dir" "$tree.tmp"' EXIT
    say "fetching librocksdb-sys $crate (RocksDB ${crate#*+}, ~8 MB) from the Rust crate registry with cargo" >&2
    cargo_lock "$dir" "=${crate%%+*}"
    locked="$(awk '/^\[\[package\]\]/ {n = ""} /^name = / {n = $3} n == "\"librocksdb-sys\"" && /^(version|checksum) = / {gsub(/"/, "", $3); printf "%s ", $3}' "$dir/Cargo.lock")"
    [ "$locked" = "$crate $sum " ] \
      || { echo "build-db-bench: cargo resolved librocksdb-sys =${crate%%+*} to '${locked% }', not '$crate $sum'" >&2; exit 1; }
    out="$(cd "$dir" && cargo fetch 2>&1)" || { echo "build-db-bench: cargo fetch of librocksdb-sys $crate failed: $(
      grep -vE '^\s*(Updating|Downloading|Downloaded|Locking)\s' <<<"$out" | tr -s ' \n' '  ' | sed 's/ *$//')" >&2; exit 1; }
    file="$(ls -t "$cargo_home"/registry/cache/*/"librocksdb-sys-$crate.crate" 2>/dev/null | head -n 1 || true)"
    [ -n "$file" ] || { echo "build-db-bench: cargo fetched librocksdb-sys $crate but left no librocksdb-sys-$crate.crate under $cargo_home/registry/cache" >&2; exit 1; }
    echo "$sum  $file" | sha256sum -c --quiet - >&2 || { echo "build-db-bench: librocksdb-sys $crate: checksum mismatch ($file)" >&2; exit 1; }
    rm -rf "$tree.tmp" && mkdir -p "$tree.tmp"
    tar -xzf "$file" -C "$tree.tmp" --strip-components=2 "librocksdb-sys-$crate/rocksdb"
    [ -f "$tree.tmp/tools/db_bench_tool.cc" ] || { echo "build-db-bench: librocksdb-sys $crate holds no tools/db_bench_tool.cc" >&2; exit 1; }
    mv "$tree.tmp" "$tree"
  fi
  echo "$tree"
)

# FETCH_ONLY=1 stops once the source tree is there: its path is the last line printed.
fetched() {  # $1: the source tree
  if [ "${FETCH_ONLY:-0}" = 1 ]; then
    echo "$1"
    exit 0
  fi
}

install_build_deps
if [ -n "${ROCKSDB_SRC:-}" ]; then
  [ -f "$ROCKSDB_SRC/Makefile" ] && [ -f "$ROCKSDB_SRC/tools/db_bench_tool.cc" ] \
    || { echo "build-db-bench: ROCKSDB_SRC=$ROCKSDB_SRC is not a RocksDB source tree (no Makefile, tools/db_bench_tool.cc)" >&2; exit 2; }
  fetched "$(cd "$ROCKSDB_SRC" && pwd)"
  build_in "$(cd "$ROCKSDB_SRC" && pwd)" "ROCKSDB_SRC=$ROCKSDB_SRC"
  exit 0
fi
case "$want" in
  [0-9]*.[0-9]*) ;;
  *) echo "build-db-bench: ROCKSDB_VERSION=$want: expected MAJOR.MINOR such as 9.11 or 7.8" >&2; exit 2 ;;
esac
existing=$(ls -d "$cache/$want"-release "$cache/$want".*-release 2>/dev/null | head -n 1 || true)
[ "${FETCH_ONLY:-0}" != 1 ] || existing=""  # the source is wanted, built or not
# A build this script made before it patched the source (no "patches" in its BUILD_INFO.json) is rebuilt:
# only db_bench_tool.cc compiles again when the source tree is still in the cache.
# So is one without library_defaults (before it was built): only static_lib and the probe are made.
if [ -n "$existing" ] && [ -x "$existing/db_bench" ] && grep -qs '"patches"' "$existing/BUILD_INFO.json" \
    && [ -x "$existing/library_defaults" ]; then
  if [ "$(cat "$existing/open_loop.sha256" 2>/dev/null)" != "$(open_loop_source)" ]; then
    # open_loop missing or built from other source: linked again with the tree's librocksdb.a, when kept
    tree="$cache/src/rocksdb-$(sed -n 's/.*"version": "\([^"]*\)".*/\1/p' "$existing/BUILD_INFO.json")"
    if [ -f "$tree/librocksdb.a" ] && [ -f "$tree/make_config.mk" ]; then
      build_open_loop "$tree" "$existing"
    else
      say "open_loop needs the RocksDB tree $tree and its librocksdb.a: building again"
      existing=""
    fi
  fi
  if [ -n "$existing" ]; then
    say "already built: $existing/db_bench"
    exit 0
  fi
fi
src="$cache/src"
mkdir -p "$src"
ensure_deb_src
debver="$(debian_version)"
if [ -z "$debver" ]; then
  ensure_cargo
  crates="$(crate_index)"
  crate="$(crate_version <<<"$crates")"
  if [ -z "$crate" ]; then
    echo "build-db-bench: ROCKSDB_VERSION=$want: neither a Debian source package (available: $(apt-cache showsrc rocksdb 2>/dev/null | awk '/^Version:/ {printf "%s ", $2}')) nor the Rust crate registry's librocksdb-sys (available: $(awk '{sub(/.*\+/, "", $1); print $1}' <<<"$crates" | sort -uV | tr '\n' ' ')) carries it" >&2
    exit 2
  fi
  sum="$(awk -v c="$crate" '$1 == c {print $2}' <<<"$crates")"
  tree="$(unpack_crate "$crate" "$sum")"
  fetched "$tree"
  build_in "$tree" "librocksdb-sys $crate (Rust crate registry)" patch "$sum"
  exit 0
fi
upstream="${debver#*:}"; upstream="${upstream%-*}"
if [ ! -d "$src/rocksdb-$upstream" ]; then
  say "fetching Debian's rocksdb source package $debver with apt-get source"
  if ! (cd "$src" && apt-get source -qq "rocksdb=$debver" >/dev/null 2>&1); then
    unpack_from_pool "$debver" "$upstream"
  fi
fi
fetched "$src/rocksdb-$upstream"
orig="$(ls "$src/rocksdb_${upstream}".orig.tar.* 2>/dev/null | head -n 1 || true)"
build_in "$src/rocksdb-$upstream" "Debian source package rocksdb $debver" patch "$([ -n "$orig" ] && sha256sum "$orig" | cut -d' ' -f1)"
