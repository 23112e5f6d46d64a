/*
 * perfpy record [options] -- python app.py ...
 * perfpy record [options] -p PID
 *
 * From a Python program to the profile people read, in one command: the
 * five-step perf workflow done right for the target interpreter.
 *
 *   perfpy record
 *     1. probe the interpreter: version, module built for it, frame pointers
 *     2. mode: perf map + frame-pointer call graphs if libpython keeps frame
 *        pointers, jitdump + DWARF call graphs otherwise (--mode to force)
 *     3. perf record -k 1 --no-bpf-event -B -e cpu-clock -F RATE --call-graph ...
 *          -- perfpy __exec --stderr-fd N -- python app.py
 *        with PYTHONPATH=<module dir> PERFPY=<mode> PERFPY_JITDUMP_DIR=<jit dir>
 *        PERFPY_LINES_DIR=<tmp>: the program and every Python child start
 *        the engine; dumps and line sidecars land in private directories
 *        (the dumps on a memory filesystem when one is at hand: see
 *        places.c)
 *     4. src/report: perf inject --jit (throw-away build-id dir), perf
 *        script (--no-inline unless --inline), fold, write the format; the
 *        summary on stderr
 *     5. remove what perfpy and the engine created (maps, dumps, jitted ELFs,
 *        the temporary directory) unless --keep; exit with the program's
 *        status
 *
 * perf's own stderr goes to a pipe so its errors can be explained (perf
 * missing, not permitted); the program keeps the real stderr: perfpy passes
 * it down as an inherited descriptor and `perfpy __exec` puts it back on fd 2
 * before exec'ing the program (same pid, no extra process).
 *
 * Nothing recorded is lost: if post-processing fails (output not writable,
 * disk full), the recording stays in its directory and the command to
 * finish it is printed.
 *
 * pp_cmd_record is a driver of named steps over one plan (heap-allocated:
 * it holds the report's result and a dozen paths):
 *
 *   choose ─► make_dirs ─► set_env ─► record ─► report ─► clean
 *   (perf,     (recording   (PYTHONPATH, (perf     (pp_report,  (maps, dumps,
 *    probe,     dir, where   PERFPY, the  record    summary)     directories)
 *    mode)      dumps go)    dirs)        + program)
 *
 * The options and --help live in record_options.c, the program's run in
 * record_run.c, the interpreter probe in interp.c, the directories in
 * places.c, `perfpy __exec` in cmd_exec.c.
 */
#include "cli.h"
#include "interp.h"
#include "mode.h"
#include "options.h"
#include "places.h"
#include "record.h"
#include "report/perf_data.h"
#include "report/perf_probe.h"
#include "report/perf_run.h"
#include "report/report.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- names ------------------------------------------------------------------- */

/* "app" for `python app.py`, "pkg" for `python -m pkg` (pp_fold_service_of),
 * the process's comm when attached, "host" for -a. */
static void program_stem(const pp_record_opts *o, char *buf, size_t cap)
{
    char comm[64] = "";

    if (o->host) {
        snprintf(buf, cap, "host");
        return;
    }
    if (o->pid) {
        char path[64];
        FILE *f;
        snprintf(path, sizeof(path), "/proc/%ld/comm", o->pid);
        f = fopen(path, "r");
        if (f && fgets(comm, sizeof(comm), f))
            comm[strcspn(comm, "\n")] = '\0';
        if (f)
            fclose(f);
        snprintf(buf, cap, "%s", comm[0] ? comm : "pid");
        return;
    }
    pp_fold_service_of(o->argv, buf, cap);
}

static void default_output(const pp_record_opts *o, char *buf, size_t cap)
{
    char stem[128], stamp[32];
    time_t t = time(NULL);
    struct tm tm;

    program_stem(o, stem, sizeof(stem));
    localtime_r(&t, &tm);
    strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
    if (o->format->recording)
        snprintf(buf, cap, "%s-%s.perf.data", stem, stamp);
    else
        snprintf(buf, cap, "%s-%s%s", stem, stamp, o->format->ext);
}

