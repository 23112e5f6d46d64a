/*
 * Read mode's wall clock (--idle) and GIL (--gil): what read.c asks, at
 * each read of a thread, beyond its stack.
 *
 * --idle: every thread is read at each tick, on and off the CPU, and the
 * time since its last read is split as /proc tells it (collect/offcpu.h):
 *
 *   last read                                             this read
 *      |==== on a CPU ====|---- blocked: its reason ----|~ runq ~|
 *        weight cpu_ns       weight blocked_ns, marker      weight runq_ns,
 *        (no marker)         [off-CPU: sleep] ...           [off-CPU: waiting
 *                                                            for a CPU]
 *
 * each part a sample of the stack read now, weighing its nanoseconds, so
 * that the profile is sample mode's (the same markers, the same summary
 * split). The reason of the blocked part is the wait the thread is in now,
 * else the one the last read found (the wait ended between the reads); a
 * futex inside the GIL's state is the GIL (its address from the
 * interpreter's memory: pp__readwall_gil).
 *
 * --gil: the GIL's `locked` and `last_holder` (a PyThreadState) read at
 * the tick; only the thread holding it is sampled (py-spy's test).
 */
#ifndef PERFPY_SAMPLER_READ_WALL_H
#define PERFPY_SAMPLER_READ_WALL_H

#include "cpython/mem.h"
#include "cpython/pyoffsets.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct pp_readwall pp_readwall;

/* One part of a thread's time between two reads. */
typedef struct pp_readwall_part {
    uint64_t ns;                   /* its weight */
    uint64_t end_ns;               /* when it ended (CLOCK_MONOTONIC) */
    int wait;                      /* PP_WAIT_* (profile/raw.h); 0: on the CPU */
} pp_readwall_part;

int pp__readwall_open(pp_readwall **out);
void pp__readwall_close(pp_readwall *w);

/* Thread tid of pid read now (now_ns): the parts of its time since its
 * last read, up to three, in the order they happened, none of 0 ns; the
 * first read of a thread gives none (nothing to measure from). gil and
 * gil_size: its process's GIL state (0: not known). The count, or -errno
 * (-ENOENT: the thread ended; -EACCES: not ours to read). */
int pp__readwall_parts(pp_readwall *w, pid_t pid, pid_t tid, uint64_t now_ns, uint64_t gil,
                       uint64_t gil_size, pp_readwall_part parts[3]);

/* The address of the GIL's state in a process (3.8-3.11 inside
 * _PyRuntime, 3.12+ the main interpreter's pointer to it), or 0 where the
 * layout has none (a free-threaded build) or it cannot be read yet. */
uint64_t pp__readwall_gil(const pp_mem *m, const pp_py_offsets *o, uint64_t runtime);

/* The PyThreadState holding the GIL at gil now, in *holder (0: none holds
 * it). 0, -ENOTSUP (the layout has no `locked` or `last_holder`, or gil is
 * 0), or the read's -errno. */
int pp__readwall_holder(const pp_mem *m, const pp_py_offsets *o, uint64_t gil,
                        uint64_t *holder);

#endif
