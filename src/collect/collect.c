/*
 * Sample mode's collector in user space (see collect.h): libbpf's skeleton
 * of sample.bpf.c (made by bpftool at build time), a cpu-clock perf event
 * on each thread of each process added (inherited by the threads and
 * processes it starts later, as perf record's are), the ring buffer read
 * with a callback.
 *
 * Per-thread events, not one per CPU: a thread is sampled for the time it
 * runs, at the rate asked, whatever else the machine runs; per-CPU events
 * sample wall time on each CPU, keep the samples that land in a target,
 * and run the BPF program on every CPU for every process. The program's
 * own CPU time is then all that is measured of it, and nothing else on
 * the machine pays.
 * Two kinds of recording take one event per CPU instead (the samples that
 * land in a target kept, the targets map following forks and execs):
 * a whole host (pp_collect_host: every process is to be sampled, at the
 * agents' low rate, new ones found at exec), and wall-clock mode, whose
 * programs run at every switch of the machine anyway: a per-thread event
 * would add to each switch of the program's threads the kernel's switch
 * of its perf context, a cost the program itself would pay. A sample of
 * an event per CPU must not wake perfpy-sample: a woken reader preempts
 * the sampled thread right after each sample, its runs fall in step with
 * the sampling and the thread's CPU part comes out larger than its own
 * CPU time; sample.bpf.c submits wall-clock mode's samples without a
 * wake-up.
 * perfpy record -e samples another event instead of cpu-clock: a software
 * one (page faults) on the same per-thread events, every Nth of a
 * thread's; a tracepoint with the program attached to it once (it runs at
 * every hit on the machine: the targets map picks the program's).
 */
#include "collect.h"
#include "codename.h"
#include "offers.h"
#include "sample.skel.h"
#include "sizes.h"
#include "profile/htab.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* One thread's event. */
typedef struct task_event {
    pid_t pid, tid;
    int fd;
    struct bpf_link *link;
} task_event;

struct pp_collector {
    struct pp_sample_bpf *skel;
    struct ring_buffer *ring;
    task_event *ev;
    size_t nev, cap;
    int freq, ncpu, wall;
    const pp_event *event;          /* -e: sampled instead of cpu-clock; NULL: not */
    uint64_t every;                 /* its events per sample */
    struct bpf_link *tp;            /* its tracepoint's program */
    int snapshot;                   /* perfpy dump: the task iterator alone */
    int resume;                     /* wall: captures at sched_exit_tp, not sys_exit */
    int no_resume;                  /* sched_exit_tp refused: the older way */
    pp_collect_fn fn;
    pp_collect_event_fn event_fn;
    void *ctx;
    struct ring_buffer *names;      /* codename_bpf.h's copies */
    pp_collect_code_fn code_fn;
    void *code_ctx;
};

static int silent(enum libbpf_print_level level, const char *fmt, va_list ap)
{
    (void)level;
    (void)fmt;
    (void)ap;
    return 0;
}

static int on_code(void *ctx, void *data, size_t len)
{
    pp_collector *c = ctx;

    if (c->code_fn)
        c->code_fn(data, len, c->code_ctx);
    return 0;
}

static int on_record(void *ctx, void *data, size_t len)
{
    pp_collector *c = ctx;

    /* the copies of the code objects a sample saw first were submitted
     * before it: in the cache before it is named */
    ring_buffer__consume(c->names);

    const struct pp_bpf_event *e = data;
    const struct pp_bpf_sample *s = data;
    /* a sample is as long as the stack it read (sample.bpf.c's slots), its
     * header whole; the events are shorter than that header */
    size_t head = offsetof(struct pp_bpf_sample, stack);

    if (len >= head) {
        if (c->fn && s->stack_len <= len - head)
            c->fn(data, c->ctx);
    } else if (len >= sizeof(struct pp_bpf_event) && c->event_fn &&
               (e->kind != PP_BPF_EV_WALL_END || len >= sizeof(struct pp_bpf_wall_end))) {
        c->event_fn(data, c->ctx);
    }
    return 0;
}

