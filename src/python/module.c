/*
 * The Python-facing module `perfpy`: the same words as CPython's sys API,
 * on every CPython from 3.8.
 *
 *   perfpy.activate_stack_trampoline("perf" | "perf_jit")
 *   perfpy.deactivate_stack_trampoline()
 *   perfpy.is_stack_trampoline_active()
 *
 * and the startup switch resolution used by the startup hooks
 * (sitecustomize.py for `perfpy run`, perfpy-startup.pth when installed):
 *
 *   PERFPY=perf|jit                 perfpy's engine, on any version
 *   -X perf, PYTHONPERFSUPPORT=1    map mode  } as CPython 3.13 reads them:
 *   -X perf_jit,                    jit mode  } jit beats map, -X turns a
 *     PYTHON_PERF_JIT_SUPPORT=1               } mode on even if its variable
 *                                               is 0; left to CPython where
 *                                               it handles the mode (perf
 *                                               from 3.12, perf_jit 3.13)
 *
 * Errors become exceptions here and only here; _startup() never raises (a
 * profiler must not stop a program from starting): it prints one line.
 */
#include "binding.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const pp_backend_ops *backend_named(const char *name)
{
    if (strcmp(name, "perf") == 0)
        return &pp_perfmap_ops;
    if (strcmp(name, "perf_jit") == 0)
        return &pp_jitdump_ops;
    return NULL;
}

static int raise_for(const pp_activation_error *e)
{
    switch (e->why) {
    case PP_ERR_PYTHON:
        break;   /* already set */
    case PP_ERR_ENGINE_OPEN:
        errno = -e->err;
        PyErr_Format(PyExc_OSError, "perfpy: %s", e->message);
        break;
    case PP_ERR_BACKEND_IN_USE:
        PyErr_Format(PyExc_ValueError, "perfpy: %s", e->message);
        break;
    default:
        PyErr_Format(PyExc_RuntimeError, "perfpy: %s", e->message);
        break;
    }
    return -1;
}

/* ---- sys's trampoline functions, served by the engine that owns the hook --

 * From perfpy's first activation in a process (3.12+, where sys has them)
 * sys.activate_stack_trampoline, sys.deactivate_stack_trampoline and
 * sys.is_stack_trampoline_active are replaced by functions that give
 * CPython's answers for whichever engine owns the hook, so a program (or
 * CPython's own test suite) that uses them behaves as without perfpy:
 *
 *   activate(b)   b is the backend of perfpy's engine: perfpy's engine
 *                 (on again if it was off; CPython's own, if on, taken over)
 *                 "perf" with perfpy's jitdump engine: perfpy's engine, and
 *                 each new trampoline also named in CPython's perf map
 *                 "perf_jit" with perfpy's perf-map engine (3.13+): perfpy
 *                 steps aside for good and CPython's own starts (perfpy
 *                 never writes two formats' dumps in one process)
 *                 anything else: CPython's (its ValueError, its TypeError)
 *   deactivate()  perfpy's engine on: off, nothing handed back; else
 *                 CPython's, then CPython's map file closed (compat.h)
 *   is_active()   perfpy's engine is on, or CPython's own trampoline is
 *
 * Before 3.12 sys has none of them and nothing is replaced (perfpy's own
 * functions are the API there). Without these, CPython 3.12-3.14 refused
 * (RuntimeError "Trampoline cannot be initialized as a custom eval frame is
 * already present") and 3.15 put its trampoline over perfpy's. */
enum { SYS_ACTIVATE, SYS_DEACTIVATE, SYS_IS_ACTIVE, SYS_N };
static PyObject *sys_original[SYS_N];

static int activate(const char *name);