/* ---- the plan ------------------------------------------------------------- */

/* Where a recording's jit dumps (and so perf inject's ELFs) go. */
enum jit_place {
    JIT_HERE = 0,   /* the recording directory (or FILE.jit/ for -f perf) */
    JIT_MEMORY,     /* a private directory in /dev/shm, removed whole */
    JIT_TMP,        /* /tmp itself, for perf with libdw: only our files removed */
};

/* Everything one recording decides and holds, step after step. */
typedef struct plan {
    pp_record_opts o;
    pp_interp interp;            /* the target (known = 0 with -p, or not a Python) */
    pp_unwinder unwinder;
    pp_mode mode;                /* as mode.c decided: sample, read, perf or jit */
    int fp;                      /* frame-pointer call graphs (perf mode, kept by libpython) */
    enum jit_place jit_at;
    char perf[PATH_MAX], self[PATH_MAX], libdir[PATH_MAX], output[PATH_MAX];
    char dir[PATH_MAX];          /* the recording directory; "" until made */
    char data[PATH_MAX + 16];    /* <dir>/perf.data */
    char jitdir[PATH_MAX + 8];   /* where the dumps go */
    char keepdir[PATH_MAX + 8];  /* -f perf: FILE.jit/, what report needs later */
    int pid_r;                   /* the program's pid comes back on it; -1 none */
    pp_max_stack maxstack;
    run_state st;
    pp_report_result rr;
} plan;

/* Whether a Python command line names a script that does not exist:
 * python [options] SCRIPT ... with -c, -m or - meaning no script file.
 * Options that take a value: -X, -W, --check-hash-based-pycs. */
static int script_missing(char **argv)
{
    for (int i = 1; argv[i]; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-") == 0 || strcmp(a, "--") == 0)
            return 0;
        if (a[0] != '-')
            return access(a, F_OK) != 0;
        if (strcmp(a, "--check-hash-based-pycs") == 0) {
            i++;
            continue;
        }
        if (a[1] == '-')
            continue;                       /* --version, --help... */
        for (const char *c = a + 1; *c; c++) {
            if (*c == 'c' || *c == 'm')
                return 0;                   /* the rest is code or a module */
            if (*c == 'X' || *c == 'W') {
                if (!c[1])
                    i++;                    /* value in the next word */
                break;
            }
        }
        if (!argv[i])
            return 0;
    }
    return 0;
}

/* 0 when the program may be recorded (p->interp filled as far as known),
 * else the exit status after saying what is wrong. */
static int check_program(plan *p)
{
    const pp_interp *info = &p->interp;
    char why[PATH_MAX + 128];
    const char *name = p->o.argv[0];

    if (pp_interp_of_program(name, &p->interp) < 0)
        return pp_fail("cannot find '%s'%s (is the interpreter installed? give its "
                       "full path, e.g. /usr/bin/python3)", name,
                       strchr(name, '/') ? "" : " on PATH");
    if (!info->known)
        return 0;
    if (!pp_interp_supported(info, why, sizeof(why))) {
        fprintf(stderr, "perfpy: %s\n", why);           /* before anything runs */
        return PP_EXIT_USAGE;
    }
    if (!info->by_shebang && script_missing(p->o.argv)) {
        /* it cannot start: no recording, only its own error and status */
        fprintf(stderr, "perfpy: the program cannot start (no such script: see its own "
                "error below); nothing is recorded\n");
        fflush(stderr);
        return pp_exec(p->o.argv);
    }
    return 0;
}

/* Once its mode is decided (c): a program that is no Python is recorded
 * anyway, said; one that is needs perfpy's module of its version unless
 * sample mode was asked (sample mode reads the process from outside). 0,
 * or the exit status after saying what is wrong. */
