/*
 * A dump: what every thread of a running CPython is doing now, its stack
 * read from outside as sample mode reads one sample, each thread once.
 *
 *   engine (how a thread is read)             what it gives
 *   ─────────────────────────────             ───────────────────────────────
 *   ptrace (the process's own user, or        user registers and stack copy
 *     root): every thread stopped together    of each thread stopped at once,
 *     for as long as its registers, stack     Python frames (process_vm_readv),
 *     and Python frames are read              the kernel function it waits in
 *     (dump_ptrace.c)                         (/proc .../wchan; the whole
 *                                             kernel stack for root)
 *   read only (--nonblocking, or ptrace       Python frames and the kernel
 *     refused: another tracer)                function; no native frames
 *   BPF (sample mode: root, or CAP_BPF and    user registers, stack copy,
 *     CAP_PERFMON), never stopped: a thread   Python frames and whole kernel
 *     off the CPU from outside by the task    stack of each thread, each
 *     iterator, one on a CPU in its own       read where it is (dump_bpf.c)
 *     cpu-clock sample
 *
 * Then one way for all (dump.c): each thread's state and system call from
 * /proc, its Python frames named (pycode.c) at their executing lines, its
 * native stack unwound (unwind.c), kernel frames named (kallsyms.c), all
 * spliced (splice.c) and folded (fold.c) exactly as a profile's stack
 * would read, the frame's local variables (pyobj.c) when asked, and
 * threading's names of the threads.
 *
 * Errors are values with a sentence (pp_error): no such process, not a
 * Python, a Python older than 3.8, not permitted, gone during the dump.
 */
#ifndef PERFPY_SAMPLER_DUMP_H
#define PERFPY_SAMPLER_DUMP_H

#include "perfpy/error.h"
#include "profile/profile.h"
#include "cpython/pylayout.h"
#include "native/maps.h"
#include "cpython/pyobj.h"
#include "cpython/pystack.h"
#include "native/sample.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PP_DUMP_KERNEL 64          /* kernel frames kept per thread */
#define PP_DUMP_STACK (17 * 4096)  /* bytes of a thread's stack copied (as a sample's) */
#define PP_DUMP_THREADS 1024       /* threads read per process */
#define PP_DUMP_LOCALS 256         /* locals kept per frame */

typedef enum pp_dump_engine {
    PP_DUMP_BPF = 0,               /* a BPF task iterator: never stopped */
    PP_DUMP_PTRACE = 1,            /* stopped while its threads are read */
    PP_DUMP_NONBLOCKING = 2,       /* never stopped, no native frames */
} pp_dump_engine;

/* One frame of a thread's stack as a profile reads it, leaf first. */
typedef struct pp_dump_frame {
    pp_frame_kind kind;            /* Python, native, kernel, or a marker */
    const char *name;              /* qualname, symbol, "[truncated]" */
    const char *file;              /* the Python file, or the DSO; "" */
    int line;                      /* a Python frame's executing line; 0 */
    size_t first_local, nlocals;   /* its locals: the thread's locals[first..] */
} pp_dump_frame;

typedef struct pp_dump_thread {
    pid_t tid;
    char os_name[16];              /* the kernel's name for it (comm) */
    char name[64];                 /* threading's name; "" when unknown */
    char state;                    /* /proc's letter: R running, S, D waiting, T... */
    int64_t syscall;               /* the system call it is in; -1: none */
    uint64_t args[6];              /* its arguments */
    int gil;                       /* 1 holds the GIL, 0 not, -1 unknown */
    int wait;                      /* why it waits, as a wall-clock profile says it
                                      (PP_WAIT_*: sleep, I/O, lock, GIL, other);
                                      0: running, or not known */
    int python;                    /* the interpreter knows it (a thread state) */
    int native;                    /* its user registers and stack were read */
    pp_dump_frame *frames;         /* leaf first */
    size_t nframes;
    pp_pylocal *locals;
    size_t nlocals, locals_cap;

    /* what an engine read, before dump.c resolves it */
    uint64_t regs[PP_SAMPLE_NREGS];
    unsigned char *stack;          /* from regs[7] (sp), stack_len bytes */
    size_t stack_len;
    uint64_t kips[PP_DUMP_KERNEL]; /* kernel ips, leaf first (BPF) */
    size_t nkernel;
    char kernel_names[PP_DUMP_KERNEL][64];   /* or their names (/proc), leaf first */
    size_t nkernel_names;
    pp_pystack_thread py;          /* its Python frames (py.n 0: none) */
    size_t py_first_local[PP_PYSTACK_DEPTH], py_nlocals[PP_PYSTACK_DEPTH];
} pp_dump_thread;

