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
 *        memory_dir)
 *     4. report.c: perf inject --jit (throw-away build-id dir), perf script
 *        --no-inline, fold, write the format; summary on stderr
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
 */
#include "cli.h"
#include "options.h"
#include "report/perf_data.h"
#include "report/perf_probe.h"
#include "report/perf_run.h"
#include "report/spawn.h"
#include "report/report.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_RATE 399
#define TMPFS_MAGIC_ 0x01021994          /* statfs f_type of tmpfs (linux/magic.h) */
#define MEMORY_DIR_MIN_FREE (1ull << 30) /* room for ~200,000 functions' files */
#define DEFAULT_STACK 32768
#define MAX_STACK 65528

static void help(FILE *out)
{
    fprintf(out,
            "usage: perfpy record [options] [--] PROGRAM [ARGS...]\n"
            "       perfpy record [options] -p PID\n"
            "\n"
            "Profile a Python program with perf and write a profile: Python functions\n"
            "(qualname (file:line)), C extensions, libc and the kernel in one stack, on\n"
            "every CPython from 3.8. The program needs no change; children (fork,\n"
            "multiprocessing, subprocess running Python) are profiled too. A summary goes\n"
            "to stderr; the exit status is the program's.\n"
            "\n"
            "options:\n"
            "  -o, --output FILE     where to write (default: <program>-<timestamp>.<ext>\n"
            "                        in the current directory)\n"
            "  -f, --format FORMAT   flamegraph (default; interactive .svg), html (flame\n"
            "                        graph + sortable table), speedscope (.speedscope.json),\n"
            "                        pprof (.pb.gz), collapsed (.txt), perf (injected\n"
            "                        perf.data for perf report/Hotspot; its jitted ELFs are\n"
            "                        kept in FILE.jit/)\n"
            "  -r, --rate HZ         samples per second per busy thread (default: %d;\n"
            "                        with the default stack size a 60-second recording of\n"
            "                        one busy thread is about 0.8 GB)\n"
            "  -d, --duration SECS   stop after SECS seconds (the program is then\n"
            "                        terminated; default: until the program exits or Ctrl-C)\n"
            "  -p, --pid PID         attach to a running process whose perfpy engine is\n"
            "                        already active (PERFPY=jit or -X perf_jit); stop with\n"
            "                        Ctrl-C or --duration (default: none; start PROGRAM)\n"
            "      --mode MODE       auto (default): perf map + frame pointers when the\n"
            "                        interpreter keeps frame pointers, else jit; perf:\n"
            "                        names from /tmp/perf-<pid>.map (without frame\n"
            "                        pointers, stacks stop at the innermost Python\n"
            "                        function with a perf using libunwind, and name no\n"
            "                        Python function with one using libdw, as perf 7\n"
            "                        does); jit: jitdump + DWARF unwinding, whole\n"
            "                        stacks without frame pointers\n"
            "      --stack-size BYTES  stack copied per sample for DWARF unwinding, a\n"
            "                        multiple of 8 up to %d (default: %d, about 60\n"
            "                        Python frames on 3.8-3.13, 30 on 3.14+)\n"
            "      --native          keep C, libc and kernel frames (default)\n"
            "      --no-native       Python frames only (default: off)\n"
            "      --inline          keep C functions the compiler inlined (shown as\n"
            "                        'name (inlined)'); slower: perf then runs addr2line\n"
            "                        for every library and Python function sampled\n"
            "                        (default: off)\n"
            "      --keep            keep the recording and intermediate files (the\n"
            "                        directory is printed; default: all removed)\n"
            "  -h, --help            this help\n"
            "\n"
            "environment:\n"
            "  PERF                  the perf executable (default: perf on PATH)\n"
            "  TMPDIR                where the recording directory goes (default: /tmp;\n"
            "                        then, in jit mode, if /tmp is on disk and /dev/shm is\n"
            "                        a memory filesystem with 1 GiB free, the dumps and\n"
            "                        the files perf inject makes from them go to /dev/shm;\n"
            "                        with a perf that unwinds with libdw they go to /tmp\n"
            "                        itself, the only place its unwinder reads them, and\n"
            "                        only this recording's files are removed)\n"
            "\n"
            "exit status:\n"
            "  the program's own (0 when --duration or Ctrl-C stopped it); 1 if perfpy\n"
            "  or perf failed; 2 for a usage error\n"
            "\n"
            "examples:\n"
            "  perfpy record -- python app.py\n"
            "  perfpy record -f html -o app.html -r 999 -- python -m mypackage\n",
            DEFAULT_RATE, MAX_STACK, DEFAULT_STACK);
}

/* ---- the target interpreter ------------------------------------------------ */

typedef struct interp_info {
    int known;                   /* the probe ran and said what it is */
    int major, minor;
    int cpython;
    int frame_pointers;
    char ext_suffix[64];
    char path[PATH_MAX];
} interp_info;

/* Resolves name like execvp would; 0 or -1. */
static int which(const char *name, char *buf, size_t cap)
{
    const char *path = getenv("PATH");

    if (strchr(name, '/')) {
        if (access(name, X_OK) != 0)
            return -1;
        snprintf(buf, cap, "%s", name);
        return 0;
    }
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        const char *end = strchr(path, ':');
        size_t n = end ? (size_t)(end - path) : strlen(path);
        struct stat st;
        snprintf(buf, cap, "%.*s/%s", (int)n, n ? path : ".", name);
        if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
            return 0;
        path += n + (end ? 1 : 0);
    }
    return -1;
}

/* For a script with a "#!" line, the interpreter it names (env resolved). */
static void shebang_interpreter(const char *path, char *buf, size_t cap)
{
    char line[PATH_MAX], *p, *word;
    FILE *f = fopen(path, "r");

    buf[0] = '\0';
    if (!f)
        return;
    if (!fgets(line, sizeof(line), f) || strncmp(line, "#!", 2) != 0) {
        fclose(f);
        return;
    }
    fclose(f);
    p = line + 2;
    p[strcspn(p, "\r\n")] = '\0';
    word = strtok(p, " \t");
    if (word && strcmp(word, "/usr/bin/env") == 0) {
        word = strtok(NULL, " \t");
        while (word && word[0] == '-')
            word = strtok(NULL, " \t");
        if (!word || which(word, buf, cap) != 0)
            buf[0] = '\0';
    } else if (word) {
        snprintf(buf, cap, "%s", word);
    }
    /* Only a Python is asked the probe's questions: `sh -S -c <code>` and
     * the like would run the probe as a shell command. */
    p = strrchr(buf, '/');
    if (!strstr(p ? p + 1 : buf, "python"))
        buf[0] = '\0';
}

