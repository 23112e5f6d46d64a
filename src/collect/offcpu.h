/*
 * Time off the CPU as /proc tells it, for read mode's wall clock: no BPF,
 * no privilege beyond reading one's own processes (the right to ptrace
 * them, which /proc's syscall file asks for too).
 *
 * At each read of a thread the kernel's own account is taken:
 *
 *   /proc/PID/task/TID/stat       its state: R (running, or runnable), S or
 *                                 D (blocked), T, t, Z ...
 *   /proc/PID/task/TID/schedstat  time on a CPU, and time runnable waiting
 *                                 for one (ns, since it started)
 *   /proc/PID/task/TID/syscall    the system call it is blocked in, and its
 *                                 arguments ("running" while it runs)
 *   /proc/PID/task/TID/wchan      the kernel function it waits in, where the
 *                                 syscall file cannot be read
 *
 * Between two reads of a thread, its wall time is the time it ran, the
 * time it waited for a CPU (the second schedstat field's growth), and the
 * rest, blocked:
 *
 *   read 1                                                    read 2
 *     |====== on a CPU ======|-- blocked (sleep, I/O...) --|~runq~|
 *        run_ns grew by this      wall - run - runq          delay_ns grew
 *
 * The reason for the blocked part is the wait it was in: the one read 2
 * finds when the thread is blocked then (the wait began after read 1 or
 * goes on), else the one read 1 found (the wait ended before read 2). The
 * reasons are sample mode's (wall.h: the system call and its arguments),
 * so a profile reads alike in both modes; from wchan alone, the kernel
 * function's family says it (pp_offcpu_wchan_reason).
 */
#ifndef PERFPY_SAMPLE_OFFCPU_H
#define PERFPY_SAMPLE_OFFCPU_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct pp_offcpu {
    char state;                     /* stat's state letter; 0: not read */
    uint64_t run_ns, delay_ns;      /* schedstat: on a CPU, runnable waiting for one */
    int64_t syscall;                /* the call it blocks in; -1: none or not known */
    uint64_t args[6];
    char wchan[64];                 /* "" when not read or 0 */
} pp_offcpu;

/* The split of wall_ns between two reads of one thread. */
typedef struct pp_offcpu_split {
    uint64_t cpu_ns, runq_ns, blocked_ns;
} pp_offcpu_split;

/* The two first fields of a schedstat file's text. 0 or -EIO. */
int pp_offcpu_parse_schedstat(const char *text, uint64_t *run_ns, uint64_t *delay_ns);
/* A syscall file's text: "NR ARG0 ... ARG5 SP PC" while blocked in a call
 * (nr and args set), "-1 SP PC" blocked outside one and "running" (nr -1).
 * 0 or -EIO. */
int pp_offcpu_parse_syscall(const char *text, int64_t *nr, uint64_t args[6]);
/* The reason (PP_WAIT_*) a kernel function a thread waits in stands for,
 * by its family (do_nanosleep: sleep; futex_wait*: lock; pipe_read, the
 * socket and poll waits: I/O; do_wait, a vfork: a child), PP_WAIT_OTHER for one
 * not known. */
int pp_offcpu_wchan_reason(const char *wchan);

/* Thread tid of pid, now: its state and account, and when it is not
 * running its system call (or, that unreadable, its wchan). 0 or -errno
 * (-ENOENT: it ended; -EACCES: not ours to read). */
int pp_offcpu_read(pid_t pid, pid_t tid, pp_offcpu *t);

/* The reason of the time t spent blocked (not PP_WAIT_CPU: that part is
 * the split's runq), with the GIL's state at gil (gil_size bytes; 0:
 * unknown) for a futex's address. */
int pp_offcpu_reason(const pp_offcpu *t, uint64_t gil, uint64_t gil_size);

/* Whether t was blocked when read (S or D). */
int pp_offcpu_blocked(const pp_offcpu *t);

/* The split of the wall_ns between reads a and b of one thread. The
 * account of a running thread is brought up to date at the scheduler's
 * ticks and switches, not at the read, so it lags by up to a tick: a
 * thread found running at both reads ran all but its wait for a CPU (a
 * wait too short for either read to see is not told apart); one found
 * blocked at either has the rest as blocked, its time on a CPU capped to
 * the interval. A thread whose account went back (its tid reused) is
 * split from b's own state, all running or all blocked. */
void pp_offcpu_split_of(const pp_offcpu *a, const pp_offcpu *b, uint64_t wall_ns,
                        pp_offcpu_split *out);

#endif