static int check_module(plan *p, const pp_mode_choice *c)
{
    const pp_interp *info = &p->interp;
    char module[PATH_MAX + 128];

    if (!info->known) {
        fprintf(stderr, "perfpy: '%s' is neither a Python interpreter nor a script one "
                "runs; recording it anyway, in %s mode (every Python process it starts "
                "is profiled)\n", p->o.argv[0],
                pp_request_mode_name(p->o.mode == PP_MODE_HOOK ? PP_MODE_HOOK : c->mode));
        return 0;
    }
    if ((c->mode != PP_MODE_SAMPLE || c->chosen) &&
        pp_interp_module(info, p->libdir, module, sizeof(module)) < 0)
        return pp_fail("no perfpy module for Python %d.%d (%s is missing): build it with "
                       "`make PYTHONS=%s`", info->major, info->minor, module, info->path);
    return 0;
}

/* The profile can be written where -o says, checked before the program
 * runs (writing goes through a temporary file in the same directory, then
 * a rename: the directory must be writable). 0 or an exit status. */
static int check_output(const plan *p)
{
    char dir[PATH_MAX];
    const char *slash = strrchr(p->output, '/');
    struct stat st;

    if (strcmp(p->output, "-") == 0)
        return 0;
    if (stat(p->output, &st) == 0 && S_ISDIR(st.st_mode))
        return pp_fail("-o %s is a directory: name the file to write in it, e.g. -o "
                       "%s/profile%s", p->output, p->output, p->o.format->ext);
    if (!slash)
        snprintf(dir, sizeof(dir), ".");
    else if (slash == p->output)
        snprintf(dir, sizeof(dir), "/");
    else
        snprintf(dir, sizeof(dir), "%.*s", (int)(slash - p->output), p->output);
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return pp_fail("cannot write %s: the directory %s does not exist (create it, or "
                       "choose another -o)", p->output, dir);
    if (access(dir, W_OK | X_OK) != 0)
        return pp_fail("cannot write %s: the directory %s is not writable by this user "
                       "(choose another -o)", p->output, dir);
    return 0;
}

static int self_exe(char *buf, size_t cap)
{
    ssize_t n = readlink("/proc/self/exe", buf, cap - 1);

    if (n < 0)
        return -1;
    buf[n] = '\0';
    return 0;
}

/* The output's name (checked writable; --every's directory is made and
 * checked by the sampler). 0 or an exit status. */
static int output_name(plan *p)
{
    if (p->o.output)
        snprintf(p->output, sizeof(p->output), "%s", p->o.output);
    else if (p->o.every)
        snprintf(p->output, sizeof(p->output), "perfpy-profiles");
    else
        default_output(&p->o, p->output, sizeof(p->output));
    return p->o.every ? 0 : check_output(p);
}

/* What mode.c is told: what the options ask, and the target. sample and
 * read hold the sentences of what each mode cannot do of the options. */
static void ask_of(const plan *p, pp_usage sample_read[2], pp_mode_ask *a)
{
    pp_record_opts as_read = p->o;

    memset(a, 0, sizeof(*a));
    a->asked = p->o.mode;
    a->sample_only = p->o.host ? "-a" : p->o.async ? "--async" : p->o.event ? "-e" : NULL;
    a->sample_or_read = p->o.wall ? "--idle" : p->o.gil ? "--gil" : NULL;
    a->perf_only = pp__record_perf_only(&p->o);
    /* (in the words of the mode asked, as the parser says them) */
    if (pp__record_sample_refusal(&p->o, p->o.mode, &sample_read[0]) != PP_PARSED_RUN)
        a->sample_refused = sample_read[0].message;
    as_read.mode = PP_MODE_READ;
    if (pp__record_sample_refusal(&as_read, PP_MODE_READ, &sample_read[1]) != PP_PARSED_RUN)
        a->read_refused = sample_read[1].message;
    a->argv = p->o.argv;
    a->interp = &p->interp;
    a->pid = p->o.pid;
    a->engine = p->o.pid ? pp_places_engine_of(p->o.pid) : PP_ENGINE_NONE;
    a->libdir = p->libdir[0] ? p->libdir : NULL;
}

