/*
 * Sample mode's recorder: what perfpy-sample does for `perfpy record` in
 * sample mode (and `perfpy top` where its BPF program loads), asked by a
 * request (request.h; main.c hands it over). It starts the program, or
 * follows the running process (attached: until it ends, the duration
 * passes or Ctrl-C), with nothing installed in it (no module, no
 * environment, no signal, no write; a program it starts is held at its
 * exec until its _PyRuntime is found: hold.h), samples it with the BPF
 * collector (collect.c) at the rate asked, and for each sample names the
 * Python frames from outside (pycode.c: each code object read once), with
 * the structure offsets of the CPython each process runs (pylayout.c: its
 * own _Py_DebugOffsets on 3.13+, the tables compiled into perfpy for
 * 3.8-3.12; no perfpy module of its version is needed), unwinds the native
 * stack (unwind.c), names kernel frames (kallsyms.c), splices them
 * (splice.c) and folds the result (fold.c: a root per process and per
 * thread as asked) into the profile that the format's writer writes to
 * the output; then the summary, and the program's exit status as its own.
 * Frames carry their executing line (linetable.c: the code object's line
 * table at the frame's instruction).
 *
 * Children are followed: the collector samples every process a sampled
 * one forks. One that execs is sampled for its native frames, and for its
 * Python frames again once its new image shows a _PyRuntime, whichever
 * CPython it is. A process whose CPython perfpy does not read (a version it
 * does not know, debug offsets that do not match their version, a
 * free-threaded build) is sampled for its native frames, and one line on
 * stderr says why.
 *
 * -a, the whole host (host_run.c): every process that runs a CPython now
 * or execs one later (host.c says which), sampled by an event per CPU,
 * each under a root that names its command line, labelled for a profile
 * store (pid, thread, service, container, KEY=VALUE); with all_processes
 * the other processes too. Until Ctrl-C, SIGTERM or the duration; with
 * --every the output is a directory that gets one profile per interval
 * (every.c): each sample folded into the interval its time falls in, a new
 * folder and profile for the next, so memory is that of one interval.
 *
 * The clock: CPU time, or the wall clock (--idle: the time each thread
 * spends off the CPU too, each stretch with its stack and the reason's
 * marker, wall.h), with --gil the samples of threads that held the GIL
 * only. In wall-clock mode a sample's period is the time it stands for, in
 * ns: one period of CPU time (1e9 / rate) on the CPU, its share of a
 * stretch off it. --async: stacks as asyncio's tasks see them (CPython
 * 3.14+): a sample in a task reads as the chain of tasks awaiting it, each
 * with its coroutines, in place of the event loop that runs it (async.bpf.c
 * reads the chain at the sample; pyasync.h draws the graph).
 */
#include "record.h"
#include "sampler.h"
#include "output/output.h"
#include "report/report.h"
#include "native/kallsyms.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The samples the ring had no room for, and what that does to the figures:
 * in wall-clock mode a thread's CPU time since its last sample goes to its
 * next one (sample.bpf.c), so no time is missing, only stacks; otherwise
 * each stood for a period of its thread's CPU time. */
static void lost_note(const state *st, uint64_t lost)
{
    if (st->event)
        fprintf(stderr, "perfpy: %llu samples lost (the ring buffer was full): %llu %s, "
                "%.2f%% of the profile, are missing\n", (unsigned long long)lost,
                (unsigned long long)(lost * st->period_ns), st->event->unit,
                100.0 * (double)lost / (double)(lost + st->samples));
    else if (st->wall)
        fprintf(stderr, "perfpy: %llu samples lost (the ring buffer was full): each one's "
                "CPU time went to its thread's next sample, so no time is missing, only "
                "stacks (%.2f%% of the samples)\n", (unsigned long long)lost,
                100.0 * (double)lost / (double)(lost + st->samples));
    else
        fprintf(stderr, "perfpy: %llu samples lost (the ring buffer was full): %.1f ms of "
                "CPU time, %.2f%% of the profile, is missing\n", (unsigned long long)lost,
                (double)lost * (double)st->period_ns / 1e6,
                100.0 * (double)lost / (double)(lost + st->samples));
}

/* What the profile does not say by itself: children, code objects gone
 * before they were named, samples lost or not folded. Accounting is said
 * with -v; a loss or a gap, also when it moves a figure by 1% or more
 * (pp_note_said); a failure, always. */