static int fail(char *why, size_t len, int rc, const char *what)
{
    if (why)
        snprintf(why, len, "%s: %s", what, strerror(-rc));
    return rc;
}

static int has_event(const pp_collector *c, pid_t tid)
{
    for (size_t i = 0; i < c->nev; i++)
        if (c->ev[i].tid == tid)
            return 1;
    return 0;
}

/* tid's event, inherited by what it starts (tid -1: cpu's, every task
 * there); 1 opened, 0 the thread (or the CPU) is gone, or -errno. */
static int open_event_on(pp_collector *c, pid_t pid, pid_t tid, int cpu)
{
    struct perf_event_attr a;
    task_event *e;
    int fd;

    if (pp__grow((void **)&c->ev, &c->cap, c->nev + 1, sizeof(*c->ev)) < 0)
        return -ENOMEM;
    memset(&a, 0, sizeof(a));
    a.size = sizeof(a);
    a.type = PERF_TYPE_SOFTWARE;
    a.config = c->event ? c->event->config : PERF_COUNT_SW_CPU_CLOCK;
    /* a fixed period of the thread's CPU time (cpu-clock counts ns), not
     * the kernel's frequency mode: that adjusts each event's period from
     * its recent rate, and a forked child's inherited event and its
     * parent's, running at once, then split about 2 x 160 samples of
     * equal CPU time as 132 and 187 (the children test) */
    a.sample_period = c->event ? c->every : 1000000000ull / (uint64_t)(c->freq > 0 ? c->freq : 1);
    a.inherit = tid >= 0;
    if ((fd = (int)syscall(__NR_perf_event_open, &a, tid, cpu, -1, PERF_FLAG_FD_CLOEXEC)) < 0)
        return errno == ESRCH || errno == ENODEV ? 0 : -errno;
    e = &c->ev[c->nev];
    e->pid = pid;
    e->tid = tid;
    e->fd = fd;
    if (!(e->link = bpf_program__attach_perf_event(c->skel->progs.pp_on_sample, fd))) {
        int rc = -errno;

        close(fd);
        return rc;
    }
    c->nev++;
    return 1;
}

static int open_event(pp_collector *c, pid_t pid, pid_t tid)
{
    return open_event_on(c, pid, tid, -1);
}

/* An event on every thread of pid: /proc/PID/task read until a pass finds
 * no thread without one (a thread started meanwhile by one that had none). */
static int open_events(pp_collector *c, pid_t pid)
{
    char dir[64];
    int rc, opened;

    snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
    do {
        DIR *d = opendir(dir);
        struct dirent *de;

        if (!d)
            return -errno;
        opened = 0;
        while ((de = readdir(d)) != NULL) {
            pid_t tid = (pid_t)atoi(de->d_name);

            if (tid <= 0 || has_event(c, tid))
                continue;
            if ((rc = open_event(c, pid, tid)) < 0) {
                closedir(d);
                return rc;
            }
            opened += rc;
        }
        closedir(d);
    } while (opened);
    return 0;
}

static void close_events(pp_collector *c, pid_t pid)
{
    size_t k = 0;

    for (size_t i = 0; i < c->nev; i++) {
        if (pid && c->ev[i].pid != pid) {
            c->ev[k++] = c->ev[i];
            continue;
        }
        bpf_link__destroy(c->ev[i].link);
        close(c->ev[i].fd);
    }
    c->nev = k;
}

/* Wall-clock mode's on-CPU samples: an event per CPU, opened with the
 * first target (the targets map says whose samples are kept; a child is
 * a target from its fork on), kept until the collector closes. */
static int open_cpu_events(pp_collector *c)
{
    int rc, opened = 0;

    if (has_event(c, -1))
        return 0;
    for (int cpu = 0; cpu < c->ncpu; cpu++) {       /* offline CPUs: ENODEV, skipped */
        if ((rc = open_event_on(c, -1, -1, cpu)) < 0) {
            close_events(c, -1);
            return rc;
        }
        opened += rc;
    }
    return opened ? 0 : -ENODEV;
}

/* Whether this process may open the events and attach the program at all:
 * tried on itself, so that open fails with the reason, not the first add. */
