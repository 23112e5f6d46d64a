/*
 * Folding: perf's native stack of one sample -> the stack a Python developer
 * reads. What perf sees (leaf first) and what the profile keeps (root first):
 *
 *   _PyObject_Malloc          libpython   (native, below the innermost     \
 *   PyLong_FromLong           libpython    Python frame: real work, kept)   |  foo (app.py:1)
 *   _PyEval_EvalFrameDefault  libpython   (plumbing: dropped)               |  PyLong_FromLong
 *   py::foo:app.py            trampoline  -> "foo (app.py:1)"               |  _PyObject_Malloc
 *   _PyEval_EvalFrameDefault  libpython   \                                 |
 *   _PyFunction_Vectorcall    libpython    } between two Python frames:    |  bar (app.py:7)
 *   perfpy_eval               perfpy.so   /  interpreter plumbing, dropped |  (root first:
 *   py::bar:app.py            trampoline  -> "bar (app.py:7)"               |   bar, foo,
 *   PyRun_SimpleFileObject    libpython   \                                 |   PyLong_FromLong,
 *   Py_BytesMain              libpython    } above the outermost Python    |   _PyObject_Malloc)
 *   __libc_start_main         libc        /  frame: startup, dropped       /
 *   _start                    python3.12  -> the stack reached its root
 *
 * The rules, in order (tables `name_rules` and `dso_rules` below hold the
 * data; a name matches after cutting a ".cold"/".isra.0"-style suffix):
 *  1. A frame repeated at the same address (perf 6.1 sometimes prints the
 *     leaf twice) is kept once. An "(inlined)" frame belongs to the DSO of
 *     the next non-inlined frame rootward.
 *  2. A sample whose outermost frame is not a ROOT (_start, main, clone,
 *     start_thread, ret_from_fork, ...) could not be unwound to its origin:
 *     its stack starts with the marker "[truncated]" instead of being merged
 *     with stacks that really start there. (In perf-map mode on interpreters
 *     without frame pointers this is most samples: honest, and the reason
 *     jitdump mode exists.) An empty call chain is "[truncated];[unknown]".
 *     A frame-pointer walk through a libc built without frame pointers
 *     goes on past the interpreter's entry (Py_BytesMain, its thread
 *     wrapper, __libc_start_call_main) into a few addresses perf cannot
 *     name: when only unnamed frames lie rootward of an ENTRY frame, the
 *     stack reached its origin; those frames are dropped and it is whole.
 *  3. Python frames ("py::<qualname>:<filename>") become
 *     "qualname (filename:line)". Read at sample time (sample mode), a
 *     frame carries its line (py_line: the executing one). Otherwise the
 *     line is the def line, taken from the
 *     perfpy-<pid>.lines sidecar (the frame's address falls in one of its
 *     [start, start+size) ranges), or "qualname (filename)" without one.
 *     After `perf inject --jit` a Python frame lives in its own
 *     jitted-<pid>-<index>.so and perf prints its address relative to that
 *     file: the address is found again through the jitdump's code-load
 *     record of that index (which also carries the def line, used when
 *     there is no sidecar).
 *  4. Between the innermost and the outermost Python frame, frames of the
 *     interpreter (INTERP: the python binary, libpython, perfpy's module,
 *     unnamed trampolines) and PLUMBING names (eval loop, vectorcall and
 *     call helpers) are dropped; anything else (a C extension calling back
 *     into Python, libc's qsort) stays.
 *  5. Below the innermost Python frame only PLUMBING names are dropped: the
 *     eval loop running the function is the function's own time, while
 *     _PyLong_Add, list sorting, C extensions, libc and the kernel are kept.
 *  6. Above the outermost Python frame, INTERP, STARTUP (Py_BytesMain,
 *     pymain_*, PyRun_*, run_mod, thread bootstrap; libc and ld.so), ROOT and
 *     PLUMBING frames are dropped: every Python stack starts at its first
 *     Python function (<module>, or a thread's target). Stacks with no Python
 *     frame at all (interpreter start-up, GC threads) keep all their frames.
 *  7. --no-native drops every frame that is not Python; a stack left with
 *     none reads "[native]".
 */
#include "fold.h"
#include "perfpy/lines_format.h"
#include "htab.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    C_PY = 1 << 0,        /* a Python function (py:: name) */
    C_INTERP = 1 << 1,    /* code of the interpreter itself (by DSO) */
    C_PLUMB = 1 << 2,     /* call machinery between Python functions (by name) */
    C_STARTUP = 1 << 3,   /* process/thread start-up (by name or DSO) */
    C_ROOT = 1 << 4,      /* where a complete stack ends (by name) */
    C_KERNEL = 1 << 5,    /* kernel code (by DSO or address) */
    C_ENTRY = 1 << 6,     /* the interpreter's entry: only start-up code is rootward */
    C_UNNAMED = 1 << 7,   /* "[unknown]": perf found no symbol */
};

