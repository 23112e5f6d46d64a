/*
 * `perfpy dump`'s reader, for its request (request.h: cmd_dump.c writes
 * it), in perfpy-sample so that only perfpy-sample links libbpf and
 * elfutils. Each process (the request's, and with subprocesses its
 * descendants) is read in sample mode, by BPF, never stopped, where its
 * program loads (mode auto or sample: decided here, where the collector
 * opens); else with every thread stopped together by ptrace for as long as
 * its registers and Python frames are read (the time is measured and
 * said), or with nonblocking never stopped and without native frames
 * (dump.h). Then
 * one report per process on stdout, as text or as JSON (one object:
 * {"processes": [...]}); a process that cannot be read is one line on
 * stderr, and the exit status is 1 when none could be.
 */
#include "output/output.h"
#include "sampler.h"
#include "collect/collect.h"
#include "dump.h"
#include "native/procs.h"
#include "cpython/pytables.h"
#include "report/fold.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DUMP_HZ 1000               /* a running thread's sample: each ms of its CPU */

typedef struct dump_args {
    const pp_request *rq;          /* what perfpy asked: the process, the options */
    pp_collector *bpf;             /* sample mode's collector, or NULL */
    double load_ms;                /* loading it, counted in the first dump's time */
} dump_args;

static double now_ms(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* ---- text ---------------------------------------------------------------- */

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');

    return s ? s + 1 : path;
}

/* "running", "waiting in futex", "stopped" ... with the GIL when held. */
static void state_text(const pp_dump_thread *t, char *out, size_t len)
{
    const char *call = pp_dump_syscall_name(t->syscall);
    char callbuf[32];

    if (t->syscall >= 0 && !call) {
        snprintf(callbuf, sizeof(callbuf), "system call %lld", (long long)t->syscall);
        call = callbuf;
    }
    switch (t->state) {
    case 'R':
        snprintf(out, len, "running");
        break;
    case 'S':
    case 'D':
        if (call)
            snprintf(out, len, "waiting in %s%s", call, t->state == 'D' ? ", uninterruptible" : "");
        else
            snprintf(out, len, "waiting%s", t->state == 'D' ? " (uninterruptible)" : "");
        if (t->wait > PP_WAIT_NONE && t->wait < PP_WAIT_N)   /* a profile's reason */
            snprintf(out + strlen(out), len - strlen(out), ": %s", pp_wait_name(t->wait));
        break;
    case 'T':
    case 't':
        snprintf(out, len, "stopped");
        break;
    default:
        snprintf(out, len, "state %c", t->state ? t->state : '?');
    }
    if (t->gil == 1)
        snprintf(out + strlen(out), len - strlen(out), ", holds the GIL");
}

static void print_frame(FILE *f, const pp_dump *d, const pp_dump_thread *t,
                        const pp_dump_frame *fr)
{
    switch (fr->kind) {
    case PP_FRAME_PYTHON:
        if (fr->line)
            fprintf(f, "    %s (%s:%d)\n", fr->name, fr->file, fr->line);
        else
            fprintf(f, "    %s (%s)\n", fr->name, fr->file);
        for (size_t i = 0; i < fr->nlocals; i++) {
            const pp_pylocal *l = &t->locals[fr->first_local + i];

            fprintf(f, "        %s = %s%s%s\n", l->name, l->is_value ? "" : "<", l->value,
                    l->is_value ? "" : ">");
        }
        break;
    case PP_FRAME_KERNEL:
        fprintf(f, "    %s [kernel]\n", fr->name);
        break;
    case PP_FRAME_NATIVE:
        fprintf(f, fr->file[0] ? "    %s (%s)\n" : "    %s\n", fr->name, base_name(fr->file));
        break;
    default:
        fprintf(f, "    %s\n", fr->name);
    }
    (void)d;
}

static const char *engine_text(const pp_dump *d, char *buf, size_t len)
{
    switch (d->engine) {
    case PP_DUMP_BPF:
        snprintf(buf, len, "sample mode (BPF): the program was not stopped");
        break;
    case PP_DUMP_PTRACE:
        snprintf(buf, len, "ptrace: every thread stopped together for %.2f ms", d->stopped_ms);
        break;
    default:
        snprintf(buf, len, "read mode, non-blocking: the program was not stopped, no native "
                 "frames");
    }
    return buf;
}

