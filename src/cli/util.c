/*
 * Helpers shared by the subcommands: messages, the option loop and operand
 * checks of every parser, the module directory, the child's environment and
 * a checked close of stdout.
 */
#include "cli.h"
#include "help.h"
#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int pp_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "perfpy %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'perfpy %s --help'.\n", cmd);
    return PP_EXIT_USAGE;
}

int pp_usage_set(pp_usage *u, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(u->message, sizeof(u->message), fmt, ap);
    va_end(ap);
    return PP_EXIT_USAGE;
}

int pp_getopt_error(int c, int argc, char **argv, pp_usage *u)
{
    const char *arg = optind > 0 && optind <= argc ? argv[optind - 1] : "";
    char shortopt[3] = {'-', (char)optopt, '\0'};

    /* a long option is the argument getopt just took; a short one is
     * optopt (it may sit inside a group like -qx) */
    if (strncmp(arg, "--", 2) != 0 && optopt > ' ' && optopt < 127)
        arg = shortopt;
    if (c == ':')
        return pp_usage_set(u, "option '%s' needs a value", arg);
    return pp_usage_set(u, "unknown option '%s'", arg);
}

int pp_parsed(const char *cmd, int rc, const pp_usage *u, const char *const *help)
{
    if (rc == PP_PARSED_RUN)
        return -1;
    if (rc == PP_PARSED_HELP) {
        pp_help_print(stdout, help);
        return pp_close_stdout();
    }
    return pp_usage_error(cmd, "%s", u->message);
}

void pp_getopt_reset(void)
{
    optind = 0;
    opterr = 0;
}

int pp_getopt_each(int argc, char **argv, const char *shortopts,
                   const struct option *longopts, pp_option_fn *fn, void *opts,
                   pp_usage *u)
{
    int c, rc;

    pp_getopt_reset();
    while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
        if (c == 'h')
            return PP_PARSED_HELP;
        if (c == '?' || c == ':')
            return pp_getopt_error(c, argc, argv, u);
        if ((rc = fn(c, opts, u)) != PP_PARSED_RUN)
            return rc;
    }
    return PP_PARSED_RUN;
}

int pp_operand_one(int argc, char **argv, const char *what, const char *example,
                   const char **out, pp_usage *u)
{
    if (optind >= argc)
        return pp_usage_set(u, "no %s given (%s)", what, example);
    if (optind + 1 < argc)
        return pp_usage_set(u, "one %s at a time ('%s' is extra)", what, argv[optind + 1]);
    *out = argv[optind];
    return PP_PARSED_RUN;
}

int pp_operand_program(int argc, char **argv, int first, const char *example,
                       char ***out, pp_usage *u)
{
    if (first >= argc)
        return example ? pp_usage_set(u, "no program given (%s)", example)
                       : pp_usage_set(u, "no program given");
    *out = argv + first;
    return PP_PARSED_RUN;
}

static void progress_line(void *ctx, pp_progress_step step, uint64_t samples, double s)
{
    (void)ctx;
    if (step == PP_PROGRESS_INJECT)
        fprintf(stderr, "perfpy: perf inject --jit ...\r");
    else if (step == PP_PROGRESS_SCRIPT)
        fprintf(stderr, "\rperfpy: perf script ...\033[K");
    else if (step == PP_PROGRESS_SAMPLES)
        fprintf(stderr, "\rperfpy: reading samples: %llu (%.0f s)\033[K",
                (unsigned long long)samples, s);
    else
        fprintf(stderr, "\r\033[K");
}

/* Not a terminal (a log, CI): one line when the work begins, what it is. */
static void progress_plain(void *ctx, pp_progress_step step, uint64_t samples, double s)
{
    int *said = ctx;

    (void)samples;
    (void)s;
    if (*said || (step != PP_PROGRESS_INJECT && step != PP_PROGRESS_SCRIPT))
        return;
    *said = 1;
    fprintf(stderr, "perfpy: making the profile (%sperf script, folding) ...\n",
            step == PP_PROGRESS_INJECT ? "perf inject --jit, " : "");
}

