/*
 * What sample.bpf.c and collect.c share: a target process's entry, and one
 * sample's ring-buffer record. Fixed sizes, __u types: the same layout on
 * both sides of the kernel boundary.
 */
#ifndef PERFPY_COLLECT_COLLECT_BPF_H
#define PERFPY_COLLECT_COLLECT_BPF_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#include "codename_bpf.h"
#include "cpython/name_id.h"

#define PP_BPF_MAX_TARGETS 4096
#define PP_BPF_RING_BYTES (32 << 20)
/* Wall-clock mode's: its consumer maps the ring's pages twice, all of them
 * once it has wrapped, so half the sample ring: a busy server loses
 * nothing with it, and stacks with half as much again */
#define PP_BPF_WALL_RING_BYTES (16 << 20)
#define PP_BPF_WALL_RING_MAX (64 << 20)     /* at higher rates and more CPUs (collect.c) */
#define PP_BPF_DUMP_RING_BYTES (4 << 20)  /* perfpy dump's (collect.c) */
#define PP_BPF_SLOTS 2              /* records made per CPU at once (sample.bpf.c) */
#define PP_BPF_MAX_THREADS 64       /* threads searched for the sampled one */
/* Python frames read (a power of two): numpy/pandas stacks reach 121, and
 * each costs the sample 64 bytes of ring buffer, not time (the walk stops
 * at the chain's first frame) */
#define PP_BPF_MAX_PY 256
#define PP_BPF_MAX_HOPS 512         /* frames walked, shims included (3.12+: one
                                       per entry frame) */
#define PP_BPF_MAX_KERNEL 64
/* perfpy dump's kernel names (sample.bpf.c's pp_ksym_names): addresses
 * named per run, and the room for each name ("name" or "name [module]") */
#define PP_BPF_KSYMS 64
#define PP_BPF_KSYM_LEN 128
#define PP_BPF_STACK_PAGES 17       /* 64 KiB from sp, and sp's own page */

enum {
    PP_BPF_USER = 1,                /* the task has user memory: regs and stack */
    PP_BPF_PY_THREAD = 2,           /* its PyThreadState was found */
    PP_BPF_PY_TRUNCATED = 4,        /* deeper than PP_BPF_MAX_PY (or _HOPS): without
                                       it, a thread's chain was read to its first frame */
    PP_BPF_GIL_HELD = 8,            /* the thread held the GIL */
};

/* What a sample stands for (pp_bpf_sample.kind). Wall-clock mode adds the
 * time threads spend off the CPU: each stretch from the moment a thread
 * stops running (sched_switch) to the moment it runs again, with the
 * thread's stack as it stopped. */
enum {
    PP_BPF_ON_CPU = 0,              /* a cpu-clock sample: one period of CPU time */
    PP_BPF_OFF_CPU = 1,             /* a stretch off the CPU, its weights known:
                                       block_ns waiting for its reason, runq_ns
                                       runnable, waiting for a CPU */
    PP_BPF_OFF_OPEN = 2,            /* captured as it stopped (on kernels before
                                       6.18, preempted or blocked outside a system
                                       call; or blocked when perfpy attached): its
                                       weights come in the pp_bpf_wall_end of the
                                       same thread */
};

/* pyoffsets.h's fields the kernel side needs (-1: absent). */
struct pp_bpf_offsets {
    __s32 runtime_interpreters_head, interp_threads_head;
    __s32 tstate_next, tstate_thread_id, tstate_frame, tstate_cframe, cframe_current_frame;
    __s32 frame_is_object, frame_previous, frame_code, frame_code_tag_mask, frame_instr;
    __s32 frame_owner, frame_owner_shim_min, frame_is_entry, frame_tlbc_index;
    __s32 code_name, code_filename, code_linetable, code_firstlineno, str_hash;
    __s32 str_length, str_ascii_data;
    __s32 gil_runtime, gil_interp, gil_locked, gil_last_holder;
};

/* asyncio (record --async; pyasync.h draws the graph): where a thread keeps
 * its running task and its tasks, a task its name, coroutine and awaiters,
 * a coroutine its frame and what it awaits (CPython 3.14+). */