static const char probe_code[] =
    "import sys, sysconfig\n"
    "v = sys.version_info\n"
    "flags = ' '.join(str(sysconfig.get_config_var(k) or '') for k in "
    "('CFLAGS', 'PY_CFLAGS', 'PY_CFLAGS_NODIST', 'CONFIGURE_CFLAGS'))\n"
    "print(sys.implementation.name, v[0], v[1], sysconfig.get_config_var('EXT_SUFFIX'),"
    " int('-fno-omit-frame-pointer' in flags))\n";

/* Runs `python -c probe_code`; fills info when it answers. */
static void probe_interpreter(const char *exe, interp_info *info)
{
    int pipefd[2];
    pid_t pid;
    char out[512];
    ssize_t n = 0, got;
    int status;
    char impl[32];

    if (pipe2(pipefd, O_CLOEXEC) != 0)
        return;
    pid = fork();
    if (pid == 0) {
        int devnull = open("/dev/null", O_RDWR);
        dup2(pipefd[1], 1);
        if (devnull >= 0) {
            dup2(devnull, 0);
            dup2(devnull, 2);
        }
        unsetenv("PYTHONPATH");
        unsetenv("PYTHONSTARTUP");
        execl(exe, exe, "-S", "-c", probe_code, (char *)NULL);
        _exit(127);
    }
    close(pipefd[1]);
    while (pid > 0 && n < (ssize_t)sizeof(out) - 1 &&
           (got = read(pipefd[0], out + n, sizeof(out) - 1 - (size_t)n)) != 0) {
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            break;
        n += got;
    }
    close(pipefd[0]);
    if (pid < 0)
        return;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    out[n] = '\0';
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return;
    if (sscanf(out, "%31s %d %d %63s %d", impl, &info->major, &info->minor,
               info->ext_suffix, &info->frame_pointers) == 5) {
        info->known = 1;
        info->cpython = strcmp(impl, "cpython") == 0;
        snprintf(info->path, sizeof(info->path), "%s", exe);
    }
}

/* 0 when the program may be recorded (info filled as far as known), else
 * exit status after saying what is wrong. */
static int check_program(char **argv, const char *libdir, interp_info *info)
{
    char exe[PATH_MAX], interp[PATH_MAX], module[PATH_MAX + 128];

    memset(info, 0, sizeof(*info));
    if (which(argv[0], exe, sizeof(exe)) != 0)
        return pp_fail("cannot find '%s'%s (is the interpreter installed? give its "
                       "full path, e.g. /usr/bin/python3)", argv[0],
                       strchr(argv[0], '/') ? "" : " on PATH");
    probe_interpreter(exe, info);
    if (!info->known) {
        shebang_interpreter(exe, interp, sizeof(interp));
        if (interp[0])
            probe_interpreter(interp, info);
    }
    if (!info->known) {
        fprintf(stderr, "perfpy: '%s' does not answer as a Python interpreter; recording "
                "it anyway (the Python processes it starts are profiled)\n", argv[0]);
        return 0;
    }
    if (!info->cpython)
        return pp_fail("%s is not CPython; perfpy supports CPython 3.8 to 3.15", info->path);
    if (info->major != 3 || info->minor < 8)
        return pp_fail("%s is Python %d.%d; perfpy supports CPython 3.8 to 3.15 (use a "
                       "newer interpreter)", info->path, info->major, info->minor);
    snprintf(module, sizeof(module), "%s/perfpy%s", libdir, info->ext_suffix);
    if (access(module, R_OK) != 0)
        return pp_fail("no perfpy module for Python %d.%d (%s is missing): build it with "
                       "`make PYTHONS=%s`", info->major, info->minor, module, info->path);
    return 0;
}

/* ---- options ---------------------------------------------------------------- */

int pp_record_parse(int argc, char **argv, pp_record_opts *o, pp_usage *u)
{
    enum { OPT_MODE = 256, OPT_STACK, OPT_NATIVE, OPT_NO_NATIVE, OPT_KEEP, OPT_INLINE };
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'},
        {"format", required_argument, NULL, 'f'},
        {"rate", required_argument, NULL, 'r'},
        {"duration", required_argument, NULL, 'd'},
        {"pid", required_argument, NULL, 'p'},
        {"mode", required_argument, NULL, OPT_MODE},
        {"stack-size", required_argument, NULL, OPT_STACK},
        {"native", no_argument, NULL, OPT_NATIVE},
        {"no-native", no_argument, NULL, OPT_NO_NATIVE},
        {"keep", no_argument, NULL, OPT_KEEP},
        {"inline", no_argument, NULL, OPT_INLINE},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    char *end;
    int c;

    memset(o, 0, sizeof(*o));
    o->rate = DEFAULT_RATE;
    o->mode = "auto";
    o->stack_size = DEFAULT_STACK;
    pp_getopt_reset();
    while ((c = getopt_long(argc, argv, "+:o:f:r:d:p:h", opts, NULL)) != -1) {
        switch (c) {
        case 'o':
            o->output = optarg;
            break;
        case 'f':
            o->format = pp_format_find(optarg);
            if (!o->format)
                return pp_usage_set(u, "unknown format '%s' (one of: %s)", optarg,
                                      pp_format_names());
            break;
        case 'r':
            if (pp_parse_long(optarg, 1, 100000, &o->rate) < 0)
                return pp_usage_set(u, "--rate takes a whole number of samples "
                                      "per second from 1 to 100000, not '%s'", optarg);
            break;
        case 'd':
            errno = 0;
            o->duration = strtod(optarg, &end);
            if (errno || end == optarg || *end || !(o->duration > 0) || o->duration > 1e7)
                return pp_usage_set(u, "--duration takes a positive number of "
                                      "seconds, not '%s'", optarg);
            break;
        case 'p':
            if (pp_parse_long(optarg, 1, 1L << 30, &o->pid) < 0)
                return pp_usage_set(u, "--pid takes a process id, not '%s'", optarg);
            break;
        case OPT_MODE:
            if (strcmp(optarg, "auto") && strcmp(optarg, "perf") && strcmp(optarg, "jit"))
                return pp_usage_set(u, "--mode must be auto, perf or jit, not '%s'",
                                      optarg);
            o->mode = optarg;
            break;
        case OPT_STACK:
            if (pp_parse_long(optarg, 8, MAX_STACK, &o->stack_size) < 0 || o->stack_size % 8)
                return pp_usage_set(u, "--stack-size takes a multiple of 8 from 8 "
                                      "to %d bytes, not '%s'", MAX_STACK, optarg);
            break;
        case OPT_NATIVE:
            o->no_native = 0;
            break;
        case OPT_NO_NATIVE:
            o->no_native = 1;
            break;
        case OPT_KEEP:
            o->keep = 1;
            break;
        case OPT_INLINE:
            o->inline_frames = 1;
            break;
        case 'h':
            return PP_PARSED_HELP;
        default:
            return pp_getopt_error(c, argc, argv, u);
        }
    }
    if (optind < argc)
        o->argv = argv + optind;
    if (!o->argv && !o->pid)
        return pp_usage_set(u, "no program given (perfpy record -- python app.py, "
                              "or -p PID)");
    if (o->argv && o->pid)
        return pp_usage_set(u, "give a program or --pid, not both");
    if (!o->format)
        o->format = pp_format_find("flamegraph");
    return PP_PARSED_RUN;
}

