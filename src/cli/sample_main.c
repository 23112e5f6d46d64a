/*
 * perfpy-sample: `perfpy record --mode sample`'s recorder (issue 15), a
 * program of its own so that only it links libbpf and elfutils (the CLI
 * and the module build and run without them). cmd_record.c runs it as
 *
 *   perfpy-sample FORMAT OUTPUT RATE MODULE NO_NATIVE DURATION -- PROGRAM [ARGS...]
 *   perfpy-sample FORMAT OUTPUT RATE MODULE NO_NATIVE DURATION -p PID
 *
 * It starts PROGRAM, or follows the running process PID (attached: until
 * it ends, DURATION seconds pass (0: none) or Ctrl-C), with nothing
 * installed in it (no module, no environment, no signal, no write),
 * samples it with the BPF collector (collect.c) at RATE Hz, and for each
 * sample names the Python frames from outside (pyread.c, the offsets of
 * MODULE: the perfpy module of PROGRAM's version), unwinds the native
 * stack (unwind.c), names kernel frames (kallsyms.c), splices them
 * (splice.c) and folds the result (fold.c) into the profile that FORMAT's
 * writer writes to OUTPUT; then the summary, and PROGRAM's exit status as
 * its own. Frames carry their executing line (linetable.c: the code
 * object's line table at the frame's instruction). PROGRAM's children are
 * not followed.
 */
#include "cli.h"
#include "output/output.h"
#include "report/fold.h"
#include "report/report.h"
#include "sample/collect.h"
#include "sample/kallsyms.h"
#include "sample/maps.h"
#include "sample/pyread.h"
#include "sample/splice.h"
#include "sample/unwind.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct state {
    pid_t pid;
    pp_py_offsets off;
    uint64_t runtime;              /* 0 until found in the program's maps */
    int looks;                     /* times its maps were searched for it */
    pp_pyread_types types;         /* to tell a code object that died since */
    int have_types;
    pp_unwinder *u;
    pp_splicer *sp;
    pp_folder *fold;
    pp_kallsyms ks;
    int have_ks;
    uint64_t samples, failed;
} state;

static void on_sample(const struct pp_bpf_sample *s, void *ctx)
{
    state *st = ctx;
    static pp_pyframe py[PP_BPF_MAX_PY];
    static pp_pyread_frame names[PP_BPF_MAX_PY];
    static pp_native_frame nat[512], kern[PP_BPF_MAX_KERNEL];
    pp_sample ps;
    pp_script_sample out;
    size_t nn = 0, nk = 0;
    unsigned flags = 0;

    if ((pid_t)s->pid != st->pid)
        return;
    memset(&ps, 0, sizeof(ps));
    ps.pid = (int32_t)s->pid;
    ps.tid = (int32_t)s->tid;
    ps.time_ns = s->time_ns;
    ps.period = 1;
    memcpy(ps.comm, s->comm, sizeof(ps.comm));
    ps.have_user = (s->flags & PP_BPF_USER) != 0;
    memcpy(ps.regs, s->regs, sizeof(ps.regs));
    ps.stack = s->stack + s->stack_skip;
    ps.stack_len = s->stack_len > s->stack_skip ? s->stack_len - s->stack_skip : 0;
    for (unsigned i = 0; i < s->npy && i < PP_BPF_MAX_PY; i++) {
        pp_pyread_code(st->pid, &st->off, st->have_types ? &st->types : NULL, s->py[i].code,
                       &names[i]);
        py[i] = (pp_pyframe){names[i].qualname[0] ? names[i].qualname : "[unknown]",
                             names[i].file,
                             names[i].qualname[0]
                                 ? pp_pyread_line(st->pid, &st->off, s->py[i].code,
                                                  s->py[i].instr, names[i].def_line)
                                 : 0,
                             names[i].def_line, (int)s->py[i].entry};
    }
    ps.py = py;
    ps.npy = s->npy;
    ps.py_truncated = (s->flags & PP_BPF_PY_TRUNCATED) != 0;
    if (st->have_ks)
        nk = pp_kallsyms_frames(&st->ks, (const uint64_t *)s->kips, s->nkernel, kern, PP_BPF_MAX_KERNEL);
    if (ps.have_user && pp_unwind(st->u, &ps, nat, 512, &nn, &flags) != 0)
        nn = 0;
    if (pp_splice(st->sp, &ps, kern, nk, nat, nn, &out) != 0 ||
        pp_fold_sample(st->fold, &out) != 0)
        st->failed++;
    st->samples++;
}