/* Step 1: perf, the target, the mode, the output's name. 0 or an exit status. */
static int choose(plan *p)
{
    pp_error err;
    pp_mode_choice c;
    pp_mode_ask a;
    pp_usage refused[2];
    int rc;

    if (self_exe(p->self, sizeof(p->self)) < 0)
        return pp_fail("cannot find perfpy's own executable: %s", strerror(errno));
    if (p->o.pid && kill((pid_t)p->o.pid, 0) != 0 && errno == ESRCH)
        return pp_fail("no process %ld (is it still running?)", p->o.pid);
    if (p->o.argv && pp_find_libdir(p->libdir, sizeof(p->libdir)) < 0)
        return PP_EXIT_FAIL;
    if (!p->o.argv && pp_find_libdir_quiet(p->libdir, sizeof(p->libdir)) != 0)
        p->libdir[0] = '\0';
    if (p->o.argv && (rc = check_program(p)) != 0)
        return rc;
    ask_of(p, refused, &a);
    if (pp_mode_resolve(&a, &c) != 0)
        return pp_fail("%s", c.why);
    if (p->o.argv && (rc = check_module(p, &c)) != 0)
        return rc;
    if (c.why[0])
        fprintf(stderr, "perfpy: %s\n", c.why);   /* the first line, before the program starts */
    p->mode = c.mode;
    if (p->mode == PP_MODE_SAMPLE || p->mode == PP_MODE_READ)   /* they need no perf */
        return output_name(p);
    if (pp_perf_find(NULL, p->perf, sizeof(p->perf), &err) < 0)
        return pp_fail_error(&err);
    p->unwinder = pp_perf_unwinder(p->perf);
    p->fp = p->mode == PP_MODE_PERF && p->interp.known && p->interp.frame_pointers;
    if (p->mode == PP_MODE_PERF && !p->fp && p->unwinder == PP_UNWIND_LIBDW)
        fprintf(stderr, "perfpy: warning: %s unwinds DWARF call graphs with libdw, which "
                "finds no frame in perf-map trampolines: with an interpreter without frame "
                "pointers this profile will name no Python function; --mode jit (or auto) "
                "gives whole Python stacks\n", p->perf);
    return output_name(p);
}

/* Step 2: the recording's own directory (perf.data, line sidecars) and the
 * one its dumps go to. 0 or an exit status. */