/* ---- names ------------------------------------------------------------------- */

/* "app" for `python app.py`, "pkg" for `python -m pkg`, else the command. */
static void program_stem(const pp_record_opts *o, char *buf, size_t cap)
{
    const char *name = NULL, *slash, *dot;
    char comm[64] = "";

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
    for (int i = 1; o->argv[i]; i++) {
        const char *a = o->argv[i];
        if (strcmp(a, "-m") == 0 && o->argv[i + 1]) {
            name = o->argv[i + 1];
            break;
        }
        if (strcmp(a, "-c") == 0)
            break;
        if (a[0] != '-') {
            name = a;
            break;
        }
        if ((strcmp(a, "-X") == 0 || strcmp(a, "-W") == 0) && o->argv[i + 1])
            i++;
    }
    if (!name)
        name = o->argv[0];
    slash = strrchr(name, '/');
    name = slash && slash[1] ? slash + 1 : name;
    dot = strrchr(name, '.');
    if (dot && strcmp(dot, ".py") == 0)
        snprintf(buf, cap, "%.*s", (int)(dot - name), name);
    else
        snprintf(buf, cap, "%s", name);
}

static void default_output(const pp_record_opts *o, char *buf, size_t cap)
{
    char stem[128], stamp[32];
    time_t t = time(NULL);
    struct tm tm;

    program_stem(o, stem, sizeof(stem));
    localtime_r(&t, &tm);
    strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
    if (strcmp(o->format->name, "perf") == 0)
        snprintf(buf, cap, "%s-%s.perf.data", stem, stamp);
    else
        snprintf(buf, cap, "%s-%s%s", stem, stamp, o->format->ext);
}

/* ---- running perf ------------------------------------------------------------- */

static volatile sig_atomic_t stop_requested;
static void on_stop(int sig)
{
    (void)sig;
    stop_requested = 1;
}

typedef struct run_state {
    pid_t perf;
    int err_fd;                  /* perf's stderr, read end */
    char err[16384];             /* the last bytes perf wrote on stderr */
    size_t err_len;
    int status;                  /* perf's wait status, then the program's */
    int stopped;                 /* perfpy stopped perf (duration, Ctrl-C) */
    int perf_died;               /* perf ended before the program */
    pid_t program;               /* its pid, as `perfpy __exec` told; 0 unknown */
    double seconds;
} run_state;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void keep_err(run_state *st, const char *buf, size_t n)
{
    if (n >= sizeof(st->err)) {
        buf += n - (sizeof(st->err) - 1);
        n = sizeof(st->err) - 1;
    }
    if (st->err_len + n >= sizeof(st->err)) {
        size_t drop = st->err_len + n - (sizeof(st->err) - 1);
        memmove(st->err, st->err + drop, st->err_len - drop);
        st->err_len -= drop;
    }
    memcpy(st->err + st->err_len, buf, n);
    st->err_len += n;
    st->err[st->err_len] = '\0';
}

static void status_line(double elapsed, int done)
{
    if (done)
        fprintf(stderr, "\r\033[K");
    else
        fprintf(stderr, "\r\033[Kperfpy: recording %.1f s (Ctrl-C stops and writes the "
                "profile)", elapsed);
    fflush(stderr);
}

/* Waits for perf, reading its stderr, stopping it on Ctrl-C or after the
 * duration, drawing the status line on a terminal. */
static void supervise(run_state *st, double duration)
{
    double t0 = now_s(), next_draw = t0 + 1.0;
    int live = isatty(2), drawn = 0, open_err = 1, sent = 0;

    for (;;) {
        struct pollfd p = {st->err_fd, POLLIN, 0};
        double now = now_s();
        int r, status;

        if (!sent && (stop_requested || (duration > 0 && now - t0 >= duration))) {
            kill(st->perf, SIGINT);
            st->stopped = 1;
            sent = 1;
        }
        if (waitpid(st->perf, &status, WNOHANG) == st->perf) {
            st->status = status;
            break;
        }
        r = open_err ? poll(&p, 1, 100) : poll(NULL, 0, 100);
        if (r > 0 && open_err) {
            char buf[4096];
            ssize_t n = read(st->err_fd, buf, sizeof(buf));
            if (n > 0)
                keep_err(st, buf, (size_t)n);
            else if (n == 0 || (errno != EINTR && errno != EAGAIN))
                open_err = 0;
        }
        if (live && now_s() >= next_draw) {
            status_line(now_s() - t0, 0);
            drawn = 1;
            next_draw += 0.5;
        }
    }
    for (;;) {   /* what perf wrote just before exiting */
        char buf[4096];
        ssize_t n = open_err ? read(st->err_fd, buf, sizeof(buf)) : 0;
        if (n <= 0)
            break;
        keep_err(st, buf, (size_t)n);
    }
    if (drawn)
        status_line(0, 1);
    st->seconds = now_s() - t0;
}

