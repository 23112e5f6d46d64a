/*
 * The report pipeline of report.h: runs perf (inject when the recording
 * used jitdump mode, then script), folds its output while it streams, and
 * writes the profile. Every external program is run with fork/exec (no
 * shell); every temporary file lives in one mkdtemp directory removed at
 * the end; perf gets --buildid-dir inside it, so ~/.debug is never touched.
 *
 * Order matters for jitdump recordings: `perf inject --jit` writes one
 * jitted-<pid>-<n>.so per Python function next to the dump, and `perf
 * script` reads them, so they are deleted only after perf script is done
 * (and only those that inject made: the directory is listed before and
 * after). Format "perf" keeps them: `perf report` on the injected file
 * needs them.
 */
#include "report.h"
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- perf and child processes ------------------------------------------- */

int pp_report_find_perf(const char *want, char *buf, size_t cap)
{
    const char *name = want && *want ? want : getenv("PERF");
    const char *path = getenv("PATH");

    if (!name || !*name)
        name = "perf";
    if (strchr(name, '/')) {
        if (access(name, X_OK) == 0) {
            snprintf(buf, cap, "%s", name);
            return 0;
        }
    } else {
        const char *p = path && *path ? path : "/usr/local/bin:/usr/bin:/bin";
        while (*p) {
            const char *colon = strchr(p, ':');
            size_t n = colon ? (size_t)(colon - p) : strlen(p);
            struct stat st;
            if (n && (size_t)snprintf(buf, cap, "%.*s/%s", (int)n, p, name) < cap &&
                stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
                return 0;
            p += n + (colon ? 1 : 0);
        }
    }
    pp_fail("cannot find perf ('%s' is not an executable on PATH): install it with "
            "`apt-get install linux-perf` (Debian) or `apt-get install linux-tools-$(uname -r)` "
            "(Ubuntu), or set PERF=/path/to/perf", name);
    return -1;
}

/* fork/exec argv with stdin from /dev/null, stdout to out_fd (-1: /dev/null)
 * and stderr to err_path. Returns the child's pid or -1. */
static pid_t spawn(char *const argv[], int out_fd, const char *err_path)
{
    pid_t pid = fork();

    if (pid < 0) {
        pp_fail("cannot start %s: %s", argv[0], strerror(errno));
        return -1;
    }
    if (pid == 0) {
        int in = open("/dev/null", O_RDONLY);
        int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

        /* perf 6.1 runs addr2line for source lines and inline frames and
         * writes to it after it has died (it exits at once on a dso that
         * is no file, "//anon"): with SIGPIPE's default action that kills
         * perf script, now and then. Ignored (kept across exec), the write
         * fails and perf goes on. perfpy kills perf itself when it stops
         * reading. */
        signal(SIGPIPE, SIG_IGN);
        if (in >= 0)
            dup2(in, 0);
        if (out_fd < 0)
            out_fd = open("/dev/null", O_WRONLY);
        if (out_fd >= 0)
            dup2(out_fd, 1);
        if (err >= 0)
            dup2(err, 2);
        execv(argv[0], argv);
        fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    return pid;
}

static int wait_child(pid_t pid)
{
    int status;

    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return status;
}

/* The last lines of a child's stderr, indented, for an error message. */
static void show_tail(const char *path)
{
    char buf[2048];
    FILE *f = fopen(path, "r");
    size_t n;
    long size;

    if (!f)
        return;
    fseek(f, 0, SEEK_END);
    size = ftell(f);
    fseek(f, size > (long)sizeof(buf) - 1 ? size - (long)sizeof(buf) + 1 : 0, SEEK_SET);
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    if (n)
        fprintf(stderr, "perf said:\n%s%s", buf, buf[n - 1] == '\n' ? "" : "\n");
}

static void describe_status(const char *what, int status, const char *err_path)
{
    if (WIFEXITED(status))
        pp_fail("%s failed (exit status %d)", what, WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        pp_fail("%s was killed by signal %d (%s)", what, WTERMSIG(status),
                strsignal(WTERMSIG(status)));
    else
        pp_fail("%s failed", what);
    show_tail(err_path);
}

/* ---- a recording from a newer perf --------------------------------------- */

/* The version of the perf in use ("6.1.187" of "perf version 6.1.187"), or
 * "" when it cannot say. Its output goes through a file in tmp. */
static void perf_version(const char *perf, const char *tmp, char *buf, size_t cap)
{
    char out[PATH_MAX], err[PATH_MAX], text[256] = "";
    char *argv[] = {(char *)perf, "version", NULL};
    const char *v;
    pid_t pid;
    int fd, status;
    ssize_t n = -1;

    buf[0] = '\0';
    snprintf(out, sizeof(out), "%s/version.out", tmp);
    snprintf(err, sizeof(err), "%s/version.err", tmp);
    fd = open(out, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    pid = spawn(argv, fd, err);
    status = pid < 0 ? -1 : wait_child(pid);
    if (status == 0 && lseek(fd, 0, SEEK_SET) == 0)
        n = read(fd, text, sizeof(text) - 1);
    close(fd);
    if (n <= 0)
        return;
    text[n] = '\0';
    v = strncmp(text, "perf version ", 13) == 0 ? text + 13 : text;
    snprintf(buf, cap, "%.*s", (int)strcspn(v, " \n"), v);
}

/* Dotted versions compared by their first three numbers ("7.2.13" >
 * "6.12.1"); 0 when either has none. */
static int version_cmp(const char *a, const char *b)
{
    unsigned x[3] = {0}, y[3] = {0};

    if (sscanf(a, "%u.%u.%u", &x[0], &x[1], &x[2]) < 1 ||
        sscanf(b, "%u.%u.%u", &y[0], &y[1], &y[2]) < 1)
        return 0;
    for (int i = 0; i < 3; i++)
        if (x[i] != y[i])
            return x[i] < y[i] ? -1 : 1;
    return 0;
}

/* After perf failed on `in`: if a newer perf wrote it, say so. perf only
 * says "incompatible file format" (a perf_event_attr larger than it knows,
 * "file uses a more recent and unsupported ABI" under -v). */
static void explain_newer_writer(const char *perf, const char *tmp, const char *in,
                                 const pp_perf_data_info *info)
{
    char mine[64];

    if (!info->perf_version[0])
        return;
    perf_version(perf, tmp, mine, sizeof(mine));
    if (!mine[0] || version_cmp(info->perf_version, mine) <= 0)
        return;
    pp_fail("%s was recorded by perf %s, and this perf (%s) is %s: an older perf "
            "cannot read what a newer one wrote. Run `perfpy report` on the machine "
            "that recorded it, or install perf %s or newer here (PERF=/path/to/perf "
            "picks which perf runs)", in, info->perf_version, perf, mine, info->perf_version);
}

/* ---- jitted-*.so bookkeeping -------------------------------------------- */

typedef struct names {
    char **v;
    size_t n, cap;
} names;

static int names_add(names *s, const char *x)
{
    if (s->n + 2 > s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        char **nv = realloc(s->v, cap * sizeof(*nv));
        if (!nv)
            return -1;
        s->v = nv;
        s->cap = cap;
    }
    if (!(s->v[s->n] = strdup(x)))
        return -1;
    s->v[++s->n] = NULL;
    return 0;
}

static int names_has(const names *s, const char *x)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->v[i], x) == 0)
            return 1;
    return 0;
}

static void names_free(names *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    memset(s, 0, sizeof(*s));
}

/* Full paths of "jitted-<pid>-*.so" in dir (pid of jit-<pid>.dump). */
static void list_jitted(const char *dump, names *out)
{
    char dir[PATH_MAX], prefix[64], path[PATH_MAX];
    const char *base = strrchr(dump, '/');
    DIR *d;
    struct dirent *e;

    if (!base)
        return;
    snprintf(dir, sizeof(dir), "%.*s", (int)(base - dump), dump);
    snprintf(prefix, sizeof(prefix), "jitted-%ld-", strtol(base + 5, NULL, 10));
    if (!(d = opendir(dir[0] ? dir : "/")))
        return;
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        if (strncmp(e->d_name, prefix, strlen(prefix)) != 0 || l < 4 ||
            strcmp(e->d_name + l - 3, ".so") != 0)
            continue;
        if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) < sizeof(path))
            names_add(out, path);
    }
    closedir(d);
}