static int make_dirs(plan *p)
{
    const char *t = getenv("TMPDIR");
    char *abs;

    snprintf(p->dir, sizeof(p->dir), "%s/perfpy-record-XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(p->dir)) {
        pp_fail("cannot make a directory for the recording (%s): %s; set TMPDIR to a "
                "writable directory", p->dir, strerror(errno));
        p->dir[0] = '\0';
        return PP_EXIT_FAIL;
    }
    snprintf(p->data, sizeof(p->data), "%s/perf.data", p->dir);
    snprintf(p->jitdir, sizeof(p->jitdir), "%s", p->dir);
    if (p->o.format->recording) {
        /* FILE.jit/: the jitted ELFs (unless libdw needs them in /tmp) and
         * what `perfpy report FILE` needs for def lines */
        abs = realpath(".", NULL);
        if (p->output[0] == '/' || !abs)
            snprintf(p->keepdir, sizeof(p->keepdir), "%s.jit", p->output);
        else
            snprintf(p->keepdir, sizeof(p->keepdir), "%s/%s.jit", abs, p->output);
        free(abs);
        if (mkdir(p->keepdir, 0700) != 0 && errno != EEXIST)
            return pp_fail("cannot make %s for the jitted code: %s", p->keepdir,
                           strerror(errno));
    }
    if (p->o.argv && p->mode == PP_MODE_JIT && p->unwinder == PP_UNWIND_LIBDW) {
        /* libdw unwinds through perf inject's ELFs only under /tmp/jitted-
         * (perf_probe.h): the dumps go to /tmp itself, inject writes its
         * ELFs next to them, and only this recording's files are removed
         * (by pid, from the line sidecars; the ELFs by pp_report). */
        snprintf(p->jitdir, sizeof(p->jitdir), "%s", PP_LIBDW_JIT_DIR);
        p->jit_at = JIT_TMP;
        if (!pp_places_tmp_exec_ok())
            return pp_fail("%s unwinds with libdw, which reads jit mode's files only in "
                           "/tmp, and /tmp cannot hold executable mappings (mounted "
                           "noexec?): remount /tmp without noexec, or use a perf built with "
                           "libunwind, or an interpreter built with frame pointers "
                           "(--mode perf)", p->perf);
    } else if (p->o.format->recording) {
        /* perf report finds the jitted ELFs by the paths inject wrote:
         * they must outlive the recording directory. */
        snprintf(p->jitdir, sizeof(p->jitdir), "%s", p->keepdir);
    } else if (p->o.argv && p->mode == PP_MODE_JIT &&
               pp_places_memory_dir(p->dir, p->jitdir, sizeof(p->jitdir)) == 0) {
        p->jit_at = JIT_MEMORY;
    }
    return 0;
}

/* Step 3: the environment the program inherits through perf. */
static int set_env(plan *p)
{
    int rc = pp_exec_env_save();

    if (rc == 0)
        rc = pp_prepare_child_env(p->libdir, p->mode);
    if (rc < 0 || setenv("PERFPY_JITDUMP_DIR", p->jitdir, 1) != 0 ||
        setenv("PERFPY_LINES_DIR", p->dir, 1) != 0)
        return pp_fail("cannot set up the environment: %s", strerror(rc < 0 ? -rc : errno));
    return 0;
}

/* argv for perf record (calloc'ed, NULL-terminated), or NULL. Frame-pointer
 * call graphs only when the interpreter keeps frame pointers: otherwise perf
 * map mode still gets DWARF stacks up to the innermost Python function.
 * The numbers are written into num (4 slots of 32 bytes). */
static char **perf_argv(const plan *p, int stderr_fd, int pid_fd, char num[][32])
{
    const pp_record_opts *o = &p->o;
    size_t argc = 0;
    char **out;
    int n = 0;

    while (o->argv && o->argv[argc])
        argc++;
    if (!(out = calloc(argc + 40, sizeof(char *))))
        return NULL;
    out[n++] = (char *)p->perf;
    out[n++] = "record";
    out[n++] = "-q";
    out[n++] = "--no-bpf-event";
    /* -B: no build-id pass over the whole recording when perf stops and no
     * copy of every DSO into ~/.debug; the report reads the same files a
     * moment later. Format perf keeps its build ids (the file is for later)
     * but, with -N, still copies nothing into ~/.debug. */
    out[n++] = o->format->recording ? "-N" : "-B";
    out[n++] = "-k";
    out[n++] = "1";
    out[n++] = "-e";
    out[n++] = "cpu-clock";
    out[n++] = "-F";
    snprintf(num[0], 32, "%ld", o->rate);
    out[n++] = num[0];
    out[n++] = "--call-graph";
    if (p->fp)
        snprintf(num[1], 32, "fp");
    else
        snprintf(num[1], 32, "dwarf,%ld", o->stack_size);
    out[n++] = num[1];
    out[n++] = "-o";
    out[n++] = (char *)p->data;
    if (o->pid) {
        snprintf(num[2], 32, "%ld", o->pid);
        out[n++] = "-p";
        out[n++] = num[2];
        return out;
    }
    out[n++] = "--";
    out[n++] = (char *)p->self;
    out[n++] = "__exec";
    out[n++] = "--stderr-fd";
    snprintf(num[2], 32, "%d", stderr_fd);
    out[n++] = num[2];
    if (pid_fd >= 0) {
        snprintf(num[3], 32, "%d", pid_fd);
        out[n++] = "--pid-fd";
        out[n++] = num[3];
    }
    out[n++] = "--";
    for (size_t i = 0; i < argc; i++)
        out[n++] = o->argv[i];
    return out;
}

