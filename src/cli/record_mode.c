/*
 * --mode auto: the best mode this machine allows for a recording, and the
 * sentence that says why (the first line `perfpy record` prints; `perfpy
 * doctor` prints the same for each kind of run). In order:
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
 * PERFPY_RECORD_MODE gives --mode's default (any of its words).
 */
#include "cli.h"
#include "interp.h"
#include "options.h"
#include "record.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

int pp__record_can_read(pid_t pid)
{
    char buf[1];
    struct iovec local = {buf, 1}, remote = {NULL, 1};
    FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
    int scope = 0;

    if (f) {
        if (fscanf(f, "%d", &scope) != 1)
            scope = 0;
        fclose(f);
    }
    if (scope >= 3)
        return -EPERM;                 /* no process may read another, ever */
    /* address 0: the permission is checked first, then the read faults */
    if (process_vm_readv(pid, &local, 1, &remote, 1, 0) < 0 && errno != EFAULT)
        return errno == ENOSYS ? -ENOSYS : -errno;
    return 0;
}

/* What in the options needs perf's own recording, or NULL. */
static const char *needs_perf(const pp_record_opts *o)
{
    return o->format->recording ? "-f perf (a perf.data for perf's own tools)"
           : o->inline_frames   ? "--inline (perf's addr2line)"
           : o->stack_size_given ? "--stack-size (perf's stack copy)"
           : o->keep            ? "--keep (perf's recording kept)" : NULL;
}

void pp__record_best_mode(const pp_record_opts *o, const pp_interp *in, const char *libdir,
                          pp_mode_choice *c)
{
    char sample_why[1024];
    const char *perf_only = needs_perf(o);
    const char *hook = pp_interp_auto_mode(in);
    int rc;

    if (perf_only) {
        c->mode = hook;
        snprintf(c->why, sizeof(c->why), "%s mode: %s needs perf's recording, which only "
                 "the trampoline modes make", hook, perf_only);
        return;
    }
    if (o->argv && (!in->known || !in->cpython || in->major != 3 || in->minor < 8)) {
        c->mode = hook;
        snprintf(c->why, sizeof(c->why), "%s mode: '%s' is not a CPython perfpy can read "
                 "from outside (the hook starts in every Python process it runs)", hook,
                 o->argv[0]);
        return;
    }
    rc = pp__record_sample_check(libdir, sample_why, sizeof(sample_why));
    if (rc == 0) {
        c->mode = "sample";
        snprintf(c->why, sizeof(c->why), "sample mode, the best here: BPF may be used "
                 "(nothing installed in the program; --mode hook for the trampoline modes)");
        return;
    }
    if (rc != -ENOENT && pp__record_can_read(o->pid ? (pid_t)o->pid : getpid()) == 0) {
        c->mode = "read";
        snprintf(c->why, sizeof(c->why), "read mode, which needs no privilege: sample mode "
                 "cannot run here (%s%s)", sample_why, strstr(sample_why, "not permitted")
                 ? ": it needs root, or CAP_BPF and CAP_PERFMON" : "");
        return;
    }
    c->mode = hook;
    if (rc == -ENOENT)
        snprintf(c->why, sizeof(c->why), "%s mode: %s (read mode is in the same program)",
                 hook, sample_why);
    else
        snprintf(c->why, sizeof(c->why), "%s mode: sample mode cannot run here (%s), and "
                 "read mode cannot read %s (process_vm_readv %s: a seccomp policy, or "
                 "kernel.yama.ptrace_scope 3)", hook, sample_why,
                 o->pid ? "that process" : "another process",
                 strerror(-pp__record_can_read(o->pid ? (pid_t)o->pid : getpid())));
}

const char *pp__record_default_mode(void)
{
    const char *env = getenv("PERFPY_RECORD_MODE");

    return env && *env ? env : "auto";
}
