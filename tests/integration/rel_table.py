"""Turns the reliability tests' measured results into markdown tables.

    PERFPY_REL_RESULTS=/tmp/r.jsonl python3 tests/integration/run.py -k reliability
    python3 tests/integration/rel_table.py /tmp/r.jsonl [/tmp/stress.jsonl] > table.md

One table per area (the part of the scenario name before "/"): a row per
scenario and distinct result, with the interpreters and modes that gave it
("all" when every one did) and the command that reproduces it, the
interpreter's path written PY. The C stack and resource use, whose numbers
differ per interpreter, are matrices: a row per case, a column per
interpreter, "perf | jit" where the two modes differ.
"""
import collections
import json
import re
import sys

AREAS = collections.OrderedDict([
    ("concurrency", "Concurrency"), ("processes", "Processes"), ("stack", "The C stack"),
    ("coexist", "Coexistence"), ("faults", "Resource faults"), ("resources", "Resource use"),
    ("tooling", "Tooling faults"), ("security", "Security"),
])


def load(paths):
    rows = []
    for path in paths:
        with open(path) as f:
            rows += [json.loads(line) for line in f if line.strip()]
    return rows


def pythons_of(cells, every):
    got = order({p for p, m in cells})
    if set(got) == every and len(every) > 1:
        return "all %d" % len(every)
    return ", ".join(got)


def modes_of(cells, modes):
    got = sorted({m for p, m in cells})
    return "both" if set(got) == modes and len(modes) > 1 else ", ".join(got)


def command(r):
    cmd = r["command"]
    cmd = re.sub(r"/\S*/(python3\.\d+)\b", "PY", cmd)
    cmd = re.sub(r"/\S*/(tests/integration/|build/perfpy)", r"\1", cmd)
    return cmd.replace("|", "\\|")


def order(pythons):
    return sorted(pythons, key=lambda p: [int(x) if x.isdigit() else x
                                          for x in re.split(r"[.-]", p)])


def short(area, result):
    """A matrix cell: the numbers of a result."""
    if area == "stack":
        plain, _, mine = result.partition("; perfpy ")
        plain = plain.replace("plain ", "")
        plain = "crash" if plain.startswith("crashes") else plain
        return "%s → %s" % (plain.replace("RecursionError", "RecErr"),
                            mine.replace("RecursionError", "RecErr"))
    m = re.search(r"(-?\d+) B/function", result)
    if m:
        return "+%s B" % m.group(1)
    m = re.search(r"RSS ([+-]\d+) KiB, fds ([+-]\d+)", result)
    return "%s KiB, %s fds" % m.groups() if m else result


def matrix(area, mine, every, out):
    """A row per scenario, a column per interpreter."""
    pys = order(every)
    out.append("| case | " + " | ".join(pys) + " | reproduce |")
    out.append("|---|" + "---|" * len(pys) + "---|")
    cases = collections.OrderedDict()
    for r in mine:
        cases.setdefault(r["scenario"].split("/", 1)[1], {}).setdefault(
            r["python"], {})[r["mode"]] = short(area, r["result"])
    for case, per in cases.items():
        cells = []
        for p in pys:
            got = per.get(p, {})
            vals = [got.get(m) for m in ("perf", "jit") if got.get(m)]
            cells.append(vals[0] if len(set(vals)) == 1 else " \\| ".join(vals) if vals
                         else "-")
        first = next(r for r in mine if r["scenario"].split("/", 1)[1] == case)
        out.append("| %s | %s | `%s` |" % (case, " | ".join(cells), command(first)))
    out.append("")


def main(paths):
    rows = load(paths)
    every = {r["python"] for r in rows if r["python"] != "-"}
    out = []
    for area, title in AREAS.items():
        mine = [r for r in rows if r["scenario"].split("/")[0] == area]
        if not mine:
            continue
        if area in ("stack", "resources"):
            out.append("### %s\n" % title)
            matrix(area, mine, every, out)
            continue
        modes = {r["mode"] for r in mine}
        out.append("### %s\n" % title)
        out.append("| scenario | interpreters | modes | measured result | reproduce |")
        out.append("|---|---|---|---|---|")
        by = collections.OrderedDict()
        for r in mine:
            by.setdefault((r["scenario"], r["result"]), []).append(r)
        for (scenario, result), rs in by.items():
            cells = [(r["python"], r["mode"]) for r in rs]
            out.append("| %s | %s | %s | %s | `%s` |" % (
                scenario.split("/", 1)[1], pythons_of(cells, every) if rs[0]["python"] != "-"
                else "-", modes_of(cells, modes), result.replace("|", "\\|"), command(rs[0])))
        out.append("")
    sys.stdout.write("\n".join(out))


if __name__ == "__main__":
    main(sys.argv[1:])
