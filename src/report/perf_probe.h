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

#endif