/* _PyRuntime, once the program's image (and its libpython) is mapped. */
static void find_runtime(state *st, pp_collector *c)
{
    pp_maps maps = {0};

    /* each look opens the ELF files the process maps: while its image and
     * libpython load (the first milliseconds), not for the whole run of a
     * process that never shows a _PyRuntime */
    if (st->runtime || st->looks >= 100)
        return;
    if (++st->looks == 100)
        fprintf(stderr, "perfpy: no _PyRuntime in the process %d after 2 s: its Python "
                "frames are not read (native frames only)\n", (int)st->pid);
    if (pp_maps_read(st->pid, &maps) != 0)
        return;
    if (pp_py_symbol_address(&maps, "_PyRuntime", &st->runtime, NULL, 0) == 0) {
        st->have_types = pp_pyread_types_find(&maps, &st->types) == 0;
        pp_collect_add(c, st->pid, &st->off, st->runtime);
    }
    pp_maps_free(&maps);
}

static pid_t start_program(char **argv, int *go)
{
    int p[2];
    pid_t pid;
    char c;

    if (pipe2(p, O_CLOEXEC) != 0)
        return -1;
    if ((pid = fork()) == 0) {
        /* started once the collector follows it: its first sample counts */
        close(p[1]);
        if (read(p[0], &c, 1) != 1)
            _exit(127);
        signal(SIGINT, SIG_DFL);
        execvp(argv[0], argv);
        fprintf(stderr, "perfpy: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(p[0]);
    *go = p[1];
    return pid;
}

static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
    (void)sig;
    interrupted = 1;
}

static double now_s(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Attached: until the process ends, the duration passes, or Ctrl-C. */
static void follow(state *st, pp_collector *c, double duration)
{
    double end = duration > 0 ? now_s() + duration : 0;

    signal(SIGINT, on_interrupt);
    signal(SIGTERM, on_interrupt);
    find_runtime(st, c);
    while (!interrupted && (!end || now_s() < end) &&
           (kill(st->pid, 0) == 0 || errno == EPERM)) {
        pp_collect_poll(c, 20, on_sample, st);
        find_runtime(st, c);
    }
    pp_collect_remove(c, st->pid);
}

static int finish(state *st, pp_profile *prof, const char *format, const char *output,
                  int status)
{
    pp_report_result rr;
    pp_error e;
    const pp_format *f = pp_format_find(format);
    pp_write_opts wo = {NULL};

    pp_fold_close(st->fold);
    if (st->have_ks)
        pp_kallsyms_free(&st->ks);
    memset(&rr, 0, sizeof(rr));
    if (!f || pp_output_write(prof, f, output, &wo, &e) != 0) {
        fprintf(stderr, "perfpy: cannot write %s: %s\n", output, f ? e.message : "unknown format");
        pp_profile_free(prof);
        return PP_EXIT_FAIL;
    }
    rr.profile = *prof;
    snprintf(rr.output, sizeof(rr.output), "%s", output);
    pp_summary_print(stderr, &rr, 10);
    pp_profile_free(prof);
    if (st->failed)
        fprintf(stderr, "perfpy: %llu samples could not be folded (out of memory)\n",
                (unsigned long long)st->failed);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return WIFEXITED(status) ? WEXITSTATUS(status) : PP_EXIT_FAIL;
}

int main(int argc, char **argv)
{
    state st;
    pp_collector *c;
    pp_profile prof;
    pp_fold_opts fo = {0};
    char why[512];
    long rate;
    int go, status = 0;

    int attach;
    double duration;

    if (argc < 9 || (strcmp(argv[7], "--") != 0 && strcmp(argv[7], "-p") != 0)) {
        fprintf(stderr, "perfpy-sample is run by `perfpy record --mode sample`\n");
        return PP_EXIT_USAGE;
    }
    attach = strcmp(argv[7], "-p") == 0;
    duration = strtod(argv[6], NULL);
    memset(&st, 0, sizeof(st));
    rate = strtol(argv[3], NULL, 10);
    fo.no_native = strcmp(argv[5], "1") == 0;
    if (pp_pyoffsets_read(argv[4], &st.off) != 0) {
        fprintf(stderr, "perfpy: %s holds no structure offsets perfpy can use: rebuild "
                "perfpy (make)\n", argv[4]);
        return PP_EXIT_FAIL;
    }
    if (pp_collect_open(&c, (int)rate, why, sizeof(why)) != 0) {
        fprintf(stderr, "perfpy: sample mode cannot sample here (%s): it needs root, or the "
                "capabilities CAP_BPF and CAP_PERFMON, and a kernel with BPF and BTF; the "
                "trampoline modes work without them: --mode perf or --mode jit\n", why);
        return PP_EXIT_FAIL;
    }
    if (pp_profile_init(&prof) != 0 || pp_fold_open(&st.fold, &prof, &fo) != 0 ||
        pp_unwind_open(&st.u) != 0 || pp_splice_open(&st.sp, NULL) != 0) {
        fprintf(stderr, "perfpy: out of memory\n");
        return PP_EXIT_FAIL;
    }
    st.have_ks = pp_kallsyms_load(&st.ks) == 0;
    if (st.have_ks && !pp_kallsyms_usable(&st.ks)) {
        pp_kallsyms_free(&st.ks);       /* addresses hidden: it names nothing */
        st.have_ks = 0;
    }
    if (attach) {
        st.pid = (pid_t)strtol(argv[8], NULL, 10);
        fprintf(stderr, "perfpy: recording the process %d in sample mode (%ld Hz, BPF; "
                "nothing installed in it); Ctrl-C stops\n", (int)st.pid, rate);
        pp_collect_add(c, st.pid, &st.off, 0);
        follow(&st, c, duration);
        goto done;
    }
    signal(SIGINT, SIG_IGN);       /* the program gets Ctrl-C; it ends, then we do */
    if ((st.pid = start_program(argv + 8, &go)) < 0) {
        fprintf(stderr, "perfpy: cannot start %s: %s\n", argv[8], strerror(errno));
        return PP_EXIT_FAIL;
    }
    pp_collect_add(c, st.pid, &st.off, 0);
    if (write(go, "g", 1) != 1)
        kill(st.pid, SIGKILL);
    close(go);
    fprintf(stderr, "perfpy: recording %s in sample mode (%ld Hz, BPF; nothing installed "
            "in the program)\n", argv[8], rate);
    for (;;) {
        pid_t w = waitpid(st.pid, &status, WNOHANG);

        find_runtime(&st, c);
        pp_collect_poll(c, w == 0 ? 20 : 0, on_sample, &st);
        if (w == st.pid || (w < 0 && errno != EINTR))
            break;
    }
done:
    while (pp_collect_poll(c, 0, on_sample, &st) > 0)
        ;
    if (pp_collect_lost(c))
        fprintf(stderr, "perfpy: %llu samples lost (the ring buffer was full)\n",
                (unsigned long long)pp_collect_lost(c));
    pp_collect_close(c);
    pp_unwind_close(st.u);
    pp_splice_close(st.sp);
    return finish(&st, &prof, argv[1], argv[2], status);
}