typedef struct pp_dump {
    pid_t pid;
    char comm[16];
    char cmdline[256];             /* its arguments, spaces between */
    char exe[256];                 /* the file of its _PyRuntime */
    uint32_t version_hex;          /* its CPython */
    pp_dump_engine engine;
    double stopped_ms;             /* how long it was stopped (ptrace; else 0) */
    double took_ms;                /* the whole dump */
    pp_dump_thread *threads;       /* in /proc's order: the main thread first */
    size_t nthreads;

    /* what the engines and the resolver share */
    pp_mem mem;                    /* its memory */
    pp_maps maps;
    uint64_t runtime, interp;
    pp_pylayout layout;
    pp_pyobj obj;                  /* a reader of its objects, when have_obj */
    int have_obj;
    int tid_off;
    char **strings;                /* names and files of the frames (owned) */
    size_t nstrings, strings_cap;
} pp_dump;

/* Names n kernel addresses as the kernel's stack traces print them
 * ("name", "name [module]"), each name at most len bytes: 0 or -errno. */
typedef int (*pp_dump_kernel_names_fn)(void *ctx, const uint64_t *addr, size_t n, char *names,
                                       size_t len);

typedef struct pp_dump_opts {
    pp_dump_engine engine;
    int locals;                    /* read each Python frame's locals */
    int no_native;                 /* Python frames only */
    /* who names the kernel addresses of the threads' stacks (the BPF
     * engine's program); NULL, or failing: /proc/kallsyms */
    pp_dump_kernel_names_fn kernel_names;
    void *kernel_names_ctx;
} pp_dump_opts;

/* Finds pid's CPython (its _PyRuntime, its layout) and lists its threads;
 * d is then ready for an engine. 0, or -errno with the sentence in e:
 * -ESRCH no such process, -EPERM not permitted, -ENOEXEC not a Python,
 * -ENOTSUP a Python perfpy does not read (older than 3.8, ...). */
int pp_dump_open(pp_dump *d, pid_t pid, pp_error *e);

/* The ptrace engine (and the non-blocking one): fills each thread's
 * registers, stack, Python frames and kernel names. 0 or -errno (e). */
int pp_dump_ptrace(pp_dump *d, const pp_dump_opts *o, pp_error *e);

/* The BPF engine (dump_bpf.c): the same, nothing stopped. c is a
 * collector opened with PP_COLLECT_SNAPSHOT (collect.h), for one dump.
 * 0 or -errno (e). */
struct pp_collector;
int pp_dump_bpf(pp_dump *d, struct pp_collector *c, const pp_dump_opts *o, pp_error *e);
/* The BPF engine's names of kernel addresses (a pp_dump_kernel_names_fn;
 * ctx: the collector). */
int pp_dump_bpf_kernel_names(void *ctx, const uint64_t *addr, size_t n, char *names, size_t len);

/* What /proc says of t: its state letter, system call and arguments, and
 * the kernel functions it waits in (the whole stack for root, else
 * wchan). */
void pp_dump_proc_state(pp_dump *d, pp_dump_thread *t);

/* Which of d's Python threads holds the GIL now (their py.tstate read). */
void pp_dump_gil_holder(pp_dump *d);

/* The locals of each of t's Python frames into t->locals (an engine calls
 * it while the frames are as it read them). 0 or -ENOMEM. */
int pp_dump_read_locals(pp_dump *d, pp_dump_thread *t);

/* The threads' stacks, states, names and locals as a profile reads them.
 * 0, or -ENOMEM. */
int pp_dump_resolve(pp_dump *d, const pp_dump_opts *o);

void pp_dump_free(pp_dump *d);

/* The name of x86_64 system call nr ("futex", "read"), or NULL. */
const char *pp_dump_syscall_name(int64_t nr);

#endif