pp_progress pp_progress_on_stderr(int quiet)
{
    static int said;

    said = 0;
    if (quiet)
        return (pp_progress){.fn = NULL};
    return isatty(2) ? (pp_progress){.fn = progress_line}
                     : (pp_progress){.fn = progress_plain, .ctx = &said};
}

int pp_option_format(const char *arg, const pp_format **out, pp_usage *u)
{
    *out = pp_format_find(arg);
    if (!*out)
        return pp_usage_set(u, "unknown format '%s' (formats: %s)", arg, pp_format_names());
    return PP_PARSED_RUN;
}

int pp_option_output(const char *arg, const char **out, pp_usage *u)
{
    if (!*arg)
        return pp_usage_set(u, "-o needs a file name");
    *out = arg;
    return PP_PARSED_RUN;
}

int pp_parse_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

int pp_option_processes(const char *arg, int *out, pp_usage *u)
{
    static const char *const names[] = {"auto", "split", "merge"};   /* PP_PROCESSES_* */

    for (int i = 0; i < 3; i++)
        if (strcmp(arg, names[i]) == 0) {
            *out = i;
            return PP_PARSED_RUN;
        }
    return pp_usage_set(u, "--processes must be auto, split or merge, not '%s'", arg);
}

int pp_option_threads(const char *arg, int argc, char **argv, int *out, pp_usage *u)
{
    /* getopt gives an optional argument only as --threads=split: the word
     * after it counts too when it is one of the two */
    if (!arg && optind < argc && (strcmp(argv[optind], "split") == 0 ||
                                  strcmp(argv[optind], "merge") == 0))
        arg = argv[optind++];
    if (!arg || strcmp(arg, "merge") == 0)
        *out = PP_THREAD_ROOTS_PATTERN;
    else if (strcmp(arg, "split") == 0)
        *out = PP_THREAD_ROOTS_SPLIT;
    else
        return pp_usage_set(u, "--threads takes merge (the default) or split, not '%s'", arg);
    return PP_PARSED_RUN;
}

int pp_parse_live_mode(const char *s, pp_mode *mode, pp_usage *u)
{
    if (pp_request_mode_of(s, mode) == 0 && *mode <= PP_MODE_READ)
        return PP_PARSED_RUN;
    return pp_usage_set(u, "--mode is auto, sample or read, not '%s'", s);
}

int pp_fail_error(const pp_error *e)
{
    size_t n = strlen(e->message);

    fprintf(stderr, "perfpy: %s%s", e->message, n && e->message[n - 1] == '\n' ? "" : "\n");
    return PP_EXIT_FAIL;
}

int pp_fail(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "perfpy: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return PP_EXIT_FAIL;
}

int pp_exec(char **argv)
{
    execvp(argv[0], argv);
    return pp_fail("cannot run '%s': %s%s", argv[0], strerror(errno),
                   errno == ENOENT ? " (is it installed and on PATH?)" : "");
}

static int has_startup_hook(const char *dir)
{
    char path[PATH_MAX];
    struct stat st;

    if (snprintf(path, sizeof(path), "%s/sitecustomize.py", dir) >= (int)sizeof(path))
        return 0;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The module directory, or -1 with the places looked at in tried; says
 * nothing (only a bad PERFPY_LIBDIR, which the user set, is -2). */
static int find_libdir(char *buf, size_t cap, char tried[2][PATH_MAX + 32])
{
    const char *env = getenv("PERFPY_LIBDIR");
    char exe[PATH_MAX];
    ssize_t n;
    char *slash;

    if (env && *env) {
        if (!has_startup_hook(env))
            return -2;
        snprintf(buf, cap, "%s", env);
        return 0;
    }
    n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n < 0)
        return -3;
    exe[n] = '\0';
    slash = strrchr(exe, '/');
    if (slash)
        *slash = '\0';
    snprintf(tried[0], sizeof(tried[0]), "%s/lib", exe);
    snprintf(tried[1], sizeof(tried[1]), "%s/../lib/perfpy", exe);
    for (int i = 0; i < 2; i++) {
        if (has_startup_hook(tried[i])) {
            if (!realpath(tried[i], buf) || strlen(buf) >= cap)
                snprintf(buf, cap, "%s", tried[i]);
            return 0;
        }
    }
    return -1;
}

