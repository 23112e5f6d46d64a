/*
 * One profile per interval, to a directory (see every.h):
 *
 *   interval k's profile ──► held[] (in order) ──► write DIR/perfpy-<start>.pb.gz
 *                               ▲    │ cannot (ENOSPC, EIO...): stays held,
 *                               │    │ tried again with the next interval;
 *                               │    ▼ more than pending_max: the oldest dropped
 *                               └── next interval         and counted
 *   after a file is written: perfpy's files in DIR (perfpy-*.EXT, oldest
 *   first by name, which is by time) beyond --keep N or SIZE removed
 *
 * Files are written whole or not at all (write.c: a temporary file renamed),
 * so a full disk leaves no piece of a profile, and a store shipping the
 * directory never reads half a file. Memory stays bounded: at most
 * pending_max profiles held, each the size of one interval's.
 */
#include "every.h"
#include "profile/htab.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct pp_every {
    pp_every_opts o;
    pp_profile *held[PP_EVERY_PENDING * 4];
    size_t nheld;
    int failing;                    /* the last write failed (said once) */
    pp_every_stats st;
    char last[4096];                /* the last name written: never twice */
};

int pp_every_open(pp_every **out, const pp_every_opts *o, pp_error *e)
{
    pp_every *x;
    struct stat st;

    *out = NULL;
    if (mkdir(o->dir, 0777) != 0 && errno != EEXIST)
        return pp_error_set(e, -errno, "cannot make the directory %s: %s", o->dir,
                            strerror(errno));
    if (stat(o->dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return pp_error_set(e, -ENOTDIR, "%s is not a directory (--every writes one file "
                            "per interval into -o DIR)", o->dir);
    if (access(o->dir, W_OK | X_OK) != 0)
        return pp_error_set(e, -errno, "cannot write into %s: %s", o->dir, strerror(errno));
    if (!(x = calloc(1, sizeof(*x))))
        return pp_error_set(e, -ENOMEM, "out of memory");
    x->o = *o;
    if (!x->o.pending_max || x->o.pending_max > PP_EVERY_PENDING * 4)
        x->o.pending_max = PP_EVERY_PENDING;
    *out = x;
    return 0;
}

void pp_every_name(const pp_every *e, uint64_t unix_ns, char *buf, size_t cap)
{
    time_t t = (time_t)(unix_ns / 1000000000ull);
    struct tm tm;
    char stamp[32];

    gmtime_r(&t, &tm);
    strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
    snprintf(buf, cap, "%s/perfpy-%s%s", e->o.dir, stamp, e->o.format->ext);
}

/* A name not used yet: the stamp, else the stamp with -2, -3... */
static void fresh_name(pp_every *e, const pp_profile *p, char *buf, size_t cap)
{
    char base[4096];
    size_t ext = strlen(e->o.format->ext), n;
    struct stat st;

    pp_every_name(e, p->time_unix_ns, base, sizeof(base));
    snprintf(buf, cap, "%s", base);
    n = strlen(base) - ext;
    for (int k = 2; (strcmp(buf, e->last) == 0 || stat(buf, &st) == 0) && k < 1000; k++)
        snprintf(buf, cap, "%.*s-%d%s", (int)n, base, k, e->o.format->ext);
}

/* ---- the bound ---------------------------------------------------------- */

typedef struct kept_file {
    char name[256];
    off_t size;
} kept_file;

static int by_name(const void *a, const void *b)
{
    return strcmp(((const kept_file *)a)->name, ((const kept_file *)b)->name);
}

/* Whether name is one of perfpy's files of this format. */
static int ours(const pp_every *e, const char *name)
{
    size_t n = strlen(name), ext = strlen(e->o.format->ext);

    return strncmp(name, "perfpy-", 7) == 0 && n > 7 + ext &&
           strcmp(name + n - ext, e->o.format->ext) == 0;
}

/* perfpy's files beyond --keep N or SIZE, oldest first, removed. */
static void bound(pp_every *e)
{
    DIR *d;
    struct dirent *de;
    kept_file *f = NULL;
    size_t n = 0, cap = 0, first = 0;
    uint64_t total = 0;
    char path[4096];
    struct stat st;

    if ((!e->o.keep_files && !e->o.keep_bytes) || !(d = opendir(e->o.dir)))
        return;
    while ((de = readdir(d)) != NULL) {
        if (!ours(e, de->d_name) || strlen(de->d_name) >= sizeof(f->name))
            continue;
        snprintf(path, sizeof(path), "%s/%s", e->o.dir, de->d_name);
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        if (pp__grow((void **)&f, &cap, n + 1, sizeof(*f)) < 0)
            break;
        snprintf(f[n].name, sizeof(f[n].name), "%s", de->d_name);
        f[n++].size = st.st_size;
        total += (uint64_t)st.st_size;
    }
    closedir(d);
    qsort(f, n, sizeof(*f), by_name);
    /* the newest file stays, even alone above SIZE: the bound removes what
     * is old, never the interval just written */
    while (first + 1 < n && ((e->o.keep_files && n - first > (size_t)e->o.keep_files) ||
                             (e->o.keep_bytes && total > e->o.keep_bytes))) {
        snprintf(path, sizeof(path), "%s/%s", e->o.dir, f[first].name);
        if (unlink(path) == 0)
            e->st.removed++;
        total -= (uint64_t)f[first++].size;
    }
    free(f);
}

/* ---- writing ----------------------------------------------------------- */

/* The oldest held interval written: 0, or -errno (it stays held). */
static int write_oldest(pp_every *e)
{
    pp_profile *p = e->held[0];
    pp_write_opts wo = {.threads = e->o.threads};
    pp_error err;
    char path[4096];
    int rc;

    fresh_name(e, p, path, sizeof(path));
    if ((rc = pp_output_write(p, e->o.format, path, &wo, &err)) < 0) {
        if (!e->failing)
            fprintf(stderr, "perfpy: %s; the interval is kept in memory and written when "
                    "it can be (at most %zu intervals are kept)\n", err.message,
                    e->o.pending_max);
        e->failing = 1;
        return rc;
    }
    if (e->failing)
        fprintf(stderr, "perfpy: %s written: the intervals kept in memory are being "
                "written again\n", path);
    e->failing = 0;
    snprintf(e->last, sizeof(e->last), "%s", path);
    e->st.written++;
    e->st.samples += p->samples;
    pp_profile_free(p);
    free(p);
    memmove(e->held, e->held + 1, (--e->nheld) * sizeof(*e->held));
    bound(e);
    return 0;
}

static void drop_oldest(pp_every *e)
{
    pp_profile *p = e->held[0];

    e->st.dropped++;
    e->st.dropped_samples += p->samples;
    fprintf(stderr, "perfpy: an interval of %llu samples could not be written and is "
            "dropped (%llu intervals dropped so far)\n", (unsigned long long)p->samples,
            (unsigned long long)e->st.dropped);
    pp_profile_free(p);
    free(p);
    memmove(e->held, e->held + 1, (--e->nheld) * sizeof(*e->held));
}

static void flush(pp_every *e)
{
    while (e->nheld && write_oldest(e) == 0)
        ;
}

int pp_every_put(pp_every *e, pp_profile *p)
{
    if (!p->samples) {                  /* nothing ran: no file */
        pp_profile_free(p);
        free(p);
    } else {
        if (e->nheld == e->o.pending_max)
            drop_oldest(e);
        e->held[e->nheld++] = p;
    }
    flush(e);
    e->st.waiting = e->nheld;
    return (int)e->nheld;
}

pp_every_stats pp_every_stats_of(const pp_every *e)
{
    return e->st;
}

pp_every_stats pp_every_close(pp_every *e)
{
    pp_every_stats st;

    flush(e);
    while (e->nheld)
        drop_oldest(e);
    e->st.waiting = 0;
    st = e->st;
    free(e);
    return st;
}