/* Starts perf with the program under it; 0 or an exit status. */
static int start(plan *p)
{
    char num[4][32];
    char **argv;
    int saved_stderr, pid_w = -1, rc;

    saved_stderr = fcntl(2, F_DUPFD, 10);   /* no CLOEXEC: perf passes it down */
    if (saved_stderr < 0)
        return pp_fail("cannot duplicate stderr: %s", strerror(errno));
    if (!p->o.argv || pp__record_watch_program(&p->pid_r, &pid_w) != 0)
        p->pid_r = pid_w = -1;
    argv = perf_argv(p, saved_stderr, pid_w, num);
    fprintf(stderr, "perfpy: recording %s in %s mode (%ld Hz, %s call graphs)%s\n",
            p->o.pid ? "the process" : p->o.argv[0], pp_request_mode_name(p->mode), p->o.rate,
            p->fp ? "frame-pointer" : "DWARF", p->o.pid ? "; Ctrl-C stops" : "");
    if (p->fp)
        pp__record_raise_max_stack(&p->maxstack);
    rc = argv ? pp__record_start_perf(argv, &p->st) : -ENOMEM;
    close(saved_stderr);
    if (pid_w >= 0)
        close(pid_w);
    free(argv);
    if (rc == 0)
        return 0;
    pp__record_restore_max_stack(&p->maxstack);
    if (rc == -ENOMEM)
        return pp_fail("out of memory");
    if (rc == -ENOENT || rc == -EACCES)
        return pp_fail("cannot run perf (%s); install it: apt-get install linux-perf "
                       "(Debian) or linux-tools-$(uname -r) (Ubuntu)", strerror(-rc));
    return pp_fail("cannot start perf: %s", strerror(-rc));
}

/* A recording without a sample makes no profile: said in the words of what
 * happened (an idle process, a program that used no CPU), not as a perf
 * failure, and nothing is kept. 0 when there are samples, else the exit
 * status: the program's own when it failed, 1 otherwise. */
static int nothing_sampled(plan *p)
{
    pp_perf_data_info info;
    int status;

    memset(&info, 0, sizeof(info));
    if (pp_perf_data_scan(p->data, &info) != 0 || !info.scanned || info.samples)
        return 0;
    pp_summary_no_samples(stderr, p->o.pid, p->st.seconds);
    status = p->o.pid || p->st.by_duration ? 0 : pp__record_program_status(&p->st);
    return status ? status : PP_EXIT_FAIL;
}

/* Step 4: perf and the program, to their end. 0 or an exit status. */
static int record(plan *p)
{
    run_state *st = &p->st;
    struct stat sb;
    uint64_t finished;
    int rc = start(p);

    if (rc != 0)
        return rc;
    pp__record_supervise(st, p->o.duration, p->o.grace, p->pid_r);
    close(st->err_fd);
    pp__record_wait_program(st, p->pid_r);
    /* after the program: events perf opened stay on it (inherited) and keep
     * the setting busy until it ends, even when perf died first */
    pp__record_restore_max_stack(&p->maxstack);
    if (p->pid_r >= 0)
        close(p->pid_r);
    if (pp_perf_data_finish(p->data, &finished) == 0 && finished)
        fprintf(stderr, "perfpy: perf did not finish %s; its %.1f MB of whole records are "
                "used as they are\n", p->data, (double)finished / 1e6);
    if (stat(p->data, &sb) != 0 || sb.st_size == 0 ||
        (st->err_len && !st->stopped && !st->perf_died && strstr(st->err, "Workload failed"))) {
        pp__record_explain_failure(st);
        return PP_EXIT_FAIL;
    }
    pp__record_describe_end(st, pp__record_program_status(st));
    return nothing_sampled(p);
}