static int check_events(pp_collector *c, char *why, size_t len)
{
    char what[192];
    int rc = c->tp ? 0 : open_event(c, getpid(), getpid());

    snprintf(what, sizeof(what), "a %s perf event with the BPF program attached",
             c->event ? c->event->name : "cpu-clock");
    if (rc < 0)
        return fail(why, len, rc, what);
    close_events(c, getpid());
    return 0;
}

/* The skeleton opened, set for the mode, loaded: wall-clock mode's
 * programs are loaded only in that mode (the scheduler's tracepoints cost
 * every thread of the machine a little). The ring buffer's size:
 * PP_BPF_RING_BYTES (wall-clock mode: wall_ring, by the rate), or
 * PERFPY_SAMPLE_RING_BYTES (a power of two of at
 * least a page) for the tests that make it overflow, so that the count of
 * samples lost is checked against real losses; the copies of code
 * objects' names (codename_bpf.h), PP_BPF_CODE_RING_BYTES or
 * PERFPY_SAMPLE_CODE_RING_BYTES. 0 or -errno. */
static int open_and_load(pp_collector *c)
{
    unsigned long bytes = pp__ring_bytes("PERFPY_SAMPLE_RING_BYTES", PP_BPF_RING_BYTES);
    unsigned long code = pp__ring_bytes("PERFPY_SAMPLE_CODE_RING_BYTES", PP_BPF_CODE_RING_BYTES);
    struct pp_sample_bpf *k;
    /* perfpy dump: one look at a process, made cheap to load (dump_small);
     * it asks none of wall-clock mode's questions of the kernel's BTF
     * (pp__kernel_offers parses all of it: 10 ms) */
    int dump = c->snapshot && !c->wall;
    struct pp_kernel_offers offers = dump ? (struct pp_kernel_offers){0, 0, 0, 0, 0}
                                           : pp__kernel_offers();
    /* benchmarks only (bench/wall.py --floor): wall-clock mode's programs
     * at every switch and at its end (or every system call's end) doing
     * nothing ("empty"), or not there ("none"); the profile is then wrong */
    const char *bench = getenv("PERFPY_BENCH_WALL");
    int bench_none = bench && strcmp(bench, "none") == 0;
    /* "switch": the switch's program alone, doing nothing, the one at its
     * end (or at sys_exit) left out */
    int bench_one = bench && strcmp(bench, "switch") == 0;

    if (dump)
        pp__dump_heap();
    if (!(c->skel = k = pp_sample_bpf__open()))
        return -errno ? -errno : -EPERM;
    if (!bytes && c->wall)
        bytes = pp__wall_ring(c->freq, c->ncpu);
    if (dump && pp__dump_small(k, &bytes, &code) != 0)
        return -EINVAL;
    if ((bytes && bpf_map__set_max_entries(k->maps.events, (__u32)bytes) != 0) ||
        (code && bpf_map__set_max_entries(k->maps.names, (__u32)code) != 0) ||
        bpf_map__set_max_entries(k->maps.slots, (__u32)(c->ncpu * PP_BPF_SLOTS)) != 0)
        return -EINVAL;
    k->rodata->wall = (__u32)c->wall;
    k->rodata->no_async = (__u32)dump;
    k->rodata->task_work_kfunc = (__u32)offers.task_work;
    k->rodata->sched_info_ok = (__u32)offers.sched_info;
    k->rodata->uncharged_ok = (__u32)offers.uncharged;
    k->rodata->period_ns = 1000000000ull / (uint64_t)(c->freq > 0 ? c->freq : 1);
    k->rodata->every_events = c->event ? c->every : 0;
    if (c->no_resume)
        offers.resume = 0;
    k->rodata->bench_empty = bench && (strcmp(bench, "empty") == 0 || bench_one);
    if (c->wall && (k->rodata->bench_empty || bench_none))
        fprintf(stderr, "perfpy: PERFPY_BENCH_WALL=%s: the programs at every switch and "
                "%s %s (a benchmark's setting: this profile's time off the CPU is wrong)\n",
                bench, offers.resume ? "its end" : "system call's end",
                bench_none ? "left out" : bench_one ? "doing nothing, the second left out" :
                "doing nothing");
    k->rodata->resume_ok = (__u32)offers.resume;
    c->resume = offers.resume;
    /* what each of wall-clock mode's programs is loaded for */
    struct { struct bpf_program *prog; int load; } progs[] = {
        {k->progs.pp_on_switch, c->wall && !bench_none},
        {k->progs.pp_on_wakeup, c->wall && !offers.sched_info && !bench_none},
        {k->progs.pp_on_migrate, c->wall && offers.sched_info && offers.delayed && !bench_none &&
                                 !bench_one},
        {k->progs.pp_on_resume, c->wall && offers.resume && !bench_none && !bench_one},
        {k->progs.pp_on_sys_exit, c->wall && !offers.resume && !bench_none && !bench_one},
        {k->progs.pp_iter_threads, c->wall},
        {k->progs.pp_iter_snapshot, c->snapshot},
        {k->progs.pp_ksym_names, c->snapshot},
        /* the dump lists the process tree itself */
        {k->progs.pp_on_fork, !dump},
        {k->progs.pp_on_exec, !dump},
        {k->progs.pp_on_exit, !dump},
        {k->progs.pp_on_tracepoint, c->event && c->event->kind == PP_EVENT_TRACEPOINT},
    };

    for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++)
        bpf_program__set_autoload(progs[i].prog, progs[i].load != 0);
    bpf_program__set_autoattach(k->progs.pp_iter_threads, false);   /* run on demand */
    bpf_program__set_autoattach(k->progs.pp_iter_snapshot, false);
    bpf_program__set_autoattach(k->progs.pp_on_tracepoint, false);   /* load_and_attach */
    return pp_sample_bpf__load(k) != 0 ? (-errno ? -errno : -EPERM) : 0;
}

