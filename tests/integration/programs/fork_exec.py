"""Sample mode's children (issue 15): a forked child, an exec'd Python
(the same interpreter, sys.executable) and a program that is no Python,
each busy for about SECONDS of CPU time in a function of its own, which
prints the CPU time it used ("cpu NAME SECONDS": its samples are judged
against it). Optional: OTHER, another interpreter's path, run the same way.

    python fork_exec.py [SECONDS] [OTHER]
"""
import os
import subprocess
import sys
import time

SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 0.5
OTHER = sys.argv[2] if len(sys.argv) > 2 else None
BUSY = ("import os, time\n"
        "def {0}():\n"
        "    start = time.process_time()\n"
        "    end = start + {1}\n"
        "    while time.process_time() < end:\n"
        "        pass\n"
        "    os.write(1, b'cpu {0} %.4f\\n' % (time.process_time() - start))\n"
        "{0}()\n")


def busy(name):
    start = time.process_time()
    end = start + SECONDS
    while time.process_time() < end:
        pass
    # one write: the parent's and the forked child's lines never interleave
    os.write(1, b"cpu %s %.4f\n" % (name.encode(), time.process_time() - start))


def forked_child():
    busy("forked_child")


def parent_work():
    busy("parent_work")


pid = os.fork()
if pid == 0:
    forked_child()
    os._exit(0)
parent_work()
os.waitpid(pid, 0)
subprocess.run([sys.executable, "-c", BUSY.format("execd_python", SECONDS)], check=True)
if OTHER:
    subprocess.run([OTHER, "-c", BUSY.format("other_python", SECONDS)], check=True)
subprocess.run(["sh", "-c", "i=0; while [ $i -lt 500000 ]; do i=$((i+1)); done"], check=True)
print("done", os.getpid(), flush=True)