void pp_report_unlink_all(char **made)
{
    for (size_t i = 0; made && made[i]; i++) {
        unlink(made[i]);
        free(made[i]);
    }
    free(made);
}

int pp_report_inject(const char *perf, const char *in, const char *out,
                     const char *tmp, const pp_perf_data_info *info, char ***made)
{
    char bid[PATH_MAX], err[PATH_MAX];
    names before = {0}, after = {0}, mine = {0};
    char *argv[] = {(char *)perf, "--buildid-dir", bid, "inject", "--jit",
                    "-i", (char *)in, "-o", (char *)out, NULL};
    pid_t pid;
    int status, rc = -1;

    snprintf(bid, sizeof(bid), "%s/buildid", tmp);
    snprintf(err, sizeof(err), "%s/inject.err", tmp);
    mkdir(bid, 0700);
    for (size_t i = 0; i < info->njitdumps; i++)
        list_jitted(info->jitdumps[i], &before);
    if ((pid = spawn(argv, -1, err)) < 0)
        goto out;
    status = wait_child(pid);
    for (size_t i = 0; i < info->njitdumps; i++)
        list_jitted(info->jitdumps[i], &after);
    for (size_t i = 0; i < after.n; i++)
        if (!names_has(&before, after.v[i]) && names_add(&mine, after.v[i]) < 0)
            break;
    if (status < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        describe_status("perf inject --jit", status, err);
        pp_report_unlink_all(mine.v);
        memset(&mine, 0, sizeof(mine));
        goto out;
    }
    rc = 0;
out:
    if (rc == 0) {
        *made = mine.v;            /* NULL-terminated, or NULL when none */
        memset(&mine, 0, sizeof(mine));
    }
    names_free(&before);
    names_free(&after);
    names_free(&mine);
    return rc;
}