/* The skeleton loaded and its tracepoints attached: 0, or -errno with
 * *attaching set when loading went well and attaching did not. */
static int load_and_attach(pp_collector *c, int *attaching)
{
    int rc;

    *attaching = 0;
    if ((rc = open_and_load(c)) != 0)
        return rc;
    *attaching = 1;
    /* the tests' fault (PERFPY_TEST_REFUSE_SCHED_EXIT=1): a kernel that
     * names sched_exit_tp and refuses to attach a program there, as an
     * attach refused says it (nothing is attached yet) */
    if (c->resume && pp__env_is_1("PERFPY_TEST_REFUSE_SCHED_EXIT"))
        return -EOPNOTSUPP;
    if (pp_sample_bpf__attach(c->skel) != 0)        /* the tracepoints */
        return -errno ? -errno : -EPERM;
    if (c->event && c->event->kind == PP_EVENT_TRACEPOINT &&
        !(c->tp = bpf_program__attach_tracepoint(c->skel->progs.pp_on_tracepoint,
                                                 c->event->system, c->event->tracepoint)))
        return -errno ? -errno : -EPERM;
    return 0;
}

int pp_collect_open(pp_collector **out, int freq, int flags, char *why, size_t len)
{
    return pp_collect_open_event(out, freq, NULL, 0, flags, why, len);
}

