/*
 * Wall-clock mode's user-space half (the kernel's is in sample.bpf.c): why
 * a thread was off the CPU, and the stacks captured as a thread stopped
 * whose weights come later.
 *
 * The reason comes from what the thread was doing as it stopped, never
 * from guessing at its stack:
 *
 *   still runnable (preempted)               waiting for a CPU
 *   not in a system call (a page fault)      other
 *   clock_nanosleep, nanosleep, pause,       sleep
 *     select/pselect6 on no fd, poll/ppoll
 *     on no fd (time.sleep on 3.8-3.10)
 *   futex on an address inside the GIL's    GIL
 *     state
 *   futex, futex_waitv, flock, semop,        lock
 *     fcntl(F_SETLKW)
 *   read, write, recv*, send*, accept*,      I/O
 *     connect, poll/select/epoll with fds,
 *     open, fsync, stat, ... (the file and
 *     socket calls)
 *   wait4, waitid; vfork, clone(CLONE_VFORK) child process
 *     and clone3 (the parent waits for its
 *     child's exec: subprocess, posix_spawn)
 *   anything else                            other
 *
 * One reason comes from the Python frames as well: a sleep or an I/O wait
 * whose innermost Python function (past selectors.py's, which
 * subprocess's waits go through) is subprocess.py's is waiting for a
 * child process. Popen.wait(timeout) sleeps in a loop of WNOHANG waits on
 * 3.8-3.14 and polls a pidfd on 3.15; communicate() polls or reads the
 * child's pipes; Popen() reads the pipe that says the child's exec.
 *
 * The part of a stretch after the thread was woken, runnable but not yet
 * running, is waiting for a CPU whatever the reason before it.
 * System call numbers are x86_64's (the collector is x86_64 only).
 */
#ifndef PERFPY_COLLECT_WALL_H
#define PERFPY_COLLECT_WALL_H

#include "collect_bpf.h"
#include "profile/raw.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The reason (PP_WAIT_*, profile/raw.h) for a stretch off the CPU of the
 * thread that stopped in state `state` (0: runnable) inside system call
 * `nr` (< 0: none) with arguments arg0 and arg1, in a process whose GIL
 * state is at gil (0: unknown) and gil_size bytes long. */
int pp_wall_reason(uint32_t state, int64_t nr, uint64_t arg0, uint64_t arg1, uint64_t gil,
                   uint64_t gil_size);

/* The same for a record of kind PP_BPF_OFF_*. */
int pp_wall_reason_of(const struct pp_bpf_sample *s, uint64_t gil_size);

/* reason, or PP_WAIT_CHILD for a sleep or I/O wait in subprocess's code
 * (see above) by s's frames (leaf first). */
int pp_wall_reason_python(int reason, const pp_raw_sample *s);

/* Records of kind PP_BPF_OFF_OPEN kept until their end (pp_bpf_wall_end)
 * comes, one per thread. */
typedef struct pp_wall_open pp_wall_open;

int pp_wall_open_new(pp_wall_open **out);
/* Keeps a copy of s for its thread; one kept before for the same thread
 * (its end never came) is dropped and counted. 0 or -ENOMEM. */
int pp_wall_open_keep(pp_wall_open *w, const struct pp_bpf_sample *s);
/* The record kept for (pid, tid), taken out (the caller gives it back
 * with pp_wall_open_done), or NULL. */
struct pp_bpf_sample *pp_wall_open_take(pp_wall_open *w, uint32_t pid, uint32_t tid);
/* A record taken is done with: its buffer is kept for the next capture
 * (a few dozen kept; past them freed). */
void pp_wall_open_done(pp_wall_open *w, struct pp_bpf_sample *s);
/* Buffers allocated so far. */
uint64_t pp_wall_open_made(const pp_wall_open *w);
/* Records whose end never came: those dropped, and those still kept. */
uint64_t pp_wall_open_unended(const pp_wall_open *w);
void pp_wall_open_free(pp_wall_open *w);

/* What a recording in wall-clock mode says at its end: the scheduler's
 * events seen, and every one lost or missing (the collector's counters,
 * and the captures whose end never came). */
typedef struct pp_wall_counts {
    uint64_t switches, captured;        /* the threads' stops; stacks off the CPU taken */
    uint64_t missed, missed_ns;         /* switches the kernel did not report, and the
                                           time off the CPU around them (no stack) */
    uint64_t uncaptured, uncaptured_ns; /* sampled stretches not captured as their
                                           threads ran again, and their weight */
    uint64_t lost_samples;              /* samples on the CPU: the ring buffer was
                                           full (said by the sampler's own note) */
    uint64_t lost_captures, lost_ends;  /* stacks off the CPU, ends of one: the ring
                                           buffer was full */
    uint64_t lost_ns;                   /* the time off the CPU those stood for (as
                                           sampled) */
    uint64_t recorded_ns;               /* the time the profile holds (its weight) */
    uint64_t lost_threads;              /* threads not followed (no memory) */
    uint64_t unended;                   /* stacks whose end never came */
} pp_wall_counts;

/* The events lost, as the summary's "lost events" counts them: every
 * count of a sample, a stack or its end that never became a sample. */
uint64_t pp_wall_lost_events(const pp_wall_counts *c);
/* The notes that say them (one line each, "perfpy: wall clock: ..."):
 * verbose, every one; otherwise one line, only when the time off the CPU
 * missing is PP_NOTE_SAID_PCT of the profile's or more, or a thread was
 * not followed. */
void pp_wall_notes(FILE *out, const pp_wall_counts *c, int verbose);

#endif