static int start_perf(char **argv, run_state *st)
{
    int pipefd[2];

    if (pipe2(pipefd, O_CLOEXEC) != 0)
        return -errno;
    st->perf = fork();
    if (st->perf < 0) {
        int err = -errno;
        close(pipefd[0]);
        close(pipefd[1]);
        return err;
    }
    if (st->perf == 0) {
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        dup2(pipefd[1], 2);
        execvp(argv[0], argv);
        fprintf(stderr, "perfpy-exec-failed: %s\n", strerror(errno));
        _exit(127);
    }
    close(pipefd[1]);
    st->err_fd = pipefd[0];
    return 0;
}

/* Why perf could not record, in words that say what to do. */
static void explain_perf_failure(const run_state *st)
{
    const char *e = st->err;

    if (strstr(e, "perfpy-exec-failed"))
        pp_fail("cannot run perf (%s); install it: apt-get install linux-perf "
                "(Debian) or linux-tools-$(uname -r) (Ubuntu)", strstr(e, ": ") ? strstr(e, ": ") + 2 : e);
    else if (pp_perf_refused(e)) {
        char advice[1024];
        pp_perf_refused_advice(advice, sizeof(advice));
        pp_fail("perf is not permitted to record: %s. Check with `perfpy doctor`.", advice);
    }
    else if (strstr(e, "clockid") || strstr(e, "use_clockid"))
        pp_fail("this perf cannot timestamp with CLOCK_MONOTONIC (-k 1), which jit "
                "mode needs; upgrade perf, or use --mode perf. perf said:\n%s", e);
    else
        pp_fail("perf record failed. perf said:\n%s", e[0] ? e : "(nothing)");
}

/* ---- the program's environment -------------------------------------------------- */

/* perf puts its own directories first on the workload's PATH
 * (/usr/lib/perf-core, and /usr/bin when run as /usr/bin/perf: ahead of a
 * venv's or pyenv's python3) and sets PREFIX, PERF_BUILDID_DIR and
 * DEBUGINFOD_URLS. record saves these as perfpy found them in
 * PERFPY_EXEC_ENV ("NAME=value" or "NAME" for unset, one a line) and
 * `perfpy __exec` puts them back before running the program, so that
 * `python3` is the one the user's shell would run. */
static const char *const perf_sets[] = {"PATH", "PREFIX", "PERF_BUILDID_DIR", "DEBUGINFOD_URLS"};
#define N_PERF_SETS (sizeof(perf_sets) / sizeof(perf_sets[0]))

static int save_env_for_exec(void)
{
    char buf[65536];
    size_t n = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < N_PERF_SETS; i++) {
        const char *v = getenv(perf_sets[i]);
        int w;
        if (v && strchr(v, '\n'))
            continue;                   /* not representable: perf's value stays */
        w = snprintf(buf + n, sizeof(buf) - n, v ? "%s=%s\n" : "%s\n", perf_sets[i], v);
        if (w < 0 || (size_t)w >= sizeof(buf) - n)
            return -ENAMETOOLONG;
        n += (size_t)w;
    }
    return setenv("PERFPY_EXEC_ENV", buf, 1) == 0 ? 0 : -errno;
}

static void restore_env_for_exec(void)
{
    const char *saved = getenv("PERFPY_EXEC_ENV");
    char *copy = saved ? strdup(saved) : NULL, *line, *next;

    unsetenv("PERFPY_EXEC_ENV");
    for (line = copy; line && *line; line = next) {
        char *eq;
        next = strchr(line, '\n');
        if (!next)
            break;
        *next++ = '\0';
        eq = strchr(line, '=');
        if (eq)
            *eq = '\0';
        for (size_t i = 0; i < N_PERF_SETS; i++) {
            if (strcmp(line, perf_sets[i]) != 0)
                continue;
            if (eq)
                setenv(line, eq + 1, 1);
            else
                unsetenv(line);
        }
    }
    free(copy);
}

/* perf and the program: perfpy is a child subreaper, so when perf ends
 * first (killed, or crashed) the program becomes perfpy's child instead of
 * init's. It then goes on to its end, perfpy waits for it and passes its
 * status on, and what perf wrote is finished (pp_perf_data_finish) and
 * reported. A program that ended with perf is reaped here too, so its own
 * status is known (perf's mimics it). */
static int watch_program(int *r, int *w)
{
    int fds[2];

    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0 || pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0)
        return -1;
    *w = fcntl(fds[1], F_DUPFD, 10);   /* no CLOEXEC: perf passes it to __exec */
    close(fds[1]);
    if (*w < 0) {
        close(fds[0]);
        return -1;
    }
    *r = fds[0];
    return 0;
}

static void wait_program(run_state *st, int pid_fd)
{
    char buf[32];
    ssize_t n = pid_fd >= 0 ? read(pid_fd, buf, sizeof(buf) - 1) : -1;
    int status;
    pid_t r;

    if (n <= 0)
        return;
    buf[n] = '\0';
    st->program = (pid_t)atoi(buf);
    if (st->program <= 0 || st->stopped)
        return;
    r = waitpid(st->program, &status, WNOHANG);
    if (r == st->program) {
        st->status = status;
        return;
    }
    if (r != 0)
        return;                        /* perf reaped it: perf's status mimics it */
    st->perf_died = 1;
    if (WIFSIGNALED(st->status))
        fprintf(stderr, "perfpy: perf was killed while recording (signal %d, %s); ",
                WTERMSIG(st->status), strsignal(WTERMSIG(st->status)));
    else
        fprintf(stderr, "perfpy: perf ended while recording (exit status %d); ",
                WIFEXITED(st->status) ? WEXITSTATUS(st->status) : -1);
    fprintf(stderr, "the program (pid %d) goes on and perfpy waits for it; what perf "
            "recorded until then is kept\n", (int)st->program);
    while (waitpid(st->program, &status, 0) < 0)
        if (errno != EINTR)
            return;
    st->status = status;
}

