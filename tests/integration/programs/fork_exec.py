"""Sample mode's children (issue 15): a forked child, an exec'd Python
(the same interpreter, sys.executable) and a program that is no Python,
each busy for about SECONDS of CPU time in a function of its own.
Optional: OTHER, another interpreter's path, run the same way.

    python fork_exec.py [SECONDS] [OTHER]
"""
import os
import subprocess
import sys
import time

SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 0.5
OTHER = sys.argv[2] if len(sys.argv) > 2 else None
BUSY = ("import time\n"
        "def {0}():\n"
        "    end = time.process_time() + {1}\n"
        "    while time.process_time() < end:\n"
        "        pass\n"
        "{0}()\n")


def forked_child():
    end = time.process_time() + SECONDS
    while time.process_time() < end:
        pass


def parent_work():
    end = time.process_time() + SECONDS
    while time.process_time() < end:
        pass


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