typedef struct rule {
    const char *name;
    int prefix;           /* 1: name is a prefix */
    unsigned bits;
} rule;

static const rule name_rules[] = {
    /* ROOT: the outermost frame of a stack unwound to its origin */
    {"_start", 0, C_ROOT | C_STARTUP},
    {"_dl_start", 1, C_ROOT | C_STARTUP},
    {"__libc_start_main", 1, C_ROOT | C_STARTUP},
    {"__libc_start_call_main", 0, C_ROOT | C_STARTUP | C_ENTRY},
    {"main", 0, C_ROOT | C_STARTUP},
    {"clone", 0, C_ROOT | C_STARTUP},
    {"clone3", 0, C_ROOT | C_STARTUP},
    {"__clone", 1, C_ROOT | C_STARTUP},
    {"__GI___clone", 1, C_ROOT | C_STARTUP},     /* glibc's internal alias (sid) */
    {"start_thread", 0, C_ROOT | C_STARTUP},
    {"thread_start", 0, C_ROOT | C_STARTUP},
    {"ret_from_fork", 1, C_ROOT},
    {"secondary_startup_64", 1, C_ROOT},
    {"start_kernel", 0, C_ROOT},
    {"x86_64_start_kernel", 0, C_ROOT},
    {"kthread", 0, C_ROOT},
    /* PLUMBING: the eval loop and the call helpers around a Python call */
    {"_PyEval_EvalFrameDefault", 0, C_PLUMB},
    {"_PyEval_EvalFrame", 0, C_PLUMB},
    {"_PyEval_Vector", 0, C_PLUMB},
    {"_PyEval_EvalCode", 1, C_PLUMB},
    {"PyEval_EvalCode", 1, C_PLUMB | C_STARTUP},
    {"PyEval_EvalFrame", 1, C_PLUMB},
    {"_PyFunction_Vectorcall", 0, C_PLUMB},
    {"_PyFunction_FastCall", 1, C_PLUMB},
    {"function_code_fastcall", 0, C_PLUMB},
    {"_PyObject_Vectorcall", 1, C_PLUMB},
    {"PyObject_Vectorcall", 1, C_PLUMB},
    {"_PyObject_FastCall", 1, C_PLUMB},
    {"_PyObject_Call", 1, C_PLUMB},
    {"PyObject_Call", 1, C_PLUMB},
    {"_PyObject_MakeTpCall", 0, C_PLUMB},
    {"PyVectorcall_Call", 0, C_PLUMB},
    {"_PyVectorcall_Call", 0, C_PLUMB},
    {"method_vectorcall", 1, C_PLUMB},
    {"cfunction_vectorcall", 1, C_PLUMB},
    {"cfunction_call", 1, C_PLUMB},
    {"call_function", 0, C_PLUMB},
    {"do_call_core", 0, C_PLUMB},
    {"slot_tp_call", 0, C_PLUMB},
    {"vectorcall_method", 0, C_PLUMB},
    {"_PyEval_EvalFrameDefault.cold", 0, C_PLUMB},
    /* STARTUP: how the interpreter reaches the first Python frame */
    {"Py_BytesMain", 0, C_STARTUP | C_ENTRY},
    {"Py_Main", 0, C_STARTUP | C_ENTRY},
    {"Py_RunMain", 0, C_STARTUP | C_ENTRY},
    {"pymain_", 1, C_STARTUP},
    {"PyRun_", 1, C_STARTUP},
    {"_PyRun_", 1, C_STARTUP},
    {"pyrun_", 1, C_STARTUP},
    {"run_mod", 0, C_STARTUP},
    {"run_eval_code_obj", 0, C_STARTUP},
    {"builtin_exec", 1, C_STARTUP},
    {"thread_run", 0, C_STARTUP},
    {"pythread_wrapper", 0, C_STARTUP | C_ENTRY},
    {"t_bootstrap", 0, C_STARTUP},
};

/* DSO rules match the file's base name (KERNEL: the whole DSO). */
static const rule dso_rules[] = {
    {"libpython", 1, C_INTERP},
    {"python", 1, C_INTERP},        /* python3, python3.12 (not *.so: see below) */
    {"perfpy.", 1, C_INTERP},       /* perfpy.cpython-312-x86_64-linux-gnu.so */
    {"perf-", 1, C_INTERP},         /* unnamed code in /tmp/perf-<pid>.map */
    {"jitted-", 1, C_INTERP},       /* unnamed code in perf inject's ELF files */
    {"libc.so", 1, C_STARTUP},
    {"libc-", 1, C_STARTUP},
    {"ld-linux", 1, C_STARTUP},
    {"libpthread", 1, C_STARTUP},
};

