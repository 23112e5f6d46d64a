/*
 * The one reader of a running CPython's threads and their Python stacks
 * from user space (read mode's, the dump's, the tests'), from its memory
 * (mem.h): with no privilege beyond the right to read the process's memory
 * (process_vm_readv: a process of the same user that the kernel lets us
 * ptrace; a child always). What the BPF program does at each sample
 * (collect/sample.bpf.c), done from user space for every thread:
 *
 *   _PyRuntime ─► interpreter ─► thread states ─► each one's frame chain
 *     per frame: its code object, the code's identity fields (pycode.h,
 *     read once per code object per walk), the instruction, entry or not
 *     per thread: its kernel tid (glibc's struct pthread, at the thread's
 *     pthread_self(): checked against the main thread before it is used)
 *
 * The program is never stopped: a frame may return while its chain is read,
 * so a walk reads each frame's fields in one read, and stops where a read
 * fails. A walk that reaches the thread's first frame is whole.
 */
#ifndef PERFPY_CPYTHON_PYSTACK_H
#define PERFPY_CPYTHON_PYSTACK_H

#include "mem.h"
#include "pycode.h"
#include "pyoffsets.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PP_PYSTACK_DEPTH 128       /* frames read per thread (as the BPF program) */
#define PP_PYSTACK_THREADS 64      /* threads read per process */

typedef struct pp_pystack_frame {
    pp_pycode_id id;               /* the code object and its identity */
    uint64_t frame;                /* the frame's address (its locals: pyobj.h) */
    uint64_t instr;                /* the frame's instruction (pyoffsets.h PP_INSTR_*) */
    int entry;                     /* the outermost frame of one evaluation */
} pp_pystack_frame;

typedef struct pp_pystack_thread {
    pid_t tid;                     /* 0: not known */
    uint64_t thread_id;            /* its pthread_self() (threading's ident) */
    uint64_t tstate;               /* its PyThreadState */
    size_t n;                      /* frames, innermost first */
    int truncated;                 /* deeper than PP_PYSTACK_DEPTH */
    int whole;                     /* the walk reached the thread's first frame */
    pp_pystack_frame f[PP_PYSTACK_DEPTH];
} pp_pystack_thread;

/* Where glibc keeps a thread's tid in its struct pthread, checked in m:
 * the main thread's state (its thread_id is its pthread_self()) must hold
 * m's pid there. The offset, or -1 (then no thread's tid is known). */
int pp_pystack_tid_offset(const pp_mem *m, const pp_py_offsets *o, uint64_t runtime);

/* One frame at addr in m: its code object's identity and instruction
 * into *f (entry set when the frame is an object, 3.8-3.10). 1 when it is
 * a Python function's frame, 0 a shim or a frame with no code (nothing
 * set), -EFAULT when it cannot be read. */
int pp_pystack_frame_at(const pp_mem *m, const pp_py_offsets *o, uint64_t addr,
                        pp_pystack_frame *f);

/* The Python stacks of the threads of m's main interpreter (_PyRuntime at
 * runtime), up to max into out (a list longer than max is cut there);
 * tid_off from pp_pystack_tid_offset. The number of threads, or -errno (-ESRCH: gone; -EPERM: not ours to read;
 * -EFAULT: its memory did not hold what the offsets say). */
int pp_pystack_read(const pp_mem *m, const pp_py_offsets *o, uint64_t runtime, int tid_off,
                    pp_pystack_thread *out, size_t max);

#endif
