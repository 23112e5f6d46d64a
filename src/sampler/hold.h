/*
 * Holding a program perfpy-sample starts at its exec until its _PyRuntime
 * is found (hold.c).
 *
 * The BPF side reads no Python frame of a process until perfpy-sample has
 * found its _PyRuntime and told the collector. A program that runs on
 * while perfpy-sample waits for a CPU (a loaded machine) can be 100
 * levels deep by then, and its stacks, deeper than the stack copied, are
 * cut with native frames only. The program perfpy starts is ours: it is
 * traced from before its exec (PTRACE_SEIZE, exec stops only), stopped at
 * its exec, and let go as soon as its runtime is found:
 *
 *   exec stop --look--> found ------------------------------> detached
 *     |   |                                                      ^
 *     |   | the image needs libpython (ld.so maps it before main)|
 *     |   v                                                      |
 *     | its entry point (a breakpoint, x86_64) --look--> found --+
 *     |
 *     +-- no CPython in it (env, a shell): runs on, traced, to its next
 *         exec (the recording goes on meanwhile)
 *
 *   (the bound passes from the first exec, or a signal comes: let go)
 *
 * A signal that comes during the hold is delivered as the program is let
 * go (the detach carries it); its exit status is its own. Nothing stays:
 * once detached the program is no longer traced.
 */
#ifndef PERFPY_SAMPLER_HOLD_H
#define PERFPY_SAMPLER_HOLD_H

#include <stdint.h>
#include <sys/types.h>

/* The look at a stop: 1 found, -1 never will be (its CPython is refused),
 * 0 not yet. */
typedef int (*pp_hold_look)(void *ctx);
/* While the program runs between two execs, or to its entry point: what
 * must go on meanwhile (quick: the program's stop waits for it). */
typedef void (*pp_hold_idle)(void *ctx);

typedef struct pp_hold_stats {
    uint64_t held_ns;          /* from the exec stop to the detach */
    uint64_t stopped_ns;       /* of which stopped, from each stop seen to its
                                  resumption (each stop's wait until it is seen,
                                  a wake-up of ours, is not in it) */
    unsigned looks;
    unsigned execs;            /* images with no CPython run through (env, a shell) */
    int found;                 /* 1: let go with its runtime found */
    int why;                   /* how the hold ended: PP_HOLD_* */
} pp_hold_stats;

enum { PP_HOLD_FOUND = 1, PP_HOLD_NOT_PYTHON, PP_HOLD_REFUSED, PP_HOLD_BOUND, PP_HOLD_SIGNAL,
       PP_HOLD_ENDED, PP_HOLD_MISSED };       /* MISSED: not found at its entry point */

/* Traces pid, a child of ours that has not exec'd yet, so that its exec
 * stops it. 0, or -errno (ptrace refused: not held, nothing changed).
 * Only with CAP_SYS_PTRACE: a traced exec of a set-user-ID program is
 * refused its privileges without it. */
int pp__hold_seize(pid_t pid);

/* Once the child was told to exec: waits for its exec, looks, runs an
 * image that links a libpython to its entry point, lets an image
 * with no CPython (env, a shell) run on to its next exec, and lets it go
 * when found, refused, bound_s seconds after its first exec, or at a
 * signal. 0 (the program runs on, untraced), 1 (it ended during the hold:
 * its wait status in *status) or -errno (a wait failed: detached if it
 * could be). */
int pp__hold_run(pid_t pid, double bound_s, pp_hold_look look, pp_hold_idle idle, void *ctx,
                 int *status, pp_hold_stats *out);

#endif