/* ---- perf script, streamed into the folder ------------------------------ */

typedef struct fold_ctx {
    pp_folder *folder;
    int progress;
    double start, last;
    uint64_t n;
} fold_ctx;

static int fold_progress(void *ctx, const pp_script_sample *s)
{
    fold_ctx *c = ctx;

    if (c->progress && (++c->n & 0x3fff) == 0) {
        double t = now_s();
        if (t - c->start > 1.0 && t - c->last > 0.25) {
            fprintf(stderr, "\rperfpy: reading samples: %llu (%.0f s)\033[K",
                    (unsigned long long)c->n, t - c->start);
            c->last = t;
        }
    }
    return pp_fold_sample(c->folder, s);
}

static int fold_fd(int fd, const pp_fold_opts *fo, pp_profile *p, int progress,
                   pp_script_stats *stats)
{
    pp_script_parser *parser = NULL;
    fold_ctx ctx = {0};
    int rc;

    if (pp_fold_open(&ctx.folder, p, fo) < 0 || pp_script_open(&parser, fold_progress, &ctx) < 0) {
        pp_fold_close(ctx.folder);
        return -ENOMEM;
    }
    ctx.progress = progress;
    ctx.start = ctx.last = now_s();
    rc = pp_script_parse_fd(parser, fd);
    if (ctx.progress && now_s() - ctx.start > 1.0)
        fprintf(stderr, "\r\033[K");
    *stats = *pp_script_stats_of(parser);
    p->bad_lines += stats->bad_lines;
    pp_script_close(parser);
    pp_fold_close(ctx.folder);
    return rc;
}

int pp_report_fold_fd(int fd, const pp_fold_opts *fo, pp_profile *p, int progress)
{
    pp_script_stats st;
    int rc = fold_fd(fd, fo, p, progress, &st);

    if (rc < 0)
        return pp_fail("reading perf script text: %s", strerror(-rc)) ? -1 : -1;
    return 0;
}

