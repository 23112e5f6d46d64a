/*
 * Native unwinding of one sample (sample.h) with elfutils' libdwfl, as
 * perf's util/unwind-libdw.c does: the sample's registers are the initial
 * frame, the copy of the user stack serves the memory reads, and DWARF CFI
 * (.eh_frame / .debug_frame) of each mapped file says where the caller's
 * registers were saved. Frame pointers are not needed.
 *
 *   regs (pc, sp, callee-saved) ─► libdw: CFI row of pc ─► CFA, saved rip/rbx/...
 *        │                              ▲ reads [sp, sp+stack_len) from the copy;
 *        ▼                              │ outside it: read-only mapped files, or
 *   frame callback: pc -> module ─► symbol ("[unknown]" when none), DSO path
 *   (symbols from the module's table, sorted once: modsyms.c)
 *
 * Modules come from /proc/PID/maps, read once per process and kept
 * (dwfl_report_elf of every executable file mapping, plus the vDSO), read
 * again when a pc falls in no known mapping (an exec or a dlopen since)
 * unless the maps held were read after the sample was taken. A process that has exited keeps the
 * modules it had. Memory outside the stack copy: the process's read-only
 * file mappings (from the file), else /proc/PID/mem while it lives; never
 * the sampled thread's stack beyond the copy (it has changed since the
 * sample): a stack that needs it ends there, flagged PP_UNWIND_RAN_OUT.
 *
 * x86_64 only (registers in the x86_64 DWARF order of sample.h). unwind.c
 * is built only on x86_64 with libdw present (the Makefile's PP_UNWIND);
 * this header and pp_native_frame are for every build.
 */
#ifndef PERFPY_NATIVE_UNWIND_H
#define PERFPY_NATIVE_UNWIND_H

#include "sample.h"

#include <stddef.h>
#include <stdint.h>

/* One native (or kernel) frame, leaf first in arrays. */
typedef struct pp_native_frame {
    uint64_t pc;           /* the leaf's pc; a caller's return address - 1 (inside
                              the call instruction, as perf prints it) */
    const char *sym;       /* never NULL; "[unknown]" when no symbol covers pc */
    const char *dso;       /* the file's path as mapped, "[vdso]", "[kernel.kallsyms]";
                              "[unknown]" for memory of no file */
} pp_native_frame;

enum {
    PP_UNWIND_WHOLE = 1,     /* libdw reached the outermost frame (its CFI says
                                the return address is undefined: _start, clone) */
    PP_UNWIND_RAN_OUT = 2,   /* it needed the stack beyond the copy: cut short */
    PP_UNWIND_FULL = 4,      /* cap frames were delivered; the rest not walked */
};

typedef struct pp_unwinder pp_unwinder;

/* 0 or -ENOMEM. */
int pp_unwind_open(pp_unwinder **out);
/* Unwinds s's user stack into out[0..*n) (leaf first, at most cap frames)
 * and sets *flags (PP_UNWIND_*). A sample without user context (have_user
 * 0) gives no frames. Names point into the unwinder's state: valid until the
 * next pp_unwind, pp_unwind_forget or pp_unwind_close. 0, or -ENOMEM;
 * frames libdw cannot find are not errors (fewer frames, no WHOLE flag). */
int pp_unwind(pp_unwinder *u, const pp_sample *s, pp_native_frame *out, size_t cap,
              size_t *n, unsigned *flags);
/* Keeps at most procs processes' state (256 unless said; the least
 * recently sampled goes): each holds its own mappings of the files it
 * maps, 1 to 3 MB, and a whole host may run hundreds of processes. */
void pp_unwind_limit(pp_unwinder *u, size_t procs);
/* The symbol indexes shared by build-id that no process uses any more
 * are kept up to bytes (16 MB unless said), the least recently used freed
 * first; those in use are never freed. pp_unwind_shared: how many are
 * kept, and their bytes. */
void pp_unwind_shared_limit(pp_unwinder *u, size_t bytes);
size_t pp_unwind_shared(const pp_unwinder *u, size_t *bytes);
/* Drops what is known of pid (it exited, or exec'd). */
void pp_unwind_forget(pp_unwinder *u, int pid);
/* Reads pid's maps now, while it lives: a process whose samples may be
 * unwound after its end (a forked child whose last wait is captured as it
 * ends, in wall-clock mode) keeps them. */
void pp_unwind_prime(pp_unwinder *u, int pid);
void pp_unwind_close(pp_unwinder *u);
/* Whether a separate debug file libdw's search by name would try for
 * file_name is there: name (its debuglink, or "BASENAME.debug" made up:
 * made_up 1) in each place of path (a debuginfo_path, ":.debug:/usr/lib/
 * debug" by default), as elfutils tries them. The unwinder asks libdw to
 * search only then (or by build-id), for its search ends in a debuginfod
 * client that costs a dump 7 ms to load (unwind.c). */
int pp__debug_file_there(const char *path, const char *file_name, const char *name,
                         int made_up);

#endif
