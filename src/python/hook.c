/*
 * The frame-evaluation hook (PEP 523) and the code -> trampoline cache.
 *
 * CPython evaluates every Python frame through interp->eval_frame. perfpy
 * installs pp_eval there; for each frame it finds the trampoline of the
 * frame's code object (made on the code's first call, cached in a code-extra
 * slot) and calls the real evaluator through it:
 *
 *   caller's C stack                      after perfpy
 *   _PyEval_EvalFrameDefault (caller)     _PyEval_EvalFrameDefault (caller)
 *   _PyEval_Vector                        _PyEval_Vector
 *   _PyEval_EvalFrameDefault (callee)     pp_eval            (may be a tail call)
 *                                         py::callee:app.py  (trampoline)
 *                                         _PyEval_EvalFrameDefault (callee)
 *
 * The evaluator the trampoline calls is whatever was installed before perfpy
 * (a debugger's hook, say), so other tools keep working: perfpy chains.
 * CPython's own trampoline (3.12+) is the exception: perfpy takes it over
 * (one trampoline per call; CPython's map file closed, see compat.h) and
 * perfpy.deactivate_stack_trampoline() hands it back, without calling
 * CPython (compat.h says why). While perfpy's engine owns the hook, sys's
 * activate/deactivate/is_stack_trampoline_active are served by it
 * (module.c): sys's deactivation turns tracing off for good (nothing is
 * handed back), and sys.activate_stack_trampoline("perf") with the jitdump
 * engine also names each new trampoline in CPython's perf map.
 *
 * Rules kept here:
 * - one code-extra index for the life of the process (CPython allows ~254);
 * - one engine (one arena) for the life of the process: toggling is a flag;
 * - a failure inside the hook never breaks the program: it falls back to the
 *   plain evaluator, turns perfpy off, and says so once on stderr;
 * - everything runs under the GIL; the engine locks for itself as well;
 * - the native stack is guarded: with any hook installed every Python call
 *   is a C call (3.11+ stop inlining them), so a recursion the plain
 *   interpreter survives could overflow the C stack. Past S.deep Python
 *   frames the hook checks the stack pointer against the thread's stack
 *   (cached per thread) and, when less than a margin is left, raises
 *   RecursionError in the frame instead of crashing. S.deep starts at
 *   PP_DEEP and is lowered when a thread with a small stack (threading.
 *   stack_size, C libraries' threads) first enters Python: its stack is
 *   measured at its first frame (Python depth 0), so it is checked long
 *   before PP_DEEP frames would have overflowed it;
 * - only the main interpreter is served: a subinterpreter shares the
 *   process but not the interpreter state the hook lives in (isolated ones
 *   cannot even import this single-phase module); there activation is
 *   refused with a message and deactivation does nothing.
 */
#include "binding.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Python depth from which the native stack is checked on every call, in
 * threads with large stacks (S.deep is lowered for small ones). */
#define PP_DEEP 256
/* Stack kept free for the frame that raises and the handlers that run:
 * this, or a quarter of a small stack. */
#define PP_STACK_MARGIN (256u * 1024u)
/* Native stack one Python call may take with the hook, at most: about
 * 0.6 KB for plain recursion, more when C functions sit between the Python
 * frames (sorted(key=...), __getattr__, generators). Used to decide from
 * which depth a small stack is checked. */
#define PP_FRAME_BOUND 4096u

static struct {
    pp_engine *engine;
    const pp_backend_ops *ops;
    PyInterpreterState *interp;   /* the one interpreter perfpy serves */
    Py_ssize_t extra;             /* code-extra index, -1 until needed */
    pp_evaluator prev;            /* what trampolines call */
    pp_evaluator cpython;         /* CPython's own, taken over: handed back */
    int active;
    int map_too;                  /* also name trampolines in CPython's map */
    pid_t map_pid;                /* the process whose map CPython's FILE is */
    int failed;                   /* a failure turned perfpy off for good */
    int fast_extra;               /* co_extra read directly (checked layout) */
    int deep;                     /* depth from which the stack is checked */
} S = { .extra = -1, .deep = PP_DEEP };