int pp_collect_open_event(pp_collector **out, int freq, const pp_event *event, uint64_t every,
                          int flags, char *why, size_t len)
{
    pp_collector *c = calloc(1, sizeof(*c));
    int rc, attached;

    *out = NULL;
    if (!c)
        return -ENOMEM;
    /* libbpf's own log (why a program did not load, in the verifier's
     * words) only when asked: PERFPY_SAMPLE_LIBBPF_DEBUG=1 */
    if (!getenv("PERFPY_SAMPLE_LIBBPF_DEBUG"))
        libbpf_set_print(silent);
    c->ncpu = libbpf_num_possible_cpus();
    c->freq = freq;
    c->event = event;
    c->every = every ? every : 1;
    c->wall = (flags & PP_COLLECT_WALL) != 0;
    c->snapshot = (flags & PP_COLLECT_SNAPSHOT) != 0;
    if (c->ncpu <= 0) {
        pp_collect_close(c);
        return -ENOMEM;
    }
    if (event && event->kind == PP_EVENT_TRACEPOINT && !pp_event_tracefs() &&
        pp_event_tracefs_unmounted()) {
        pp_collect_close(c);
        if (why)
            snprintf(why, len, "the kernel's tracepoints are found in tracefs, which is not "
                     "mounted and cannot be mounted here: mount it as root (mount -t tracefs "
                     "nodev " PP_EVENT_TRACEFS ")");
        return -ENOTSUP;
    }
    if ((rc = load_and_attach(c, &attached)) != 0 && c->resume && rc != -EPERM &&
        rc != -EACCES) {
        /* the kernel's BTF names sched_exit_tp but it took no program
         * there: the way of kernels without it */
        pp_sample_bpf__destroy(c->skel);
        c->skel = NULL;
        c->no_resume = 1;
        if ((rc = load_and_attach(c, &attached)) == 0)
            fprintf(stderr, "perfpy: wall clock: the kernel took no program at the end of a "
                    "switch (sched_exit_tp); stacks off the CPU are captured at each system "
                    "call's end instead, which every system call of the machine pays for\n");
    }
    if (rc && !attached) {
        pp_collect_close(c);
        return fail(why, len, rc, "loading the BPF program");
    }
    if (rc) {
        pp_collect_close(c);
        return fail(why, len, rc, c->wall ?
                    (c->resume ? "attaching the BPF program to the scheduler's tracepoints "
                     "(fork, exec, exit, switch and its end, wake-up)" :
                     "attaching the BPF program to the scheduler's tracepoints (fork, exec, "
                     "exit, switch, wake-up) and sys_exit") :
                    c->tp || !event || event->kind != PP_EVENT_TRACEPOINT ?
                    "attaching the BPF program to the scheduler's fork, exec and exit "
                    "tracepoints" : "attaching the BPF program to the tracepoint");
    }
    if (!(c->names = ring_buffer__new(bpf_map__fd(c->skel->maps.names), on_code, c, NULL)) ||
        !(c->ring = ring_buffer__new(bpf_map__fd(c->skel->maps.events), on_record, c, NULL))) {
        rc = -errno;
        pp_collect_close(c);
        return fail(why, len, rc, "the BPF ring buffer");
    }
    if ((rc = check_events(c, why, len)) < 0) {
        pp_collect_close(c);
        return rc;
    }
    *out = c;
    return 0;
}

int pp_collect_set(pp_collector *c, pid_t pid, const pp_py_offsets *given, uint64_t runtime)
{
    static const pp_py_offsets none;         /* no _PyRuntime yet: nothing read */
    const pp_py_offsets *o = given ? given : &none;
    struct pp_bpf_target t = {
        .runtime = runtime,
        .off = {
            .runtime_interpreters_head = o->runtime_interpreters_head,
            .interp_threads_head = o->interp_threads_head,
            .tstate_next = o->tstate_next,
            .tstate_thread_id = o->tstate_thread_id,
            .tstate_frame = o->tstate_frame,
            .tstate_cframe = o->tstate_cframe,
            .cframe_current_frame = o->cframe_current_frame,
            .frame_is_object = o->frame_is_object,
            .frame_previous = o->frame_previous,
            .frame_code = o->frame_code,
            .frame_code_tag_mask = o->frame_code_tag_mask,
            .frame_instr = o->frame_instr,
            .frame_owner = o->frame_owner,
            .frame_owner_shim_min = o->frame_owner_shim_min,
            .frame_is_entry = o->frame_is_entry,
            .frame_tlbc_index = o->frame_tlbc_index,
            .code_name = o->code_qualname >= 0 ? o->code_qualname : o->code_name,
            .code_filename = o->code_filename,
            .code_linetable = o->code_linetable,
            .code_firstlineno = o->code_firstlineno,
            .str_hash = o->str_hash,
            .str_length = o->str_length,
            .str_ascii_data = o->str_ascii_data,
            .gil_runtime = o->gil_runtime,
            .gil_interp = o->gil_interp,
            .gil_locked = o->gil_locked,
            .gil_last_holder = o->gil_last_holder,
        },
    };
    __u32 key = (__u32)pid;

    pp_codename_offsets(o, &t.code);

    if (bpf_map__update_elem(c->skel->maps.targets, &key, sizeof(key), &t, sizeof(t), BPF_ANY))
        return -errno;
    return 0;
}