static PyObject *sys_activate(PyObject *self, PyObject *args, PyObject *kw)
{
    const char *mine = pp__backend_in_use(), *name;   /* perfpy's engine's */
    PyObject *arg, *r;

    if (kw || PyTuple_GET_SIZE(args) != 1 || !PyUnicode_Check(PyTuple_GET_ITEM(args, 0)))
        return PyObject_Call(sys_original[SYS_ACTIVATE], args, kw);
    arg = PyTuple_GET_ITEM(args, 0);
    name = PyUnicode_AsUTF8(arg);
    if (!name)
        return NULL;
    if (!mine || !pp_cpython_handles(name) || !pp__serves_this_interpreter())
        return PyObject_Call(sys_original[SYS_ACTIVATE], args, kw);
    if (strcmp(name, mine) == 0 || strcmp(name, "perf") == 0) {
        if (activate(mine) < 0)
            return NULL;
        pp__name_in_cpython_map(strcmp(name, mine) != 0);
        Py_RETURN_NONE;
    }
    /* CPython's own, if it takes it (3.13.0 knows "perf_jit" only as -X
     * perf_jit: its sys refuses the name, and perfpy's engine goes on). */
    pp__deactivate_for_good();
    r = PyObject_Call(sys_original[SYS_ACTIVATE], args, kw);
    if (!r) {
        pp_saved_error saved;

        pp_error_save(&saved);
        if (activate(mine) < 0)
            PyErr_Clear();
        pp_error_restore(&saved);
    }
    return r;
}

static PyObject *sys_deactivate(PyObject *self, PyObject *args, PyObject *kw)
{
    PyObject *r;

    if (pp__is_active()) {
        pp__deactivate_for_good();
        Py_RETURN_NONE;
    }
    r = PyObject_Call(sys_original[SYS_DEACTIVATE], args, kw);
    if (r)
        pp_cpython_perf_map_close();
    return r;
}

static PyObject *sys_is_active(PyObject *self, PyObject *args, PyObject *kw)
{
    if (pp__is_active())
        Py_RETURN_TRUE;
    return PyObject_Call(sys_original[SYS_IS_ACTIVE], args, kw);
}

static PyMethodDef sys_served[SYS_N] = {
    {"activate_stack_trampoline", (PyCFunction)(void (*)(void))sys_activate,
     METH_VARARGS | METH_KEYWORDS,
     "activate_stack_trampoline($module, backend, /)\n--\n\n"
     "Activate stack profiler trampoline *backend* (CPython's function, served\n"
     "by perfpy's engine while it owns the hook: see perfpy's README)."},
    {"deactivate_stack_trampoline", (PyCFunction)(void (*)(void))sys_deactivate,
     METH_VARARGS | METH_KEYWORDS,
     "deactivate_stack_trampoline($module, /)\n--\n\n"
     "Deactivate the current stack profiler trampoline backend (perfpy's\n"
     "engine or CPython's, whichever owns the hook)."},
    {"is_stack_trampoline_active", (PyCFunction)(void (*)(void))sys_is_active,
     METH_VARARGS | METH_KEYWORDS,
     "is_stack_trampoline_active($module, /)\n--\n\n"
     "Return *True* if a stack profiler trampoline is active (perfpy's or\n"
     "CPython's)."},
};

PyObject *pp__cpython_sys_function(const char *name)
{
    for (int i = 0; i < SYS_N; i++)
        if (sys_original[i] && strcmp(sys_served[i].ml_name, name) == 0)
            return sys_original[i];
    return PySys_GetObject(name);   /* borrowed */
}

/* Replaces sys's three functions once, in the main interpreter. */
static int serve_sys_trampoline(void)
{
    static int done;

    if (done || !pp__serves_this_interpreter())
        return 0;
    for (int i = 0; i < SYS_N; i++)
        if (!PySys_GetObject(sys_served[i].ml_name))   /* borrowed */
            return 0;   /* before 3.12: nothing to serve */
    for (int i = 0; i < SYS_N; i++) {
        PyObject *orig = PySys_GetObject(sys_served[i].ml_name);
        PyObject *f = PyCFunction_New(&sys_served[i], NULL);
        int rc;

        if (!f)
            return -1;
        Py_INCREF(orig);
        rc = PySys_SetObject(sys_served[i].ml_name, f);
        Py_DECREF(f);
        if (rc < 0) {
            Py_DECREF(orig);
            return -1;
        }
        sys_original[i] = orig;
    }
    done = 1;
    return 0;
}

/* ---- daemon threads at exit (3.10) ---------------------------------------- */

/* Switch interval set at exit: long enough that no GIL wait begun after it
 * ends before the process does. */
#define PP_EXIT_SWITCH_INTERVAL 1e6