struct pp_bpf_async {
    __u32 on;                       /* 1: read the tasks of each sample */
    __s32 object_type, gen_iframe, gen_frame_state, gen_state_yield_from, gen_state_cleared;
    __s32 gen_yf_depth, frame_stack, set_mask, set_table, llist_next;
    __s32 task_name, task_coro, task_awaited_by, task_awaited_by_is_set, task_node;
    __s32 tstate_running_loop, tstate_running_task, tstate_tasks_head;
    __u64 coro_type, gen_type;      /* PyCoro_Type's and PyGen_Type's addresses */
    __u32 waiting;                  /* wall-clock mode: the tasks waiting too */
    __u32 pad;
};

struct pp_bpf_target {
    __u64 runtime;                  /* _PyRuntime's address in the process */
    struct pp_bpf_offsets off;
    struct pp_bpf_async as;
    struct pp_bpf_code_offsets code;    /* what copying a code object's name needs */
};

struct pp_bpf_pyframe {
    __u64 code;                     /* the code object */
    __u64 instr;                    /* f_lasti, or the instruction pointer */
    __u64 entry;                    /* 1: the first frame of an evaluation */
    /* what the code object's fields held at the sample: with its address,
     * its identity (pycode.h), so that an object freed and another made at
     * the same address is never named with the first one's name */
    __u64 name, file, table;        /* co_qualname (co_name), co_filename, line table */
    __u64 name_id;                  /* the name's identity: pp_name_id */
    __u32 firstlineno;
    __s32 tlbc;                     /* free-threaded: the frame's thread's copy of
                                       the bytecode (its tlbc_index), else 0 */
};

/* The tasks of a sample (record --async): the task its thread runs, then the
 * task awaiting it, and the one awaiting that, ... A task's coroutines
 * (those it is suspended in, outermost first) are frames of py[] after the
 * thread's own; the running task's are the thread's own frames, from the
 * top down to py[task_frame]. */
#define PP_BPF_MAX_TASKS 32
#define PP_BPF_TASK_LEVELS 16        /* awaiting tasks followed up from one */
#define PP_BPF_TASK_NAME 96          /* bytes of a task's name object copied */

enum {
    PP_BPF_TASK_STACK = 1,          /* the first task of a stack: the running one */
    PP_BPF_TASK_CUT = 2,            /* its coroutines or awaiters were not all read */
    PP_BPF_TASK_SET = 4,            /* awaited by a set of tasks: the first one followed */
    PP_BPF_TASK_ROOT = 8,           /* no task awaits it: the chain is whole */
    PP_BPF_TASK_WAITING = 16,       /* the first task of a stack of a task waiting
                                       (wall-clock mode), not the running one */
};

/* Wall-clock mode: of the tasks of the sampled thread that wait (all but
 * the running one), this many are chosen at random, each a stack of its
 * own standing for nwaiting / (those chosen) of them. */
#define PP_BPF_WAITING_CHOSEN 4
#define PP_BPF_WAITING_WALK 4096        /* tasks of a thread's list looked at */

struct pp_bpf_task {
    __u64 addr;                     /* the task object */
    __u64 name_type;                /* its name object's type: a str, or an int (Task-N) */
    __u64 awaits, awaits_type;      /* what its innermost coroutine awaits (0: none read) */
    __u64 inner_type;               /* the type of the object right after awaits'
                                       header (a future's iterator: its future) */
    __u16 first, n;                 /* its coroutines' frames: py[first, first + n),
                                       outermost first */
    __u16 flags, pad;               /* PP_BPF_TASK_* */
    __u32 pad2;
    __u8 name[PP_BPF_TASK_NAME];    /* its name object's first bytes */
};

/* A whole-host recording (perfpy record -a, collect.c's pp_collect_host):
 * what the BPF program does beyond its targets. */
enum {
    PP_BPF_HOST_EXEC = 1,           /* every exec makes its process a target (its
                                       Python not yet known) and is told: user
                                       space keeps those that run a CPython */
    PP_BPF_HOST_ALL = 2,            /* processes that are not targets are sampled
                                       too, without Python frames */
};

/* A process being sampled forked, exec'd or ended (the BPF program follows
 * its children and stops at its end; user space updates what it knows). */
enum {
    PP_BPF_EV_FORK = 1,             /* pid is a new process, a child of ppid */
    PP_BPF_EV_EXEC = 2,             /* pid runs another program: no Python frames
                                       read until user space adds it again (with
                                       PP_BPF_HOST_EXEC: any process) */
    PP_BPF_EV_EXIT = 3,             /* pid ended: no longer sampled */
    PP_BPF_EV_WALL_END = 4,         /* a struct pp_bpf_wall_end */
};

