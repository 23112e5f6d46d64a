"""What a stage of the suite left in /tmp (and /dev/shm) of perfpy's or
perf's: tests/run-all takes a snapshot before each stage and compares after
it; anything new that is still there is a failure of that stage.

    python3 tests/tmp_check.py snapshot FILE
    python3 tests/tmp_check.py compare FILE [--strict]
                                   (prints what is left; exit 1 if any; --strict
                                   judges even while another test run is active)

What counts: the files that name a process (perf-<pid>.map, jit-<pid>.dump,
perfpy-<pid>.lines, jitted-<pid>-<n>.so) once that process has ended, and
perfpy's and perf's other names (perfpy-*, perf.data*, /dev/shm/perfpy-*).
A file of a process still running is not left yet, and what is new is
looked at again three seconds later (a test removes its files in its
tearDown, after its processes end). Several test runs may share the
machine (developers at once; CI runs alone): when another run is active (a
run-all, an integration run.py or a unit-tests binary that is neither an
ancestor nor a descendant of this one), what is new may be its own, in use
by a test still running: the stage's leftovers are then said, not judged."""
import os
import re
import sys
import time

PLACES = ("/tmp", "/dev/shm")
PID_NAMED = re.compile(r"^(?:perf-(\d+)\.map|jit-(\d+)\.dump|perfpy-(\d+)\.lines|"
                       r"jitted-(\d+)-\d+\.so)$")
OTHER = re.compile(r"^(?:perfpy[-_.].*|perf\.data.*)$")
RUNNERS = ("tests/run-all", "tests/integration/run.py", "unit-tests")


# machine state with its own protocol, not a leftover: the shared record of
# kernel.perf_event_max_stack (src/report/max_stack.h), removed by the last
# recording that needs it, or by the background process that restores it
KEPT = ("perfpy-max-stack",)


def ours(name):
    return (PID_NAMED.match(name) or OTHER.match(name)) and name not in KEPT


def listing(places=PLACES):
    out = set()
    for place in places:
        try:
            names = os.listdir(place)
        except OSError:
            continue
        out.update(os.path.join(place, n) for n in names if ours(n))
    return out


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def parent_of(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def other_runs():
    """Test runners running that are not this run's (ancestors or
    descendants of this process)."""
    me = os.getpid()
    ancestors = set()
    p = me
    while p > 1:
        ancestors.add(p)
        p = parent_of(p)
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) in ancestors:
            continue
        try:
            with open("/proc/%s/cmdline" % d, "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            continue
        if not any(r in cmd for r in RUNNERS):
            continue
        p, mine = int(d), False
        while p > 1:
            if p in ancestors:
                mine = True
                break
            p = parent_of(p)
        if not mine:
            found.append((int(d), cmd.strip()[:80]))
    return found


def left(before, places=PLACES):
    out = []
    for path in sorted(listing(places) - before):
        m = PID_NAMED.match(os.path.basename(path))
        if m:
            pid = int(next(g for g in m.groups() if g))
            if alive(pid):
                continue
        out.append(path)
    return out


def describe(path):
    """When a file was last written, and a perf map's first names: which
    program of which test made it (the stage's verdict comes long after)."""
    try:
        st = os.stat(path)
    except OSError:
        return ""
    said = " (written %s UTC, %d bytes" % (time.strftime("%H:%M:%S", time.gmtime(st.st_mtime)),
                                          st.st_size)
    if PID_NAMED.match(os.path.basename(path)) and path.endswith(".map"):
        try:
            with open(path, errors="replace") as f:
                names = [l.split(" ", 2)[-1].strip() for _, l in zip(range(3), f)]
            said += "; first names: " + ", ".join(names)
        except OSError:
            pass
    return said + ")"


def main():
    what, path = sys.argv[1], sys.argv[2]
    if what == "snapshot":
        with open(path, "w") as f:
            f.write("\n".join(sorted(listing())))
        return 0
    with open(path) as f:
        before = set(l for l in f.read().splitlines() if l)
    new = left(before)
    if new:
        time.sleep(3)
        new = left(before)
    others = other_runs() if new and "--strict" not in sys.argv[3:] else []
    if others:
        # what is new may be that run's, in use by a test still running:
        # said, not judged (CI runs alone, and judges)
        print("not judged: another test run is active (pid %d: %s); new since the "
              "stage began: %s" % (others[0][0], others[0][1], " ".join(new[:5])))
        return 0
    if not new:
        return 0
    print("left in /tmp by this stage (perfpy's or perf's, not there before it):")
    for p in new[:20]:
        print("  " + p + describe(p))
    if len(new) > 20:
        print("  ... and %d more" % (len(new) - 20))
    return 1


if __name__ == "__main__":
    sys.exit(main())
