/*
 * perf's runs for the report (see perf_run.h). Order matters for jitdump
 * recordings: `perf inject --jit` writes one jitted-<pid>-<n>.so per Python
 * function next to the dump, and `perf script` reads them, so they are
 * deleted only after perf script is done (and only those that inject made:
 * the directory is listed before and after).
 */
#include "perf_run.h"
#include "perf_script.h"
#include "spawn.h"
#include "profile/htab.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int pp_perf_find(const char *want, char *buf, size_t cap, pp_error *e)
{
    const char *name = want && *want ? want : getenv("PERF");

    if (!name || !*name)
        name = "perf";
    if (pp_which(name, buf, cap) == 0)
        return 0;
    return pp_error_set(e, -ENOENT, "cannot find perf ('%s' is not an executable on PATH): "
                        "install it with `apt-get install linux-perf` (Debian) or `apt-get "
                        "install linux-tools-$(uname -r)` (Ubuntu), or set PERF=/path/to/perf",
                        name);
}

/* ---- running perf and explaining its failures ----------------------------- */

/* argv with stdin from /dev/null, stdout to out_fd (PP_FD_NULL allowed) and
 * stderr to err_path. perf 6.1 runs addr2line for source lines and inline
 * frames and writes to it after it has died (it exits at once on a dso that
 * is no file, "//anon"): with SIGPIPE's default action that kills perf
 * script, now and then. Ignored (kept across exec), the write fails and perf
 * goes on. perfpy kills perf itself when it stops reading. */
static int run_perf(char *const argv[], int out_fd, const char *err_path, pid_t *pid,
                    pp_error *e)
{
    int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    pp_spawn_opts o = {.in_fd = PP_FD_NULL, .out_fd = out_fd,
                       .err_fd = err >= 0 ? err : PP_FD_NULL, .ignore_sigpipe = 1};
    int rc = pp_spawn(argv, &o, pid);

    if (err >= 0)
        close(err);
    if (rc < 0)
        return pp_error_set(e, rc, "cannot start %s: %s", argv[0], strerror(-rc));
    return 0;
}

/* The last bytes of a child's stderr file, for an error message. */
static void read_tail(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "r");
    size_t n = 0;
    long size;

    buf[0] = '\0';
    if (!f)
        return;
    fseek(f, 0, SEEK_END);
    size = ftell(f);
    fseek(f, size > (long)cap - 1 ? size - (long)cap + 1 : 0, SEEK_SET);
    n = fread(buf, 1, cap - 1, f);
    fclose(f);
    buf[n] = '\0';
}