static PyObject *pp_eval(PP_EVAL_PARAMS);

/* Turns perfpy off after a failure inside the hook; says once what it
 * could not do: "cannot <what> <the engine's file that failed>". */
static void fail_once(const char *what, int err)
{
    const char *file = S.engine ? pp_engine_failed_file(S.engine) : NULL;

    if (!S.failed)
        fprintf(stderr, "perfpy: cannot %s%s%s: %s; Python functions are no "
                "longer named for perf from here on (the program continues)\n",
                file ? "write " : what, file ? file : "",
                file && strstr(what, "child") ? " (this child process's own file)" : "",
                strerror(err > 0 ? err : -err));
    S.failed = 1;
    pp__deactivate();
}

/* UTF-8 of a str, never failing: the str's own cached UTF-8 when it has
 * one (no copy), else an escaped copy kept alive in *keep (lone surrogates
 * from undecodable file names are written as \udcxx). */
static const char *utf8_of(PyObject *s, PyObject **keep)
{
    const char *u;

    *keep = NULL;
    if (!s || !PyUnicode_Check(s))
        return "?";
    u = PyUnicode_AsUTF8AndSize(s, NULL);
    if (u)
        return u;
    PyErr_Clear();
    *keep = PyUnicode_AsEncodedString(s, "utf-8", "backslashreplace");
    if (!*keep) {
        PyErr_Clear();
        return "?";
    }
    return PyBytes_AS_STRING(*keep);
}

/* sys.activate_stack_trampoline("perf") served by the jitdump engine: the
 * trampoline is also named in /tmp/perf-<pid>.map, by CPython's own writer,
 * as CPython's trampoline would name it. A failure there costs the map line
 * only (CPython's writer reports none either). */
static void name_in_cpython_map(const pp_symbol *sym)
{
    char small[1024], *name = small;
    size_t n = pp_symbol_name(small, sizeof(small), sym);

    /* A fork child may make trampolines (at-fork handlers in Python)
     * before pp__after_fork_child closes the FILE it inherited: never
     * write the child's names into the parent's map. */
    if (S.map_pid != getpid()) {
        pp_cpython_perf_map_close();
        S.map_pid = getpid();
    }
    if (n >= sizeof(small)) {
        name = malloc(n + 1);
        if (!name)
            return;
        pp_symbol_name(name, n + 1, sym);
    }
    pp_cpython_perf_map_write(sym->code, sym->code_size, name);
    if (name != small)
        free(name);
}

static pp_trampoline_fn create(PyObject *code, void *extra)
{
    pp_trampoline_fn fn = NULL;
    PyObject *keep_q = NULL, *keep_f = NULL;
    const char *pending = pp__pending_name(extra);
    char *qualname = NULL;
    pp_symbol sym;
    int rc;

    memset(&sym, 0, sizeof(sym));
    if (pending) {
        /* The slot owns the pending name until the trampoline replaces
         * it (and frees it): keep a copy for the children's names. */
        qualname = strdup(pending);
        sym.qualname = qualname ? qualname : "?";
    } else {
        PyObject *q = pp_code_qualname(code);
        sym.qualname = utf8_of(q ? q : pp_code_name(code), &keep_q);
    }
    sym.filename = utf8_of(pp_code_filename(code), &keep_f);
    sym.firstlineno = pp_code_firstlineno(code);
    pp__name_children(code, sym.qualname, S.extra);
    rc = pp_engine_register(S.engine, &sym, &fn);
    if (rc < 0) {
        fn = NULL;
        fail_once("register a trampoline", rc);
        goto out;
    }
    if (S.map_too)
        name_in_cpython_map(&sym);
    /* Replacing the slot's value frees a pending name (CPython calls our
     * freefunc on the old value). On failure the trampoline is registered
     * but not cached: it runs now and another is made next time. */
    if (pp_code_set_extra(code, S.extra, (void *)(uintptr_t)fn) < 0)
        PyErr_Clear();
out:
    free(qualname);
    Py_XDECREF(keep_q);
    Py_XDECREF(keep_f);
    return fn;
}

