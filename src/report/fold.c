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
 * The rules, in order (fold_rules.c holds the tables that classify a frame;
 * fold_python.c names Python frames; fold_proc.c the process roots):
 *  1. A frame repeated at the same address (perf 6.1 sometimes prints the
 *     leaf twice) is kept once. An "(inlined)" frame belongs to the DSO of
 *     the next non-inlined frame rootward. A frame perf could not name
 *     ("[unknown]") is labelled with its DSO's file name: "[libz.so.1]",
 *     "[python3.11]" (a stripped interpreter); it stays "[unknown]" only
 *     when perf knows no mapping at its address either.
 *  2. A sample whose outermost frame is not a ROOT (_start, main, clone,
 *     start_thread, ret_from_fork, ...) could not be unwound to its origin:
 *     its stack starts with the marker "[truncated]" instead of being merged
 *     with stacks that really start there. (In perf-map mode on interpreters
 *     without frame pointers this is most samples: honest, and the reason
 *     jitdump mode exists.) An empty call chain is "[truncated];[unknown]".
 *     The outermost frames of a cut stack that lie in no mapping perf knows
 *     ("[unknown]", not "[libz.so.1]") are junk of the cut, not the
 *     program's callers: dropped ("[truncated];<module>", not
 *     "[truncated];[unknown];<module>").
 *     A frame-pointer walk through a libc built without frame pointers
 *     goes on past the interpreter's entry (Py_BytesMain, its thread
 *     wrapper, __libc_start_call_main) into a few addresses perf cannot
 *     name: when only unnamed frames lie rootward of an ENTRY frame, the
 *     stack reached its origin; those frames are dropped and it is whole.
 *     The same holds past a user-space ROOT such as __libc_start_main: a
 *     stripped program's _start is unnamed ("[gzip]"). A sample that says
 *     it reached its origin another way (pp_raw_sample.origin: sample
 *     mode read the thread's whole Python chain) is whole whatever its
 *     outermost frame.
 *  3. Python frames ("py::<qualname>:<filename>") become
 *     "qualname (filename:line)" with the def line when it is known
 *     (fold_python.c), the file normalised ("/a/./b.py" -> "/a/b.py").
 *     Read at sample time (sample mode: PP_RAW_PYTHON, its qualname and
 *     file as read), a frame carries its line (the executing one), used
 *     as it is.
 *  4. Between the innermost and the outermost Python frame, frames of the
 *     interpreter (INTERP: the python binary, libpython, perfpy's module,
 *     unnamed trampolines; named or not) and PLUMBING names (eval loop,
 *     vectorcall and call helpers) are dropped; anything else (a C extension
 *     calling back into Python, libc's qsort) stays.
 *  5. Below the innermost Python frame only PLUMBING names are dropped: the
 *     eval loop running the function is the function's own time, while
 *     _PyLong_Add, list sorting, C extensions, libc and the kernel are kept.
 *  6. Above the outermost Python frame, INTERP, STARTUP (Py_BytesMain,
 *     pymain_*, PyRun_*, run_mod, thread bootstrap; libc and ld.so), ROOT and
 *     PLUMBING frames are dropped: every Python stack starts at its first
 *     Python function (<module>, or a thread's target). Stacks with no Python
 *     frame at all (interpreter start-up, GC threads) keep all their frames.
 *  7. perfpy's own frames (SELF) are hidden unless show_perfpy: its startup
 *     hook's Python frames are dropped, and a frame of perfpy's module with
 *     no Python frame leafward of it (the engine making a trampoline, the
 *     hook itself), or perfpy's _perfpy_start, is cut with everything
 *     leafward of it: that time reads as the caller's own. A stack that is
 *     perfpy's alone (record's __exec shim before its exec) reads "[perfpy]".
 *  8. --no-native drops every frame that is not Python; a stack left with
 *     none reads "[native]". A task of sample mode's --async stacks
 *     (PP_RAW_TASK, named "<task 'handler-42'>") is a marker kept wherever
 *     it is, by rules 4-8 alike.
 *  9. Every stack starts with its process's root, "python3 (pid 4609)",
 *     when the recording has more than one process (pp_fold_opts.processes),
 *     then, when asked (pp_fold_opts.threads), its thread's root,
 *     "worker-1 (tid 4612)".
 * 10. Time off the CPU (wall-clock mode) ends with its reason's marker,
 *     "[off-CPU: sleep]" ... (pp_wait_marker), whatever else was dropped.
 * Each sample is logged in the profile with its thread, time and weight
 * (its period, or pp_raw_sample.weight_ns when set).
 */
#include "fold_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KERNEL_MIN_IP 0xffff800000000000ull

static int64_t marker(pp_folder *f, int64_t *cache, const char *name)
{
    if (*cache < 0)
        *cache = pp_profile_frame(f->p, PP_FRAME_MARKER, name, strlen(name), NULL, 0, 0);
    return *cache;
}

/* A native frame's bits and its profile frame (rule 1's label for an
 * unnamed one). */
static int64_t native_frame(pp_folder *f, pp__fold_raw *r, uint64_t ip)
{
    char label[300];
    const char *name = r->sym;
    size_t nl = r->sym_len;

    r->bits = pp__fold_name_bits(r->sym, r->sym_len) | pp__fold_dso_bits(r->dso, r->dso_len);
    if (r->sym_len == 9 && memcmp(r->sym, "[unknown]", 9) == 0) {
        r->bits |= C_UNNAMED;
        nl = pp__fold_unnamed_label(r->dso, r->dso_len, label, sizeof(label));
        name = label;
        if (nl == 9 && memcmp(label, "[unknown]", 9) == 0)
            r->bits |= C_NOWHERE;
    }
    if (r->kind == PP_RAW_TASK)
        r->bits = C_TASK;
    if (r->bits & C_TASK)
        return pp_profile_frame(f->p, PP_FRAME_MARKER, name, nl, NULL, 0, 0);
    if (ip >= KERNEL_MIN_IP || r->kind == PP_RAW_KERNEL)
        r->bits |= C_KERNEL;
    return pp_profile_frame(f->p, (r->bits & C_KERNEL) ? PP_FRAME_KERNEL : PP_FRAME_NATIVE,
                            name, nl, r->dso, r->dso_len, 0);
}

/* The raw entry for (kind, sym, dso), made on first sight: a Python
 * frame's sym and dso are its qualname and file, a task's sym its label.
 * -ENOMEM or its index. */
static int64_t raw_of(pp_folder *f, pp_raw_kind kind, const char *sym, size_t sl,
                      const char *dso, size_t dl, uint64_t ip)
{
    uint64_t h = pp__hash(dso, dl, pp__hash(sym, sl, 3 + (uint64_t)kind));
    pp_htab_iter it;
    uint32_t *slot;
    pp__fold_raw *r;
    int64_t id = -1;

    for (slot = pp__htab_first(&f->raw_index, h, &it); slot;
         slot = pp__htab_next(&f->raw_index, h, &it)) {
        r = &f->raws[*slot];
        if (r->kind == kind && r->sym_len == sl && r->dso_len == dl &&
            memcmp(r->sym, sym, sl) == 0 && memcmp(r->dso, dso, dl) == 0)
            return *slot;
    }
    if (f->nraws >= UINT32_MAX - 1 ||
        pp__grow((void **)&f->raws, &f->raws_cap, f->nraws + 1, sizeof(*r)) < 0)
        return -ENOMEM;
    r = &f->raws[f->nraws];
    memset(r, 0, sizeof(*r));
    r->kind = kind;
    r->sym = pp_profile_strdup(f->p, sym, sl);
    r->dso = pp_profile_strdup(f->p, dso, dl);
    if (!r->sym || !r->dso)
        return -ENOMEM;
    r->sym_len = (uint32_t)sl;
    r->dso_len = (uint32_t)dl;
    r->jit_pid = kind == PP_RAW_NATIVE ? pp__fold_jitted_name(r->dso, dl, &r->jit_index) : -1;
    /* a Python frame's is made on first use: with a line, or without */
    if (kind == PP_RAW_PYTHON) {
        if (pp__fold_python_named(f, r, r->sym, sl, r->dso, dl) < 0)
            return -ENOMEM;
    } else if (kind == PP_RAW_NATIVE && pp__fold_starts(sym, sl, "py::")) {
        if (pp__fold_python_raw(f, r, r->sym, sl) < 0)
            return -ENOMEM;
    } else if ((id = native_frame(f, r, ip)) < 0) {
        return id;
    }
    r->frame = id;
    if (pp__htab_insert(&f->raw_index, h, (uint32_t)f->nraws) < 0)
        return -ENOMEM;
    return (int64_t)f->nraws++;
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
    f->mark_truncated = f->mark_unknown = f->mark_native = f->mark_perfpy = -1;
    for (int i = 0; i < PP_WAIT_N; i++)
        f->mark_wait[i] = -1;
    if (pp__htab_init(&f->raw_index, 1024) < 0 || pp__htab_init(&f->pyline_index, 256) < 0) {
        pp_fold_close(f);
        return -ENOMEM;
    }
    *out = f;
    return 0;
}

static void count_comm(pp_folder *f, const pp_raw_sample *s)
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

static void note_sample(pp_folder *f, const pp_raw_sample *s)
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

/* The name and place of x that make its raw entry: its symbol and module,
 * or a Python function's qualname and file. */
static void name_of(const pp_raw_frame *x, const char **name, size_t *nl, const char **where,
                    size_t *wl)
{
    int py = x->kind == PP_RAW_PYTHON;

    *name = py ? x->qualname : x->sym;
    *nl = py ? x->qualname_len : x->sym_len;
    *where = py ? x->file : x->dso ? x->dso : "";
    *wl = py ? x->file_len : x->dso_len;
}

static int same_frame(const pp_raw_frame *a, const pp_raw_frame *b)
{
    const char *an, *aw, *bn, *bw;
    size_t anl, awl, bnl, bwl;

    name_of(a, &an, &anl, &aw, &awl);
    name_of(b, &bn, &bnl, &bw, &bwl);
    return a->kind == b->kind && a->ip == b->ip && !a->inlined && !b->inlined && anl == bnl &&
           awl == bwl && memcmp(an, bn, anl) == 0 && memcmp(aw, bw, awl) == 0;
}

/* The raw entry of a frame line seen before (by its parser key), or -1.
 * Inlined frames take their DSO from the next frame, so they are looked up
 * each time. */
static int64_t cached_raw(const pp_folder *f, const pp_raw_frame *x)
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
 * once the unnamed frames rootward of an ENTRY frame or a user-space ROOT are cut; *entry says
 * whether that happened. */
static size_t cut_past_entry(const pp_folder *f, size_t n, int *entry)
{
    *entry = 0;
    for (size_t k = n; k-- > 0;) {
        unsigned b = f->raws[f->rawof[k]].bits;
        if (b & C_UNNAMED)
            continue;
        if ((b & C_ENTRY) || (b & (C_ROOT | C_STARTUP)) == (C_ROOT | C_STARTUP)) {
            *entry = 1;
            return k + 1;
        }
        break;
    }
    return n;
}

/* Rule 1 and the classification: f->keep (input indexes, leaf first,
 * repeats dropped), f->rawof (their raw entries); *lo and *hi the innermost
 * and outermost Python frames (-1: none). The number kept, or -ENOMEM. */
static long classify(pp_folder *f, const pp_raw_sample *s, long *lo, long *hi)
{
    const pp_raw_frame *fr = s->frames;
    size_t n = 0;

    for (size_t i = 0; i < s->nframes; i++)
        if (!(n > 0 && same_frame(&fr[f->keep[n - 1]], &fr[i])))
            f->keep[n++] = (uint32_t)i;
    /* an inlined frame takes the DSO of the next real frame rootward */
    for (size_t k = n; k-- > 0;) {
        const pp_raw_frame *x = &fr[f->keep[k]];
        const char *name;
        size_t nl;

        if (x->inlined && k + 1 < n) {
            f->effdso[k] = f->effdso[k + 1];
            f->effdso_len[k] = f->effdso_len[k + 1];
        } else if (x->inlined) {
            f->effdso[k] = "";
            f->effdso_len[k] = 0;
        } else {
            size_t wl;

            name_of(x, &name, &nl, &f->effdso[k], &wl);
            f->effdso_len[k] = (uint32_t)wl;
        }
    }
    *lo = *hi = -1;
    for (size_t k = 0; k < n; k++) {
        const pp_raw_frame *x = &fr[f->keep[k]];
        int64_t ri = cached_raw(f, x);
        const char *name, *where;
        size_t nl, wl;

        name_of(x, &name, &nl, &where, &wl);
        if (ri < 0)
            ri = raw_of(f, x->kind, name, x->kind == PP_RAW_NATIVE || x->kind == PP_RAW_KERNEL
                        ? pp__fold_cut_offset(name, nl) : nl, f->effdso[k], f->effdso_len[k],
                        x->ip);
        if (ri < 0)
            return (long)ri;
        if (x->key && !x->inlined)
            remember_raw(f, x->key, (uint32_t)ri);
        f->rawof[k] = (uint32_t)ri;
        if (f->raws[ri].bits & C_PY) {
            if (*lo < 0)
                *lo = (long)k;
            *hi = (long)k;
        }
    }
    return (long)n;
}

/* Rule 7: the first frame (leaf first) to keep once perfpy's own are cut:
 * the frame rootward of the outermost cutting one. */
static size_t cut_self(const pp_folder *f, size_t n, long lo)
{
    size_t from = 0;

    for (size_t k = 0; k < n; k++) {
        unsigned b = f->raws[f->rawof[k]].bits;
        if ((b & C_SELF) && (b & C_PY ? (b & C_SELF_CUT) : ((long)k < lo || lo < 0)))
            from = k + 1;
    }
    return from;
}

/* Rules 4-8 for the non-Python frame k with bits b: keep it? */
static int keep_native(const pp_folder *f, long k, unsigned b, long lo, long hi)
{
    if (b & C_TASK)
        return 1;
    if (f->o.no_native)
        return 0;
    if (hi < 0)
        return 1;
    if (k > hi)
        return !(b & (C_INTERP | C_STARTUP | C_ROOT | C_PLUMB));
    if (k > lo)
        return !(b & (C_INTERP | C_PLUMB));
    return !(b & C_PLUMB);
}

/* Rules 3-8, root first, frames [from, n) into f->ids after *nids; whether
 * any frame was kept, or a negative errno. */
static int fold_frames(pp_folder *f, const pp_raw_sample *s, size_t from, size_t n,
                       long lo, long hi, size_t *nids)
{
    int any = 0;

    for (size_t k = n; k-- > from;) {
        const pp__fold_raw *r = &f->raws[f->rawof[k]];
        int64_t id = r->frame;

        if ((r->bits & C_SELF) && !f->o.show_perfpy)
            continue;
        if (r->bits & C_PY) {
            const pp_raw_frame *x = &s->frames[f->keep[k]];
            if (x->line > 0)          /* read at sample time: the line is given */
                id = pp_profile_frame(f->p, PP_FRAME_PYTHON, r->qual, r->qual_len, r->file,
                                      r->file_len, x->line);
            else
                id = pp__fold_python_frame(f, f->rawof[k], s->pid, x->ip);
            if (id < 0)
                return (int)id;
        } else if (!keep_native(f, (long)k, r->bits, lo, hi)) {
            continue;
        }
        f->ids[(*nids)++] = (uint32_t)id;
        any = 1;
    }
    return any;
}

/* A wall-clock sample off the CPU is also a marker on its thread's
 * timeline, from when the wait began to the sample, named for its reason
 * (the stack's leaf says it too): its stack is marked as a wait once, and
 * the markers are made from the log when written (pp_thread_waits), a
 * wait sampled tick by tick joining one marker. */
static int wait_stack(pp_folder *f, const pp_raw_sample *s, uint32_t stack)
{
    if (s->wait <= 0 || s->wait >= PP_WAIT_N || !s->time_ns || f->p->stacks[stack].wait)
        return 0;
    return pp_profile_stack_wait(f->p, stack, s->wait == PP_WAIT_GIL ? PP_MARKER_GIL
                                                                    : PP_MARKER_WAIT,
                                 pp_wait_marker(s->wait));
}

int pp_fold_sample(void *folder, const pp_raw_sample *s)
{
    pp_folder *f = folder;
    pp__fold_proc *proc;
    size_t nids = 0, from = 0;
    long n, lo, hi;
    int truncated, entry, any;
    int64_t id, root, thread, thread_root;

    note_sample(f, s);
    /* the frames, two roots, [truncated], a marker for no frame, the wait's */
    if (reserve_scratch(f, s->nframes + 1) < 0 || !(proc = pp__fold_proc_of(f, s, &root)))
        return -ENOMEM;
    if ((thread = pp__fold_thread_of(f, s, &thread_root)) < 0)
        return (int)thread;
    if (root >= 0)
        f->ids[nids++] = (uint32_t)root;                    /* rule 9 */
    if (thread_root >= 0)
        f->ids[nids++] = (uint32_t)thread_root;
    if ((n = classify(f, s, &lo, &hi)) < 0)
        return (int)n;
    n = (long)cut_past_entry(f, (size_t)n, &entry);         /* rule 2 */
    truncated = s->frames_dropped ||
                (!s->origin && (n == 0 || !(entry || (f->raws[f->rawof[n - 1]].bits & C_ROOT))));
    while (truncated && n > 0 && (f->raws[f->rawof[n - 1]].bits & C_NOWHERE))
        n--;                                                /* rule 2: junk of the cut */
    if (truncated) {
        if ((id = marker(f, &f->mark_truncated, PP_MARK_TRUNCATED)) < 0)
            return (int)id;
        f->ids[nids++] = (uint32_t)id;
        f->p->truncated++;
        proc->truncated++;
    }
    proc->python += hi >= 0;
    if (!f->o.show_perfpy)
        from = cut_self(f, (size_t)n, lo);
    if ((any = fold_frames(f, s, from, (size_t)n, lo, hi, &nids)) < 0)
        return any;
    if (!any) {
        id = from >= (size_t)n && n ? marker(f, &f->mark_perfpy, PP_MARK_PERFPY)
             : f->o.no_native && n  ? marker(f, &f->mark_native, PP_MARK_NATIVE)
                                    : marker(f, &f->mark_unknown, PP_MARK_UNKNOWN);
        if (id < 0)
            return (int)id;
        f->ids[nids++] = (uint32_t)id;
    }
    if (s->wait > 0 && s->wait < PP_WAIT_N) {                 /* rule 10 */
        if ((id = marker(f, &f->mark_wait[s->wait], pp_wait_marker(s->wait))) < 0)
            return (int)id;
        f->ids[nids++] = (uint32_t)id;
    }
    id = pp_profile_sample(f->p, f->ids, nids, (uint32_t)thread, s->time_ns,
                           s->weight_ns ? s->weight_ns : s->period);
    if (id < 0)
        return (int)id;
    return wait_stack(f, s, (uint32_t)id);
}

int pp_fold_close(pp_folder *f)
{
    size_t best = 0;
    int rc;

    if (!f)
        return 0;
    for (size_t i = 1; i < f->ncomms; i++)
        if (f->comms[i].count > f->comms[best].count)
            best = i;
    if (f->ncomms)
        snprintf(f->p->program, sizeof(f->p->program), "%s", f->comms[best].name);
    if (!f->p->period_ns && f->p->samples && pp_profile_time_weights(f->p))
        f->p->period_ns = f->p->period / f->p->samples;     /* perf's mean period */
    rc = pp__fold_proc_finish(f);
    pp__fold_python_free(f);
    free(f->procs);
    free(f->thread_roots);
    free(f->raws);
    free(f->raw_of_key);
    pp__htab_free(&f->raw_index);
    free(f->keep);
    free(f->ids);
    free(f->rawof);
    free(f->effdso);
    free(f->effdso_len);
    free(f);
    return rc;
}