#define KERNEL_MIN_IP 0xffff800000000000ull

/* One distinct (symbol, effective DSO) seen in the input. */
typedef struct raw {
    const char *sym, *dso;       /* in the profile's arena */
    uint32_t sym_len, dso_len;
    unsigned bits;
    int64_t frame;               /* its profile frame when it needs no line */
    const char *qual, *file;     /* Python: the two halves of the name */
    size_t qual_len, file_len;
    int jit_pid;                 /* DSO jitted-<pid>-<index>.so: pid, else -1 */
    uint64_t jit_index;
} raw;

typedef struct range {
    uint64_t start, end;
    int line;
} range;

typedef struct sidecar {
    int pid;
    range *r;
    size_t n;
    int loaded;                  /* its lines file was looked for */
    struct jdump {               /* the pid's jitdumps read so far: perfpy's, */
        char *path;              /* and CPython's own when -X perf_jit was */
        pp_jit_code *codes;      /* passed too (two dumps, two index spaces) */
        size_t ncodes;           /* its code loads, by index */
    } *dumps;
    size_t ndumps, dumps_cap;
} sidecar;

typedef struct comm_count {
    char name[64];
    uint64_t count;
} comm_count;

struct pp_folder {
    pp_profile *p;
    pp_fold_opts o;
    raw *raws;
    size_t nraws, raws_cap;
    pp_htab raw_index;
    sidecar *cars;
    size_t ncars, cars_cap;
    pp_htab pyline_index;        /* (pid, ip, raw) -> frame id */
    struct pyline { int pid; uint32_t raw; uint64_t ip; uint32_t frame; } *pylines;
    size_t npylines, pylines_cap;
    uint32_t *raw_of_key;        /* frame line key (perf_script.h) -> raw + 1 */
    size_t keys_cap;
    /* per-sample scratch, reused */
    uint32_t *keep, *ids, *rawof;
    const char **effdso;
    uint32_t *effdso_len;
    size_t scratch_cap;
    int64_t mark_truncated, mark_unknown, mark_native;
    comm_count comms[16];
    size_t ncomms;
    int event_set;
};

static int starts(const char *s, size_t len, const char *prefix)
{
    size_t n = strlen(prefix);
    return len >= n && memcmp(s, prefix, n) == 0;
}

static unsigned name_bits(const char *sym, size_t len)
{
    const char *dot = len > 1 ? memchr(sym + 1, '.', len - 1) : NULL;
    size_t base = dot ? (size_t)(dot - sym) : len;     /* "foo.cold" -> "foo" */
    unsigned bits = 0;

    for (size_t i = 0; i < sizeof(name_rules) / sizeof(name_rules[0]); i++) {
        const rule *r = &name_rules[i];
        size_t n = strlen(r->name);
        if (r->prefix ? (base >= n && memcmp(sym, r->name, n) == 0)
                      : (base == n && memcmp(sym, r->name, n) == 0))
            bits |= r->bits;
    }
    return bits;
}

static unsigned dso_bits(const char *dso, size_t len)
{
    const char *slash = len ? memrchr(dso, '/', len) : NULL;
    const char *b = slash ? slash + 1 : dso;
    size_t bl = len - (size_t)(b - dso);
    unsigned bits = 0;

    if (starts(dso, len, "[kernel") || (len > 2 && dso[0] == '[' && dso[len - 1] == ']' &&
                                         !starts(dso, len, "[vdso") && !starts(dso, len, "[unknown") &&
                                         !starts(dso, len, "[heap") && !starts(dso, len, "[stack") &&
                                         !starts(dso, len, "[anon") && !starts(dso, len, "[JIT")))
        bits |= C_KERNEL;
    for (size_t i = 0; i < sizeof(dso_rules) / sizeof(dso_rules[0]); i++)
        if (starts(b, bl, dso_rules[i].name))
            bits |= dso_rules[i].bits;
    /* "python..." names the interpreter binary, not a C extension such as
     * python_foo.so. */
    if ((bits & C_INTERP) && starts(b, bl, "python") && memmem(b, bl, ".so", 3))
        bits &= ~(unsigned)C_INTERP;
    return bits;
}