/* How long the GIL is held at exit when other threads live: waits begun
 * before the interval changed (5 ms by default) time out while the
 * interpreter still exists, and wait again with the long interval. Ten
 * old intervals leave room for a waiter the scheduler runs late: CI on a
 * loaded 2-core machine crashed once (3.10, run 1 of 20, perf mode) with
 * the interval change alone. */
#define PP_EXIT_HOLD_INTERVALS 10

/* Holds the GIL (a plain sleep, never released) for PP_EXIT_HOLD_INTERVALS
 * old switch intervals, only when another thread of the interpreter lives:
 * a program without threads exits as fast as without perfpy. */
static void hold_gil_past_old_waits(double old)
{
    PyThreadState *me = PyThreadState_Get();
    PyThreadState *t = PyInterpreterState_ThreadHead(me->interp);
    struct timespec ts;
    double secs;

    while (t && t == me)
        t = PyThreadState_Next(t);
    if (!t)
        return;
    secs = old * PP_EXIT_HOLD_INTERVALS;
    ts.tv_sec = (time_t)secs;
    ts.tv_nsec = (long)((secs - (double)ts.tv_sec) * 1e9);
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* Run by atexit, after the program's own handlers (registered before them,
 * at perfpy's first activation) and once its non-daemon threads are joined:
 * only daemon threads and the interpreter's own finalization run after it.
 * A GIL wait that times out after Py_FinalizeEx freed the interpreter is
 * where CPython 3.10 writes into it (compat.h); with this interval no wait
 * begun from here on times out. The daemon threads still exit as CPython
 * makes them: when they are handed the GIL. */
static PyObject *quiet_gil_waits(PyObject *self, PyObject *unused)
{
    PyObject *g = PySys_GetObject("getswitchinterval");   /* borrowed */
    PyObject *f = PySys_GetObject("setswitchinterval");   /* borrowed */
    PyObject *r = g ? PyObject_CallObject(g, NULL) : NULL;
    double old = r ? PyFloat_AsDouble(r) : -1.0;

    Py_XDECREF(r);
    PyErr_Clear();
    if (!(old > 0.0 && old < 1.0))
        old = 0.005;   /* CPython's default */
    r = f ? PyObject_CallFunction(f, "d", PP_EXIT_SWITCH_INTERVAL) : NULL;
    Py_XDECREF(r);
    PyErr_Clear();
    hold_gil_past_old_waits(old);
    Py_RETURN_NONE;
}

static PyMethodDef quiet_gil_waits_def = {
    "_quiet_gil_waits", quiet_gil_waits, METH_NOARGS,
    "At exit, on CPython 3.10: no daemon thread's GIL wait times out after the "
    "interpreter is freed."};

/* Registers quiet_gil_waits with atexit once, where it is needed. A failure
 * is not the program's business: the guard is then absent, nothing else. */
static void guard_exit(void)
{
    static int done;
    PyObject *atexit, *f, *r = NULL;

    if (done || !pp_daemon_waits_touch_freed_interpreter())
        return;
    done = 1;
    atexit = PyImport_ImportModule("atexit");
    f = PyCFunction_New(&quiet_gil_waits_def, NULL);
    if (atexit && f)
        r = PyObject_CallMethod(atexit, "register", "O", f);
    Py_XDECREF(r);
    Py_XDECREF(f);
    Py_XDECREF(atexit);
    PyErr_Clear();
}

static int activate(const char *name)
{
    const pp_backend_ops *ops = backend_named(name);
    pp_activation_error e;

    if (!ops) {
        PyErr_Format(PyExc_ValueError,
                     "invalid backend: %s (expected 'perf' or 'perf_jit')", name);
        return -1;
    }
    if (pp__activate(ops, &e) < 0)
        return raise_for(&e);
    if (serve_sys_trampoline() < 0) {
        pp__deactivate();
        return -1;
    }
    guard_exit();
    return 0;
}

static PyObject *activate_stack_trampoline(PyObject *self, PyObject *arg)
{
    const char *name;

    if (!PyUnicode_Check(arg)) {
        PyErr_Format(PyExc_TypeError,
                     "activate_stack_trampoline() argument must be str, not %.100s",
                     Py_TYPE(arg)->tp_name);
        return NULL;
    }
    name = PyUnicode_AsUTF8(arg);
    if (!name)
        return NULL;
    if (activate(name) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *deactivate_stack_trampoline(PyObject *self, PyObject *unused)
{
    pp__deactivate();
    Py_RETURN_NONE;
}

static PyObject *is_stack_trampoline_active(PyObject *self, PyObject *unused)
{
    return PyBool_FromLong(pp__is_active());
}

static PyObject *after_fork_child(PyObject *self, PyObject *unused)
{
    pp__after_fork_child();
    Py_RETURN_NONE;
}

static PyObject *stats(PyObject *self, PyObject *unused)
{
    const char *backend = pp__backend_in_use();
    int cpython = pp__cpython_trampoline_on();

    if (cpython < 0)
        return NULL;
    return Py_BuildValue("{s:n,s:n,s:d,s:s,s:O,s:O}",
                         "trampolines", (Py_ssize_t)pp__trampolines(),
                         "extra_index", pp__extra_index(),
                         "bytes_per_trampoline", pp__bytes_per_trampoline(),
                         "backend", backend ? backend : "",
                         "active", pp__is_active() ? Py_True : Py_False,
                         "cpython", cpython ? Py_True : Py_False);
}

/* ---- startup switches ------------------------------------------------------ */

/* A CPython-style integer switch: set and non-zero. */
static int env_on(const char *name)
{
    const char *v = getenv(name);
    char *end;
    long n;

    if (!v || !*v)
        return 0;
    n = strtol(v, &end, 10);
    if (*end != '\0') {
        fprintf(stderr, "perfpy: %s=%s is not a number; ignored\n", name, v);
        return 0;
    }
    return n != 0;
}

static int xoption(const char *name)
{
    PyObject *x = PySys_GetXOptions();   /* borrowed */

    return x && PyDict_GetItemString(x, name) != NULL;
}

/* The backend CPython's own switches ask for, or NULL. The order is
 * CPython 3.13's (Python/initconfig.c): each later switch that is on wins,
 * so jit beats map whatever the source, and an -X option turns a mode on
 * even where its environment variable says 0. */
static const char *cpython_switch(void)
{
    const char *mode = NULL;

    if (env_on("PYTHONPERFSUPPORT"))
        mode = "perf";
    if (xoption("perf"))
        mode = "perf";
    if (env_on("PYTHON_PERF_JIT_SUPPORT"))
        mode = "perf_jit";
    if (xoption("perf_jit"))
        mode = "perf_jit";
    return mode;
}

/* The backend PERFPY asks for, "" if unset, NULL if invalid. */
static const char *perfpy_switch(void)
{
    const char *v = getenv("PERFPY");

    if (!v || !*v || strcmp(v, "0") == 0 || strcmp(v, "off") == 0)
        return "";
    if (strcmp(v, "perf") == 0 || strcmp(v, "map") == 0)
        return "perf";
    if (strcmp(v, "jit") == 0 || strcmp(v, "perf_jit") == 0)
        return "perf_jit";
    fprintf(stderr, "perfpy: PERFPY=%s is not one of perf, jit; ignored\n", v);
    return NULL;
}

static PyObject *startup(PyObject *self, PyObject *unused)
{
    static const char *started;   /* the backend of the first call */
    const char *mine, *theirs, *want = NULL;

    /* A subinterpreter started with the switches inherited: perfpy serves
     * the main interpreter only, and says nothing here (there may be many). */
    if (!pp__serves_this_interpreter())
        return PyUnicode_FromString("");
    /* Both startup hooks (`perfpy run`'s sitecustomize and an installed
     * perfpy-startup.pth) may call this: act, and speak, once. */
    if (started)
        return PyUnicode_FromString(started);
    started = "";
    mine = perfpy_switch();
    theirs = cpython_switch();
    if (mine && *mine)
        want = mine;
    else if (theirs && !pp_cpython_handles(theirs))
        want = theirs;
    if (want && activate(want) < 0) {
        PyObject *type, *value, *tb, *s = NULL;
        PyErr_Fetch(&type, &value, &tb);
        if (value)
            s = PyObject_Str(value);
        fprintf(stderr, "%s%s; %s\n",
                s && PyUnicode_Check(s) && strncmp(PyUnicode_AsUTF8(s), "perfpy", 6) == 0
                    ? "" : "perfpy: ",
                s && PyUnicode_Check(s) ? PyUnicode_AsUTF8(s) : "activation failed",
                pp__cpython_trampoline_on() == 1 ? "CPython's own perf support stays on"
                                            : "the program runs without perf support");
        Py_XDECREF(s);
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
        PyErr_Clear();
    }
    /* PERFPY=jit with CPython's -X perf (or PYTHONPERFSUPPORT=1): perfpy's
     * engine took CPython's trampoline over, and names its trampolines in
     * CPython's map too, as the program asked (sys.activate_stack_trampoline
     * ("perf") does the same). */
    if (want && theirs && strcmp(theirs, "perf") == 0 && strcmp(want, "perf_jit") == 0 &&
        pp_cpython_handles(theirs) && pp__is_active())
        pp__name_in_cpython_map(1);
    started = want ? want : "";
    return PyUnicode_FromString(started);
}

static PyMethodDef methods[] = {
    {"activate_stack_trampoline", activate_stack_trampoline, METH_O,
     "activate_stack_trampoline(backend)\n--\n\n"
     "Name Python functions for perf from now on. backend is 'perf' (the\n"
     "/tmp/perf-<pid>.map file) or 'perf_jit' (a jitdump with unwinding data\n"
     "for `perf inject --jit`). Activating again is harmless."},
    {"deactivate_stack_trampoline", deactivate_stack_trampoline, METH_NOARGS,
     "deactivate_stack_trampoline()\n--\n\n"
     "Stop making and calling trampolines. Frames already running in one\n"
     "finish normally; files stay open for the next activation."},
    {"is_stack_trampoline_active", is_stack_trampoline_active, METH_NOARGS,
     "is_stack_trampoline_active()\n--\n\nTrue while perfpy's trampolines are in use (always False in a\n"
     "subinterpreter: perfpy serves the main interpreter)."},
    {"_after_fork_child", after_fork_child, METH_NOARGS,
     "Start this child process's own map or dump (called by os.register_at_fork)."},
    {"_stats", stats, METH_NOARGS,
     "Counters for tests and benchmarks: trampolines, extra_index, "
     "bytes_per_trampoline, backend, active, and cpython: whether CPython's "
     "own trampoline is the evaluator."},
    {"_startup", startup, METH_NOARGS,
     "Apply PERFPY / -X perf / -X perf_jit / PYTHONPERFSUPPORT / "
     "PYTHON_PERF_JIT_SUPPORT as CPython would; returns the backend started."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, "perfpy",
    "Name Python functions for the Linux perf profiler (perf map or jitdump)\n"
    "on every CPython from 3.8. See `perfpy --help` for the command line.",
    -1, methods, NULL, NULL, NULL, NULL,
};

/* Children started by os.fork() (multiprocessing included) get their own
 * files before they run anything. */
static int register_at_fork(PyObject *module)
{
    PyObject *os = PyImport_ImportModule("os");
    PyObject *fn = NULL, *reg = NULL, *args = NULL, *kw = NULL, *r = NULL;
    int rc = -1;

    if (!os)
        return -1;
    fn = PyObject_GetAttrString(module, "_after_fork_child");
    reg = PyObject_GetAttrString(os, "register_at_fork");
    args = PyTuple_New(0);
    kw = fn ? Py_BuildValue("{s:O}", "after_in_child", fn) : NULL;
    if (fn && reg && args && kw)
        r = PyObject_Call(reg, args, kw);
    rc = r ? 0 : -1;
    Py_XDECREF(r);
    Py_XDECREF(kw);
    Py_XDECREF(args);
    Py_XDECREF(reg);
    Py_XDECREF(fn);
    Py_DECREF(os);
    return rc;
}

/* Exported by name even where PyMODINIT_FUNC does not say so (3.8) and the
 * module is built with -fvisibility=hidden. */
__attribute__((visibility("default"))) PyMODINIT_FUNC PyInit_perfpy(void);
__attribute__((visibility("default"))) PyMODINIT_FUNC PyInit_perfpy(void)
{
    PyObject *m = PyModule_Create(&moduledef);

    if (!m)
        return NULL;
    if (PyModule_AddStringConstant(m, "__version__", PERFPY_VERSION) < 0 ||
        register_at_fork(m) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
