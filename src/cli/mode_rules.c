/*
 * The rules of the mode (mode.h), over what the machine answered
 * (pp_mode_here): nothing here asks the machine, so every rule is held by
 * the unit tests as it is. The ladder of --mode auto for a program perfpy
 * starts, in order:
 *
 *   sample  BPF allowed here (root, or CAP_BPF + CAP_PERFMON; a kernel with
 *           BPF and BTF): perfpy-sample --check loads and attaches it.
 *           Native and kernel frames, executing lines, no hook.
 *   read    else, where this user may read the program's memory
 *           (process_vm_readv: its own child always, unless
 *           kernel.yama.ptrace_scope is 3 or a seccomp policy forbids the
 *           call). No hook, no root; Python frames only.
 *   hook    the trampoline modes, perf map or jitdump as the interpreter
 *           allows (pp_interp_auto_mode): when the options need perf's
 *           recording (-f perf, --inline, --stack-size, --keep), when the
 *           program is no CPython perfpy can read from outside, when
 *           neither of the above can run here, or when asked (--mode hook,
 *           perf or jit; PERFPY_RECORD_MODE=hook).
 *
 * An option only sample mode honours (--async, -a) makes auto sample
 * mode, saying nothing. One that sample and read mode honour (--idle,
 * --gil) makes it sample mode where BPF may be used (saying nothing), else
 * read mode where the target may be read, said; else it is refused with
 * both reasons: no hook mode records time off the CPU or the GIL. A process attached to is recorded in
 * the mode of the engine it runs (its files say: places.c); one without
 * an engine in sample mode, else read mode, each said, else refused with
 * what to do. perfpy top has no hook: sample mode where it loads, else
 * read mode.
 */
