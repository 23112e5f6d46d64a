"""Files perfpy creates in shared directories, attacked from inside the
program (perfpy on sys.path, not started: the program activates it).

    python rel_security.py plant KIND BACKEND TARGET
        KIND: symlink (to TARGET), dangling (symlink to TARGET, absent),
        foreign (TARGET is copied to the path; the test chowns TARGET to
        another user first, so the copy keeps that owner via rename)
        Plants KIND at the path perfpy will open for this pid (map, dump in
        $PERFPY_JITDUMP_DIR, or lines in $PERFPY_LINES_DIR when BACKEND is
        "lines"), then activates: perfpy must refuse with OSError.
    python -S rel_security.py fork_plant BACKEND TARGET
        The same, at the path of a forked child (planted by an
        os.register_at_fork hook that runs before perfpy's): the child goes
        on without perfpy and says so once.
    python rel_security.py stale BACKEND
        A map left by a dead process with this pid: perfpy starts it afresh.
    python rel_security.py modes BACKEND
        Prints the mode of every file perfpy created.

Prints "pid N", "refused: <message>" and "ok".
"""
import os
import stat
import sys

print("pid %d" % os.getpid(), flush=True)
pid = os.getpid()


def path_for(backend, p):
    if backend == "lines":
        return os.path.join(os.environ["PERFPY_LINES_DIR"], "perfpy-%d.lines" % p)
    if backend == "perf_jit":
        return os.path.join(os.environ["PERFPY_JITDUMP_DIR"], "jit-%d.dump" % p)
    return "/tmp/perf-%d.map" % p


def plant(kind, at, target):
    if kind in ("symlink", "dangling"):
        os.symlink(target, at)
    else:                                  # another user's regular file
        import shutil                      # (not at the top: see fork_plant)
        tmp = at + ".planting"
        shutil.copy2(target, tmp)
        st = os.stat(target)
        os.chown(tmp, st.st_uid, st.st_gid)
        os.rename(tmp, at)


def activate(backend):
    import perfpy
    perfpy.activate_stack_trampoline("perf" if backend == "lines" else backend)


def work():
    return sum(range(10))


scenario = sys.argv[1]
if scenario == "plant":
    kind, backend, target = sys.argv[2:5]
    plant(kind, path_for(backend, pid), target)
    try:
        activate(backend)
    except OSError as e:
        print("refused: %s" % e, flush=True)
    else:
        raise SystemExit("perfpy used the planted %s" % kind)
    work()
elif scenario == "fork_plant":
    backend, target = sys.argv[2:4]

    def plant_for_child(dry=False):
        at = path_for(backend, os.getpid())
        if not dry:
            plant("symlink", at, target)

    os.register_at_fork(after_in_child=plant_for_child)
    activate(backend)
    # Python code that first runs in the child would start the child's file
    # itself (registration notices the fork): run it all once here, and
    # import nothing that registers at-fork hooks in Python (threading,
    # random) before ours.
    warm = target + ".warm"
    plant("symlink", warm, target)
    os.unlink(warm)
    plant_for_child(dry=True)
    work()
    child = os.fork()
    if child == 0:
        print("child %d" % os.getpid(), flush=True)
        import perfpy
        work()
        print("child active: %s" % perfpy.is_stack_trampoline_active(), flush=True)
        os._exit(0)
    os.waitpid(child, 0)
elif scenario == "stale":
    backend = sys.argv[2]
    with open(path_for(backend, pid), "w") as f:
        f.write("7f0000000000 10 py::stale_function_of_a_dead_process:/gone.py\n")
    activate(backend)
    work()
    with open(path_for(backend, pid)) as f:
        text = f.read()
    print("stale line kept: %s" % ("stale_function" in text), flush=True)
elif scenario == "modes":
    backend = sys.argv[2]
    activate(backend)
    work()
    for p in (path_for(backend, pid), path_for("lines", pid)):
        print("mode %s %o" % (p, stat.S_IMODE(os.stat(p).st_mode)), flush=True)
print("ok", flush=True)
