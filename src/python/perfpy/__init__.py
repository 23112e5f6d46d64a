"""perfpy as pip installs it: the package `import perfpy` finds.

pip lays perfpy out as `make install PREFIX=<the environment>` does: the
command in <env>/bin, its module directory in <env>/lib/perfpy (the module
built for each CPython, and the sitecustomize.py that `perfpy record` and
`perfpy run` put first on PYTHONPATH), and, in site-packages, this package
and perfpy-startup.pth (docs/packaging.md). This package loads the running
interpreter's module from that directory, found through the installation's
RECORD (so --user and --prefix installs work too), and re-exports it:
`import perfpy` gives the module's API, `perfpy.__version__` included.
`python -m perfpy` runs the command (__main__.py).

Under `perfpy record` or `perfpy run` the module directory comes first on
sys.path and `import perfpy` gets the module from there directly; this file
then never runs.
"""
import os
import sys


def _installed(tail):
    """The installed file whose path ends with TAIL ('/'-separated), as
    the installation's RECORD names it; None if it names none."""
    import csv
    site = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    infos = [n for n in os.listdir(site)
             if n.startswith("perfpy-") and n.endswith(".dist-info")]
    for info in infos:
        try:
            with open(os.path.join(site, info, "RECORD"), newline="") as f:
                rows = list(csv.reader(f))
        except OSError:
            continue
        for row in rows:
            path = os.path.normpath(os.path.join(site, row[0])) if row else ""
            if path.endswith(os.sep + tail.replace("/", os.sep)):
                return path
    return None


def _load():
    """The perfpy module built for this interpreter, from the module directory."""
    import importlib.machinery
    import importlib.util
    hook = _installed("lib/perfpy/sitecustomize.py")
    if not hook:
        raise ImportError("perfpy: cannot find perfpy's module directory (no RECORD "
                          "beside %s names it): reinstall perfpy with pip" % __file__)
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    path = os.path.join(os.path.dirname(hook), "perfpy" + suffix)
    if not os.path.isfile(path):
        raise ImportError(
            "perfpy: no perfpy module for Python %d.%d in %s: this perfpy was built "
            "without it (perfpy supports CPython 3.8 to 3.15; reinstall from source "
            "with this interpreter's headers: pip install --no-binary perfpy perfpy)"
            % (sys.version_info[:2] + (os.path.dirname(hook),)), path=path)
    loader = importlib.machinery.ExtensionFileLoader("perfpy", path)
    spec = importlib.util.spec_from_file_location("perfpy", path, loader=loader)
    me = sys.modules[__name__]
    try:
        module = importlib.util.module_from_spec(spec)
        loader.exec_module(module)
    finally:
        # CPython files a single-phase module under its name: this package
        # stays what `import perfpy` gives.
        sys.modules[__name__] = me
    return module


_module = _load()
for _name in dir(_module):
    if not _name.startswith("__") or _name in ("__version__", "__doc__"):
        globals()[_name] = getattr(_module, _name)
del _name
