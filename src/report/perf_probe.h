/*
 * What the perf in use can do, asked of perf itself. One question so far,
 * the one that decides where perfpy's jit files go and which mode gives
 * whole stacks: which library unwinds DWARF call graphs.
 *
 *   perf built with    unwinds JIT code (perf inject --jit's ELFs)   perf map, DWARF
 *   libunwind (<= 6.x) wherever the ELFs are                         innermost frame
 *   libdw (7.x)        only ELFs whose path starts "/tmp/jitted-"   no Python frame
 *
 * libdw's unwinder (tools/perf/util/unwind-libdw.c) takes a JIT ELF's load
 * base from the map's start only when its path has that prefix; elsewhere it
 * computes start - pgoff, the module lands on the wrong addresses and the
 * unwind stops at the first trampoline. It reports no frame at all in
 * anonymous memory, where perf-map trampolines live.
 */
#ifndef PERFPY_PERF_PROBE_H
#define PERFPY_PERF_PROBE_H

typedef enum pp_unwinder {
    PP_UNWIND_NONE = 0,     /* no DWARF unwinding built in */
    PP_UNWIND_LIBUNWIND,
    PP_UNWIND_LIBDW,
} pp_unwinder;

/* The directory libdw requires JIT ELFs (and so jit dumps) to be in. */
#define PP_LIBDW_JIT_DIR "/tmp"

/* From the text of `perf version --build-options`. */
pp_unwinder pp_perf_unwinder_parse(const char *build_options);
/* Runs `perf version --build-options`; PP_UNWIND_LIBUNWIND when perf does
 * not answer (what every perf before 7 used). */
pp_unwinder pp_perf_unwinder(const char *perf);
const char *pp_unwinder_name(pp_unwinder u);

/* Frame-pointer call chains are cut by the kernel at
 * kernel.perf_event_max_stack native frames (127 by default: about 30
 * Python frames with the hook, which adds a C frame or more per call). */
#define PP_MAX_STACK_PATH "/proc/sys/kernel/perf_event_max_stack"
#define PP_MAX_STACK_WANTED 4096

typedef struct pp_max_stack {
    int before;        /* the value found, -1 if unreadable */
    int now;           /* the value in force for the recording */
    int raised;        /* perfpy changed it and must put it back */
    int err;           /* why it could not be raised (errno), or 0 */
} pp_max_stack;

/* Raises the limit to `want` for a recording when it is lower and this
 * process may (root; the kernel refuses with EBUSY while any call-chain
 * event is open); fills *m either way. */
void pp_max_stack_raise(pp_max_stack *m, int want);
/* Puts back what pp_max_stack_raise changed, if it is still what perfpy
 * set; 0, or a negative errno (the setting then stays raised). */
int pp_max_stack_restore(pp_max_stack *m);

#endif