/* The slow path, out of line: it may touch Python APIs, so whatever
 * exception the frame is being evaluated with is kept aside. */
static __attribute__((noinline)) pp_trampoline_fn
slow_path(PyObject *code, void *extra)
{
    pp_saved_error saved;
    pp_trampoline_fn fn;

    pp_error_save(&saved);
    fn = create(code, extra);
    pp_error_restore(&saved);
    return fn;
}

/* Lowest address this thread's stack may reach before perfpy refuses to go
 * deeper; 0 until measured, 1 when the stack's bounds are unknown. */
static __thread uintptr_t stack_floor;

/* Measures this thread's stack at Python depth `depth`, and lowers S.deep
 * so that, from here, the frames before the first check cannot take more
 * than the stack above the floor (PP_FRAME_BOUND each). */
static __attribute__((noinline)) void measure_stack(int depth)
{
    uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    pthread_attr_t attr;
    void *lo = NULL;
    size_t size = 0, margin, frames;

    stack_floor = 1;
    if (pthread_getattr_np(pthread_self(), &attr) != 0)
        return;
    if (pthread_attr_getstack(&attr, &lo, &size) == 0 && lo && size > 0) {
        margin = size / 4 < PP_STACK_MARGIN ? size / 4 : PP_STACK_MARGIN;
        stack_floor = (uintptr_t)lo + margin;
        frames = here > stack_floor ? (here - stack_floor) / PP_FRAME_BOUND : 0;
        if (depth < 0)
            depth = 0;
        if (frames + (size_t)depth < (size_t)S.deep)
            S.deep = frames + (size_t)depth < 2 ? 2 : (int)(frames + (size_t)depth);
    }
    pthread_attr_destroy(&attr);
}

static int stack_nearly_full(int depth)
{
    if (stack_floor == 0)
        measure_stack(depth);
    return (uintptr_t)__builtin_frame_address(0) < stack_floor;
}

/* Out of line: the first call of a code object (or one with a pending
 * name), and every call when co_extra cannot be read directly. */
static __attribute__((noinline)) PyObject *other_call(PP_EVAL_PARAMS)
{
    PyObject *code = pp_frame_code(frame);
    void *extra = pp_code_extra(code, S.extra);
    pp_trampoline_fn fn = (pp_trampoline_fn)(uintptr_t)extra;

    if (!extra || pp__is_pending_name(extra))
        fn = slow_path(code, extra);
    return fn ? PP_TRAMP_CALL(fn, S.prev) : PP_EVAL_CALL(S.prev);
}

/* Every call, as short as it can be: each way out is a tail call, so no
 * frame of perfpy's stays on the stack and no register is saved. */
#define PP_HOT_PATH                                                        \
    do {                                                                   \
        PyObject *code_ = pp_frame_code(frame);                            \
        if (__builtin_expect(S.active && code_ && PyCode_Check(code_), 1)) { \
            void *x_ = S.fast_extra ? pp_code_extra_fast(code_, S.extra) : NULL; \
            if (__builtin_expect(x_ != NULL && !pp__is_pending_name(x_), 1)) \
                return PP_TRAMP_CALL(x_, S.prev);                          \
            return other_call(PP_EVAL_ARGS);                               \
        }                                                                  \
        return PP_EVAL_CALL(S.prev);                                       \
    } while (0)

/* A thread's first frame (depth 0: its stack is measured) or a deep one:
 * check the native stack first. */
static __attribute__((noinline)) PyObject *guarded_call(PP_EVAL_PARAMS)
{
    if (stack_nearly_full(PP_PYTHON_DEPTH())) {
        PyErr_Format(PyExc_RecursionError,
                     "maximum recursion depth exceeded: the native stack is "
                     "nearly full at %d Python frames (with perf support on, "
                     "every Python call is also a C call)", PP_PYTHON_DEPTH());
        return PP_EVAL_THROW(S.prev);
    }
    PP_HOT_PATH;
}