/* Where the dumps are when they are not in the recording directory. */
static const char *dumps_at(const plan *p)
{
    return p->jit_at == JIT_MEMORY ? p->jitdir :
           p->jit_at == JIT_TMP ? "/tmp/jit-<pid>.dump" : "";
}

/* Step 5: the profile. Ctrl-C here abandons it but keeps the recording
 * (perf inject and perf script take the same Ctrl-C and stop early, exit 0:
 * what they wrote would be a profile of part of the recording). */
static int report(plan *p)
{
    pp_report_opts ro = {
        .input = p->data, .format = p->o.format, .output = p->output,
        .no_native = p->o.no_native, .keep = p->o.keep, .lines_dir = p->dir,
        .perf = p->perf, .inline_frames = p->o.inline_frames,
        .progress = pp_progress_on_stderr(0),
        .no_inject = p->mode == PP_MODE_PERF,
        .processes = p->o.processes, .show_perfpy = p->o.show_perfpy,
        .threads = p->o.threads_split ? PP_THREAD_ROOTS_SPLIT : p->o.threads,
    };
    int rc = pp_report(&ro, &p->rr);

    if (p->rr.warning[0])
        fprintf(stderr, "perfpy: warning: %s\n", p->rr.warning);
    if (rc < 0)
        pp_fail_error(&p->rr.err);
    if (pp__record_stop) {
        if (rc == 0 && strcmp(p->output, "-") != 0)
            unlink(p->output);
        fprintf(stderr, "perfpy: interrupted while making the profile: %s is not written\n",
                p->output);
        rc = -EINTR;
    }
    if (rc < 0) {
        /* perf-map mode: perf script names the trampolines from the maps in
         * /tmp, so they stay with the recording, and the user is told */
        fprintf(stderr, "perfpy: the recording is kept: %s%s%s%s%s\n"
                "perfpy: write the profile once the problem is fixed with:\n"
                "  perfpy report -f %s -o %s %s\n", p->dir,
                p->jit_at ? " (its jit dumps: " : "", dumps_at(p), p->jit_at ? ")" : "",
                p->mode == PP_MODE_PERF ? " (with the /tmp/perf-<pid>.map of each of "
                "its processes, which that command reads: remove them after it)" : "",
                p->o.format->name, p->output, p->data);
        return PP_EXIT_FAIL;
    }
    p->rr.verbose = p->o.verbose;
    pp_summary_print(stderr, &p->rr, 10);
    pp__record_explain_truncation(&p->rr.profile, p->fp, p->o.stack_size, &p->maxstack);
    return 0;
}

static void say_kept(const char *path)
{
    fprintf(stderr, "perfpy: kept %s\n", path);
}

/* Step 6, after a profile: the maps (kept for -f perf: perf report names
 * the trampolines from them later), the dumps, the directories. */
/* The files in /tmp of the processes this recording started, in every
 * mode: the engine's, and those CPython's own switches passed to the
 * program write (-X perf's map, -X perf_jit's dump; perfpy took over). */
static void remove_tmp(plan *p, const char *fmt)
{
    char path[64];

    pp_places_remove_per_process(p->dir, fmt);
    /* the program itself, also where perfpy's engine wrote nothing (its
     * dump refused: CPython's -X perf_jit had /tmp/jit-<pid>.dump) */
    if (p->st.program > 0) {
        snprintf(path, sizeof(path), fmt, (int)p->st.program);
        unlink(path);
    }
}