/* ---- cleaning up -------------------------------------------------------------- */

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st; (void)flag; (void)ftw;
    return remove(path);
}

/* The engine in each process wrote <dir>/perfpy-<pid>.lines: exactly the
 * processes whose files in a shared directory (/tmp/perf-<pid>.map, and
 * /tmp/jit-<pid>.dump when the dumps had to go to /tmp) are this
 * recording's. fmt has one %d, the pid; fn gets each existing path. */
static void per_process(const char *dir, const char *fmt, void (*fn)(const char *path))
{
    DIR *d = opendir(dir);
    struct dirent *e;

    if (!d)
        return;
    while ((e = readdir(d)) != NULL) {
        int pid;
        char tail[8], path[PATH_MAX];
        if (sscanf(e->d_name, "perfpy-%d.%7s", &pid, tail) == 2 &&
            strcmp(tail, "lines") == 0) {
            snprintf(path, sizeof(path), fmt, pid);
            if (access(path, F_OK) == 0)
                fn(path);
        }
    }
    closedir(d);
}

static void unlink_path(const char *path)
{
    unlink(path);
}

static void say_kept(const char *path)
{
    fprintf(stderr, "perfpy: kept %s\n", path);
}

static void remove_per_process(const char *dir, const char *fmt)
{
    per_process(dir, fmt, unlink_path);
}

/* ---- where the dumps go ----------------------------------------------------------- */

static int on_tmpfs(const char *path)
{
    struct statfs fs;
    return statfs(path, &fs) == 0 && (unsigned long)fs.f_type == TMPFS_MAGIC_;
}

/* Whether a file in dir can be mapped PROT_EXEC (not mounted noexec): the
 * engine maps its dump that way so that perf records where it is. */
static int exec_mappable(const char *dir)
{
    char path[PATH_MAX];
    void *m;
    int fd, ok = 0;

    if ((size_t)snprintf(path, sizeof(path), "%s/probe", dir) >= sizeof(path))
        return 0;
    fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return 0;
    if (write(fd, "perfpy", 6) == 6) {
        m = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
        if (m != MAP_FAILED) {
            munmap(m, 4096);
            ok = 1;
        }
    }
    close(fd);
    unlink(path);
    return ok;
}

/* Whether files in /tmp itself map PROT_EXEC (probed in a private
 * directory of its own there: never a fixed name in a shared one). */
static int tmp_exec_mappable(void)
{
    char d[] = PP_LIBDW_JIT_DIR "/perfpy-probe-XXXXXX";
    int ok;

    if (!mkdtemp(d))
        return 0;
    ok = exec_mappable(d);
    rmdir(d);
    return ok;
}

/* In jit mode `perf inject --jit` writes one small ELF file per Python
 * function next to the dump, and creating thousands of files is most of the
 * post-processing on a disk filesystem (5,400 functions: about 8 s on the
 * ext4 of the machine in docs/PERFORMANCE.md, under 1 s on tmpfs). So when
 * the recording directory is the default one (TMPDIR unset: a user who sets
 * it chose where perfpy's files go) and not on tmpfs, the dumps go to a
 * private directory in /dev/shm if that is a tmpfs with 1 GiB free
 * (~200,000 functions) whose files map PROT_EXEC. 0 with its path in buf,
 * or -1: keep the dumps in the recording directory. */
static int memory_dir(const char *recording_dir, char *buf, size_t cap)
{
    const char *tmpdir = getenv("TMPDIR");
    struct statvfs vfs;

    if ((tmpdir && *tmpdir) || on_tmpfs(recording_dir) || !on_tmpfs("/dev/shm") ||
        statvfs("/dev/shm", &vfs) != 0 ||
        (unsigned long long)vfs.f_bavail * vfs.f_frsize < MEMORY_DIR_MIN_FREE)
        return -1;
    if ((size_t)snprintf(buf, cap, "/dev/shm/perfpy-jit-XXXXXX") >= cap || !mkdtemp(buf))
        return -1;
    if (!exec_mappable(buf)) {
        rmdir(buf);
        return -1;
    }
    return 0;
}

/* Frame-pointer call chains: the kernel's cap raised for the recording
 * when perfpy may, or the depth the user gets and how to change it. */
static void raise_max_stack(pp_max_stack *m)
{
    pp_max_stack_raise(m, PP_MAX_STACK_WANTED);
    if (m->raised || m->now < 0 || m->now >= PP_MAX_STACK_WANTED)
        return;
    fprintf(stderr, "perfpy: note: the kernel cuts frame-pointer stacks at %d native frames "
            "(kernel.perf_event_max_stack; about %d Python frames)%s%s%s; deeper stacks are "
            "marked [truncated]: as root, `sysctl kernel.perf_event_max_stack=%d` before "
            "recording, or --mode jit\n", m->now, m->now / 4,
            m->err ? " and perfpy could not raise it: " : "",
            m->err ? strerror(m->err) : "",
            m->err == EBUSY ? " (another perf session is recording call graphs)" : "",
            PP_MAX_STACK_WANTED);
}

static void restore_max_stack(pp_max_stack *m)
{
    int before = m->before, rc = pp_max_stack_restore(m);

    if (rc < 0)
        fprintf(stderr, "perfpy: warning: cannot put kernel.perf_event_max_stack back to %d: "
                "%s; as root: sysctl kernel.perf_event_max_stack=%d\n", before,
                strerror(-rc), before);
}