int pp_report_script(const char *perf, const char *data, const char *tmp,
                     const pp_fold_opts *fo, pp_profile *p, int progress,
                     int inline_frames)
{
    char bid[PATH_MAX], err[PATH_MAX];
    char *argv[] = {(char *)perf, "--buildid-dir", bid, "script", "-F", PP_SCRIPT_FIELDS,
                    "--max-stack", "4096", "-i", (char *)data,
                    inline_frames ? NULL : "--no-inline", NULL};
    pp_script_stats st;
    int pipefd[2], status, prc;
    pid_t pid;

    snprintf(bid, sizeof(bid), "%s/buildid", tmp);
    snprintf(err, sizeof(err), "%s/script.err", tmp);
    mkdir(bid, 0700);
    if (pipe2(pipefd, O_CLOEXEC) != 0)
        return pp_fail("cannot make a pipe: %s", strerror(errno)) ? -1 : -1;
    pid = spawn(argv, pipefd[1], err);
    close(pipefd[1]);
    if (pid < 0) {
        close(pipefd[0]);
        return -1;
    }
    prc = fold_fd(pipefd[0], fo, p, progress, &st);
    close(pipefd[0]);
    if (prc < 0)
        kill(pid, SIGTERM);
    status = wait_child(pid);
    if (prc < 0)
        return pp_fail("reading perf script's output: %s", strerror(-prc)) ? -1 : -1;
    if (status < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        describe_status("perf script", status, err);
        return -1;
    }
    return 0;
}

/* ---- writing the output -------------------------------------------------- */

typedef int (*fill_fn)(FILE *out, void *ctx);

/* Opens path for writing (directly, or a temporary beside it), runs fill,
 * closes with every check, renames. 0 or -1. */
static int write_via(const char *path, fill_fn fill, void *ctx)
{
    char tmp[PATH_MAX], dir[PATH_MAX];
    struct stat st;
    FILE *out;
    int fd = -1, rc, direct, to_stdout = strcmp(path, "-") == 0;
    mode_t mask;

    direct = to_stdout || (stat(path, &st) == 0 && !S_ISREG(st.st_mode));
    if (to_stdout) {
        out = stdout;
    } else if (direct) {
        out = fopen(path, "w");
        if (!out)
            return pp_fail("cannot write %s: %s", path, strerror(errno)) ? -1 : -1;
    } else {
        char *slash;
        snprintf(dir, sizeof(dir), "%s", path);
        slash = strrchr(dir, '/');
        if (slash)
            *(slash == dir ? slash + 1 : slash) = '\0';
        else
            snprintf(dir, sizeof(dir), ".");
        if ((size_t)snprintf(tmp, sizeof(tmp), "%s/.perfpy-out-XXXXXX", dir) >= sizeof(tmp))
            return pp_fail("output path too long: %s", path) ? -1 : -1;
        fd = mkstemp(tmp);
        if (fd < 0)
            return pp_fail("cannot write %s: %s (check that the directory exists and is "
                           "writable)", path, strerror(errno)) ? -1 : -1;
        mask = umask(0);
        umask(mask);
        fchmod(fd, 0666 & ~mask);
        out = fdopen(fd, "w");
        if (!out) {
            rc = errno;
            close(fd);
            unlink(tmp);
            return pp_fail("cannot write %s: %s", path, strerror(rc)) ? -1 : -1;
        }
    }
    errno = 0;
    rc = fill(out, ctx);
    if (rc == 0 && (fflush(out) != 0 || ferror(out)))
        rc = errno ? -errno : -EIO;
    if (!to_stdout && fclose(out) != 0 && rc == 0)
        rc = errno ? -errno : -EIO;
    if (rc == 0 && !direct && rename(tmp, path) != 0)
        rc = -errno;
    if (rc < 0) {
        if (!direct)
            unlink(tmp);
        pp_fail("cannot write %s: %s%s", path, strerror(-rc),
                rc == -ENOSPC ? " (free some space or choose another place with -o)" : "");
        return -1;
    }
    return 0;
}

typedef struct profile_ctx {
    const pp_profile *p;
    const pp_format *f;
    const pp_write_opts *wo;
} profile_ctx;

static int fill_profile(FILE *out, void *ctx)
{
    profile_ctx *c = ctx;
    return c->f->write(c->p, out, c->wo);
}

int pp_report_write(const pp_profile *p, const pp_format *f, const char *path,
                    const pp_write_opts *wo)
{
    profile_ctx c = {p, f, wo};

    if (!f->write)
        return pp_fail("format %s is not written from a profile", f->name) ? -1 : -1;
    return write_via(path, fill_profile, &c);
}

static int fill_copy(FILE *out, void *ctx)
{
    FILE *in = fopen(ctx, "rb");
    char buf[1 << 16];
    size_t n;
    int rc = 0;

    if (!in)
        return -errno;
    while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
        if (fwrite(buf, 1, n, out) != n) {
            rc = errno ? -errno : -EIO;
            break;
        }
    if (ferror(in) && rc == 0)
        rc = -EIO;
    fclose(in);
    return rc;
}

