"""How a benchmark names interpreters and builds in what it writes into
docs/PERFORMANCE.md: as a command anyone can run again, not as a path that
exists only on the machine that ran it (issue 37).

- pyenv's interpreter <root>/versions/3.12.1/bin/python3.12 is written
  "$(pyenv prefix 3.12.1)"/bin/python3.12 (a heading says "pyenv 3.12.1");
  Debian's /usr/bin/python3.X stays as it is (scripts/sidroot has it);
- a build directory outside the clone (--baseline) is written
  ../perfpy-COMMIT/build (BUILD), the commit it was built from:
  `git worktree add ../perfpy-COMMIT COMMIT && make -C ../perfpy-COMMIT`
  makes it again (docs/PERFORMANCE.md says so at its top)."""
import os
import re
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYENV = re.compile(r"/\.?pyenv/versions/([^/]+)/bin/([^/]+)$")


def py_arg(py):
    """An interpreter as a command line names it."""
    m = PYENV.search(py)
    return '"$(pyenv prefix %s)"/bin/%s' % m.groups() if m else py


def py_label(py):
    """An interpreter as a heading names it."""
    m = PYENV.search(py)
    return "pyenv %s" % m.group(1) if m else "`%s`" % py


def build_arg(path):
    """A build directory as a command line names it."""
    full = os.path.abspath(path)
    rel = os.path.relpath(full, ROOT)
    if not rel.startswith(".."):
        return rel
    p = subprocess.run(["git", "-C", os.path.dirname(full), "rev-parse", "--short", "HEAD"],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                       universal_newlines=True)
    commit = p.stdout.strip() if p.returncode == 0 else "COMMIT"
    return "../perfpy-%s/%s" % (commit, os.path.basename(full))


def argv(args):
    """Command-line words with each interpreter path made portable."""
    return [py_arg(a) for a in args]