static void print_text(FILE *f, const pp_dump *d)
{
    char ver[32], how[160], state[96];

    fprintf(f, "Process %d: %s\n", (int)d->pid, d->cmdline[0] ? d->cmdline : d->comm);
    fprintf(f, "Python %s (%s)\n", pp_py_version_text(d->version_hex, ver, sizeof(ver)), d->exe);
    fprintf(f, "Read with %s; %zu thread%s in %.1f ms\n", engine_text(d, how, sizeof(how)),
            d->nthreads, d->nthreads == 1 ? "" : "s", d->took_ms);
    for (size_t i = 0; i < d->nthreads; i++) {
        const pp_dump_thread *t = &d->threads[i];

        state_text(t, state, sizeof(state));
        fprintf(f, "\nThread %d (%s): ", (int)t->tid, state);
        if (t->name[0])
            fprintf(f, "\"%s\"\n", t->name);
        else
            fprintf(f, "[%s]%s\n", t->os_name, t->python ? "" : " (not a Python thread)");
        for (size_t k = 0; k < t->nframes; k++)
            print_frame(f, d, t, &t->frames[k]);
    }
}

/* ---- JSON ----------------------------------------------------------------- */

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p == '\n')
            fputs("\\n", f);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

static const char *kind_name(pp_frame_kind k)
{
    return k == PP_FRAME_PYTHON ? "python" : k == PP_FRAME_NATIVE ? "native"
         : k == PP_FRAME_KERNEL ? "kernel" : "marker";
}

static void json_thread(FILE *f, const pp_dump_thread *t)
{
    const char *call = pp_dump_syscall_name(t->syscall);

    fprintf(f, "{\"tid\": %d, \"name\": ", (int)t->tid);
    if (t->name[0])
        json_str(f, t->name);
    else
        fputs("null", f);
    fputs(", \"os_name\": ", f);
    json_str(f, t->os_name);
    fprintf(f, ", \"state\": \"%c\", \"running\": %s, \"python\": %s, \"gil\": %s, "
            "\"wait\": ", t->state ? t->state : '?', t->state == 'R' ? "true" : "false",
            t->python ? "true" : "false", t->gil < 0 ? "null" : t->gil ? "true" : "false");
    if (t->wait > PP_WAIT_NONE && t->wait < PP_WAIT_N)
        json_str(f, pp_wait_name(t->wait));
    else
        fputs("null", f);
    fputs(", \"syscall\": ", f);
    if (t->syscall < 0)
        fputs("null", f);
    else if (call)
        json_str(f, call);
    else
        fprintf(f, "%lld", (long long)t->syscall);
    fprintf(f, ", \"native\": %s, \"frames\": [", t->native ? "true" : "false");
    for (size_t k = 0; k < t->nframes; k++) {
        const pp_dump_frame *fr = &t->frames[k];

        fprintf(f, "%s{\"kind\": \"%s\", \"name\": ", k ? ", " : "", kind_name(fr->kind));
        json_str(f, fr->name);
        fputs(", \"file\": ", f);
        json_str(f, fr->file);
        fprintf(f, ", \"line\": %d", fr->line);
        if (fr->kind == PP_FRAME_PYTHON && t->nlocals) {
            fputs(", \"locals\": [", f);
            for (size_t i = 0; i < fr->nlocals; i++) {
                const pp_pylocal *l = &t->locals[fr->first_local + i];

                fputs(i ? ", {\"name\": " : "{\"name\": ", f);
                json_str(f, l->name);
                fputs(l->is_value ? ", \"value\": " : ", \"type\": ", f);
                json_str(f, l->value);
                fputc('}', f);
            }
            fputc(']', f);
        }
        fputc('}', f);
    }
    fputs("]}", f);
}

static void print_json(FILE *f, const pp_dump *d, int first)
{
    char ver[32];
    const char *engine = d->engine == PP_DUMP_BPF ? "sample" : d->engine == PP_DUMP_PTRACE
                         ? "ptrace" : "nonblocking";

    fprintf(f, "%s{\"pid\": %d, \"comm\": ", first ? "" : ",\n  ", (int)d->pid);
    json_str(f, d->comm);
    fputs(", \"cmdline\": ", f);
    json_str(f, d->cmdline);
    fputs(", \"python\": ", f);
    json_str(f, pp_py_version_text(d->version_hex, ver, sizeof(ver)));
    fputs(", \"executable\": ", f);
    json_str(f, d->exe);
    fprintf(f, ", \"engine\": \"%s\", \"stopped_ms\": %.3f, \"took_ms\": %.3f, \"threads\": [",
            engine, d->stopped_ms, d->took_ms);
    for (size_t i = 0; i < d->nthreads; i++) {
        fputs(i ? ",\n    " : "\n    ", f);
        json_thread(f, &d->threads[i]);
    }
    fputs("]}", f);
}

/* ---- one process ------------------------------------------------------------ */