/* The hook itself keeps no frame pointer (the build asks for them
 * everywhere): two instructions less per Python call. Only gcc can say so
 * per function; clang builds it with push/pop %rbp around the same tail
 * calls. */
#if defined(__GNUC__) && !defined(__clang__)
#define PP_NO_FRAME_POINTER __attribute__((optimize("omit-frame-pointer")))
#else
#define PP_NO_FRAME_POINTER
#endif

static PP_NO_FRAME_POINTER PyObject *pp_eval(PP_EVAL_PARAMS)
{
    /* One compare for both: depth 0 wraps around to the largest value. */
    if (__builtin_expect((unsigned)PP_PYTHON_DEPTH() - 1u >= (unsigned)S.deep, 0))
        return guarded_call(PP_EVAL_ARGS);
    PP_HOT_PATH;
}

/* Whether co_extra has the layout pp_code_extra_fast assumes: a slot set
 * through the API reads back the same through the mirror. */
static int check_fast_extra(void)
{
    PyObject *code = (PyObject *)PyCode_NewEmpty("perfpy", "probe", 1);
    int ok = 0;

    if (!code) {
        PyErr_Clear();
        return 0;
    }
    if (pp_code_set_extra(code, S.extra, (void *)(uintptr_t)0x5050) == 0)
        ok = pp_code_extra_fast(code, S.extra) == (void *)(uintptr_t)0x5050 &&
             pp_code_extra(code, S.extra) == (void *)(uintptr_t)0x5050;
    PyErr_Clear();
    pp_code_set_extra(code, S.extra, NULL);
    PyErr_Clear();
    Py_DECREF(code);
    return ok;
}

/* ---- activation ----------------------------------------------------------- */

static int error(pp_activation_error *e, enum pp_why why, int err,
                 const char *fmt, const char *arg)
{
    e->why = why;
    e->err = err;
    snprintf(e->message, sizeof(e->message), fmt, arg ? arg : "",
             err ? strerror(-err) : "");
    return -1;
}

/* Under perfpy record with perf's libdw unwinder both jitdump writers need
 * /tmp/jit-<pid>.dump (libdw reads jit files only in /tmp). The program
 * asked for CPython's (-X perf_jit), whose dump has no def lines; perfpy's
 * names the same frames and adds them. So CPython's writer is stopped
 * through its own sys.deactivate_stack_trampoline, which leaves its dump
 * open: that descriptor is pointed at /dev/null (what CPython still had
 * buffered goes nowhere) and perfpy's writer takes the path afresh; what
 * CPython wrote is replaced, since from here on every frame is evaluated
 * through perfpy's trampolines (only site start-up ran before). 1 when
 * CPython's writer was stopped. */
static int cpython_jitdump_stopped(const char *path)
{
    PyObject *f, *r;

    if (pp__cpython_trampoline_on() != 1)
        return 0;
    f = pp__cpython_sys_function("deactivate_stack_trampoline");
    if (!f)
        return 0;
    r = PyObject_CallObject(f, NULL);
    if (!r) {
        PyErr_Clear();
        return 0;
    }
    Py_DECREF(r);
    return pp__cpython_trampoline_on() == 0 && pp_file_detach_writers(path) == 0;
}