static void notes(const state *st, pp_collector *c)
{
    pp_pycode_stats cs = pp_pycode_stats_of(st->codes);
    uint64_t lost = pp_collect_lost(c);
    uint64_t uncharged = pp_collect_count(c, PP_BPF_N_UNCHARGED_NS);
    int v = st->verbose;

    if (v && st->children && !st->host)
        fprintf(stderr, "perfpy: followed %u child process%s of the process %d\n",
                st->children, st->children == 1 ? "" : "es", (int)st->pid);
    if (v && st->refused > 1)
        fprintf(stderr, "perfpy: %u processes ran a Python perfpy does not read (the "
                "reasons are above): their native frames are in the profile, their Python "
                "frames are not\n", st->refused);
    if (st->left_out && pp_note_said(v, pp_note_pct(st->left_out, st->left_out + st->samples)))
        fprintf(stderr, "perfpy: %llu samples of processes that run no CPython were left "
                "out (--all-processes keeps them)\n", (unsigned long long)st->left_out);
    if (v && st->host)
        fprintf(stderr, "perfpy: %llu CPython processes seen, %llu of them sampled (a process "
                "that used less CPU than a period may get no sample)\n",
                (unsigned long long)st->seen, (unsigned long long)st->sampled);
    if (v && cs.freed)
        fprintf(stderr, "perfpy: %llu code objects were freed before they could be named: "
                "their frames are [unknown] (%llu named; %llu copies of names did not fit "
                "in their ring)\n", (unsigned long long)cs.freed,
                (unsigned long long)cs.named, (unsigned long long)pp_collect_code_lost(c));
    if (st->before_python && pp_note_said(v, pp_note_pct(st->before_python, st->samples)))
        fprintf(stderr, "perfpy: %llu samples were taken before their process's Python was "
                "found (its _PyRuntime, looked for every 20 ms from its exec on), deeper "
                "than the stack copied: [truncated], with native frames only\n",
                (unsigned long long)st->before_python);
    if (lost && pp_note_said(v, pp_note_pct(lost, lost + st->samples)))
        lost_note(st, lost);
    if (uncharged >= 1000000 && pp_note_said(v, pp_note_pct(uncharged, st->folded_ns)))
        fprintf(stderr, "perfpy: %.1f ms of the threads' time on a CPU was charged to none "
                "(a virtual machine's host ran another guest: steal time): %s\n",
                (double)uncharged / 1e6, st->wall ? "shown as waiting for a CPU" :
                "samples weigh the CPU time the threads were charged");
    if (st->wall)
        pp__waits_notes(st, c);
    if (v && st->gil_only)
        fprintf(stderr, "perfpy: --gil: %llu samples of threads that did not hold the GIL "
                "were left out\n", (unsigned long long)st->not_holding);
    if (st->failed)
        fprintf(stderr, "perfpy: %llu samples could not be folded (out of memory)\n",
                (unsigned long long)st->failed);
}

/* The program's exit status as perfpy's own (0 when attached). */
static int program_status(const state *st, int status)
{
    if (st->attached || st->stopped)
        return 0;                  /* as record's other modes: -d ended it */
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return WIFEXITED(status) ? WEXITSTATUS(status) : PP_EXIT_FAIL;
}