int pp_report_copy(const char *from, const char *path)
{
    return write_via(path, fill_copy, (void *)from);
}

/* ---- the pipeline --------------------------------------------------------- */

void pp_report_default_output(const char *input, const pp_format *f, char *buf, size_t cap)
{
    const char *base = strrchr(input, '/');
    size_t n;

    base = base ? base + 1 : input;
    n = strlen(base);
    if (n >= 5 && strcmp(base + n - 5, ".data") == 0)
        n -= 5;
    if (!n)
        base = "perf", n = 4;
    if (strcmp(f->name, "perf") == 0)
        snprintf(buf, cap, "%.*s-perfpy.data", (int)n, base);
    else
        snprintf(buf, cap, "%.*s%s", (int)n, base, f->ext);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st; (void)flag; (void)ftw;
    return remove(path);
}

static int same_file(const char *a, const char *b)
{
    struct stat x, y;
    return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

static int check_input(const char *in, pp_perf_data_info *info)
{
    int rc = pp_perf_data_scan(in, info);

    if (rc == -ENOENT)
        return pp_fail("cannot read %s: no such file (record one with `perfpy record -f perf "
                       "-o %s -- python app.py` or `perf record -g`)", in, in) ? -1 : -1;
    if (rc == -EACCES || rc == -EPERM)
        return pp_fail("cannot read %s: permission denied (run as the user who recorded it, "
                       "or make it readable: chmod a+r %s)", in, in) ? -1 : -1;
    if (rc == -EINVAL)
        return pp_fail("%s is not a perf.data file, or it is truncated (was `perf record` "
                       "interrupted before it finished writing?)", in) ? -1 : -1;
    if (rc < 0)
        return pp_fail("cannot read %s: %s", in, strerror(-rc)) ? -1 : -1;
    if (info->scanned && info->samples == 0)
        return pp_fail("%s holds no samples: the program ended before perf sampled it, or "
                       "perf could not sample it (record longer, raise the rate with -F/-r, "
                       "or check /proc/sys/kernel/perf_event_paranoid)", in) ? -1 : -1;
    return 0;
}

static void lines_dir_for(const pp_report_opts *o, char *buf, size_t cap)
{
    const char *env = getenv("PERFPY_LINES_DIR");
    char copy[PATH_MAX];

    if (o->lines_dir)
        snprintf(buf, cap, "%s", o->lines_dir);
    else if (env && *env)
        snprintf(buf, cap, "%s", env);
    else if (strcmp(o->input, "-") == 0)
        snprintf(buf, cap, ".");
    else {
        snprintf(copy, sizeof(copy), "%s", o->input);
        snprintf(buf, cap, "%s", dirname(copy));
    }
}

/* --from-script: perf script text in, no perf run. */
static int report_text(const pp_report_opts *o, const pp_format *f, pp_report_result *r)
{
    char lines_dir[PATH_MAX];
    pp_fold_opts fo = {o->no_native, lines_dir, NULL};
    pp_write_opts wo = {o->title};
    int fd, rc;
    double t0 = now_s();

    if (!f->write)
        return pp_fail("format %s needs a perf.data input, not perf script text", f->name) ? -1 : -1;
    fd = strcmp(o->input, "-") == 0 ? 0 : open(o->input, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return pp_fail("cannot read %s: %s", o->input, strerror(errno)) ? -1 : -1;
    lines_dir_for(o, lines_dir, sizeof(lines_dir));
    if (o->output)
        snprintf(r->output, sizeof(r->output), "%s", o->output);
    else
        pp_report_default_output(o->input, f, r->output, sizeof(r->output));
    rc = pp_report_fold_fd(fd, &fo, &r->profile, o->progress < 0 ? isatty(2) : o->progress);
    if (fd)
        close(fd);
    if (rc < 0)
        return -1;
    if (r->profile.samples == 0)
        return pp_fail("%s holds no samples (expected the text of `perf script -F %s`)",
                       o->input, PP_SCRIPT_FIELDS) ? -1 : -1;
    rc = pp_report_write(&r->profile, f, r->output, &wo);
    r->seconds = now_s() - t0;
    return rc;
}

int pp_report(const pp_report_opts *o, pp_report_result *r)
{
    char perf[PATH_MAX], tmp[PATH_MAX], injected[PATH_MAX], lines_dir[PATH_MAX];
    char fixed[PATH_MAX];
    const pp_format *f = o->format ? o->format : pp_format_find("flamegraph");
    const char *data = o->input, *tmpbase = o->tmpdir;
    pp_fold_opts fo = {o->no_native, NULL, NULL};
    pp_write_opts wo = {o->title};
    char **made = NULL;
    int progress = o->progress < 0 ? isatty(2) : o->progress;
    int rc = -1, have_tmp = 0;
    double t0 = now_s();

    memset(r, 0, sizeof(*r));
    if (pp_profile_init(&r->profile) < 0)
        return pp_fail("out of memory") ? -1 : -1;
    if (!o->input)
        return pp_fail("no perf.data given") ? -1 : -1;
    if (o->from_script)
        return report_text(o, f, r);
    if (check_input(o->input, &r->info) < 0)
        return -1;
    if (o->output)
        snprintf(r->output, sizeof(r->output), "%s", o->output);
    else
        pp_report_default_output(o->input, f, r->output, sizeof(r->output));
    if (same_file(o->input, r->output))
        return pp_fail("the output %s is the input itself; choose another name with -o",
                       r->output) ? -1 : -1;
    if (pp_report_find_perf(o->perf, perf, sizeof(perf)) < 0)
        return -1;
    if (!tmpbase || !*tmpbase)
        tmpbase = getenv("TMPDIR");
    snprintf(tmp, sizeof(tmp), "%s/perfpy-report-XXXXXX", tmpbase && *tmpbase ? tmpbase : "/tmp");
    if (!mkdtemp(tmp))
        return pp_fail("cannot make a temporary directory %s: %s (set TMPDIR to a writable "
                       "directory)", tmp, strerror(errno)) ? -1 : -1;
    have_tmp = 1;

    if (r->info.njitdumps) {
        size_t present = 0;
        for (size_t i = 0; i < r->info.njitdumps; i++)
            present += access(r->info.jitdumps[i], R_OK) == 0;
        if (present < r->info.njitdumps)
            fprintf(stderr, "perfpy: warning: %zu of %zu jit dumps named by the recording are "
                    "gone (%s...): their Python frames will be unnamed\n",
                    r->info.njitdumps - present, r->info.njitdumps, r->info.jitdumps[0]);
        if (present) {
            if ((size_t)snprintf(injected, sizeof(injected), "%s/injected.data", tmp) >=
                sizeof(injected))
                goto out;
            if (progress)
                fprintf(stderr, "perfpy: perf inject --jit ...\r");
            rc = pp_report_inject(perf, o->input, injected, tmp, &r->info, &made);
            if (progress)
                fprintf(stderr, "\r\033[K");
            if (rc < 0) {
                explain_newer_writer(perf, tmp, o->input, &r->info);
                goto out;
            }
            data = injected;
            r->injected = 1;
        }
    }

    /* Children that exec'd (subprocess, spawn): see perf_data.c. The input
     * is only ever read, so it is marked on a copy (the injected file is
     * already ours). */
    {
        size_t need = 0;
        if (pp_perf_data_fix_exec_forks(data, 0, &need) == 0 && need) {
            if (data == o->input) {
                if ((size_t)snprintf(fixed, sizeof(fixed), "%s/forks.data", tmp) <
                        sizeof(fixed) && pp_report_copy(o->input, fixed) == 0)
                    data = fixed;
            }
            if (data != o->input)
                pp_perf_data_fix_exec_forks(data, 1, &need);
        }
    }

    lines_dir_for(o, lines_dir, sizeof(lines_dir));
    fo.lines_dir = lines_dir;
    fo.jit = r->injected ? &r->info : NULL;
    if (pp_report_script(perf, data, tmp, &fo, &r->profile, progress, o->inline_frames) < 0) {
        explain_newer_writer(perf, tmp, o->input, &r->info);
        goto out;
    }
    r->profile.lost = r->info.lost;
    if (r->profile.samples == 0) {
        pp_fail("perf script found no samples in %s (record longer, or raise the rate "
                "with -F/-r)", o->input);
        goto out;
    }
    if (strcmp(f->name, "perf") == 0)
        rc = pp_report_copy(data, r->output);
    else
        rc = pp_report_write(&r->profile, f, r->output, &wo);
out:
    if (o->keep || (rc == 0 && strcmp(f->name, "perf") == 0 && r->injected)) {
        /* kept: the jitted-*.so files (perf report needs them) */
        for (size_t i = 0; made && made[i]; i++, r->jitted_kept++)
            free(made[i]);
        free(made);
    } else {
        pp_report_unlink_all(made);
    }
    if (have_tmp) {
        if (o->keep)
            snprintf(r->kept, sizeof(r->kept), "%s", tmp);
        else
            nftw(tmp, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    }
    r->seconds = now_s() - t0;
    return rc < 0 ? -1 : 0;
}

void pp_report_result_free(pp_report_result *r)
{
    pp_profile_free(&r->profile);
}

/* ---- the summary ----------------------------------------------------------- */

static const pp_func_stat *sort_stats;
static int sort_by_own;

static int cmp_stat(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    uint64_t vx = sort_by_own ? sort_stats[x].own : sort_stats[x].total;
    uint64_t vy = sort_by_own ? sort_stats[y].own : sort_stats[y].total;

    if (vx != vy)
        return vx > vy ? -1 : 1;
    return (x > y) - (x < y);
}

static void print_top(FILE *out, const pp_profile *p, const pp_func_stat *st,
                      uint32_t *idx, uint32_t n, int by_own, int top)
{
    double all = p->samples ? (double)p->samples : 1.0;

    sort_stats = st;
    sort_by_own = by_own;
    qsort(idx, n, sizeof(*idx), cmp_stat);
    fprintf(out, "perfpy: top Python functions by %s time (own = innermost Python frame):\n"
            "     own   total  function\n", by_own ? "own" : "total");
    for (uint32_t i = 0; i < n && (int)i < top; i++) {
        const pp_func_stat *s = &st[idx[i]];
        if (!(by_own ? s->own : s->total))
            break;
        fprintf(out, "  %5.1f%%  %5.1f%%  %s\n", 100.0 * (double)s->own / all,
                100.0 * (double)s->total / all, p->frames[idx[i]].label);
    }
}

void pp_report_print_summary(FILE *out, const pp_report_result *r, int top)
{
    const pp_profile *p = &r->profile;
    pp_func_stat *st = pp_profile_func_stats(p);
    uint32_t *idx = malloc((p->nframes ? p->nframes : 1) * sizeof(*idx));
    uint32_t n = 0;

    fprintf(out, "perfpy: %llu samples%s%s%s, %llu lost events, %.1f%% of stacks truncated",
            (unsigned long long)p->samples, p->event[0] ? " (" : "", p->event,
            p->event[0] ? ")" : "", (unsigned long long)p->lost,
            p->samples ? 100.0 * (double)p->truncated / (double)p->samples : 0.0);
    if (p->time_last_ns > p->time_first_ns)
        fprintf(out, ", %.2f s recorded", (double)(p->time_last_ns - p->time_first_ns) / 1e9);
    fputc('\n', out);
    if (p->bad_lines)
        fprintf(out, "perfpy: %llu lines of perf script output were not understood\n",
                (unsigned long long)p->bad_lines);
    if (st && idx) {
        for (uint32_t i = 0; i < p->nframes; i++)
            if (p->frames[i].kind == PP_FRAME_PYTHON && st[i].total)
                idx[n++] = i;
        if (n) {
            print_top(out, p, st, idx, n, 1, top);
            print_top(out, p, st, idx, n, 0, top);
        } else {
            fprintf(out, "perfpy: no Python function in the samples (was the program run "
                    "with perfpy's engine active?)\n");
        }
    }
    free(st);
    free(idx);
    if (r->kept[0])
        fprintf(out, "perfpy: kept intermediate files in %s\n", r->kept);
    if (r->jitted_kept)
        fprintf(out, "perfpy: kept the %zu jitted-*.so files next to %s: `perf report -i %s` "
                "reads them\n", r->jitted_kept, r->info.jitdumps[0], r->output);
    fprintf(out, "perfpy: wrote %s\n", strcmp(r->output, "-") == 0 ? "standard output" : r->output);
}
