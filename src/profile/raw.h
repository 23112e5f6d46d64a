/*
 * A sample as its producer hands it to the folder (report/fold.c), before
 * folding: its thread, time and weight, and its frames, LEAF FIRST. Two
 * producers, neither of which includes the other or the folder:
 *
 *   perf script's text (report/perf_script.c)   every frame a symbol in a
 *     module, as perf printed it: the folder's rules say what it is (its
 *     name and module: the interpreter, plumbing, start-up; a symbol
 *     "py::<qualname>:<filename>" is a trampoline's Python function)
 *   sample mode's readers (native/splice.c)     each frame already known
 *     for what it is: a Python frame (qualname, file, executing line), a
 *     native one (module, symbol: still classified by the same rules), a
 *     kernel one, an asyncio task
 *
 * The wait reason of a wall-clock sample (what a thread waited for off
 * the CPU) is the producer's too: it is said here, and the folder puts its
 * marker at the leaf.
 */
#ifndef PERFPY_PROFILE_RAW_H
#define PERFPY_PROFILE_RAW_H

#include <stddef.h>
#include <stdint.h>

typedef enum pp_raw_kind {
    PP_RAW_NATIVE = 0,     /* sym in dso (user space), as perf or the unwinder names it */
    PP_RAW_KERNEL,         /* sym of the kernel */
    PP_RAW_PYTHON,         /* a Python function read from the interpreter: qualname,
                              file, line, def_line */
    PP_RAW_TASK,           /* an asyncio task: sym is its label ("<task 'x'>") */
} pp_raw_kind;

typedef struct pp_raw_frame {
    pp_raw_kind kind;
    uint64_t ip;           /* a Python frame or a task: a small distinct number
                              (1, 2, ... from the root), never an address */
    const char *sym;       /* NATIVE, KERNEL: "[unknown]" when none was found,
                              never NULL; TASK: its label */
    const char *dso;       /* NATIVE, KERNEL: the module ("" when absent) */
    uint32_t sym_len, dso_len;
    int inlined;           /* NATIVE: perf printed "(inlined)" for the module */
    uint32_t key;          /* nonzero: equal for frame lines of identical text,
                              so a consumer may cache its own work per key
                              (keys are small: 1, 2, ... in order of first
                              sight); 0: not cached */
    const char *qualname;  /* PYTHON ("" unknown), its file ("" unknown) */
    const char *file;
    uint32_t qualname_len, file_len;
    int line;              /* PYTHON: the line it was executing (0 unknown) */
    int def_line;          /* PYTHON: its def line (co_firstlineno; 0 unknown) */
} pp_raw_frame;

/* Why a thread was off the CPU (wall-clock mode): each reason's marker is
 * the leaf of the stack, below the kernel frames that show the detail
 * (do_nanosleep, pipe_read, futex_wait), and all begin with "[off-CPU" so
 * that one search finds them all. */
typedef enum pp_wait_reason {
    PP_WAIT_NONE = 0,        /* on the CPU */
    PP_WAIT_SLEEP,           /* time.sleep, nanosleep, select/poll on no fd */
    PP_WAIT_IO,              /* read, write, recv, accept, poll, a file system call */
    PP_WAIT_LOCK,            /* a futex (threading locks, conditions, queues) */
    PP_WAIT_GIL,             /* a futex inside the interpreter's GIL state */
    PP_WAIT_CHILD,           /* wait4, waitid; subprocess's waits for its child */
    PP_WAIT_CPU,             /* runnable: preempted, or woken and not yet running */
    PP_WAIT_OTHER,           /* another system call, a page fault */
    PP_WAIT_N
} pp_wait_reason;

typedef struct pp_raw_sample {
    const char *comm;      /* not NUL-terminated */
    size_t comm_len;
    int32_t pid, tid;      /* -1 when absent */
    uint64_t time_ns;      /* 0 when absent */
    uint64_t period;       /* 1 when absent */
    uint64_t weight_ns;    /* what the sample weighs in the profile: 0 means
                              its period (a CPU sample); a wall-clock wait
                              sets the time it stands for */
    const char *event;     /* without the trailing ':' */
    size_t event_len;
    const pp_raw_frame *frames;   /* leaf first */
    size_t nframes;
    int frames_dropped;    /* its root side was cut (more frames than its producer
                              keeps) */
    int origin;            /* known to reach its origin whatever its outermost
                              frame (sample mode: the thread's whole Python
                              chain was read); perf script never sets it */
    int wait;              /* wall-clock mode: time off the CPU, and why
                              (pp_wait_reason; 0: on the CPU) */
} pp_raw_sample;

#endif