static int open_engine(const pp_backend_ops *ops, pp_activation_error *e)
{
    pp_engine_config cfg;
    const char *dir = getenv("PERFPY_JITDUMP_DIR");
    const char *lines = getenv("PERFPY_LINES_DIR");
    char where[600];
    int rc;

    memset(&cfg, 0, sizeof(cfg));
    cfg.backend = ops;
    cfg.dir = dir && *dir ? dir : NULL;
    cfg.lines_dir = lines && *lines ? lines : NULL;
    rc = pp_engine_open(&S.engine, &cfg);
    if (rc == -EBUSY && cfg.lines_dir && ops != &pp_perfmap_ops) {
        snprintf(where, sizeof(where), "%s/jit-%d.dump",
                 cfg.dir ? cfg.dir : "/tmp", (int)getpid());
        if (cpython_jitdump_stopped(where))
            rc = pp_engine_open(&S.engine, &cfg);
    }
    if (rc == 0)
        return 0;
    if (ops == &pp_perfmap_ops)
        snprintf(where, sizeof(where), "/tmp/perf-%d.map", (int)getpid());
    else
        snprintf(where, sizeof(where), "%s/jit-%d.dump",
                 cfg.dir ? cfg.dir : "/tmp", (int)getpid());
    /* Under perfpy record (which sets PERFPY_LINES_DIR) the dump directory
     * is perfpy's own unless perf unwinds with libdw, which reads jit dumps
     * only in /tmp: there CPython's -X perf_jit holds the same path, and
     * PERFPY_JITDUMP_DIR is record's, not the user's, to set. */
    if (rc == -EBUSY && cfg.lines_dir)
        return error(e, PP_ERR_ENGINE_OPEN, rc,
                     "cannot create %s: %s: CPython's own jitdump writer "
                     "(-X perf_jit or PYTHON_PERF_JIT_SUPPORT) has it open, and "
                     "perfpy record needs that path here (perf unwinds with "
                     "libdw, which reads jit dumps only in /tmp): CPython's "
                     "dump names the Python frames, without their def lines; "
                     "leave out -X perf_jit to get them", where);
    if (cfg.lines_dir)
        snprintf(where + strlen(where), sizeof(where) - strlen(where),
                 " (or %s/perfpy-%d.lines)", cfg.lines_dir, (int)getpid());
    if (rc == -EBUSY)
        return error(e, PP_ERR_ENGINE_OPEN, rc,
                     "cannot create %s: %s: another jitdump writer of this "
                     "process has it open (CPython's own -X perf_jit?); set "
                     "PERFPY_JITDUMP_DIR to another directory, or use one of "
                     "the two", where);
    return error(e, PP_ERR_ENGINE_OPEN, rc,
                 "cannot create %s: %s (check that the directory exists, is "
                 "writable and, for a jitdump, not mounted noexec; and that no "
                 "other user's file or symlink sits at that path)", where);
}

int pp__cpython_trampoline_on(void)
{
    PyObject *f = pp__cpython_sys_function("is_stack_trampoline_active");
    PyObject *r;
    int on;

    if (!f)
        return 0;
    r = PyObject_CallObject(f, NULL);
    if (!r)
        return -1;
    on = PyObject_IsTrue(r);
    Py_DECREF(r);
    return on;
}

/* Makes pp_eval the interpreter's evaluator. CPython's own trampoline, if
 * it is on, is taken over, not chained to (one hook, one writer of
 * /tmp/perf-<pid>.map) and not switched off through sys (see compat.h:
 * CPython 3.13.12+ crashes at exit after re-initialising it): it is kept
 * to be handed back by pp__deactivate. Another tool's hook is chained to. */
static int install(PyInterpreterState *interp)
{
    pp_evaluator cur = pp_get_evaluator(interp);
    int cpython;

    if (cur == pp_eval)
        return 0;
    cpython = pp__cpython_trampoline_on();
    if (cpython < 0)
        return -1;
    S.cpython = cpython ? cur : NULL;
    S.prev = cpython ? pp_default_evaluator() : cur;
    pp_set_evaluator(interp, pp_eval);
    /* CPython's map file is closed while perfpy writes (perfpy's own, or
     * none in jit mode): CPython's next write, if it is handed back,
     * reopens it for appending; a fork never inherits it open. */
    if (cpython) {
        pp_cpython_perf_map_close();
        /* and forks follow CPython's rule from here: a child's map holds
         * the child's own names (and CPython's persist-after-fork copy). */
        pp_engine_set_fork_inherit_map(S.engine, 0);
    }
    return 0;
}