/* "name+0x1f" -> "name" (perf adds the offset when asked for symoff). */
static size_t cut_offset(const char *s, size_t len)
{
    size_t i = len;

    while (i > 0 && ((s[i - 1] >= '0' && s[i - 1] <= '9') || (s[i - 1] >= 'a' && s[i - 1] <= 'f')))
        i--;
    if (i < len && i >= 3 && s[i - 1] == 'x' && s[i - 2] == '0' && s[i - 3] == '+')
        return i - 3;
    return len;
}

static int64_t marker(pp_folder *f, int64_t *cache, const char *name)
{
    if (*cache < 0)
        *cache = pp_profile_frame(f->p, PP_FRAME_MARKER, name, strlen(name), NULL, 0, 0);
    return *cache;
}

/* "…/jitted-<pid>-<index>.so": pid (and *index), else -1. */
static int jitted_name(const char *dso, size_t len, uint64_t *index)
{
    const char *b = len ? memrchr(dso, '/', len) : NULL;
    unsigned long long pid, idx;
    int used = 0;
    char name[96];
    size_t bl;

    b = b ? b + 1 : dso;
    bl = len - (size_t)(b - dso);
    if (bl >= sizeof(name) || !starts(b, bl, "jitted-"))
        return -1;
    memcpy(name, b, bl);
    name[bl] = '\0';
    if (sscanf(name, "jitted-%llu-%llu.so%n", &pid, &idx, &used) != 2 || (size_t)used != bl ||
        pid > 0x7fffffff)
        return -1;
    *index = idx;
    return (int)pid;
}

/* The raw entry for (sym, dso), made on first sight. -ENOMEM or its index. */
static int64_t raw_of(pp_folder *f, const char *sym, size_t sl, const char *dso,
                      size_t dl, uint64_t ip)
{
    uint64_t h = pp__hash(dso, dl, pp__hash(sym, sl, 3));
    pp_htab_iter it;
    uint32_t *slot;
    raw *r;
    int64_t id;

    for (slot = pp__htab_first(&f->raw_index, h, &it); slot;
         slot = pp__htab_next(&f->raw_index, h, &it)) {
        r = &f->raws[*slot];
        if (r->sym_len == sl && r->dso_len == dl && memcmp(r->sym, sym, sl) == 0 &&
            memcmp(r->dso, dso, dl) == 0)
            return *slot;
    }
    if (f->nraws >= UINT32_MAX - 1 ||
        pp__grow((void **)&f->raws, &f->raws_cap, f->nraws + 1, sizeof(raw)) < 0)
        return -ENOMEM;
    r = &f->raws[f->nraws];
    memset(r, 0, sizeof(*r));
    r->sym = pp_profile_strdup(f->p, sym, sl);
    r->dso = pp_profile_strdup(f->p, dso, dl);
    if (!r->sym || !r->dso)
        return -ENOMEM;
    r->sym_len = (uint32_t)sl;
    r->dso_len = (uint32_t)dl;
    r->jit_pid = jitted_name(r->dso, dl, &r->jit_index);
    if (starts(sym, sl, "py::")) {
        const char *q = r->sym + 4, *colon = memchr(q, ':', sl - 4);
        r->bits = C_PY;
        r->qual = q;
        r->qual_len = colon ? (size_t)(colon - q) : sl - 4;
        r->file = colon ? colon + 1 : "";
        r->file_len = colon ? sl - 4 - r->qual_len - 1 : 0;
        if (r->qual_len == 0) {
            r->qual = "[unknown]";
            r->qual_len = 9;
        }
        id = -1;      /* made on first use: with a line, or without (python_frame) */
    } else {
        r->bits = name_bits(sym, sl) | dso_bits(dso, dl);
        if (sl == 9 && memcmp(sym, "[unknown]", 9) == 0)
            r->bits |= C_UNNAMED;
        if (ip >= KERNEL_MIN_IP)
            r->bits |= C_KERNEL;
        id = pp_profile_frame(f->p, (r->bits & C_KERNEL) ? PP_FRAME_KERNEL : PP_FRAME_NATIVE,
                              sym, sl, dso, dl, 0);
    }
    if (id < 0 && !(r->bits & C_PY))
        return id;
    r->frame = id;
    if (pp__htab_insert(&f->raw_index, h, (uint32_t)f->nraws) < 0)
        return -ENOMEM;
    return (int64_t)f->nraws++;
}

/* ---- lines sidecars ------------------------------------------------------ */

static int cmp_range(const void *a, const void *b)
{
    const range *x = a, *y = b;
    return (x->start > y->start) - (x->start < y->start);
}

/* Parses the lines of include/perfpy/lines_format.h ("<start hex> <size hex>
 * <line dec>\n"); bad lines skipped. */