/* For the tests of a process that ends during a dump: a pause between
 * finding the program and reading it (PERFPY_DUMP_TEST_PAUSE_MS). */
static void test_pause(void)
{
    const char *ms = getenv("PERFPY_DUMP_TEST_PAUSE_MS");
    struct timespec ts;
    long v = ms ? strtol(ms, NULL, 10) : 0;

    if (v <= 0 || v > 60000)
        return;
    ts.tv_sec = v / 1000;
    ts.tv_nsec = (v % 1000) * 1000000L;
    nanosleep(&ts, NULL);
}

/* Reads pid with the engine asked for, or the best one here. 0, or -errno
 * with the sentence said on stderr. */
static int dump_one(dump_args *a, pid_t pid, int *first)
{
    pp_dump d;
    pp_error e = {0};
    pp_dump_opts o = {PP_DUMP_PTRACE, a->rq->locals, a->rq->no_native,
                      a->bpf ? pp_dump_bpf_kernel_names : NULL, a->bpf};
    double t0 = now_ms();
    int rc;

    if (a->rq->nonblocking)
        o.engine = PP_DUMP_NONBLOCKING;
    if ((rc = pp_dump_open(&d, pid, &e)) == 0) {
        test_pause();
        rc = a->bpf ? pp_dump_bpf(&d, a->bpf, &o, &e) : pp_dump_ptrace(&d, &o, &e);
        if (rc == 0 && (rc = pp_dump_resolve(&d, &o)) != 0)
            pp_error_set(&e, rc, "out of memory");
    }
    d.took_ms = now_ms() - t0 + a->load_ms;
    a->load_ms = 0;
    if (rc != 0) {
        fprintf(stderr, "perfpy: %s\n", e.message);
    } else if (a->rq->json) {
        print_json(stdout, &d, *first);
        *first = 0;
    } else {
        if (!*first)
            fputc('\n', stdout);
        print_text(stdout, &d);
        *first = 0;
    }
    pp_dump_free(&d);
    return rc;
}

/* Sample mode's collector for a snapshot, unless read mode is asked (or,
 * asked auto, it cannot load: then read mode, a->bpf NULL). 0, or
 * PP_EXIT_FAIL when sample mode was asked and cannot load (said why). */
static int open_collector(dump_args *a)
{
    char why[512];
    int rc;

    a->bpf = NULL;
    a->load_ms = now_ms();
    if (a->rq->mode != PP_MODE_READ &&
        (rc = pp_collect_open(&a->bpf, DUMP_HZ, PP_COLLECT_SNAPSHOT, why, sizeof(why))) != 0) {
        a->bpf = NULL;
        if (a->rq->mode == PP_MODE_SAMPLE && rc == -ENOTSUP) {
            fprintf(stderr, "perfpy: --mode sample: %s; --mode read needs none of it\n", why);
            return PP_EXIT_FAIL;
        }
        if (a->rq->mode == PP_MODE_SAMPLE) {
            fprintf(stderr, "perfpy: sample mode cannot read here (%s): it needs root, or "
                    "the capabilities CAP_BPF and CAP_PERFMON, and a kernel with BPF and "
                    "BTF; --mode read needs none of them\n", why);
            return PP_EXIT_FAIL;
        }
    }
    a->load_ms = now_ms() - a->load_ms;
    return 0;
}

int pp__dump_main(const pp_request *rq)
{
    dump_args a = {rq, NULL, 0};
    pp_proc_info procs[256];
    pp_error e;
    long n = 1;
    int first = 1, read = 0;

    if (open_collector(&a) != 0)
        return PP_EXIT_FAIL;
    procs[0].pid = (pid_t)rq->pid;
    if (rq->subprocesses && (n = pp_procs_tree((pid_t)rq->pid, procs, 256)) <= 0)
        n = 1;                      /* the process itself says why it cannot be read */
    if (rq->json)
        fputs("{\"processes\": [", stdout);
    for (long i = 0; i < n; i++) {
        int ok = dump_one(&a, procs[i].pid, &first) == 0;

        if (ok && rq->async) {      /* then its tasks, as asyncio pstree draws them */
            fflush(stdout);
            fputc('\n', stdout);
            ok = pp__dump_async(procs[i].pid, stdout) == 0;
        }
        read += ok;
    }
    if (rq->json)
        fputs("]}\n", stdout);
    pp_collect_close(a.bpf);
    if (pp_output_close_stdout(&e) != 0) {
        fprintf(stderr, "perfpy: %s\n", e.message);
        return PP_EXIT_FAIL;
    }
    return read ? 0 : PP_EXIT_FAIL;
}
