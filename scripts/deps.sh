#!/bin/bash
# Installs what perfpy's build, demo and tests need on a fresh Debian 12
# machine, and nothing that is already there. Run by `make demo` (with
# --demo: build and run only) and `make test`; safe to run again (it only
# checks when all is present).
#
#   build:  gcc make zlib1g-dev, CPython headers (python3-dev, unless an
#           interpreter with headers is already there, e.g. pyenv's)
#   run:    linux-perf (perf)
#   sample mode (src/sample): libdw-dev and libelf-dev (elfutils: DWARF
#           unwinding as perf does, ELF symbols) and libbpf-dev (its BPF
#           collector); clang and bpftool only remake the BPF program
#           (scripts/gen-bpf), which the tests compare with the tree's
#   tests:  python3 (the test driver); strace (the no-shell check); tmux
#           (perfpy top in a terminal); nodejs,
#           npm, chromium and the node packages of tests/js (the report
#           format checks)
#   bench:  valgrind (callgrind's instruction counts), with --bench
#
#   scripts/deps.sh [--demo|--bench]
set -u
tests=1    # what only the tests need
bench=0
case "${1:-}" in
    --demo) tests=0 ;;
    --bench) tests=0; bench=1 ;;
esac

need_debs=()
have_cmd() { command -v "$1" >/dev/null 2>&1; }
have_deb() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed"; }

# what the build needs, asked as the build asks it (scripts/probe: without
# a compiler every library reads as missing, and is installed with it)
probe=(cc make zlib libelf libdw libbpf)
# clang and bpftool: the tests compile the BPF program afresh (gen-bpf --check)
[ $tests = 1 ] && probe+=(clang bpftool)
while read -r _ deb _; do
    need_debs+=("$deb")
done < <("$(dirname "$0")/probe" "${probe[@]}")
have_cmd perf || need_debs+=(linux-perf)
[ -x /usr/bin/python3 ] || need_debs+=(python3)
# the module needs some CPython 3.8+ with headers (scripts/find-pythons)
[ -n "$(PYTHONS= "$(dirname "$0")/find-pythons" 2>/dev/null)" ] || need_debs+=(python3-dev)

[ $tests = 1 ] && { have_cmd strace || need_debs+=(strace); }
# perfpy top's terminal tests: a real terminal of a given size
[ $tests = 1 ] && { have_cmd tmux || need_debs+=(tmux); }
# sample mode's mixed-stack test: numpy's C code under Python frames (Debian's
# python3)
[ $tests = 1 ] && { have_deb python3-numpy || need_debs+=(python3-numpy); }
[ $bench = 1 ] && { have_cmd valgrind || need_debs+=(valgrind); }

# ---- report tests (owner: the report pipeline) -----------------------------
# tests/js validates the speedscope, pprof and HTML outputs with node
# packages (npm ci below) and a headless Chromium.
if [ $tests = 1 ]; then
have_cmd node || need_debs+=(nodejs)
have_cmd npm || need_debs+=(npm)
[ -x /usr/bin/chromium ] || need_debs+=(chromium)
fi
# ---- end of report tests ---------------------------------------------------

if [ ${#need_debs[@]} -gt 0 ]; then
    if [ "$(id -u)" != 0 ]; then
        echo "perfpy needs these Debian packages: ${need_debs[*]}" >&2
        echo "install them with: sudo apt-get install -y ${need_debs[*]}" >&2
        exit 1
    fi
    echo "installing: ${need_debs[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq || { echo "apt-get update failed" >&2; exit 1; }
    apt-get install -y -qq --no-install-recommends "${need_debs[@]}" >/dev/null ||
        { echo "apt-get install ${need_debs[*]} failed" >&2; exit 1; }
fi

# ---- report tests (owner: the report pipeline) -----------------------------
# node packages of tests/js, exactly as package-lock.json pins them, into
# tests/js/node_modules (git-ignored); again only when the lock file changed.
js=$(cd "$(dirname "$0")/../tests/js" && pwd)
if [ $tests = 1 ] && [ -f "$js/package-lock.json" ] && have_cmd npm &&
   { [ ! -f "$js/node_modules/.package-lock.json" ] ||
     [ "$js/package-lock.json" -nt "$js/node_modules/.package-lock.json" ]; }; then
    echo "installing tests/js node packages (npm ci)"
    (cd "$js" && npm ci --no-audit --no-fund --loglevel=error >/dev/null) ||
        echo "warning: npm ci in tests/js failed: the speedscope/pprof/HTML checks cannot run" >&2
fi
# ---- end of report tests ---------------------------------------------------
exit 0
