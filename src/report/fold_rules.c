/*
 * Which native frame is what, for the folding rules of fold.c: two tables
 * (by symbol name, by the DSO's file name) give each frame its C_* bits
 * (fold_int.h), and a frame perf could not name gets its library as label.
 *
 *   _PyEval_EvalFrameDefault  (libpython3.12.so)  -> PLUMB | INTERP
 *   Py_BytesMain              (python3.12)        -> STARTUP | ENTRY | INTERP
 *   deflate                   (libz.so.1)         -> (nothing: real work)
 *   [unknown]                 (libz.so.1)         -> UNNAMED, label "[libz.so.1]"
 *   [unknown]                 (python3.11)        -> UNNAMED | INTERP, "[python3.11]"
 *   pp_engine_register        (perfpy.cpython-*)  -> INTERP | SELF
 *
 * A name matches after cutting a ".cold"/".isra.0"-style suffix. Data
 * only: what the bits mean for a stack is fold.c's business.
 */
#include "fold_int.h"

#include <stdio.h>
#include <string.h>

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
    {"perfpy.", 1, C_INTERP | C_SELF},   /* perfpy.cpython-312-x86_64-linux-gnu.so */
    {"perfpy", 0, C_SELF},          /* the command: record's __exec shim before its exec */
    {"perf-", 1, C_INTERP},         /* unnamed code in /tmp/perf-<pid>.map */
    {"jitted-", 1, C_INTERP},       /* unnamed code in perf inject's ELF files */
    {"libc.so", 1, C_STARTUP},
    {"libc-", 1, C_STARTUP},
    {"ld-linux", 1, C_STARTUP},
    {"libpthread", 1, C_STARTUP},
};

int pp__fold_starts(const char *s, size_t len, const char *prefix)
{
    size_t n = strlen(prefix);
    return len >= n && memcmp(s, prefix, n) == 0;
}

unsigned pp__fold_name_bits(const char *sym, size_t len)
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

/* perf's bracketed DSO names that are user-space memory, not the kernel */
static const char *const user_brackets[] = {"[vdso", "[unknown", "[heap", "[stack", "[anon", "[JIT"};

static int kernel_dso(const char *dso, size_t len)
{
    if (pp__fold_starts(dso, len, "[kernel"))
        return 1;
    if (len <= 2 || dso[0] != '[' || dso[len - 1] != ']')
        return 0;
    for (size_t i = 0; i < sizeof(user_brackets) / sizeof(user_brackets[0]); i++)
        if (pp__fold_starts(dso, len, user_brackets[i]))
            return 0;
    return 1;                        /* [kernel.kallsyms], [nf_conntrack], ... */
}

unsigned pp__fold_dso_bits(const char *dso, size_t len)
{
    const char *slash = len ? memrchr(dso, '/', len) : NULL;
    const char *b = slash ? slash + 1 : dso;
    size_t bl = len - (size_t)(b - dso);
    unsigned bits = kernel_dso(dso, len) ? C_KERNEL : 0;

    for (size_t i = 0; i < sizeof(dso_rules) / sizeof(dso_rules[0]); i++)
        if (dso_rules[i].prefix ? pp__fold_starts(b, bl, dso_rules[i].name)
                                : bl == strlen(dso_rules[i].name) &&
                                      memcmp(b, dso_rules[i].name, bl) == 0)
            bits |= dso_rules[i].bits;
    /* "python..." names the interpreter binary, not a C extension such as
     * python_foo.so. */
    if ((bits & C_INTERP) && pp__fold_starts(b, bl, "python") && memmem(b, bl, ".so", 3))
        bits &= ~(unsigned)C_INTERP;
    return bits;
}

/* "name+0x1f" -> "name" (perf adds the offset when asked for symoff). */
size_t pp__fold_cut_offset(const char *s, size_t len)
{
    size_t i = len;

    while (i > 0 && ((s[i - 1] >= '0' && s[i - 1] <= '9') || (s[i - 1] >= 'a' && s[i - 1] <= 'f')))
        i--;
    if (i < len && i >= 3 && s[i - 1] == 'x' && s[i - 2] == '0' && s[i - 3] == '+')
        return i - 3;
    return len;
}

/* "…/jitted-<pid>-<index>.so": pid (and *index), else -1. */
int pp__fold_jitted_name(const char *dso, size_t len, uint64_t *index)
{
    const char *b = len ? memrchr(dso, '/', len) : NULL;
    unsigned long long pid, idx;
    int used = 0;
    char name[96];
    size_t bl;

    b = b ? b + 1 : dso;
    bl = len - (size_t)(b - dso);
    if (bl >= sizeof(name) || !pp__fold_starts(b, bl, "jitted-"))
        return -1;
    memcpy(name, b, bl);
    name[bl] = '\0';
    if (sscanf(name, "jitted-%llu-%llu.so%n", &pid, &idx, &used) != 2 || (size_t)used != bl ||
        pid > 0x7fffffff)
        return -1;
    *index = idx;
    return (int)pid;
}

/* perf prints "[unknown]" for an address in no symbol it knows; the DSO
 * (libz.so.1, the stripped /usr/bin/python3.11) still says whose code it
 * is, so that is the label, bracketed as FlameGraph's stackcollapse-perf.pl
 * writes it. Only an address in no mapping at all (perf's DSO "[unknown]":
 * a broken unwind, code that was unmapped) stays "[unknown]". */
size_t pp__fold_unnamed_label(const char *dso, size_t dl, char *buf, size_t cap)
{
    const char *slash = dl ? memrchr(dso, '/', dl) : NULL;
    const char *b = slash ? slash + 1 : dso;
    size_t bl = dl - (size_t)(b - dso);
    int n;

    if (bl == 0 || (bl == 9 && memcmp(b, "[unknown]", 9) == 0))
        n = snprintf(buf, cap, "[unknown]");
    else if (b[0] == '[' && b[bl - 1] == ']')
        n = snprintf(buf, cap, "%.*s", (int)bl, b);     /* [vdso], [kernel.kallsyms] */
    else
        n = snprintf(buf, cap, "[%.*s]", (int)bl, b);
    return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}

/* ---- wall-clock mode's reasons ------------------------------------------- */

static const char *const wait_markers[PP_WAIT_N] = {
    NULL, "[off-CPU: sleep]", "[off-CPU: I/O]", "[off-CPU: lock]", "[off-CPU: GIL]",
    "[off-CPU: child process]", "[off-CPU: waiting for a CPU]", "[off-CPU: other]",
};

static const char *const wait_names[PP_WAIT_N] = {
    "on-CPU", "sleep", "I/O", "lock", "GIL", "child", "CPU wait", "other",
};

const char *pp_wait_marker(int wait)
{
    return wait > 0 && wait < PP_WAIT_N ? wait_markers[wait] : NULL;
}

const char *pp_wait_name(int wait)
{
    return wait >= 0 && wait < PP_WAIT_N ? wait_names[wait] : "?";
}

int pp_wait_of_marker(const char *name)
{
    for (int i = 1; i < PP_WAIT_N; i++)
        if (strcmp(name, wait_markers[i]) == 0)
            return i;
    return PP_WAIT_NONE;
}

int pp_task_wait_marker(const char *name)
{
    return strncmp(name, PP_TASK_AWAITING, sizeof(PP_TASK_AWAITING) - 1) == 0 ||
           strcmp(name, PP_TASK_READY) == 0;
}