static int parse_lines(const char *buf, size_t len, range **out, size_t *nout)
{
    range *r = NULL;
    size_t n = 0, cap = 0, pos = 0;

    while (pos < len) {
        const char *s = buf + pos, *e = memchr(s, '\n', len - pos);
        uint64_t v[3] = {0, 0, 0};
        int ok = 1;

        if (!e)
            e = buf + len;
        pos = (size_t)(e - buf) + 1;
        for (int k = 0; k < 3 && ok; k++) {
            int nd = 0;
            while (s < e && *s == ' ')
                s++;
            for (; s < e && *s != ' ' && *s != '\r'; s++, nd++) {
                int d = k < 2 ? ((*s >= '0' && *s <= '9') ? *s - '0' :
                                 (*s >= 'a' && *s <= 'f') ? *s - 'a' + 10 : -1)
                              : ((*s >= '0' && *s <= '9') ? *s - '0' : -1);
                if (d < 0 || nd >= PP_LINES_MAX_DIGITS) {
                    ok = 0;
                    break;
                }
                v[k] = v[k] * (k < 2 ? 16 : 10) + (uint64_t)d;
            }
            if (nd == 0)
                ok = 0;
        }
        if (!ok || v[1] == 0 || v[0] + v[1] < v[0] || v[2] > 0x7fffffff)
            continue;
        if (pp__grow((void **)&r, &cap, n + 1, sizeof(*r)) < 0) {
            free(r);
            return -ENOMEM;
        }
        r[n++] = (range){v[0], v[0] + v[1], (int)v[2]};
    }
    if (n)
        qsort(r, n, sizeof(*r), cmp_range);
    *out = r;
    *nout = n;
    return 0;
}

static sidecar *find_car(pp_folder *f, int pid)
{
    for (size_t i = 0; i < f->ncars; i++)
        if (f->cars[i].pid == pid)
            return &f->cars[i];
    return NULL;
}

static sidecar *get_car(pp_folder *f, int pid)
{
    sidecar *c = find_car(f, pid);

    if (c)
        return c;
    if (pp__grow((void **)&f->cars, &f->cars_cap, f->ncars + 1, sizeof(sidecar)) < 0)
        return NULL;
    c = &f->cars[f->ncars++];
    memset(c, 0, sizeof(*c));
    c->pid = pid;
    return c;
}

/* The dump at path among the pid's, read on first use; NULL when out of
 * memory. */
static struct jdump *dump_of(sidecar *c, const char *path)
{
    struct jdump *d;

    for (size_t i = 0; i < c->ndumps; i++)
        if (strcmp(c->dumps[i].path, path) == 0)
            return &c->dumps[i];
    if (pp__grow((void **)&c->dumps, &c->dumps_cap, c->ndumps + 1, sizeof(*d)) < 0)
        return NULL;
    d = &c->dumps[c->ndumps];
    memset(d, 0, sizeof(*d));
    if (!(d->path = strdup(path)))
        return NULL;
    c->ndumps++;
    pp_jitdump_codes(path, &d->codes, &d->ncodes);
    return d;
}

/* The code load of index in the jitdump perf inject made the jitted ELF
 * dso from, or NULL. That is jit-<pid>.dump beside the ELF (inject writes
 * them together; a process can have two, perfpy's and CPython's own, with
 * index spaces of their own); when it is gone, the pid's dump the
 * recording names. */
