/*
 * The splice: one sample of sample mode (sample.h) -> the pp_raw_sample
 * (profile/raw.h) the folder takes, each frame said for what it is, in
 * the order perf script would have printed it in the trampoline modes, so
 * the folder and every writer apply unchanged. Leaf first:
 *
 *   kernel frames          do_syscall_64 ... ([kernel.kallsyms])   KERNEL
 *   native frames          PyLong_FromLong, ... (unwind.c)          NATIVE
 *   _PyEval_EvalFrameDefault  <- evaluation 1 (innermost)
 *     foo, app.py, line 3     <- its Python frames, innermost first  PYTHON
 *   _PyEval_EvalFrameDefault  <- evaluation 2
 *     bar, app.py, line 12
 *     <module>, app.py, line 30
 *   Py_RunMain ... _start
 *
 * The Python frames (innermost first, each run ending at an `entry` frame:
 * one frame per run on 3.8-3.10, several on 3.11+) are matched to the
 * native stack's _PyEval_EvalFrameDefault frames innermost first, each run
 * placed just rootward of its evaluation's frame, as a trampoline would
 * sit. Runs left over when the native stack was cut short (fewer eval
 * frames than runs: the copied stack ended, or libdw found no unwinding
 * data) go at the root side, in order. When the thread's chain was read to
 * its first frame (py_whole) the stack reached its origin all the same
 * (out->origin): every Python frame is there, and what the cut hides is
 * only native frames between the runs left over (a C extension calling
 * back into Python, deep in the stack); otherwise the outermost frame is a
 * Python frame, not a root, and the folder marks the stack "[truncated]".
 * A Python chain deeper than the collector reads (py_truncated) is marked
 * with frames_dropped (its root side cut).
 *
 * --async (pp_sample.ntasks): the running task's stack is the splice's
 * tail. Frames rootward of the task's outermost coroutine frame (the event
 * loop: run_forever, _run_once, Handle._run) and the native frames rootward
 * of that frame's evaluation give way to the tail, leaf first: the running
 * task, then each task awaiting the one before after its coroutines. A task
 * is a PP_RAW_TASK frame named by its label (a marker the folder keeps).
 * The stack is whole when the chain reached a task no task
 * awaits (pp_sample.tasks_whole). A sample with no Python frame of its own
 * and a tail (a task waiting, in wall-clock mode) is the tail alone.
 *
 * A Python frame carries its qualname, file, executing line and def line
 * (pp_raw_frame; the folder labels it "qualname (file:line)"; with
 * pp_splice_opts.def_lines, line is the def line); its ip is a small
 * distinct number (1, 2, ... from the root), never a real address. The
 * event is "cpu-clock".
 */
#ifndef PERFPY_NATIVE_SPLICE_H
#define PERFPY_NATIVE_SPLICE_H

#include "profile/raw.h"
#include "sample.h"
#include "unwind.h"

#include <stddef.h>
#include <stdint.h>

typedef struct pp_splicer pp_splicer;

typedef struct pp_splice_stats {
    uint64_t samples;
    uint64_t runs;           /* Python runs seen */
    uint64_t runs_at_root;   /* runs that found no eval frame (cut native stacks) */
} pp_splice_stats;

typedef struct pp_splice_opts {
    int def_lines;           /* label Python frames with their def line (as the
                                trampoline modes do), not the executing line:
                                py_line gets the def line too */
} pp_splice_opts;

/* opts may be NULL (executing lines). 0 or -ENOMEM. */
int pp_splice_open(pp_splicer **out, const pp_splice_opts *opts);
/* s + its kernel frames kernel[0..nk) + its native frames native[0..nn)
 * (both leaf first) -> *out. out's frames belong to the splicer: valid
 * until the next pp_splice or pp_splice_close; no name is copied (each is
 * valid as long as the caller's).
 * 0 or -ENOMEM. */
int pp_splice(pp_splicer *sp, const pp_sample *s, const pp_native_frame *kernel, size_t nk,
              const pp_native_frame *native, size_t nn, pp_raw_sample *out);
const pp_splice_stats *pp_splice_stats_of(const pp_splicer *sp);
void pp_splice_close(pp_splicer *sp);

#endif