int pp_collect_set_async(pp_collector *c, pid_t pid, const pp_py_offsets *o,
                         const pp_pyasync_offsets *a, const pp_pyasync_types *ty, int waiting)
{
    struct pp_bpf_target t;
    __u32 key = (__u32)pid;

    if (bpf_map__lookup_elem(c->skel->maps.targets, &key, sizeof(key), &t, sizeof(t), 0))
        return -errno;
    memset(&t.as, 0, sizeof(t.as));
    if (a && o->frame_stack_kind == PP_STACK_POINTER)
        t.as = (struct pp_bpf_async){
            .on = 1,
            .object_type = o->object_type,
            .gen_iframe = o->gen_iframe,
            .gen_frame_state = o->gen_frame_state,
            .gen_state_yield_from = o->gen_state_yield_from,
            .gen_state_cleared = o->gen_state_cleared,
            .gen_yf_depth = o->gen_yf_depth,
            .frame_stack = o->frame_stack,
            .set_mask = o->set_mask,
            .set_table = o->set_table,
            .llist_next = o->llist_next,
            .task_name = a->task_name,
            .task_coro = a->task_coro,
            .task_awaited_by = a->task_awaited_by,
            .task_awaited_by_is_set = a->task_awaited_by_is_set,
            .task_node = a->task_node,
            .tstate_running_loop = a->tstate_running_loop,
            .tstate_running_task = a->tstate_running_task,
            .tstate_tasks_head = a->tstate_tasks_head,
            .coro_type = ty->coro,
            .gen_type = ty->gen,
            .waiting = waiting != 0,
        };
    if (bpf_map__update_elem(c->skel->maps.targets, &key, sizeof(key), &t, sizeof(t), BPF_EXIST))
        return -errno;
    return 0;
}

int pp_collect_add(pp_collector *c, pid_t pid, const pp_py_offsets *o, uint64_t runtime)
{
    int rc;

    if ((rc = pp_collect_set(c, pid, o, runtime)) != 0)
        return rc;
    if ((rc = c->tp ? 0 : c->wall ? open_cpu_events(c) : open_events(c, pid)) < 0)
        pp_collect_remove(c, pid);
    return rc;
}

void pp_collect_remove(pp_collector *c, pid_t pid)
{
    __u32 key = (__u32)pid;

    close_events(c, pid);
    bpf_map__delete_elem(c->skel->maps.targets, &key, sizeof(key), 0);
}

int pp_collect_host(pp_collector *c, unsigned flags)
{
    int rc;

    c->skel->bss->pp_host = flags;
    if ((rc = open_cpu_events(c)) < 0)
        c->skel->bss->pp_host = 0;
    return rc;
}

int pp_collect_poll(pp_collector *c, int timeout_ms, pp_collect_fn fn,
                    pp_collect_event_fn event_fn, void *ctx)
{
    int n;

    c->fn = fn;
    c->event_fn = event_fn;
    c->ctx = ctx;
    n = ring_buffer__poll(c->ring, timeout_ms);
    if (n < 0 && n != -EINTR)
        return n;
    n = n < 0 ? 0 : n;
    /* a whole host's samples and the ends of stretches off the CPU come
     * without a wake-up (sample.bpf.c): epoll does not report them, so what
     * is there after the wait is read now */
    if (c->wall || c->skel->bss->pp_host) {
        int m = ring_buffer__consume(c->ring);

        if (m < 0 && m != -EINTR)
            return m;
        n += m > 0 ? m : 0;
    }
    return n;
}