/* When many stacks are cut: why, and what would keep them whole. */
static void explain_truncation(const pp_profile *p, int fp, long stack_size,
                               const pp_max_stack *m)
{
    if (!p->samples || (double)p->truncated < 0.10 * (double)p->samples)
        return;
    if (fp && m->now >= 0 && m->now < PP_MAX_STACK_WANTED)
        fprintf(stderr, "perfpy: many stacks are cut: the kernel stops frame-pointer "
                "stacks at kernel.perf_event_max_stack=%d native frames; as root, `sysctl "
                "kernel.perf_event_max_stack=%d` (perfpy raises it by itself when run as "
                "root)\n", m->now, PP_MAX_STACK_WANTED);
    else if (!fp)
        fprintf(stderr, "perfpy: many stacks are cut: DWARF unwinding sees only the %ld "
                "bytes of stack perf copies per sample (--stack-size), and with the hook "
                "each Python call takes 0.5-1 KB of it (about 60 Python frames per 32 KiB "
                "on 3.8-3.13, 30 on 3.14+; docs/PERFORMANCE.md, \"Deep stacks\"); --stack-size "
                "65528, the most perf copies, keeps about twice as deep (twice the data); "
                "deeper stacks need an interpreter built with frame pointers, where "
                "--mode perf follows them about 300 Python frames deep\n", stack_size);
}

/* Where a recording's jit dumps (and so perf inject's ELFs) go. */
enum jit_place {
    JIT_HERE = 0,   /* the recording directory (or FILE.jit/ for -f perf) */
    JIT_MEMORY,     /* a private directory in /dev/shm, removed whole */
    JIT_TMP,        /* /tmp itself, for perf with libdw: only our files removed */
};

/* ---- the command ---------------------------------------------------------------- */

static int program_status(const run_state *st)
{
    if (WIFEXITED(st->status))
        return WEXITSTATUS(st->status);
    if (WIFSIGNALED(st->status))
        return 128 + WTERMSIG(st->status);
    return PP_EXIT_FAIL;
}

static void describe_program_end(const run_state *st, int status)
{
    if (st->stopped)
        fprintf(stderr, "perfpy: recording stopped after %.1f s\n", st->seconds);
    else if (WIFSIGNALED(st->status))
        fprintf(stderr, "perfpy: the program was killed by signal %d (%s); its profile "
                "is still written\n", WTERMSIG(st->status), strsignal(WTERMSIG(st->status)));
    else if (status != 0)
        fprintf(stderr, "perfpy: the program exited with status %d; its profile is still "
                "written\n", status);
}

/* argv for perf record; returns the number of entries. Frame-pointer call
 * graphs only when the interpreter keeps frame pointers: otherwise perf map
 * mode still gets DWARF stacks up to the innermost Python function. */
static int perf_argv(const char *perf, const pp_record_opts *o, const char *mode, int fp,
                     const char *data, const char *self, const char *stderr_fd,
                     const char *pid_fd, char *rate, char *callgraph, char *pid, char **out)
{
    int n = 0;

    out[n++] = (char *)perf;
    out[n++] = "record";
    out[n++] = "-q";
    out[n++] = "--no-bpf-event";
    /* -B: no build-id pass over the whole recording when perf stops and no
     * copy of every DSO into ~/.debug; the report reads the same files a
     * moment later. Format perf keeps its build ids (the file is for later)
     * but, with -N, still copies nothing into ~/.debug. */
    out[n++] = strcmp(o->format->name, "perf") == 0 ? "-N" : "-B";
    out[n++] = "-k";
    out[n++] = "1";
    out[n++] = "-e";
    out[n++] = "cpu-clock";
    out[n++] = "-F";
    snprintf(rate, 32, "%ld", o->rate);
    out[n++] = rate;
    out[n++] = "--call-graph";
    if (strcmp(mode, "perf") == 0 && fp)
        snprintf(callgraph, 32, "fp");
    else
        snprintf(callgraph, 32, "dwarf,%ld", o->stack_size);
    out[n++] = callgraph;
    out[n++] = "-o";
    out[n++] = (char *)data;
    if (o->pid) {
        snprintf(pid, 32, "%ld", o->pid);
        out[n++] = "-p";
        out[n++] = pid;
    } else {
        out[n++] = "--";
        out[n++] = (char *)self;
        out[n++] = "__exec";
        out[n++] = "--stderr-fd";
        out[n++] = (char *)stderr_fd;
        if (pid_fd) {
            out[n++] = "--pid-fd";
            out[n++] = (char *)pid_fd;
        }
        out[n++] = "--";
        for (int i = 0; o->argv[i]; i++)
            out[n++] = o->argv[i];
    }
    out[n] = NULL;
    return n;
}

static int self_exe(char *buf, size_t cap)
{
    ssize_t n = readlink("/proc/self/exe", buf, cap - 1);

    if (n < 0)
        return -1;
    buf[n] = '\0';
    return 0;
}