static int finish(state *st, const char *format, const char *output, int status)
{
    pp_report_result rr;
    pp_error e;
    const pp_format *f = pp_format_find(format);
    pp_write_opts wo = {.threads = st->fo.threads};
    pp_profile *prof = st->prof;
    int rc;

    if (st->have_ks)
        pp_kallsyms_free(&st->ks);
    if (st->every)
        return pp__interval_finish_every(st, output);
    if (st->top_mode) {             /* shown as it went: nothing to write */
        pp_fold_close(st->fold);    /* the interval under way */
        st->fold = NULL;
        pp_profile_free(prof);
        free(prof);
        return program_status(st, status);
    }
    pp__interval_seal(st, prof, st->start_ns, st->start_ns + (uint64_t)(st->seconds * 1e9));
    memset(&rr, 0, sizeof(rr));
    pp_summary_end(stderr, st->stopped, st->seconds, st->attached ? 0 : status);
    if (prof->samples == 0) {     /* nothing to write: said so, not an empty profile */
        if (st->host)
            fprintf(stderr, "perfpy: no CPython process was sampled in %.1f s: nothing "
                    "to write\n", st->seconds);
        else
            pp_summary_no_samples(stderr, st->attached ? (long)st->pid : 0, st->seconds);
        pp_profile_free(prof);
        free(prof);
        rc = program_status(st, status);
        return rc ? rc : PP_EXIT_FAIL;
    }
    if (!f || pp_output_write(prof, f, output, &wo, &e) != 0) {
        fprintf(stderr, "perfpy: cannot write %s: %s\n", output, f ? e.message : "unknown format");
        pp_profile_free(prof);
        free(prof);
        return PP_EXIT_FAIL;
    }
    rr.profile = *prof;
    rr.sample_mode = 1;
    rr.verbose = st->verbose;
    rr.seconds = pp__now_s() - (st->t0 + st->seconds);
    rr.own_cpu_s = pp__cpu_seconds();
    snprintf(rr.output, sizeof(rr.output), "%s", output);
    pp_summary_print(stderr, &rr, 10);
    pp_profile_free(prof);
    free(prof);
    return program_status(st, status);
}

static int open_all(state *st, long rate)
{
    char why[512];
    int rc = pp_collect_open_event(&st->c, (int)rate, st->event, (uint64_t)st->rq->period,
                                   st->wall ? PP_COLLECT_WALL : 0, why, sizeof(why));

    if (rc == -ENOTSUP) {              /* no privilege would help: say only why */
        fprintf(stderr, "perfpy: %s needs sample mode, and %s\n", st->top_mode ? "perfpy top"
                : st->host ? "record -a" : st->event ? "-e (an event's samples)" : st->wall ? "a wall-clock profile (--idle)"
                : "--mode sample", why);
        return PP_EXIT_FAIL;
    }
    if (rc != 0) {
        if (st->top_mode)
            fprintf(stderr, "perfpy: perfpy top samples in sample mode, which cannot sample "
                    "here (%s): it needs root, or the capabilities CAP_BPF and CAP_PERFMON, "
                    "and a kernel with BPF and BTF\n", why);
        else if (st->host)
            fprintf(stderr, "perfpy: record -a cannot sample here (%s): reading every "
                    "process of the host needs root, or the capabilities CAP_BPF, "
                    "CAP_PERFMON and CAP_SYS_PTRACE, and a kernel with BPF and BTF\n", why);
        else if (st->wall)     /* the trampoline modes record no time off the CPU */
            fprintf(stderr, "perfpy: a wall-clock profile (--idle) cannot be recorded here "
                    "in sample mode (%s): it needs root, or the capabilities CAP_BPF and "
                    "CAP_PERFMON, and a kernel with BPF and BTF; --mode read (or auto) "
                    "records one without them, with Python frames only\n", why);
        else if (st->event)     /* no other mode samples an event */
            fprintf(stderr, "perfpy: the event %s cannot be sampled here (%s): sample mode "
                    "needs root, or the capabilities CAP_BPF and CAP_PERFMON, and a kernel "
                    "with BPF and BTF\n", st->event->name, why);
        else
            fprintf(stderr, "perfpy: sample mode cannot sample here (%s): it needs root, or "
                    "the capabilities CAP_BPF and CAP_PERFMON, and a kernel with BPF and "
                    "BTF; the trampoline modes work without them: --mode perf or --mode "
                    "jit\n", why);
        return PP_EXIT_FAIL;
    }
    st->period_ns = st->event ? (uint64_t)st->rq->period
                    : rate > 0 ? (uint64_t)(1e9 / (double)rate + 0.5) : 1;
    st->rate = rate;
    if (pp__interval_begin(st) != 0 || pp_unwind_open(&st->u) != 0 || pp_splice_open(&st->sp, NULL) != 0 ||
        pp_pycode_open(&st->codes) != 0 || pp_wall_open_new(&st->open) != 0) {
        fprintf(stderr, "perfpy: out of memory\n");
        return PP_EXIT_FAIL;
    }
    pp_collect_on_code(st->c, pp__ring_on_code, st);
    st->have_ks = pp_kallsyms_load(&st->ks) == 0;
    if (st->have_ks && !pp_kallsyms_usable(&st->ks)) {
        pp_kallsyms_free(&st->ks);      /* addresses hidden: it names nothing */
        st->have_ks = 0;
    }
    return 0;
}

