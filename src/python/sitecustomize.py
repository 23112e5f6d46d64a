# perfpy's startup hook for `perfpy run` and `perfpy record`.
#
# perfpy puts the directory holding this file and the perfpy module builds
# (one per CPython version, told apart by their ABI suffix) first on
# PYTHONPATH, so every Python process it starts, and their Python children,
# import this file at startup and switch the engine on as PERFPY asks. The
# directory is then taken off sys.path, and the sitecustomize it shadowed
# (Debian ships one) still runs.
import os
import sys


def _perfpy_start():
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        import perfpy
    except ImportError as e:
        if "subinterpreter" in str(e):
            # An isolated subinterpreter (3.12+) refuses perfpy's
            # single-phase module: perfpy serves the main interpreter only.
            # Quietly; `import perfpy` there gives CPython's own error.
            return here, True
        sys.stderr.write(
            "perfpy: no perfpy module for Python %d.%d in %s (%s); the program "
            "runs without perf support. perfpy supports CPython 3.8 to 3.15: "
            "run `make` for this interpreter, or pass another one.\n"
            % (sys.version_info[0], sys.version_info[1], here, e))
        return here, False
    perfpy._startup()
    return here, False


def _chain(here, keep):
    """Runs the next sitecustomize on sys.path, the one this file shadows."""
    sys.path[:] = [p for p in sys.path
                   if os.path.abspath(p or os.curdir) != here]
    me = sys.modules.pop("sitecustomize")
    try:
        import sitecustomize  # noqa: F401  (the shadowed one, if any)
    except ImportError as e:
        if getattr(e, "name", None) != "sitecustomize":
            raise
    finally:
        sys.modules.setdefault("sitecustomize", me)
        if keep:
            sys.path.append(here)


_chain(*_perfpy_start())
