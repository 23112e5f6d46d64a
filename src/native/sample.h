/*
 * Sample mode: Python frames read at sample time, with no hook in
 * the program. One sample, as the collector (BPF, collect.c) hands it to user
 * space, and the two consumers' entry points:
 *
 *   perf event (cpu-clock, per thread) ──► BPF program (sample.bpf.c)
 *      │  regs, a copy of the user stack from sp, kernel ips, and the
 *      │  sampled thread's Python frames (code object + instruction offset)
 *      ▼
 *   ring buffer ──► collect.c ── code objects named once (pycode.c) ──┐
 *                                                                      ▼
 *                     unwind.c (libdw) native frames ──► splice.c ──► pp_raw_sample
 *                                                                      ──► fold.c ──► pp_profile
 *
 * The splice turns one pp_sample into the same pp_raw_sample that perf
 * script would give in the trampoline modes, with each Python frame a
 * "py::<qualname>:<filename>" frame at its evaluation's place, so every
 * folding rule and every writer applies unchanged.
 *
 * x86_64 only for now; registers in DWARF numbering.
 */
#ifndef PERFPY_NATIVE_SAMPLE_H
#define PERFPY_NATIVE_SAMPLE_H

#include <stddef.h>
#include <stdint.h>

#define PP_SAMPLE_NREGS 17   /* x86_64 DWARF 0..16: rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip */

/* One Python frame of a sample, as user space resolved it: INNERMOST FIRST. */
typedef struct pp_pyframe {
    const char *qualname;  /* never NULL */
    const char *file;      /* "" when unknown */
    int line;              /* the executing line; 0 when unknown */
    int def_line;          /* co_firstlineno; 0 when unknown */
    int entry;             /* 1: the outermost Python frame of one C-level
                              evaluation (_PyEval_EvalFrameDefault): 3.8-3.10
                              every frame; 3.11+ the entry frames */
    int task;              /* 1: an asyncio task, not a function: qualname is
                              its label ("<task 'handler-42'>") */
} pp_pyframe;

typedef struct pp_sample {
    int32_t pid, tid;
    uint64_t time_ns, period;
    char comm[16];
    const uint64_t *kernel_ips;   /* leaf first */
    size_t nkernel;
    int have_user;                /* 0: the sample hit kernel code with no user
                                     context (a kernel thread) */
    uint64_t regs[PP_SAMPLE_NREGS];
    const void *stack;            /* a copy of the user stack from regs[7] (sp) */
    size_t stack_len;
    const pp_pyframe *py;         /* innermost first */
    size_t npy;
    int py_truncated;             /* the frame chain was deeper than the BPF
                                     program reads */
    int py_whole;                 /* the thread's chain was read to its first
                                     frame (the thread's or the program's) */
    /* asyncio (--async; ntasks 0: none): the stack as its tasks see it
     * (splice.h) */
    size_t task_cut;              /* py[] index of the running task's outermost
                                     coroutine frame */
    const pp_pyframe *tasks;      /* what replaces the frames rootward of it:
                                     the running task, the tasks awaiting it
                                     and their coroutines, LEAF FIRST, each
                                     task after its coroutines */
    size_t ntasks;
    int tasks_whole;              /* the chain reached a task no task awaits */
} pp_sample;

#endif