#include "mode.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* The sentence of a failure; PP_EXIT_FAIL. */
static int refuse(pp_mode_choice *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int refuse(pp_mode_choice *c, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(c->why, sizeof(c->why), fmt, ap);
    va_end(ap);
    return PP_EXIT_FAIL;
}

/* The ladder of auto for a program (and for doctor's process of this
 * user): c->mode sample, read or hook, with the sentence. */
static int best(const pp_mode_ask *a, const pp_mode_here *h, pp_mode_choice *c)
{
    const pp_interp *in = a->interp;

    c->chosen = 1;
    c->mode = PP_MODE_HOOK;
    if (a->perf_only)
        return snprintf(c->why, sizeof(c->why), "%s mode: %s needs perf's recording, which "
                        "only the trampoline modes make", h->hook_name, a->perf_only), 0;
    if (a->argv && (!in->known || !in->cpython || in->major != 3 || in->minor < 8))
        return snprintf(c->why, sizeof(c->why), "%s mode: '%s' is not a CPython perfpy can "
                        "read from outside (the hook starts in every Python process it runs)",
                        h->hook_name, a->argv[0]), 0;
    if (h->sample == PP_MODE_UNASKED)
        return -EINVAL;
    if (h->sample == 0) {
        c->mode = PP_MODE_SAMPLE;
        snprintf(c->why, sizeof(c->why), "sample mode, the best here: BPF may be used "
                 "(nothing installed in the program; --mode hook for the trampoline modes)");
    } else if (h->sample != -ENOENT && h->read == 0) {
        c->mode = PP_MODE_READ;
        if (h->sample == -ENOTSUP)
            snprintf(c->why, sizeof(c->why), "read mode, which needs no privilege: %s",
                     h->sample_why);
        else
            snprintf(c->why, sizeof(c->why), "read mode, which needs no privilege: sample "
                     "mode cannot run here (%s%s)", h->sample_why, strstr(h->sample_why,
                     "not permitted") ? ": it needs root, or CAP_BPF and CAP_PERFMON" : "");
    } else if (h->sample == -ENOENT) {
        snprintf(c->why, sizeof(c->why), "%s mode: %s (read mode is in the same program)",
                 h->hook_name, h->sample_why);
    } else {
        snprintf(c->why, sizeof(c->why), "%s mode: sample mode cannot run here (%s), and "
                 "read mode cannot read %s (process_vm_readv %s: a seccomp policy, or "
                 "kernel.yama.ptrace_scope 3)", h->hook_name, h->sample_why,
                 a->pid ? "that process" : "another process", strerror(-h->read));
    }
    return 0;
}

/* --idle or --gil in auto (a program, or a process whatever engine it
 * runs): sample mode, else read mode, said; else refused. 0 or
 * PP_EXIT_FAIL. */
static int sample_or_read(const pp_mode_ask *a, const pp_mode_here *h, pp_mode_choice *c)
{
    if (h->sample == PP_MODE_UNASKED)
        return -EINVAL;
    c->mode = PP_MODE_SAMPLE;
    if (h->sample == 0)
        return 0;                   /* as before: nothing chosen, nothing said */
    if (h->sample == -ENOENT)       /* no perfpy-sample: no read mode either */
        return refuse(c, "%s needs sample or read mode, and %s (read mode is in the same "
                      "program)", a->sample_or_read, h->sample_why);
    if (h->read != 0)
        return refuse(c, "%s needs sample or read mode: sample mode cannot run here (%s), "
                      "and read mode cannot read %s (%s)", a->sample_or_read, h->sample_why,
                      a->pid ? "that process" : "another process", h->read == -EPERM ?
                      "not permitted: run perfpy as that process's user" :
                      strerror(-h->read));
    c->mode = PP_MODE_READ;
    c->chosen = 1;
    snprintf(c->why, sizeof(c->why), "read mode, which needs no privilege, for %s: sample "
             "mode cannot run here (%s%s); the reasons come from /proc, with Python frames "
             "only", a->sample_or_read, h->sample_why, h->sample != -ENOTSUP &&
             strstr(h->sample_why, "not permitted") ? ": it needs root, or CAP_BPF and "
             "CAP_PERFMON" : "");
    return 0;
}

/* A process attached to: the mode of the engine it runs; without one (and
 * auto) sample mode, else read mode, each said; else refused with what to
 * do. 0 or PP_EXIT_FAIL. */
static int attached(const pp_mode_ask *a, const pp_mode_here *h, pp_mode_choice *c)
{
    int sample = a->asked == PP_MODE_AUTO ? h->sample : -1;

    if (a->engine == PP_ENGINE_JIT && a->asked != PP_MODE_PERF)
        return c->mode = PP_MODE_JIT, 0;
    if (a->engine == PP_ENGINE_MAP && a->asked != PP_MODE_JIT)
        return c->mode = PP_MODE_PERF, 0;
    if (a->engine != PP_ENGINE_NONE)
        return refuse(c, "the process %ld runs perfpy's engine in %s mode, not %s: give "
                      "--mode %s (or auto)", a->pid, a->engine == PP_ENGINE_JIT ? "jit" : "perf",
                      h->asked_name, a->engine == PP_ENGINE_JIT ? "jit" : "perf");
    if (sample == PP_MODE_UNASKED)
        return -EINVAL;
    if (sample == 0 && a->sample_refused)
        return refuse(c, "the process %ld was not started with perfpy's engine, and sample "
                      "mode, which could attach to it, cannot do this: %s", a->pid,
                      a->sample_refused);
    c->chosen = 1;
    if (sample == 0) {
        c->mode = PP_MODE_SAMPLE;
        snprintf(c->why, sizeof(c->why), "the process %ld was not started with perfpy's "
                 "engine: attaching in sample mode, which reads its Python frames from "
                 "outside (nothing installed in it)", a->pid);
        return 0;
    }
    if (a->asked == PP_MODE_AUTO && sample != -ENOENT && sample != -ENOTSUP && h->read == 0 &&
        !a->read_refused) {
        c->mode = PP_MODE_READ;
        snprintf(c->why, sizeof(c->why), "the process %ld was not started with perfpy's "
                 "engine, and sample mode cannot run here (%s): attaching in read mode, "
                 "which reads its Python frames from outside with no privilege (nothing "
                 "installed in it)", a->pid, h->sample_why);
        return 0;
    }
    return refuse(c, "the process %ld was not started with perfpy's engine, so perf cannot "
                  "name its Python functions: start it with `perfpy run --mode jit -- "
                  "python3 app.py` (or PERFPY=jit with perfpy installed in its Python), or "
                  "read it from outside: perfpy record --mode read -p %ld (no root), --mode "
                  "sample -p %ld (root)", a->pid, a->pid, a->pid);
}

/* perfpy top: sample mode where its BPF program loads, else read mode
 * (unless an option or --mode asks for sample mode); read mode needs the
 * right to read the process. 0 or PP_EXIT_FAIL. */
static int live(const pp_mode_ask *a, const pp_mode_here *h, pp_mode_choice *c)
{
    c->mode = a->asked == PP_MODE_READ ? PP_MODE_READ : PP_MODE_SAMPLE;
    if (c->mode == PP_MODE_SAMPLE && h->sample == PP_MODE_UNASKED)
        return -EINVAL;
    if (c->mode == PP_MODE_SAMPLE && h->sample != 0) {
        if (h->sample == -ENOTSUP && (a->sample_only || a->asked == PP_MODE_SAMPLE))
            return refuse(c, "perfpy top %s needs sample mode, and %s", a->sample_only ?
                          a->sample_only : "--mode sample", h->sample_why);
        if (a->sample_only)
            return refuse(c, "perfpy top %s needs sample mode, which cannot sample here "
                          "(%s): it needs root, or the capabilities CAP_BPF and "
                          "CAP_PERFMON, and a kernel with BPF and BTF; without it, top "
                          "watches CPU time in read mode", a->sample_only, h->sample_why);
        if (a->asked == PP_MODE_SAMPLE)
            return refuse(c, "sample mode cannot sample here (%s): it needs root, or the "
                          "capabilities CAP_BPF and CAP_PERFMON, and a kernel with BPF and "
                          "BTF; --mode read needs none of them", h->sample_why);
        c->mode = PP_MODE_READ;
    }
    if (c->mode == PP_MODE_READ && a->pid && h->read != 0)
        return refuse(c, "cannot read the memory of the process %ld: %s", a->pid,
                      h->read == -EPERM ? "not permitted (a user may read only its own "
                      "processes, and kernel.yama.ptrace_scope may allow only children: "
                      "run perfpy as that process's user, or as root for sample mode)"
                      : strerror(-h->read));
    return 0;
}

int pp_mode_rules(const pp_mode_ask *a, const pp_mode_here *h, pp_mode_choice *c)
{
    int rc;

    memset(c, 0, sizeof(*c));
    c->mode = a->asked;
    if (a->live)
        return live(a, h, c);
    if (a->asked == PP_MODE_AUTO && a->sample_only) {
        c->mode = PP_MODE_SAMPLE;          /* the options say it: nothing to choose */
        return 0;
    }
    if (a->asked == PP_MODE_AUTO && a->sample_or_read)
        return sample_or_read(a, h, c);
    if (a->pid && a->engine != PP_ENGINE_UNASKED && a->asked != PP_MODE_SAMPLE &&
        a->asked != PP_MODE_READ && (rc = attached(a, h, c)) != 0)
        return rc;
    if (c->mode == PP_MODE_AUTO && (rc = best(a, h, c)) != 0)
        return rc;
    if (c->mode == PP_MODE_HOOK)
        c->mode = h->hook;
    return 0;
}
