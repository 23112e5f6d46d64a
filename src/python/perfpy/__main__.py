"""`python -m perfpy ARGS...`: the perfpy command pip put on PATH, run with
ARGS (the same program: this only finds it and execs it)."""
import os
import sys

from perfpy import _installed


def main():
    command = _installed("bin/perfpy")
    if not command:
        sys.stderr.write("perfpy: cannot find the perfpy command of this installation "
                         "(no RECORD names bin/perfpy): reinstall perfpy with pip\n")
        return 1
    try:
        os.execv(command, ["perfpy"] + sys.argv[1:])
    except OSError as e:
        sys.stderr.write("perfpy: cannot run %s: %s\n" % (command, e.strerror))
        return 1


if __name__ == "__main__":
    sys.exit(main())
