"""Prints perf script text (`perf script -F comm,pid,tid,time,period,event,
ip,sym,dso`) N times over, each copy's times shifted past the one before,
so `perfpy report --from-script -` folds a long recording of real stacks
and threads (docs/PERFORMANCE.md, "The profile's memory"):

    python3 bench/replay_script.py SCRIPT.txt N | perfpy report --from-script -f FMT -o OUT -
"""
import re
import sys

HEAD = re.compile(r"^(\S.*?\s)(\d+\.\d+)(:.*)$")


def main():
    text = open(sys.argv[1]).read()
    copies = int(sys.argv[2])
    parts = []
    for block in text.split("\n\n"):
        first, _, rest = block.strip("\n").partition("\n")
        m = HEAD.match(first)
        if m:
            parts.append((m.group(1), float(m.group(2)), m.group(3) + "\n" + rest + "\n\n"))
    if not parts:
        sys.exit("replay_script: no sample in %s" % sys.argv[1])
    times = [t for _, t, _ in parts]
    span = max(times) - min(times) + 0.001
    for k in range(copies):
        shift = k * span
        sys.stdout.write("".join("%s%.6f%s" % (a, t + shift, c) for a, t, c in parts))


main()