int pp__activate(const pp_backend_ops *ops, pp_activation_error *e)
{
    PyInterpreterState *interp = PyThreadState_Get()->interp;

    memset(e, 0, sizeof(*e));
    if (interp != PyInterpreterState_Main())
        return error(e, PP_ERR_OTHER_INTERPRETER, 0,
                     "only the main interpreter is served: this is a "
                     "subinterpreter, whose Python functions run normally but "
                     "are not named for perf%s%s", NULL);
    if (S.ops && S.ops != ops)
        return error(e, PP_ERR_BACKEND_IN_USE, 0,
                     "this process already uses the '%s' backend; perf inject "
                     "drops perf-map names once a jitdump is injected, so "
                     "perfpy never mixes the two in one process (choose "
                     "the mode at start: PERFPY=perf or PERFPY=jit)%s", S.ops->name);
    if (S.extra < 0) {
        S.extra = pp_request_code_extra_index(pp__free_extra);
        if (S.extra < 0) {
            PyErr_Clear();
            return error(e, PP_ERR_EXTRA_INDEX, 0,
                         "no code-extra index left in this interpreter (too "
                         "many tools use them)%s%s", NULL);
        }
        S.fast_extra = check_fast_extra();
        if (pp__name_existing_functions(S.extra) < 0) {
            e->why = PP_ERR_PYTHON;
            return -1;
        }
    }
    if (!S.engine && open_engine(ops, e) < 0)
        return -1;
    S.ops = ops;
    S.interp = interp;
    if (install(interp) < 0) {
        e->why = PP_ERR_PYTHON;
        return -1;
    }
    S.failed = 0;
    S.active = 1;
    return 0;
}

int pp__serves_this_interpreter(void)
{
    return PyThreadState_Get()->interp == PyInterpreterState_Main();
}

void pp__deactivate(void)
{
    if (!pp__serves_this_interpreter())
        return;   /* a subinterpreter: perfpy never ran there */
    S.active = 0;
    if (S.interp && pp_get_evaluator(S.interp) == pp_eval) {
        /* CPython's own trampoline, if perfpy took it over, is on again. */
        pp_set_evaluator(S.interp, S.cpython ? S.cpython
                                   : S.prev ? S.prev : pp_default_evaluator());
        S.cpython = NULL;
    }
    /* else another tool installed its hook over ours and chains to it:
     * pp_eval stays in that chain and passes frames straight through. */
}

void pp__deactivate_for_good(void)
{
    if (!pp__serves_this_interpreter())
        return;
    S.cpython = NULL;      /* nothing handed back: tracing is off */
    S.map_too = 0;
    pp__deactivate();
}

void pp__name_in_cpython_map(int on)
{
    S.map_too = on;
}

int pp__is_active(void)
{
    return S.active && pp__serves_this_interpreter();
}

const char *pp__backend_in_use(void)
{
    return S.ops ? S.ops->name : NULL;
}

void pp__after_fork_child(void)
{
    int rc;

    /* CPython shuts its own trampoline down in a forked child (it restarts
     * it only if it was the evaluator): nothing to hand back here. */
    S.cpython = NULL;
    if (S.engine) {
        /* First: the engine keeps a persist-after-fork copy CPython has
         * just written to the child's map while CPython holds it open. */
        rc = pp_engine_fork_child(S.engine);
        if (rc < 0 && S.active)
            fail_once("start this child process's own files", rc);
    }
    /* CPython's map FILE* may still be the parent's file (open for our
     * writes, or left open by CPython's deactivation): the child's next
     * line must go to its own file, never the parent's. */
    pp_cpython_perf_map_close();
}

size_t pp__trampolines(void)
{
    return S.engine ? pp_engine_trampolines(S.engine) : 0;
}

Py_ssize_t pp__extra_index(void)
{
    return S.extra;
}

double pp__bytes_per_trampoline(void)
{
    return S.engine ? pp_engine_bytes_per_trampoline(S.engine) : 0.0;
}
