/*
 * kernel.perf_event_max_stack: raised for a frame-pointer recording, put
 * back after it, and never left raised because two recordings overlapped.
 *
 * Frame-pointer call chains are cut by the kernel at that many native
 * frames (127 by default: about 30 Python frames with the hook, which adds a
 * C frame or more per call). The kernel refuses to change the limit (EBUSY)
 * while any call-graph event is open, anyone's. So with two recordings at
 * once, the first to end cannot put the limit back, and the second, which
 * found it raised, would never have tried: the machine kept 4096 for good.
 *
 * The sessions of one machine share a registry (PP_MAX_STACK_STATE, a
 * root-owned file under flock): the value found before the first raise, the
 * value set, and the pids of the recordings relying on it. The last one to
 * end puts the value back; when the kernel still says EBUSY (another perf
 * session, not perfpy's, is recording call graphs), a detached process
 * waits for it to end and then puts the value back (for up to an hour; past
 * that, the next recording as root finds the registry and puts it back at
 * its own end). Only root raises the limit, so only root uses the registry.
 */
#ifndef PERFPY_MAX_STACK_H
#define PERFPY_MAX_STACK_H

#include <sys/types.h>

#define PP_MAX_STACK_PATH "/proc/sys/kernel/perf_event_max_stack"
#define PP_MAX_STACK_STATE "/dev/shm/perfpy-max-stack"
#define PP_MAX_STACK_WANTED 4096

typedef struct pp_max_stack {
    int before;        /* the value before any recording raised it, -1 if unreadable */
    int now;           /* the value in force for the recording */
    int raised;        /* this recording relies on a raise and must end it */
    int err;           /* why it could not be raised (errno), or 0 */
    pid_t restorer;    /* after restore: the background process putting the
                          value back once the kernel allows it, or 0 */
    /* where, and how the value is written: NULL/0 for the real ones (unit
     * tests point them at files of their own) */
    const char *sysctl;
    const char *state;
    int (*write)(const char *path, int value);   /* 0 or a negative errno */
    int busy_tries;    /* EBUSY retries before deferring, 100 ms apart */
} pp_max_stack;

/* Raises the limit to `want` for a recording when it is lower and this
 * process may (root), or joins the recordings that already raised it;
 * fills *m either way. */
void pp_max_stack_raise(pp_max_stack *m, int want);

/* This recording no longer needs the raise. The last one to end puts the
 * value back; 0 (done, not needed, or still needed by another recording),
 * PP_MAX_STACK_DEFERRED (the kernel refused while another perf session
 * records call graphs: m->restorer waits for it), or a negative errno (the
 * value stays raised and the registry remembers it). */
#define PP_MAX_STACK_DEFERRED 1
int pp_max_stack_restore(pp_max_stack *m);

/* The registry's remembered value (the one before the first raise), or -1
 * when no recording holds the limit raised (for tests and doctor). */
int pp_max_stack_remembered(const char *state);

#endif
