/*
 * The report pipeline of report.h, as a driver of named steps over one
 * context: check the input, make the temporary directory, inject (when the
 * recording used jitdump mode), fix up exec'ing children, run perf script
 * folded while it streams, write the profile, clean up.
 *
 *   check_input ─► make_tmp ─► inject ─► fix_forks ─► script ─► write_out ─► finish
 *
 * Every temporary file lives in one mkdtemp directory removed at the end;
 * perf gets --buildid-dir inside it, so ~/.debug is never touched. Format
 * "perf" (a table row whose .recording is set) keeps the jitted ELFs:
 * `perf report` on the injected file needs them.
 */
#include "report.h"
#include "perfpy/profile_format.h"
#include "perf_run.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- perf script text, streamed into the folder ----------------------- */

typedef struct fold_ctx {
    const pp_fold_opts *fo;
    pp_profile *p;
    pp_folder *folder;
    const pp_progress *progress;
    double start, last;
    uint64_t n;
} fold_ctx;

/* CPU seconds (user + system) of this process or of its waited-for children. */
static double cpu_s(int who)
{
    struct rusage ru;

    if (getrusage(who, &ru) != 0)
        return 0;
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static void tell(const pp_progress *p, pp_progress_step step, uint64_t n, double s)
{
    if (p->fn)
        p->fn(p->ctx, step, n, s);
}

static int fold_progress(void *ctx, const pp_raw_sample *s)
{
    fold_ctx *c = ctx;

    if (c->progress->fn && (++c->n & 0x3fff) == 0) {
        double t = now_s();
        if (t - c->start > 1.0 && t - c->last > 0.25) {
            tell(c->progress, PP_PROGRESS_SAMPLES, c->n, t - c->start);
            c->last = t;
        }
    }
    return pp_fold_sample(c->folder, s);
}

/* Folds `perf script` text read from fd into c->p; 0 or a negative errno.
 * Has the shape of pp_perf_script's reader. */
static int fold_fd(int fd, void *ctx)
{
    fold_ctx *c = ctx;
    pp_script_parser *parser = NULL;
    int rc, err;

    if (pp_fold_open(&c->folder, c->p, c->fo) < 0 ||
        pp_script_open(&parser, fold_progress, c) < 0) {
        pp_fold_close(c->folder);
        return -ENOMEM;
    }
    c->start = c->last = now_s();
    rc = pp_script_parse_fd(parser, fd);
    if (now_s() - c->start > 1.0)
        tell(c->progress, PP_PROGRESS_DONE, c->n, now_s() - c->start);
    c->p->bad_lines += pp_script_stats_of(parser)->bad_lines;
    pp_script_close(parser);
    err = pp_fold_close(c->folder);
    return rc < 0 ? rc : err;
}

/* ---- names ------------------------------------------------------------- */

void pp_report_default_output(const char *input, const pp_format *f, char *buf, size_t cap)
{
    const char *base = strrchr(input, '/');
    size_t n;

    base = base ? base + 1 : input;
    n = strlen(base);
    for (size_t i = 0; i < 3; i++) {             /* a recording's or a profile's name */
        static const char *const ends[] = {".data", ".perfpy.gz", ".pb.gz"};
        size_t k = strlen(ends[i]);
        if (n >= k && strncmp(base + n - k, ends[i], k) == 0) {
            n -= k;
            break;
        }
    }
    if (!n)
        base = "perf", n = 4;
    if (f->recording)
        snprintf(buf, cap, "%.*s-perfpy.data", (int)n, base);
    else
        snprintf(buf, cap, "%.*s%s", (int)n, base, f->ext);
}

static void lines_dir_for(const pp_report_opts *o, char *buf, size_t cap)
{
    const char *env = getenv("PERFPY_LINES_DIR");
    char copy[PATH_MAX];
    struct stat st;

    if (o->lines_dir)
        snprintf(buf, cap, "%s", o->lines_dir);
    else if (env && *env)
        snprintf(buf, cap, "%s", env);
    else if (strcmp(o->input, "-") == 0)
        snprintf(buf, cap, ".");
    else if (snprintf(copy, sizeof(copy), "%s.jit", o->input) < (int)sizeof(copy) &&
             stat(copy, &st) == 0 && S_ISDIR(st.st_mode))
        snprintf(buf, cap, "%s", copy);    /* record -f perf keeps them there */
    else {
        snprintf(copy, sizeof(copy), "%s", o->input);
        snprintf(buf, cap, "%s", dirname(copy));
    }
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

/* ---- the steps ------------------------------------------------------------ */

/* What one run of the pipeline holds between its steps. */
typedef struct run {
    const pp_report_opts *o;
    pp_report_result *r;
    const pp_format *f;
    pp_error *e;
    const char *data;             /* what perf script reads: input, injected or fixed */
    char perf[PATH_MAX];
    char tmp[PATH_MAX];           /* "" until made */
    char path[PATH_MAX];          /* injected.data or forks.data in tmp */
    char lines_dir[PATH_MAX];
    char **made;                  /* jitted-*.so files inject wrote */
} run;

static int check_input(run *x)
{
    const char *in = x->o->input;
    pp_error *e = x->e;
    int rc = pp_perf_data_scan(in, &x->r->info);

    if (rc == -ENOENT)
        return pp_error_set(e, rc, "cannot read %s: no such file (record one with `perfpy "
                            "record -f perf -o %s -- python app.py` or `perf record -g`)",
                            in, in);
    if (rc == -EACCES || rc == -EPERM)
        return pp_error_set(e, rc, "cannot read %s: permission denied (run as the user who "
                            "recorded it, or make it readable: chmod a+r %s)", in, in);
    if (rc == -EINVAL)
        return pp_error_set(e, rc, "%s is not a perf.data file (nor a perfpy profile), or it "
                            "is truncated (was `perf record` interrupted before it finished "
                            "writing?)", in);
    if (rc < 0)
        return pp_error_set(e, rc, "cannot read %s: %s", in, strerror(-rc));
    if (x->r->info.scanned && x->r->info.samples == 0)
        return pp_error_set(e, -ENODATA, "%s holds no samples: the program ended before perf "
                            "sampled it, or perf could not sample it (record longer, raise "
                            "the rate with -F/-r, or check /proc/sys/kernel/"
                            "perf_event_paranoid)", in);
    if (same_file(in, x->r->output))
        return pp_error_set(e, -EEXIST, "the output %s is the input itself; choose another "
                            "name with -o", x->r->output);
    return pp_perf_find(x->o->perf, x->perf, sizeof(x->perf), e);
}

static int make_tmp(run *x)
{
    const char *base = x->o->tmpdir;

    if (!base || !*base)
        base = getenv("TMPDIR");
    snprintf(x->tmp, sizeof(x->tmp), "%s/perfpy-report-XXXXXX", base && *base ? base : "/tmp");
    if (mkdtemp(x->tmp))
        return 0;
    pp_error_set(x->e, -errno, "cannot make a temporary directory %s: %s (set TMPDIR to a "
                 "writable directory)", x->tmp, strerror(errno));
    x->tmp[0] = '\0';
    return x->e->code;
}

/* perf inject --jit when the recording names jitdumps that are still there. */
static int inject(run *x)
{
    pp_report_result *r = x->r;
    size_t present = 0;
    int rc;

    for (size_t i = 0; i < r->info.njitdumps; i++)
        present += access(r->info.jitdumps[i], R_OK) == 0;
    if (present < r->info.njitdumps)
        snprintf(r->warning, sizeof(r->warning), "%zu of %zu jit dumps named by the "
                 "recording are gone (%s...): their Python frames will be unnamed",
                 r->info.njitdumps - present, r->info.njitdumps, r->info.jitdumps[0]);
    if (!present || x->o->no_inject)
        return 0;
    if ((size_t)snprintf(x->path, sizeof(x->path), "%s/injected.data", x->tmp) >=
        sizeof(x->path))
        return pp_error_set(x->e, -ENAMETOOLONG, "temporary path too long: %s", x->tmp);
    tell(&x->o->progress, PP_PROGRESS_INJECT, 0, 0);
    r->inject_s = now_s();
    rc = pp_perf_inject(x->perf, x->o->input, x->path, x->tmp, &r->info, &x->made, x->e);
    r->inject_s = now_s() - r->inject_s;
    tell(&x->o->progress, PP_PROGRESS_DONE, 0, 0);
    if (rc < 0) {
        pp_perf_explain_newer_writer(x->perf, x->o->input, &r->info, x->e);
        return rc;
    }
    x->data = x->path;
    r->injected = 1;
    return 0;
}

/* Children that exec'd (subprocess, spawn): see perf_data_fix.c. The input is
 * only ever read, so it is marked on a copy (the injected file is already
 * ours). Best effort: a recording that cannot be fixed is read as it is. */
static void fix_forks(run *x)
{
    size_t need = 0;

    if (pp_perf_data_fix_exec_forks(x->data, 0, &need) != 0 || !need)
        return;
    if (x->data == x->o->input &&
        (size_t)snprintf(x->path, sizeof(x->path), "%s/forks.data", x->tmp) < sizeof(x->path) &&
        pp_output_copy(x->o->input, x->path, NULL) == 0)
        x->data = x->path;
    if (x->data != x->o->input)
        pp_perf_data_fix_exec_forks(x->data, 1, &need);
}

/* The starts and ends of processes and threads perf recorded, as markers
 * on the threads that have samples (a timeline shows them). */
static int mark_tasks(pp_profile *p, const pp_perf_data_info *info)
{
    static const char *const names[2][2] = {{"thread start", "process start"},
                                            {"thread exit", "process exit"}};

    for (size_t i = 0; i < info->ntasks; i++) {
        const struct pp_task_event *t = &info->tasks[i];
        int process = t->kind == PP_TASK_FORK ? t->pid != t->ppid : t->pid == t->tid;
        const char *name = names[t->kind == PP_TASK_EXIT][process];
        int64_t th = pp_profile_find_thread(p, (int32_t)t->pid, (int32_t)t->tid);
        int rc;

        if (th >= 0 && (rc = pp_profile_marker(p, (uint32_t)th, PP_MARKER_PROCESS, t->time,
                                               t->time, name, strlen(name))) < 0)
            return rc;
    }
    return 0;
}

static int script(run *x)
{
    pp_fold_opts fo = {.no_native = x->o->no_native, .lines_dir = x->lines_dir,
                       .jit = x->r->injected ? &x->r->info : NULL,
                       .processes = x->o->processes, .show_perfpy = x->o->show_perfpy,
                       .threads = x->o->threads};
    fold_ctx c = {.fo = &fo, .p = &x->r->profile, .progress = &x->o->progress};
    int rc;

    lines_dir_for(x->o, x->lines_dir, sizeof(x->lines_dir));
    tell(&x->o->progress, PP_PROGRESS_SCRIPT, 0, 0);
    x->r->script_s = now_s();
    rc = pp_perf_script(x->perf, x->data, x->tmp, x->o->inline_frames, fold_fd, &c, x->e);
    x->r->script_s = now_s() - x->r->script_s;
    if (rc < 0) {
        pp_perf_explain_newer_writer(x->perf, x->o->input, &x->r->info, x->e);
        return rc;
    }
    x->r->profile.lost = x->r->info.lost;
    if (x->r->profile.samples == 0)
        return pp_error_set(x->e, -ENODATA, "perf script found no samples in %s (record "
                            "longer, or raise the rate with -F/-r)", x->o->input);
    if ((rc = mark_tasks(&x->r->profile, &x->r->info)) < 0)
        return pp_error_set(x->e, rc, "out of memory");
    return 0;
}

static int write_out(run *x)
{
    pp_write_opts wo = {.title = x->o->title, .threads = x->o->threads};

    if (x->f->recording)
        return pp_output_copy(x->data, x->r->output, x->e);
    return pp_output_write(&x->r->profile, x->f, x->r->output, &wo, x->e);
}

/* The jitted ELFs: kept with --keep, and for a format perf written, which
 * perf report reads with them; else removed. The temporary directory too. */
static void finish(run *x, int rc)
{
    if (x->o->keep || (rc == 0 && x->f->recording && x->r->injected)) {
        for (size_t i = 0; x->made && x->made[i]; i++, x->r->jitted_kept++)
            free(x->made[i]);
        free(x->made);
    } else {
        pp_perf_unlink_all(x->made);
    }
    /* perf report reads the ELFs with the written perf.data, or, for a
     * profile format, with the injected one kept in tmp (--keep) */
    if (x->data)
        snprintf(x->r->jitted_for, sizeof(x->r->jitted_for), "%s",
                 x->f->recording ? x->r->output : x->data);
    if (!x->tmp[0])
        return;
    if (x->o->keep)
        snprintf(x->r->kept, sizeof(x->r->kept), "%s", x->tmp);
    else
        nftw(x->tmp, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* --from-script: perf script text in, no perf run. */
static int report_text(run *x)
{
    pp_fold_opts fo = {.no_native = x->o->no_native, .lines_dir = x->lines_dir,
                       .processes = x->o->processes, .show_perfpy = x->o->show_perfpy,
                       .threads = x->o->threads};
    fold_ctx c = {.fo = &fo, .p = &x->r->profile, .progress = &x->o->progress};
    const char *in = x->o->input;
    int fd, rc;

    if (x->f->recording)
        return pp_error_set(x->e, -EINVAL, "format %s needs a perf.data input, not perf "
                            "script text", x->f->name);
    fd = strcmp(in, "-") == 0 ? 0 : open(in, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return pp_error_set(x->e, -errno, "cannot read %s: %s", in, strerror(errno));
    lines_dir_for(x->o, x->lines_dir, sizeof(x->lines_dir));
    rc = fold_fd(fd, &c);
    if (fd)
        close(fd);
    if (rc < 0)
        return pp_error_set(x->e, rc, "reading perf script text: %s", strerror(-rc));
    if (x->r->profile.samples == 0)
        return pp_error_set(x->e, -ENODATA, "%s holds no samples (expected the text of "
                            "`perf script -F %s`)", in, PP_SCRIPT_FIELDS);
    return write_out(x);
}

/* A profile perfpy wrote rather than a recording: its own file (gzip, or
 * the data of one), or anything named as one. */
static int profile_input(const char *in)
{
    static const char ext[] = ".perfpy.gz";
    uint8_t head[PP_PROFILE_MAGIC_LEN] = {0};
    size_t n = strlen(in);
    int fd = strcmp(in, "-") == 0 ? -1 : open(in, O_RDONLY | O_CLOEXEC);
    ssize_t got = fd >= 0 ? read(fd, head, sizeof(head)) : -1;

    if (fd >= 0)
        close(fd);
    return (got >= 2 && head[0] == 0x1f && head[1] == 0x8b) ||
           pp_is_perfpy(head, got > 0 ? (size_t)got : 0) ||
           (n >= sizeof(ext) - 1 && strcmp(in + n - (sizeof(ext) - 1), ext) == 0);
}

/* A profile perfpy wrote (-f perfpy: all of it), written again in another
 * format: nothing is written unless all of it was read. */
static int report_profile(run *x)
{
    const char *in = x->o->input;
    uint8_t head[PP_PROFILE_MAGIC_LEN] = {0};
    int fd;

    if (x->f->recording)
        return pp_error_set(x->e, -EINVAL, "format %s needs a perf.data input; %s is a "
                            "profile, which holds no recording", x->f->name, in);
    if (same_file(in, x->r->output))
        return pp_error_set(x->e, -EEXIST, "the output %s is the input itself; choose another "
                            "name with -o", x->r->output);
    if ((fd = open(in, O_RDONLY | O_CLOEXEC)) >= 0) {
        ssize_t got = read(fd, head, sizeof(head));
        close(fd);
        if (got >= 0 && !(got >= 2 && head[0] == 0x1f && head[1] == 0x8b) &&
            !pp_is_perfpy(head, (size_t)got))
            return pp_error_set(x->e, -EINVAL, "%s is not a perfpy profile: it is not gzip "
                                "data, as -f perfpy writes (nor a perf.data)", in);
    }
    if (pp_read_profile(in, &x->r->profile, x->e) < 0)
        return x->e->code;
    return write_out(x);
}

int pp_report(const pp_report_opts *o, pp_report_result *r)
{
    run *x;
    int rc, profile = 0;
    double t0 = now_s(), self0 = cpu_s(RUSAGE_SELF), kids0 = cpu_s(RUSAGE_CHILDREN);

    memset(r, 0, sizeof(*r));
    if (pp_profile_init(&r->profile) < 0 || !(x = calloc(1, sizeof(*x))))
        return pp_error_set(&r->err, -ENOMEM, "out of memory");
    *x = (run){.o = o, .r = r, .e = &r->err, .data = o->input,
               .f = o->format ? o->format : pp_format_find("flamegraph")};
    if (!o->input) {
        free(x);
        return pp_error_set(&r->err, -EINVAL, "no perf.data given");
    }
    if (o->output)
        snprintf(r->output, sizeof(r->output), "%s", o->output);
    else
        pp_report_default_output(o->input, x->f, r->output, sizeof(r->output));
    if (o->from_script) {
        rc = report_text(x);
    } else if ((profile = profile_input(o->input))) {
        rc = report_profile(x);
    } else if ((rc = check_input(x)) == 0 && (rc = make_tmp(x)) == 0 &&
               (rc = inject(x)) == 0) {
        fix_forks(x);
        if ((rc = script(x)) == 0)
            rc = write_out(x);
    }
    if (!o->from_script && !profile)
        finish(x, rc);
    free(x);
    r->seconds = now_s() - t0;
    r->own_cpu_s = cpu_s(RUSAGE_SELF) - self0;
    r->perf_cpu_s = cpu_s(RUSAGE_CHILDREN) - kids0;
    return rc;
}

void pp_report_result_free(pp_report_result *r)
{
    pp_profile_free(&r->profile);
    pp_perf_data_info_free(&r->info);
}