static void clean(plan *p)
{
    int keep_maps = p->mode == PP_MODE_PERF && p->o.format->recording;

    if (p->keepdir[0] &&
        pp_places_keep_per_process(p->dir, p->jit_at == JIT_TMP ? "/tmp/jit-%d.dump" : NULL,
                                   p->keepdir) < 0)
        fprintf(stderr, "perfpy: could not copy the def lines (perfpy-<pid>.lines, "
                "jit-<pid>.dump) into %s: `perfpy report %s` names functions without "
                "them\n", p->keepdir, p->output);
    if (keep_maps && !p->o.pid) {
        pp_places_per_process(p->dir, "/tmp/perf-%d.map", say_kept);
        fprintf(stderr, "perfpy: `perf report -i %s` reads the kept perf maps (remove "
                "them when done)\n", p->output);
    } else if (!p->o.pid) {
        remove_tmp(p, "/tmp/perf-%d.map");
    }
    if (p->o.keep) {
        fprintf(stderr, "perfpy: recording and intermediate files kept in %s%s%s\n", p->dir,
                p->jit_at ? " and " : "", dumps_at(p));
        return;
    }
    if (!p->o.pid)
        remove_tmp(p, "/tmp/jit-%d.dump");
    pp_places_remove_tree(p->dir);
    if (p->jit_at == JIT_MEMORY)
        pp_places_remove_tree(p->jitdir);
}

/* After a failure before the profile: everything this recording made. */
static void clean_early(plan *p)
{
    if (!p->dir[0])
        return;
    if (p->o.argv) {
        remove_tmp(p, "/tmp/perf-%d.map");
        remove_tmp(p, "/tmp/jit-%d.dump");
    }
    pp_places_remove_tree(p->dir);
    if (p->jit_at == JIT_MEMORY)
        pp_places_remove_tree(p->jitdir);
    if (p->keepdir[0])
        rmdir(p->keepdir);      /* only if empty: FILE.jit/ may have been the user's */
}

int pp_cmd_record(int argc, char **argv)
{
    struct sigaction sa = {.sa_sigaction = pp__record_on_stop, .sa_flags = SA_SIGINFO},
                     old_int, old_term;
    pp_usage u;
    plan *p = calloc(1, sizeof(*p));
    int rc;

    if (!p)
        return pp_fail("out of memory");
    /* the program gets the signals perfpy got (cmd_exec.c); perfpy itself
     * survives a closed stdout or stderr (`... 2>&1 | head`): what it
     * recorded is still made into the profile and cleaned up */
    pp_exec_signals_capture();
    signal(SIGPIPE, SIG_IGN);
    p->pid_r = -1;
    p->maxstack = (pp_max_stack){.before = -1, .now = -1};
    rc = pp_parsed("record", pp_record_parse(argc, argv, &p->o, &u), &u, pp__record_help);
    if (rc < 0 && p->o.list_events) {
        rc = pp__record_list_events(stdout);
        if (rc == PP_EXIT_OK)
            rc = pp_close_stdout();     /* a full disk is an error, not a short list */
        goto out;
    }
    if (rc >= 0 || (rc = choose(p)) != 0)
        goto out;
    if (p->mode == PP_MODE_SAMPLE || p->mode == PP_MODE_READ) {
        rc = pp__record_sampler(&p->o, p->mode, &p->interp, p->libdir, sizeof(p->libdir),
                                p->output);
        goto out;
    }
    if ((rc = make_dirs(p)) != 0 || (p->o.argv && (rc = set_env(p)) != 0)) {
        clean_early(p);
        goto out;
    }
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    rc = record(p);
    if (p->st.stopped)
        pp__record_end_tree(p->o.grace);    /* nothing of it outlives perfpy */
    pp__record_stop = 0;
    if (rc == 0)
        rc = report(p);      /* a failure keeps the recording */
    else
        clean_early(p);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (rc == 0) {
        clean(p);
        rc = p->st.by_duration ? PP_EXIT_OK : pp__record_program_status(&p->st);
    }
    pp_report_result_free(&p->rr);
out:
    free(p);
    return rc;
}