static const pp_jit_code *jit_code(pp_folder *f, int pid, uint64_t index, const char *dso,
                                   size_t dso_len)
{
    sidecar *c = get_car(f, pid);
    const char *slash = memrchr(dso, '/', dso_len);
    struct jdump *d = NULL;
    char want[32], path[4096];
    int wl = snprintf(want, sizeof(want), "/jit-%d.dump", pid);
    size_t lo = 0, hi;

    if (!c)
        return NULL;
    if (slash && (size_t)(slash - dso) + (size_t)wl < sizeof(path)) {
        memcpy(path, dso, (size_t)(slash - dso));
        memcpy(path + (slash - dso), want, (size_t)wl + 1);
        d = dump_of(c, path);
    }
    for (size_t i = 0; (!d || !d->ncodes) && f->o.jit && i < f->o.jit->njitdumps; i++) {
        const char *named = f->o.jit->jitdumps[i];
        size_t pl = strlen(named);
        if (pl >= (size_t)wl && strcmp(named + pl - (size_t)wl, want) == 0)
            d = dump_of(c, named);
    }
    if (!d)
        return NULL;
    hi = d->ncodes;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (d->codes[mid].index == index)
            return &d->codes[mid];
        if (d->codes[mid].index < index)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

int pp_fold_load_lines(pp_folder *f, int pid, const char *path)
{
    FILE *in = path ? fopen(path, "rb") : NULL;
    char *buf = NULL;
    size_t len = 0, cap = 0;
    sidecar *c = get_car(f, pid);
    int rc = 0;

    if (!c) {
        if (in)
            fclose(in);
        return -ENOMEM;
    }
    free(c->r);
    c->r = NULL;
    c->n = 0;
    c->loaded = 1;
    if (!in)
        return 0;                    /* no sidecar: names without lines */
    for (;;) {
        size_t got;
        if (len + 65536 > cap) {
            char *nb;
            if (cap > (256u << 20)) {
                break;               /* absurdly large: use what was read */
            }
            cap = cap ? cap * 2 : 65536 * 2;
            nb = realloc(buf, cap);
            if (!nb) {
                rc = -ENOMEM;
                goto out;
            }
            buf = nb;
        }
        got = fread(buf + len, 1, cap - len, in);
        len += got;
        if (got == 0)
            break;
    }
    rc = parse_lines(buf, len, &c->r, &c->n);
out:
    fclose(in);
    free(buf);
    return rc;
}

static int line_of(pp_folder *f, int pid, uint64_t ip, int *line)
{
    sidecar *c = find_car(f, pid);
    size_t lo = 0, hi;

    *line = 0;
    if (!f->o.lines_dir)
        return 0;
    if (!c || !c->loaded) {
        char path[4096];
        int rc;
        if (snprintf(path, sizeof(path), PP_LINES_PATH, f->o.lines_dir, pid) >=
            (int)sizeof(path))
            return 0;
        rc = pp_fold_load_lines(f, pid, path);
        if (rc < 0)
            return rc;
        c = find_car(f, pid);
    }
    hi = c->n;
    while (lo < hi) {                /* the last range starting at or below ip */
        size_t mid = lo + (hi - lo) / 2;
        if (c->r[mid].start <= ip)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo > 0 && ip < c->r[lo - 1].end)
        *line = c->r[lo - 1].line;
    return 0;
}

/* The frame id of Python raw r at (pid, ip): with its line when known. */
static int64_t python_frame(pp_folder *f, uint32_t ri, int pid, uint64_t ip)
{
    raw *r = &f->raws[ri];
    uint64_t h;
    pp_htab_iter it;
    uint32_t *slot;
    int line = 0, rc;
    int64_t id;

    if ((!f->o.lines_dir && r->jit_pid < 0) || pid < 0) {
        if (r->frame < 0)
            r->frame = pp_profile_frame(f->p, PP_FRAME_PYTHON, r->qual, r->qual_len,
                                        r->file, r->file_len, 0);
        return r->frame;
    }
    h = pp__hash(&ip, sizeof(ip), (uint64_t)(uint32_t)pid * 0x100000001ull + ri);
    for (slot = pp__htab_first(&f->pyline_index, h, &it); slot;
         slot = pp__htab_next(&f->pyline_index, h, &it)) {
        struct pyline *pl = &f->pylines[*slot];
        if (pl->pid == pid && pl->ip == ip && pl->raw == ri)
            return pl->frame;
    }
    if (r->jit_pid >= 0) {
        /* the sidecar's line if there is one (line_of leaves 0 without a
         * lines_dir), else the dump's */
        const pp_jit_code *c = jit_code(f, r->jit_pid, r->jit_index, r->dso, r->dso_len);
        if (c && (rc = line_of(f, r->jit_pid, c->addr, &line)) < 0)
            return rc;
        if (c && !line)
            line = c->line;
    } else if ((rc = line_of(f, pid, ip, &line)) < 0) {
        return rc;
    }
    r = &f->raws[ri];
    id = pp_profile_frame(f->p, PP_FRAME_PYTHON, r->qual, r->qual_len, r->file,
                          r->file_len, line);
    if (id < 0)
        return id;
    if (pp__grow((void **)&f->pylines, &f->pylines_cap, f->npylines + 1, sizeof(*f->pylines)) < 0 ||
        pp__htab_insert(&f->pyline_index, h, (uint32_t)f->npylines) < 0)
        return -ENOMEM;
    f->pylines[f->npylines++] = (struct pyline){pid, ri, ip, (uint32_t)id};
    return id;
}

/* ---- the folder ---------------------------------------------------------- */

int pp_fold_open(pp_folder **out, pp_profile *p, const pp_fold_opts *opts)
{
    pp_folder *f = calloc(1, sizeof(*f));

    if (!f)
        return -ENOMEM;
    f->p = p;
    if (opts)
        f->o = *opts;
    f->mark_truncated = f->mark_unknown = f->mark_native = -1;
    if (pp__htab_init(&f->raw_index, 1024) < 0 || pp__htab_init(&f->pyline_index, 256) < 0) {
        pp_fold_close(f);
        return -ENOMEM;
    }
    *out = f;
    return 0;
}

static void count_comm(pp_folder *f, const pp_script_sample *s)
{
    size_t n = s->comm_len < 63 ? s->comm_len : 63;

    for (size_t i = 0; i < f->ncomms; i++)
        if (strlen(f->comms[i].name) == n && memcmp(f->comms[i].name, s->comm, n) == 0) {
            f->comms[i].count++;
            return;
        }
    if (f->ncomms < sizeof(f->comms) / sizeof(f->comms[0])) {
        memcpy(f->comms[f->ncomms].name, s->comm, n);
        f->comms[f->ncomms].name[n] = '\0';
        f->comms[f->ncomms++].count = 1;
    }
}

static void note_sample(pp_folder *f, const pp_script_sample *s)
{
    pp_profile *p = f->p;

    count_comm(f, s);
    if (!f->event_set && s->event_len) {
        size_t n = s->event_len < sizeof(p->event) - 1 ? s->event_len : sizeof(p->event) - 1;
        memcpy(p->event, s->event, n);
        p->event[n] = '\0';
        f->event_set = 1;
    }
    if (s->time_ns) {
        if (!p->time_first_ns || s->time_ns < p->time_first_ns)
            p->time_first_ns = s->time_ns;
        if (s->time_ns > p->time_last_ns)
            p->time_last_ns = s->time_ns;
    }
}

static int reserve_scratch(pp_folder *f, size_t n)
{
    size_t cap = f->scratch_cap;

    if (n + 4 <= cap)
        return 0;
    cap = cap ? cap : 256;
    while (cap < n + 4)
        cap *= 2;
    free(f->keep);
    free(f->ids);
    free(f->rawof);
    free(f->effdso);
    free(f->effdso_len);
    f->keep = malloc(cap * sizeof(*f->keep));
    f->ids = malloc(cap * sizeof(*f->ids));
    f->rawof = malloc(cap * sizeof(*f->rawof));
    f->effdso = malloc(cap * sizeof(*f->effdso));
    f->effdso_len = malloc(cap * sizeof(*f->effdso_len));
    f->scratch_cap = cap;
    if (!f->keep || !f->ids || !f->rawof || !f->effdso || !f->effdso_len) {
        f->scratch_cap = 0;
        return -ENOMEM;
    }
    return 0;
}

static int same_frame(const pp_script_frame *a, const pp_script_frame *b)
{
    return a->ip == b->ip && !a->inlined && !b->inlined && a->sym_len == b->sym_len &&
           a->dso_len == b->dso_len && memcmp(a->sym, b->sym, a->sym_len) == 0 &&
           memcmp(a->dso, b->dso, a->dso_len) == 0;
}

/* The raw entry of a frame line seen before (by its parser key), or -1.
 * Inlined frames take their DSO from the next frame, so they are looked up
 * each time. */
static int64_t cached_raw(const pp_folder *f, const pp_script_frame *x)
{
    if (x->key && !x->inlined && x->key < f->keys_cap && f->raw_of_key[x->key])
        return (int64_t)f->raw_of_key[x->key] - 1;
    return -1;
}

static void remember_raw(pp_folder *f, uint32_t key, uint32_t ri)
{
    size_t old = f->keys_cap;

    if (key >= f->keys_cap) {
        if (pp__grow((void **)&f->raw_of_key, &f->keys_cap, (size_t)key + 1,
                     sizeof(*f->raw_of_key)) < 0)
            return;                  /* not remembered: found by name next time */
        memset(f->raw_of_key + old, 0, (f->keys_cap - old) * sizeof(*f->raw_of_key));
    }
    f->raw_of_key[key] = ri + 1;
}

/* Rule 2's frame-pointer case: the number of frames to keep (leaf first)
 * once the unnamed frames rootward of an ENTRY frame are cut; *entry says
 * whether that happened. */
static size_t cut_past_entry(const pp_folder *f, size_t n, int *entry)
{
    *entry = 0;
    for (size_t k = n; k-- > 0;) {
        unsigned b = f->raws[f->rawof[k]].bits;
        if (b & C_UNNAMED)
            continue;
        if (b & C_ENTRY) {
            *entry = 1;
            return k + 1;
        }
        break;
    }
    return n;
}

int pp_fold_sample(void *folder, const pp_script_sample *s)
{
    pp_folder *f = folder;
    const pp_script_frame *fr = s->frames;
    size_t n = 0, nids = 0;
    long lo = -1, hi = -1;
    int truncated, entry, any_real = 0;
    int64_t id;

    note_sample(f, s);
    if (reserve_scratch(f, s->nframes) < 0)
        return -ENOMEM;
    /* rule 1: drop repeats; keep[] holds input indexes, leaf first */
    for (size_t i = 0; i < s->nframes; i++)
        if (!(n > 0 && same_frame(&fr[f->keep[n - 1]], &fr[i])))
            f->keep[n++] = (uint32_t)i;
    /* an inlined frame takes the DSO of the next real frame rootward */
    for (size_t k = n; k-- > 0;) {
        const pp_script_frame *x = &fr[f->keep[k]];
        if (x->inlined && k + 1 < n) {
            f->effdso[k] = f->effdso[k + 1];
            f->effdso_len[k] = f->effdso_len[k + 1];
        } else {
            f->effdso[k] = x->inlined ? "" : x->dso;
            f->effdso_len[k] = x->inlined ? 0 : x->dso_len;
        }
    }
    for (size_t k = 0; k < n; k++) {
        const pp_script_frame *x = &fr[f->keep[k]];
        int64_t ri = cached_raw(f, x);
        if (ri < 0)
            ri = raw_of(f, x->sym, cut_offset(x->sym, x->sym_len), f->effdso[k],
                        f->effdso_len[k], x->ip);
        if (ri < 0)
            return (int)ri;
        if (x->key && !x->inlined)
            remember_raw(f, x->key, (uint32_t)ri);
        f->rawof[k] = (uint32_t)ri;
        if (f->raws[ri].bits & C_PY) {
            if (lo < 0)
                lo = (long)k;
            hi = (long)k;
        }
    }
    /* rule 2 */
    n = cut_past_entry(f, n, &entry);
    truncated = n == 0 || s->frames_dropped ||
                !(entry || (f->raws[f->rawof[n - 1]].bits & C_ROOT));
    if (truncated) {
        if ((id = marker(f, &f->mark_truncated, PP_MARK_TRUNCATED)) < 0)
            return (int)id;
        f->ids[nids++] = (uint32_t)id;
        f->p->truncated++;
    }
    /* rules 3-7, root first */
    for (size_t k = n; k-- > 0;) {
        const raw *r = &f->raws[f->rawof[k]];
        unsigned b = r->bits;

        if (b & C_PY) {
            const pp_script_frame *x = &fr[f->keep[k]];
            if (x->py_line > 0)       /* read at sample time: the line is given */
                id = pp_profile_frame(f->p, PP_FRAME_PYTHON, r->qual, r->qual_len, r->file,
                                      r->file_len, x->py_line);
            else
                id = python_frame(f, f->rawof[k], s->pid, x->ip);
            if (id < 0)
                return (int)id;
            f->ids[nids++] = (uint32_t)id;
            any_real = 1;
            continue;
        }
        if (f->o.no_native)
            continue;
        if (hi >= 0) {
            if ((long)k > hi) {
                if (b & (C_INTERP | C_STARTUP | C_ROOT | C_PLUMB))
                    continue;
            } else if ((long)k > lo) {
                if (b & (C_INTERP | C_PLUMB))
                    continue;
            } else if (b & C_PLUMB) {
                continue;
            }
        }
        f->ids[nids++] = (uint32_t)r->frame;
        any_real = 1;
    }
    if (!any_real) {
        id = f->o.no_native && n ? marker(f, &f->mark_native, PP_MARK_NATIVE)
                                 : marker(f, &f->mark_unknown, PP_MARK_UNKNOWN);
        if (id < 0)
            return (int)id;
        f->ids[nids++] = (uint32_t)id;
    }
    return pp_profile_add(f->p, f->ids, nids, 1, s->period);
}

void pp_fold_close(pp_folder *f)
{
    size_t best = 0;

    if (!f)
        return;
    for (size_t i = 1; i < f->ncomms; i++)
        if (f->comms[i].count > f->comms[best].count)
            best = i;
    if (f->ncomms)
        snprintf(f->p->program, sizeof(f->p->program), "%s", f->comms[best].name);
    for (size_t i = 0; i < f->ncars; i++) {
        free(f->cars[i].r);
        for (size_t k = 0; k < f->cars[i].ndumps; k++) {
            free(f->cars[i].dumps[k].path);
            free(f->cars[i].dumps[k].codes);
        }
        free(f->cars[i].dumps);
    }
    free(f->cars);
    free(f->raws);
    free(f->raw_of_key);
    free(f->pylines);
    pp__htab_free(&f->raw_index);
    pp__htab_free(&f->pyline_index);
    free(f->keep);
    free(f->ids);
    free(f->rawof);
    free(f->effdso);
    free(f->effdso_len);
    free(f);
}
