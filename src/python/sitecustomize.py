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
    names = os.environ.get("PERFPY_LINES_DIR")
    if names:
        _perfpy_thread_names(names)
    return here, False


def _perfpy_thread_names(where):
    """perfpy record's thread names: perf knows a thread by its OS name,
    which CPython before 3.14 never sets from threading's (and 3.14 cuts to
    15 bytes), so each thread's Thread.name is written, when the thread
    starts and when it is renamed, to <where>/perfpy-<pid>.threads as
    "<tid> <name>" lines (include/perfpy/lines_format.h), which the report
    reads. Two of threading.Thread's methods are wrapped, nothing else
    changes: _set_native_id (which every thread runs when it starts, the
    main and foreign ones when threading first sees them) and the name
    setter; neither stays on a thread's stack. threading is patched when it
    is imported, not imported early (gevent must patch it first)."""

    def write(native_id, name):
        try:
            line = "%d %s\n" % (native_id, str(name).replace("\\", "\\\\")
                                 .replace("\n", "\\n"))
            fd = os.open(os.path.join(where, "perfpy-%d.threads" % os.getpid()),
                         os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                os.write(fd, line.encode("utf-8", "replace"))
            finally:
                os.close(fd)
        except Exception:   # a profiler must not stop a thread
            pass

    def patch(threading):
        cls = threading.Thread
        started = getattr(cls, "_set_native_id", None)
        prop = cls.__dict__.get("name")
        if started is None or not isinstance(prop, property) or prop.fset is None:
            return

        def _set_native_id(self):
            started(self)
            write(self._native_id, self._name)

        def name(self, value):
            prop.fset(self, value)
            if getattr(self, "_native_id", None) is not None:
                write(self._native_id, self._name)

        cls._set_native_id = _set_native_id
        cls.name = property(prop.fget, name, prop.fdel, prop.__doc__)
        try:        # those it knew before: the main thread, made on import
            for t in threading.enumerate():
                if getattr(t, "_native_id", None) is not None:
                    write(t._native_id, t._name)
        except Exception:
            pass

    if "threading" in sys.modules:      # imported by site (some builds do)
        patch(sys.modules["threading"])
        return

    class _PerfpyThreading(object):
        """Patches threading when it is imported, then steps aside."""

        @classmethod
        def find_spec(cls, name, path=None, target=None):
            if name != "threading":
                return None
            if cls in sys.meta_path:
                sys.meta_path.remove(cls)
            for finder in sys.meta_path:
                find = getattr(finder, "find_spec", None)
                spec = find(name, path, target) if find else None
                if spec is not None:
                    break
            else:
                return None
            loader = spec.loader
            run = getattr(loader, "exec_module", None)
            if run is None:
                return spec

            def exec_module(module):
                run(module)
                patch(module)

            try:
                loader.exec_module = exec_module
            except Exception:
                pass
            return spec

    sys.meta_path.insert(0, _PerfpyThreading)


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
