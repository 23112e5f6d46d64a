#!/bin/bash
# Regenerates the real `perf script` samples in this directory (the recipe
# of the golden inputs that tests/unit/test_perf_script.c and test_fold.c
# read). Run as root from the repository root after `make`:
#
#   tests/data/perf_script/capture.sh /path/to/python3.X LABEL
#
# It records examples/example.py in perf-map mode with the lines sidecar,
# converts with the exact -F list perfpy uses, and keeps a small excerpt:
# the first 12 samples (interpreter start-up) and 24 samples that name a
# Python function. Paths stay as recorded (they are data, not used as paths).
set -eu
py=$1
label=$2
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/perfpy-capture-XXXXXX)
trap 'rm -rf "$work"' EXIT
PERFPY_LINES_DIR=$work perf record -q --no-bpf-event -k 1 -F 999 --call-graph dwarf,16384 \
    -o "$work/p.data" -- build/perfpy run --mode perf -- "$py" examples/example.py 2000000
pid=$(ls "$work" | sed -n 's/^perfpy-\([0-9]*\)\.lines$/\1/p' | head -1)
perf script -i "$work/p.data" -F comm,pid,tid,time,period,event,ip,sym,dso --max-stack 4096 \
    > "$work/all.txt" 2>/dev/null
python3 - "$work/all.txt" "$here/$label.txt" <<'PY'
import sys
blocks = open(sys.argv[1], encoding="utf-8", errors="surrogateescape").read().split("\n\n")
blocks = [b for b in blocks if b.strip()]
keep = blocks[:12] + [b for b in blocks[12:] if "py::" in b][:24]
open(sys.argv[2], "w", encoding="utf-8", errors="surrogateescape").write("\n\n".join(keep) + "\n\n")
PY
cp "$work/perfpy-$pid.lines" "$here/$label.lines"
rm -f "/tmp/perf-$pid.map"
echo "$label: pid $pid, $(grep -c 'py::' "$here/$label.txt") Python frames"