int pp_cmd_record(int argc, char **argv)
{
    pp_record_opts o;
    pp_usage u;
    interp_info info;
    char libdir[PATH_MAX], perf[PATH_MAX], dir[PATH_MAX], data[PATH_MAX + 16];
    char output[PATH_MAX], jitdir[PATH_MAX + 8], self[PATH_MAX], fdbuf[16];
    char rate[32], callgraph[32], pidbuf[32];
    const char *mode;
    char **pargv;
    run_state st;
    pp_report_opts ro = PP_REPORT_OPTS_INIT;
    pp_report_result rr;
    pp_error err;
    struct sigaction sa, old_int, old_term;
    int rc, status, saved_stderr, exit_code, fp, pid_r = -1, pid_w = -1;
    enum jit_place jit_at = JIT_HERE;
    pp_max_stack maxstack = {.before = -1, .now = -1};
    pp_unwinder unwinder;
    char pidfdbuf[16];
    uint64_t finished;

    if ((rc = pp_parsed("record", pp_record_parse(argc, argv, &o, &u), &u, help)) >= 0)
        return rc;
    if (pp_perf_find(NULL, perf, sizeof(perf), &err) < 0)
        return pp_fail_error(&err);
    if (self_exe(self, sizeof(self)) < 0)
        return pp_fail("cannot find perfpy's own executable: %s", strerror(errno));
    unwinder = pp_perf_unwinder(perf);
    memset(&info, 0, sizeof(info));
    if (o.argv) {
        if (pp_find_libdir(libdir, sizeof(libdir)) < 0)
            return PP_EXIT_FAIL;
        rc = check_program(o.argv, libdir, &info);
        if (rc != 0)
            return rc;
    } else if (kill((pid_t)o.pid, 0) != 0 && errno == ESRCH) {
        return pp_fail("no process %ld (is it still running?)", o.pid);
    }
    mode = o.mode;
    if (strcmp(mode, "auto") == 0)
        mode = info.known && info.frame_pointers ? "perf" : "jit";
    if (o.pid && strcmp(o.mode, "auto") == 0)
        mode = "jit";   /* an attached process: DWARF stacks work either way */
    if (strcmp(mode, "perf") == 0 && !(info.known && info.frame_pointers) &&
        unwinder == PP_UNWIND_LIBDW)
        fprintf(stderr, "perfpy: warning: %s unwinds DWARF call graphs with libdw, which "
                "finds no frame in perf-map trampolines: with an interpreter without frame "
                "pointers this profile will name no Python function; --mode jit (or auto) "
                "gives whole Python stacks\n", perf);
    if (o.output)
        snprintf(output, sizeof(output), "%s", o.output);
    else
        default_output(&o, output, sizeof(output));

    /* The recording's own directory: perf.data, dumps, line sidecars. */
    {
        const char *t = getenv("TMPDIR");
        snprintf(dir, sizeof(dir), "%s/perfpy-record-XXXXXX", t && *t ? t : "/tmp");
    }
    if (!mkdtemp(dir))
        return pp_fail("cannot make a directory for the recording (%s): %s; set TMPDIR "
                       "to a writable directory", dir, strerror(errno));
    snprintf(data, sizeof(data), "%s/perf.data", dir);
    snprintf(jitdir, sizeof(jitdir), "%s", dir);
    if (o.argv && strcmp(mode, "jit") == 0 && unwinder == PP_UNWIND_LIBDW) {
        /* libdw unwinds through perf inject's ELFs only under /tmp/jitted-
         * (perf_probe.h): the dumps go to /tmp itself, inject writes its
         * ELFs next to them, and only this recording's files are removed
         * (by pid, from the line sidecars; the ELFs by pp_report). */
        snprintf(jitdir, sizeof(jitdir), "%s", PP_LIBDW_JIT_DIR);
        jit_at = JIT_TMP;
        if (!tmp_exec_mappable()) {
            rc = pp_fail("%s unwinds with libdw, which reads jit mode's files only in "
                         "/tmp, and /tmp cannot hold executable mappings (mounted "
                         "noexec?): remount /tmp without noexec, or use a perf built with "
                         "libunwind, or an interpreter built with frame pointers "
                         "(--mode perf)", perf);
            goto fail_early;
        }
    } else if (strcmp(o.format->name, "perf") == 0) {
        /* perf report finds the jitted ELFs by the paths inject wrote:
         * they must outlive the recording directory. */
        char *abs = realpath(".", NULL);
        if (output[0] == '/' || !abs)
            snprintf(jitdir, sizeof(jitdir), "%s.jit", output);
        else
            snprintf(jitdir, sizeof(jitdir), "%s/%s.jit", abs, output);
        free(abs);
        if (mkdir(jitdir, 0700) != 0 && errno != EEXIST) {
            rc = pp_fail("cannot make %s for the jitted code: %s", jitdir, strerror(errno));
            goto fail_early;
        }
    } else if (o.argv && strcmp(mode, "jit") == 0 &&
               memory_dir(dir, jitdir, sizeof(jitdir)) == 0) {
        jit_at = JIT_MEMORY;
    }

    if (o.argv) {
        rc = save_env_for_exec();
        if (rc == 0)
            rc = pp_prepare_child_env(libdir, strcmp(mode, "perf") == 0 ? "perf" : "jit");
        if (rc < 0 || setenv("PERFPY_JITDUMP_DIR", jitdir, 1) != 0 ||
            setenv("PERFPY_LINES_DIR", dir, 1) != 0) {
            rc = pp_fail("cannot set up the environment: %s", strerror(rc < 0 ? -rc : errno));
            goto fail_early;
        }
    }
    saved_stderr = fcntl(2, F_DUPFD, 10);   /* no CLOEXEC: perf passes it down */
    if (saved_stderr < 0) {
        rc = pp_fail("cannot duplicate stderr: %s", strerror(errno));
        goto fail_early;
    }
    snprintf(fdbuf, sizeof(fdbuf), "%d", saved_stderr);
    if (o.argv && watch_program(&pid_r, &pid_w) == 0)
        snprintf(pidfdbuf, sizeof(pidfdbuf), "%d", pid_w);
    else
        pid_r = pid_w = -1;
    pargv = calloc((size_t)argc + 40, sizeof(char *));
    if (!pargv) {
        rc = pp_fail("out of memory");
        goto fail_early;
    }
    fp = info.known && info.frame_pointers;
    perf_argv(perf, &o, mode, fp, data, self, fdbuf, pid_w >= 0 ? pidfdbuf : NULL, rate,
              callgraph, pidbuf, pargv);

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_stop;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    memset(&st, 0, sizeof(st));
    fprintf(stderr, "perfpy: recording %s in %s mode (%ld Hz, %s call graphs)%s\n",
            o.pid ? "the process" : o.argv[0], mode, o.rate,
            strcmp(mode, "perf") == 0 && fp ? "frame-pointer" : "DWARF",
            o.pid ? "; Ctrl-C stops" : "");
    if (strcmp(mode, "perf") == 0 && fp)
        raise_max_stack(&maxstack);
    rc = start_perf(pargv, &st);
    close(saved_stderr);
    if (pid_w >= 0)
        close(pid_w);
    free(pargv);
    if (rc < 0) {
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGTERM, &old_term, NULL);
        restore_max_stack(&maxstack);
        rc = pp_fail("cannot start perf: %s", strerror(-rc));
        goto fail_early;
    }
    supervise(&st, o.duration);
    restore_max_stack(&maxstack);
    close(st.err_fd);
    wait_program(&st, pid_r);
    if (pid_r >= 0)
        close(pid_r);
    if (pp_perf_data_finish(data, &finished) == 0 && finished)
        fprintf(stderr, "perfpy: perf did not finish %s; its %.1f MB of whole records are "
                "used as they are\n", data, (double)finished / 1e6);

    status = program_status(&st);
    {
        struct stat sb;
        int have_data = stat(data, &sb) == 0 && sb.st_size > 0;
        if (!have_data || (WIFEXITED(st.status) && WEXITSTATUS(st.status) != 0 &&
                           strstr(st.err, "rror"))) {
            if (!have_data) {
                explain_perf_failure(&st);
                rc = PP_EXIT_FAIL;
                goto fail_early;
            }
        }
    }
    if (st.err_len && !st.stopped && !st.perf_died && strstr(st.err, "Workload failed")) {
        explain_perf_failure(&st);
        rc = PP_EXIT_FAIL;
        goto fail_early;
    }
    describe_program_end(&st, status);

    /* Post-processing: Ctrl-C here abandons it but keeps the recording (perf
     * inject and perf script take the same Ctrl-C and stop early, exit 0:
     * what they wrote would be a profile of part of the recording). */
    stop_requested = 0;
    ro.input = data;
    ro.format = o.format;
    ro.output = output;
    ro.no_native = o.no_native;
    ro.keep = o.keep;
    ro.lines_dir = dir;
    ro.perf = perf;
    ro.inline_frames = o.inline_frames;
    rc = pp_report(&ro, &rr);
    if (rr.warning[0])
        fprintf(stderr, "perfpy: warning: %s\n", rr.warning);
    if (rc < 0)
        pp_fail_error(&rr.err);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (stop_requested) {
        if (rc == 0 && strcmp(output, "-") != 0)
            unlink(output);
        fprintf(stderr, "perfpy: interrupted while making the profile: %s is not written\n",
                output);
        rc = -EINTR;
    }
    if (rc < 0) {
        fprintf(stderr, "perfpy: the recording is kept: %s%s%s%s\n"
                "perfpy: write the profile once the problem is fixed with:\n"
                "  perfpy report -f %s -o %s %s\n",
                dir, jit_at ? " (its jit dumps: " : "",
                jit_at == JIT_MEMORY ? jitdir : jit_at == JIT_TMP ? "/tmp/jit-<pid>.dump" : "",
                jit_at ? ")" : "", o.format->name, output, data);
        pp_report_result_free(&rr);
        return PP_EXIT_FAIL;
    }
    pp_summary_print(stderr, &rr, 10);
    explain_truncation(&rr.profile, strcmp(mode, "perf") == 0 && fp, o.stack_size, &maxstack);
    pp_report_result_free(&rr);
    if (strcmp(mode, "perf") == 0 && !o.pid) {
        if (strcmp(o.format->name, "perf") == 0) {
            /* perf report names the trampolines from the maps, later */
            per_process(dir, "/tmp/perf-%d.map", say_kept);
            fprintf(stderr, "perfpy: `perf report -i %s` reads the kept perf maps (remove "
                    "them when done)\n", output);
        } else
            remove_per_process(dir, "/tmp/perf-%d.map");
    }
    if (o.keep) {
        fprintf(stderr, "perfpy: recording and intermediate files kept in %s%s%s\n", dir,
                jit_at ? " and " : "",
                jit_at == JIT_MEMORY ? jitdir : jit_at == JIT_TMP ? "/tmp/jit-<pid>.dump" : "");
    } else {
        if (jit_at == JIT_TMP)
            remove_per_process(dir, PP_LIBDW_JIT_DIR "/jit-%d.dump");
        nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
        if (jit_at == JIT_MEMORY)
            nftw(jitdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    }
    exit_code = st.stopped ? PP_EXIT_OK : status;
    return exit_code;

fail_early:
    if (o.argv && strcmp(mode, "perf") == 0)
        remove_per_process(dir, "/tmp/perf-%d.map");
    if (jit_at == JIT_TMP)
        remove_per_process(dir, PP_LIBDW_JIT_DIR "/jit-%d.dump");
    nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    if (jit_at == JIT_MEMORY)
        nftw(jitdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    if (strcmp(o.format->name, "perf") == 0 && jit_at == JIT_HERE)
        rmdir(jitdir);
    return rc;
}

/* perfpy __exec --stderr-fd N [--pid-fd M] -- PROGRAM ARGS...: tells its pid
 * (the program's, after the exec) on M, puts the user's stderr
 * back on fd 2 (perf's own stderr is a pipe to perfpy) and the environment
 * perf changed back as it was (see save_env_for_exec), and becomes the
 * program. Internal to record. */
int pp_exec_parse(int argc, char **argv, pp_exec_opts *o, pp_usage *u)
{
    int i = 1;
    long fd;

    o->stderr_fd = o->pid_fd = -1;
    o->argv = NULL;
    while (i + 1 < argc && (strcmp(argv[i], "--stderr-fd") == 0 ||
                            strcmp(argv[i], "--pid-fd") == 0)) {
        if (pp_parse_long(argv[i + 1], 3, INT_MAX, &fd) < 0)
            return pp_usage_set(u, "%s takes a descriptor number above 2, not '%s'",
                                argv[i], argv[i + 1]);
        if (argv[i][2] == 's')
            o->stderr_fd = (int)fd;
        else
            o->pid_fd = (int)fd;
        i += 2;
    }
    if (i < argc && strcmp(argv[i], "--") == 0)
        i++;
    if (i >= argc)
        return pp_usage_set(u, "no program given");
    o->argv = argv + i;
    return PP_PARSED_RUN;
}

int pp_cmd_exec(int argc, char **argv)
{
    pp_exec_opts o;
    pp_usage u;

    if (pp_exec_parse(argc, argv, &o, &u) != PP_PARSED_RUN)
        return pp_usage_error("__exec", "%s", u.message);
    if (o.stderr_fd >= 0 && dup2(o.stderr_fd, 2) == 2)
        close(o.stderr_fd);
    if (o.pid_fd >= 0) {
        char buf[16];
        int n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
        if (write(o.pid_fd, buf, (size_t)n) != n)
            fprintf(stderr, "perfpy: cannot tell perfpy record the program's pid: %s\n",
                    strerror(errno));
        close(o.pid_fd);
    }
    restore_env_for_exec();
    pp_exec(o.argv);
    return 127;                        /* as a shell says "not found" */
}