uint64_t pp_collect_count(const pp_collector *c, int which)
{
    __u32 key = (__u32)which;
    int ncpu = c->ncpu;
    __u64 *per = calloc((size_t)ncpu, sizeof(*per));
    uint64_t sum = 0;

    if (per && which >= 0 && which < PP_BPF_N_COUNTERS &&
        !bpf_map__lookup_elem(c->skel->maps.counters, &key, sizeof(key), per,
                              (size_t)ncpu * sizeof(*per), 0))
        for (int i = 0; i < ncpu; i++)
            sum += per[i];
    free(per);
    return sum;
}

uint64_t pp_collect_missed_ns(const pp_collector *c)
{
    return c->skel->bss->missed_ns;
}

uint64_t pp_collect_lost(const pp_collector *c)
{
    return pp_collect_count(c, PP_BPF_N_LOST);
}

/* The task iterator prog over pid's threads, once. 0 or -errno. */
static int run_iter(struct bpf_program *prog, pid_t pid)
{
    LIBBPF_OPTS(bpf_iter_attach_opts, o);
    union bpf_iter_link_info li;
    struct bpf_link *link;
    char buf[64];
    int fd, rc = 0;
    ssize_t n;

    memset(&li, 0, sizeof(li));
    li.task.pid = (__u32)pid;          /* the threads of this process only */
    o.link_info = &li;
    o.link_info_len = sizeof(li);
    if (!(link = bpf_program__attach_iter(prog, &o)))
        return errno ? -errno : -EINVAL;
    if ((fd = bpf_iter_create(bpf_link__fd(link))) < 0) {
        rc = -errno;
    } else {
        while ((n = read(fd, buf, sizeof(buf))) > 0)
            ;                       /* it writes nothing: the records go to the ring */
        if (n < 0)
            rc = -errno;
        close(fd);
    }
    bpf_link__destroy(link);
    return rc;
}

int pp_collect_threads(pp_collector *c, pid_t pid, int end)
{
    if (!c->wall)
        return -EINVAL;
    c->skel->bss->iter_end = end ? 1 : 0;
    return run_iter(c->skel->progs.pp_iter_threads, pid);
}

void pp_collect_end_at(pp_collector *c, uint64_t mono_ns)
{
    c->skel->bss->iter_until = mono_ns;
}

int pp_collect_snapshot(pp_collector *c, pid_t pid)
{
    if (!c->snapshot)
        return -EINVAL;
    return run_iter(c->skel->progs.pp_iter_snapshot, pid);
}

int pp_collect_kernel_names(pp_collector *c, const uint64_t *addr, size_t n,
                            char (*names)[PP_BPF_KSYM_LEN])
{
    LIBBPF_OPTS(bpf_test_run_opts, o);
    int fd = c->snapshot ? bpf_program__fd(c->skel->progs.pp_ksym_names) : -1;

    if (fd < 0)
        return -ENOTSUP;
    for (size_t at = 0; at < n; at += PP_BPF_KSYMS) {
        size_t m = n - at < PP_BPF_KSYMS ? n - at : PP_BPF_KSYMS;

        memcpy(c->skel->bss->ksym_addr, addr + at, m * sizeof(*addr));
        c->skel->bss->ksym_n = (__u32)m;
        if (bpf_prog_test_run_opts(fd, &o) != 0)
            return errno ? -errno : -EINVAL;
        for (size_t i = 0; i < m; i++) {
            memcpy(names[at + i], c->skel->bss->ksym_name[i], PP_BPF_KSYM_LEN);
            names[at + i][PP_BPF_KSYM_LEN - 1] = '\0';
        }
    }
    return 0;
}

void pp_collect_on_code(pp_collector *c, pp_collect_code_fn fn, void *ctx)
{
    c->code_fn = fn;
    c->code_ctx = ctx;
}

uint64_t pp_collect_code_lost(const pp_collector *c)
{
    return pp_collect_count(c, PP_BPF_N_LOST_NAMES);
}

void pp_collect_close(pp_collector *c)
{
    if (!c)
        return;
    close_events(c, 0);
    bpf_link__destroy(c->tp);
    ring_buffer__free(c->ring);
    ring_buffer__free(c->names);
    pp_sample_bpf__destroy(c->skel);
    free(c->ev);
    free(c);
}