struct pp_bpf_event {
    __u32 kind, pid, ppid, pad;
    __u64 time_ns;                  /* when (the samples' clock) */
};

/* The end of a stretch off the CPU whose stack was captured as it began
 * (PP_BPF_OFF_OPEN): the thread runs again (or the recording ends). */
struct pp_bpf_wall_end {
    __u32 kind;                     /* PP_BPF_EV_WALL_END */
    __u32 pid, tid, pad;
    __u64 block_ns, runq_ns;
};

/* The BPF program's counts (its counters array, summed over the CPUs):
 * in wall-clock mode every stretch is counted, and every record that did
 * not fit in the ring buffer, so none is lost silently. */
enum {
    PP_BPF_N_LOST = 0,              /* cpu-clock samples, process events lost */
    PP_BPF_N_SWITCHES,              /* the program's threads stopped running */
    PP_BPF_N_CAPTURED,              /* off-CPU stacks captured (any kind) */
    PP_BPF_N_LOST_CAPTURES,         /* off-CPU stacks that did not fit */
    PP_BPF_N_LOST_ENDS,             /* end records that did not fit */
    PP_BPF_N_LOST_THREADS,          /* threads whose state could not be kept */
    PP_BPF_N_MISSED,                /* switches the tracepoint did not report,
                                       found from the threads' CPU time */
    PP_BPF_N_LOST_NAMES,            /* copies of code objects' names that did not
                                       fit in their ring (codename_bpf.h) */
    PP_BPF_N_UNCAPTURED,            /* sampled stretches whose capture, as their
                                       thread ran again, was not made (the
                                       switch's end unseen, or the thread
                                       exiting) */
    PP_BPF_N_UNCAPTURED_NS,         /* their weight (ns, as sampled) */
    PP_BPF_N_UNCHARGED_NS,          /* time the program's threads were on a CPU and
                                       charged none (the hypervisor's steal): wall-
                                       clock mode's waits for a CPU, what plain
                                       sample mode's samples do not weigh */
    PP_BPF_N_LOST_CAPTURES_NS,      /* what the lost captures stood for (ns, as
                                       sampled) */
    PP_BPF_N_LOST_ENDS_NS,          /* what the lost ends stood for (ns) */
    PP_BPF_N_COUNTERS,
};

struct pp_bpf_sample {
    __u32 pid, tid;
    __u64 time_ns;
    __u32 flags, npy;
    __u32 kind;                     /* PP_BPF_ON_CPU, PP_BPF_OFF_* */
    __u32 state;                    /* off the CPU: its state as it stopped
                                       (0: preempted, still runnable) */
    __u64 block_ns, runq_ns;        /* PP_BPF_OFF_CPU: what it stands for;
                                       PP_BPF_ON_CPU: block_ns the CPU time (0:
                                       a period), runq_ns in wall-clock mode
                                       the hypervisor's time on the CPU */
    __s64 syscall;                  /* the system call it was in (orig_ax), or < 0 */
    __u64 ident;                    /* the thread's pthread_self() (its fsbase):
                                       threading's key for it */
    __u64 gil;                      /* the GIL state's address (0: unknown) */
    __u64 born_ns;                  /* when the thread started (CLOCK_MONOTONIC) */
    __u32 nkernel, stack_len;       /* bytes of stack[] read */
    __u32 stack_skip, pad;          /* sp's offset in stack[] */
    char comm[16];
    __u64 regs[17];                 /* x86_64 DWARF order, as sample.h */
    __u64 kips[PP_BPF_MAX_KERNEL];
    __u32 ntasks;                   /* tasks[] filled (0: no running task, or --async off) */
    __u32 nwaiting;                 /* wall-clock mode: its thread's tasks waiting */
    __s32 task_frame;               /* py[] index of the running task's coroutine frame
                                       (-1: not among the thread's frames) */
    __u32 npy_all;                  /* py[] filled: the thread's npy, then the tasks' */
    struct pp_bpf_task tasks[PP_BPF_MAX_TASKS];
    struct pp_bpf_pyframe py[PP_BPF_MAX_PY];
    __u8 stack[PP_BPF_STACK_PAGES * 4096];
};

#endif
