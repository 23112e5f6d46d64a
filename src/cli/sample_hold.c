/*
 * The started program held at its exec until its _PyRuntime is found
 * (sample_hold.h has the picture). Why stepping system calls: a CPython
 * linked to libpython (pyenv's, a --enable-shared build) has no
 * _PyRuntime at its exec; ld.so maps libpython some 30 system calls
 * later (openat, read, then one mmap per segment: its text before its
 * data, where _PyRuntime lies), still long before Python code runs. A
 * static CPython (Debian's) shows it at the exec stop.
 */
#include "sample_hold.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t mono_ns(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int may_trace(void)
{
    struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct d[2];

    if (syscall(SYS_capget, &h, d) != 0)
        return 0;
    return (d[CAP_SYS_PTRACE / 32].effective >> (CAP_SYS_PTRACE % 32)) & 1;
}

int pp__hold_seize(pid_t pid)
{
    if (!may_trace())
        return -EPERM;
    if (ptrace(PTRACE_SEIZE, pid, 0, PTRACE_O_TRACEEXEC | PTRACE_O_TRACESYSGOOD) != 0)
        return -errno;
    return 0;
}

/* Whether the image pid runs names a libpython among the libraries ld.so
 * maps before main (DT_NEEDED). */
static int needs_libpython(pid_t pid)
{
    char path[64];
    int fd, found = 0;
    Elf *elf;
    Elf_Scn *scn = NULL;

    snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
    elf_version(EV_CURRENT);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return 0;
    if (!(elf = elf_begin(fd, ELF_C_READ, NULL))) {
        close(fd);
        return 0;
    }
    while (!found && (scn = elf_nextscn(elf, scn)) != NULL) {
        GElf_Shdr sh;
        Elf_Data *data;
        GElf_Dyn dyn;

        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize ||
            !(data = elf_getdata(scn, NULL)))
            continue;
        for (size_t i = 0; i < sh.sh_size / sh.sh_entsize && gelf_getdyn(data, (int)i, &dyn);
             i++) {
            const char *name = dyn.d_tag == DT_NEEDED ?
                elf_strptr(elf, sh.sh_link, dyn.d_un.d_val) : NULL;

            if (name && strncmp(name, "libpython", 9) == 0) {
                found = 1;
                break;
            }
        }
    }
    elf_end(elf);
    close(fd);
    return found;
}

/* At a syscall stop: 1 when it is the exit of an mmap (a new mapping to
 * look in), or when that cannot be told. */
static int after_mmap(pid_t pid, long *nr)
{
    struct __ptrace_syscall_info si;

    if (ptrace(PTRACE_GET_SYSCALL_INFO, pid, sizeof(si), &si) <= 0)
        return 1;
    if (si.op == PTRACE_SYSCALL_INFO_ENTRY) {
        *nr = (long)si.entry.nr;
        return 0;
    }
    return si.op != PTRACE_SYSCALL_INFO_EXIT || *nr == SYS_mmap;
}

static int let_go(pid_t pid, int sig, int why, uint64_t t0, pp_hold_stats *out)
{
    out->why = why;
    out->found = why == PP_HOLD_FOUND;
    out->held_ns = t0 ? mono_ns() - t0 : 0;
    if (ptrace(PTRACE_DETACH, pid, 0, sig) != 0 && errno != ESRCH)
        return -errno;
    return 0;
}

int pp__hold_run(pid_t pid, double bound_s, pp_hold_look look, pp_hold_idle idle, void *ctx,
                 int *status, pp_hold_stats *out)
{
    uint64_t t0 = 0, bound = (uint64_t)(bound_s * 1e9);
    long nr = -1;
    int ws, r, running = 0, interrupted = 0;

    memset(out, 0, sizeof(*out));
    for (;;) {
        /* between execs (env, a shell that execs python): the recording
         * goes on while the program runs, until its next exec */
        pid_t w = waitpid(pid, &ws, __WALL | (running ? WNOHANG : 0));

        if (w == 0) {
            if (mono_ns() - t0 < bound) {
                idle(ctx);
            } else if (!interrupted) {
                interrupted = 1;
                if (ptrace(PTRACE_INTERRUPT, pid, 0, 0) != 0)
                    return let_go(pid, 0, PP_HOLD_ENDED, t0, out);
                running = 0;        /* its stop is waited for */
            }
            continue;
        }
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        running = 0;
        if (WIFEXITED(ws) || WIFSIGNALED(ws)) {       /* exec failed (127), or killed */
            *status = ws;
            out->why = PP_HOLD_ENDED;
            out->held_ns = t0 ? mono_ns() - t0 : 0;
            return 1;
        }
        if (!WIFSTOPPED(ws))
            continue;
        if (ws >> 8 == (SIGTRAP | PTRACE_EVENT_EXEC << 8) && !interrupted) {
            t0 = t0 ? t0 : mono_ns();
            out->looks++;
            if ((r = look(ctx)) != 0)
                return let_go(pid, 0, r > 0 ? PP_HOLD_FOUND : PP_HOLD_REFUSED, t0, out);
            if (mono_ns() - t0 >= bound)
                return let_go(pid, 0, PP_HOLD_BOUND, t0, out);
            if (!needs_libpython(pid)) {
                if (ptrace(PTRACE_CONT, pid, 0, 0) != 0)
                    return let_go(pid, 0, PP_HOLD_ENDED, t0, out);
                out->execs++;
                running = 1;
                continue;
            }
        } else if (WSTOPSIG(ws) == (SIGTRAP | 0x80) && t0 && !interrupted) {
            out->stops++;
            if (after_mmap(pid, &nr)) {
                out->looks++;
                if ((r = look(ctx)) != 0)
                    return let_go(pid, 0, r > 0 ? PP_HOLD_FOUND : PP_HOLD_REFUSED, t0, out);
            }
            if (mono_ns() - t0 >= bound)
                return let_go(pid, 0, PP_HOLD_BOUND, t0, out);
        } else if (interrupted && ws >> 16 == PTRACE_EVENT_STOP) {
            return let_go(pid, 0, PP_HOLD_BOUND, t0, out);
        } else {
            /* a signal (delivered as the detach lets it go), a group
             * stop (left stopped), anything else: not held further */
            int sig = (ws >> 16) == 0 ? WSTOPSIG(ws) : 0;

            return let_go(pid, sig, PP_HOLD_SIGNAL, t0, out);
        }
        if (ptrace(PTRACE_SYSCALL, pid, 0, 0) != 0)
            return let_go(pid, 0, PP_HOLD_ENDED, t0, out);
    }
}