int pp_find_libdir_quiet(char *buf, size_t cap)
{
    char tried[2][PATH_MAX + 32];

    return find_libdir(buf, cap, tried) == 0 ? 0 : -1;
}

int pp_find_libdir(char *buf, size_t cap)
{
    char tried[2][PATH_MAX + 32];

    switch (find_libdir(buf, cap, tried)) {
    case 0:
        return 0;
    case -2:
        pp_fail("PERFPY_LIBDIR=%s has no sitecustomize.py; unset it or point it at "
                "perfpy's lib directory", getenv("PERFPY_LIBDIR"));
        return -1;
    case -3:
        pp_fail("cannot read /proc/self/exe: %s", strerror(errno));
        return -1;
    }
    pp_fail("cannot find perfpy's module directory (looked in %s and %s); "
            "run `make` in the source tree or `make install`, or set PERFPY_LIBDIR",
            tried[0], tried[1]);
    return -1;
}

int pp_prepare_child_env(const char *libdir, pp_mode mode)
{
    const char *old = getenv("PYTHONPATH");
    size_t need = strlen(libdir) + (old ? strlen(old) + 1 : 0) + 1;
    char *path = malloc(need);
    int rc;

    if (!path)
        return -ENOMEM;
    if (old && *old)
        snprintf(path, need, "%s:%s", libdir, old);
    else
        snprintf(path, need, "%s", libdir);
    rc = setenv("PYTHONPATH", path, 1);
    free(path);
    if (rc == 0)
        rc = setenv("PERFPY", pp_request_mode_name(mode), 1);
    if (rc == 0)
        rc = unsetenv("PYTHONPERFSUPPORT");
    if (rc == 0)
        rc = unsetenv("PYTHON_PERF_JIT_SUPPORT");
    return rc == 0 ? 0 : -errno;
}

int pp_close_stdout(void)
{
    pp_error e;

    if (pp_output_close_stdout(&e) != 0) {
        fprintf(stderr, "perfpy: %s\n", e.message);
        return PP_EXIT_FAIL;
    }
    return PP_EXIT_OK;
}

int pp_perf_refused(const char *perf_said)
{
    return strstr(perf_said, "ermission") || strstr(perf_said, "paranoid") ||
           strstr(perf_said, "Access to performance monitoring") ||
           strstr(perf_said, "not permitted");
}

void pp_perf_refused_advice(char *buf, size_t cap)
{
    int paranoid = 99;
    FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");

    if (f) {
        if (fscanf(f, "%d", &paranoid) != 1)
            paranoid = 99;
        fclose(f);
    }
    if (geteuid() == 0)
        snprintf(buf, cap, "the perf_event_open system call is refused even to root, so a "
                 "container or seccomp policy blocks it. Docker/Podman: run the container "
                 "with --cap-add PERFMON (kernel 5.8+; else --cap-add SYS_ADMIN), or with "
                 "--security-opt seccomp=PROFILE allowing perf_event_open; the host's "
                 "kernel.perf_event_paranoid (%d here) must also be 2 or less", paranoid);
    else if (paranoid > 2)
        snprintf(buf, cap, "kernel.perf_event_paranoid=%d lets only root use perf. Run as "
                 "root, or let users profile their own processes: `sudo sysctl "
                 "kernel.perf_event_paranoid=2` (to keep it after a reboot: echo "
                 "kernel.perf_event_paranoid=2 | sudo tee /etc/sysctl.d/60-perf.conf)",
                 paranoid);
    else
        snprintf(buf, cap, "kernel.perf_event_paranoid=%d lets users profile their own "
                 "processes, yet perf_event_open is refused to this user: a container or "
                 "seccomp policy (a sandbox) blocks it. Run as root, or outside that "
                 "sandbox; Docker/Podman: --cap-add PERFMON, or --security-opt "
                 "seccomp=PROFILE allowing perf_event_open", paranoid);
}