static int describe_status(const char *what, int status, const char *err_path, pp_error *e)
{
    char said[2048], how[128];

    if (WIFEXITED(status))
        snprintf(how, sizeof(how), "failed (exit status %d)", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(how, sizeof(how), "was killed by signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    else
        snprintf(how, sizeof(how), "failed");
    read_tail(err_path, said, sizeof(said));
    if (!said[0])
        return pp_error_set(e, -EIO, "%s %s", what, how);
    return pp_error_set(e, -EIO, "%s %s\nperf said:\n%s%s", what, how, said,
                        said[strlen(said) - 1] == '\n' ? "" : "\n");
}

static int failed(int status)
{
    return !WIFEXITED(status) || WEXITSTATUS(status) != 0;
}

/* ---- a recording from a newer perf --------------------------------------- */

/* The version of the perf in use ("6.1.187" of "perf version 6.1.187"), or
 * "" when it cannot say. */
static void perf_version(const char *perf, char *buf, size_t cap)
{
    char text[256];
    char *argv[] = {(char *)perf, "version", NULL};
    const char *v;
    int status;

    buf[0] = '\0';
    if (pp_capture(argv, 0, NULL, text, sizeof(text), &status) < 0 || status != 0 || !text[0])
        return;
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

void pp_perf_explain_newer_writer(const char *perf, const char *in,
                                  const pp_perf_data_info *info, pp_error *e)
{
    char mine[64];
    size_t used = strlen(e->message);

    if (!info->perf_version[0])
        return;
    perf_version(perf, mine, sizeof(mine));
    if (!mine[0] || version_cmp(info->perf_version, mine) <= 0)
        return;
    if (used && e->message[used - 1] != '\n' && used + 1 < sizeof(e->message))
        e->message[used++] = '\n';
    snprintf(e->message + used, sizeof(e->message) - used,
             "perfpy: %s was recorded by perf %s, and this perf (%s) is %s: an older perf "
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
    if (pp__grow((void **)&s->v, &s->cap, s->n + 2, sizeof(*s->v)) < 0)
        return -1;
    if (!(s->v[s->n] = strdup(x)))
        return -1;
    s->v[++s->n] = NULL;
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

typedef struct seen {
    struct timespec mtime;
    int stale;          /* older than its dump */
} seen;

static int mtime_of(const char *path, struct timespec *t)
{
    struct stat st;

    if (stat(path, &st) != 0)
        return -1;
    *t = st.st_mtim;
    return 0;
}

static int older(const struct timespec *a, const struct timespec *b)
{
    return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

/* What was there before inject: each file's time, and whether it is older
 * than the dump it would come from (dir/jit-<pid>.dump): then no inject of
 * this dump wrote it, and it is what an earlier process with the same pid
 * left (pids wrap, at 32768 by default). NULL when none, or out of memory
 * (then no file already there is taken for inject's). */
static seen *look(const names *s)
{
    seen *v = s->n ? calloc(s->n, sizeof(*v)) : NULL;
    char dump[PATH_MAX];
    struct timespec dt;
    long pid;

    for (size_t i = 0; v && i < s->n; i++) {
        const char *base = strrchr(s->v[i], '/');

        if (!base || mtime_of(s->v[i], &v[i].mtime) != 0 ||
            sscanf(base, "/jitted-%ld-", &pid) != 1)
            continue;
        snprintf(dump, sizeof(dump), "%.*s/jit-%ld.dump", (int)(base - s->v[i]), s->v[i], pid);
        v[i].stale = mtime_of(dump, &dt) == 0 && older(&v[i].mtime, &dt);
    }
    return v;
}

/* Whether inject made path: new, or a stale file it wrote over. One that
 * was newer than the dump is an earlier report's of the same recording,
 * kept for its perf.data (format perf): left alone, though inject wrote it
 * again (perf gives each write a build id of its own, so bytes tell nothing). */
static int made_by_inject(const names *before, const seen *b, const char *path)
{
    struct timespec now;

    for (size_t i = 0; i < before->n; i++)
        if (strcmp(before->v[i], path) == 0)
            return b && b[i].stale && mtime_of(path, &now) == 0 &&
                   (now.tv_sec != b[i].mtime.tv_sec || now.tv_nsec != b[i].mtime.tv_nsec);
    return 1;
}

static void list_all_jitted(const pp_perf_data_info *info, names *out)
{
    for (size_t i = 0; i < info->njitdumps; i++)
        list_jitted(info->jitdumps[i], out);
}

void pp_perf_unlink_all(char **made)
{
    for (size_t i = 0; made && made[i]; i++) {
        unlink(made[i]);
        free(made[i]);
    }
    free(made);
}

int pp_perf_inject(const char *perf, const char *in, const char *out, const char *tmp,
                   const pp_perf_data_info *info, char ***made, pp_error *e)
{
    char bid[PATH_MAX], err[PATH_MAX];
    names before = {0}, after = {0}, mine = {0};
    seen *was;
    char *argv[] = {(char *)perf, "--buildid-dir", bid, "inject", "--jit",
                    "-i", (char *)in, "-o", (char *)out, NULL};
    pid_t pid;
    int status, rc;

    snprintf(bid, sizeof(bid), "%s/buildid", tmp);
    snprintf(err, sizeof(err), "%s/inject.err", tmp);
    mkdir(bid, 0700);
    list_all_jitted(info, &before);
    was = look(&before);
    rc = run_perf(argv, PP_FD_NULL, err, &pid, e);
    if (rc == 0)
        rc = pp_wait(pid, &status);
    list_all_jitted(info, &after);
    for (size_t i = 0; i < after.n; i++)
        if (made_by_inject(&before, was, after.v[i]) && names_add(&mine, after.v[i]) < 0)
            break;
    free(was);
    if (rc == 0 && failed(status))
        rc = describe_status("perf inject --jit", status, err, e);
    if (rc < 0) {
        pp_perf_unlink_all(mine.v);
        memset(&mine, 0, sizeof(mine));
    } else {
        *made = mine.v;            /* NULL-terminated, or NULL when none */
        memset(&mine, 0, sizeof(mine));
    }
    names_free(&before);
    names_free(&after);
    return rc;
}

int pp_perf_script(const char *perf, const char *data, const char *tmp, int inline_frames,
                   int (*read)(int fd, void *ctx), void *ctx, pp_error *e)
{
    char bid[PATH_MAX], err[PATH_MAX];
    char *argv[] = {(char *)perf, "--buildid-dir", bid, "script", "-F", PP_SCRIPT_FIELDS,
                    "--max-stack", "4096", "-i", (char *)data,
                    inline_frames ? NULL : "--no-inline", NULL};
    int pipefd[2], status, rc;
    pid_t pid;

    snprintf(bid, sizeof(bid), "%s/buildid", tmp);
    snprintf(err, sizeof(err), "%s/script.err", tmp);
    mkdir(bid, 0700);
    if (pipe2(pipefd, O_CLOEXEC) != 0)
        return pp_error_set(e, -errno, "cannot make a pipe: %s", strerror(errno));
    rc = run_perf(argv, pipefd[1], err, &pid, e);
    close(pipefd[1]);
    if (rc < 0) {
        close(pipefd[0]);
        return rc;
    }
    rc = read(pipefd[0], ctx);
    close(pipefd[0]);
    if (rc < 0)
        kill(pid, SIGTERM);
    pp_wait(pid, &status);
    if (rc < 0)
        return pp_error_set(e, rc, "reading perf script's output: %s", strerror(-rc));
    if (failed(status))
        return describe_status("perf script", status, err, e);
    return 0;
}
