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
 *   anything else (wait4, waitid, ...)       other
 *
 * The part of a stretch after the thread was woken, runnable but not yet
 * running, is waiting for a CPU whatever the reason before it.
 * System call numbers are x86_64's (the collector is x86_64 only).
 */
#ifndef PERFPY_SAMPLE_WALL_H
#define PERFPY_SAMPLE_WALL_H

#include "collect_bpf.h"

#include <stddef.h>
#include <stdint.h>

/* The reason (PP_WAIT_*, report/fold.h) for a stretch off the CPU of the
 * thread that stopped in state `state` (0: runnable) inside system call
 * `nr` (< 0: none) with arguments arg0 and arg1, in a process whose GIL
 * state is at gil (0: unknown) and gil_size bytes long. */
int pp_wall_reason(uint32_t state, int64_t nr, uint64_t arg0, uint64_t arg1, uint64_t gil,
                   uint64_t gil_size);

/* The same for a record of kind PP_BPF_OFF_*. */
int pp_wall_reason_of(const struct pp_bpf_sample *s, uint64_t gil_size);

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

#endif