/* What the recording used, closed; the profile and the folder too when
 * nothing was recorded (no profile is written then). */
static void close_all(state *st, int recorded)
{
    pp_collect_close(st->c);
    pp_unwind_close(st->u);
    pp_splice_close(st->sp);
    pp_pycode_close(st->codes);
    pp_wall_open_free(st->open);
    for (size_t i = 0; i < st->nprocs; i++)
        pp__names_forget(&st->procs[i]);
    free(st->procs);
    free(st->named);
    if (recorded)
        return;
    pp_fold_close(st->fold);
    if (st->have_ks)
        pp_kallsyms_free(&st->ks);
    if (st->prof)
        pp_profile_free(st->prof);
    free(st->prof);
    if (st->every)
        pp_every_close(st->every);
}

/* The state for rq: its clock, its folding, perfpy top's view. */
static void state_of(state *st, const pp_request *rq)
{
    const char *ft = getenv("PERFPY_FREE_THREADED");

    memset(st, 0, sizeof(*st));
    st->rq = rq;
    if (rq->what == PP_REQUEST_TOP) {
        st->top_mode = 1;
        st->every_ns = (uint64_t)(rq->interval * 1e9);
        st->top_rows = (size_t)rq->rows;
        pp_top_title(st->top_title, sizeof(st->top_title), rq->pid, rq->argv);
        snprintf(st->top_how, sizeof(st->top_how), "sample mode (BPF, %ld Hz per busy thread, "
                 "%s; nothing installed in the program)", rq->rate,
                 rq->wall ? "wall clock: time off the CPU too, by its reason" : "CPU time");
        signal(SIGTERM, pp__on_interrupt);
        signal(SIGHUP, pp__on_interrupt);
    }
    st->wall = rq->wall;
    /* perfpy checked the name; a tracepoint gone since is found at open */
    if (rq->event && *rq->event && pp_event_parse(rq->event, &st->ev) != -EINVAL)
        st->event = &st->ev;
    st->gil_only = rq->gil;
    st->verbose = rq->verbose;
    st->fo.no_native = rq->no_native;
    st->fo.processes = rq->processes;
    st->fo.threads = rq->threads;
    st->async = rq->async;
    st->layout_flags = ft && strcmp(ft, "1") == 0 ? PP_PYLAYOUT_FREE_THREADED : 0;
}

int pp__record_main(const pp_request *rq)
{
    state st;
    unsigned flags = 0;
    int rc, status = 0;
    struct timespec rt;

    state_of(&st, rq);
    if (rq->target == PP_TARGET_HOST && (rc = pp__host_args(&st, rq, &flags)) != 0)
        return rc;
    /* threading's names of one program's threads, --threads or not: every
     * format names its threads by them (speedscope's profiles, Firefox's
     * tracks, pprof's labels), as the hook modes do (a host's intervals
     * each start a profile of their own, named by comm) */
    st.threads = !st.host;
    if ((rc = open_all(&st, rq->rate)) != 0)
        return rc;
    st.t0 = pp__now_s();
    st.t0_ns = st.start_ns = pp__mono_ns();
    st.next_ns = st.start_ns + st.every_ns;
    clock_gettime(CLOCK_REALTIME, &rt);
    st.unix_offset_ns = (int64_t)rt.tv_sec * 1000000000ll + rt.tv_nsec - (int64_t)pp__mono_ns();
    if (st.host)
        rc = pp__host_run(&st, flags, rq->duration);
    else if (rq->target == PP_TARGET_PID)
        rc = pp__follow_attach(&st, (pid_t)rq->pid, rq->rate, rq->duration);
    else
        rc = pp__follow_program(&st, rq->argv, &status, rq->duration);
    st.seconds = pp__now_s() - st.t0;
    pp__interval_top_end(&st);
    if (rc == 0) {
        st.ending = 1;              /* what is left goes to the last interval */
        while (pp__ring_take(&st, 0) > 0)
            ;
        if (!st.top_mode)           /* top said its counts as it went */
            notes(&st, st.c);
        st.prof->lost = pp__waits_lost(&st);   /* the summary's "lost events" */
    }
    close_all(&st, rc == 0);
    return rc != 0 ? rc : finish(&st, rq->format, rq->output, status);
}
