/*
 * A profile perfpy wrote, read back (what `perfpy diff` compares and
 * `perfpy report` writes again): perfpy's own file of -f perfpy, all of
 * the profile (read_perfpy.c), the collapsed text of -f collapsed (flamegraph.pl's, py-spy's and the 3.15
 * sampler's collapsed files read the same way), or the gzipped pprof of
 * -f pprof. Input is hostile: every length is checked, a line or record
 * that is not understood is skipped and counted, nothing is read past the
 * buffer.
 *
 *   collapsed   <module> (/app/x.py:1);main (/app/x.py:5);memcpy 812\n
 *               a frame "name (file:line)" or "name (file)" whose file ends
 *               in .py or reads "<...>" is a Python frame, "[...]" and the
 *               roots "python3 (pid 4609)", "worker-1 (tid 4612)" markers,
 *               any other a native one
 *   pprof       Profile {sample_type, sample {location_id, value},
 *               location {id, line {function_id, line}}, function {id, name,
 *               system_name, filename, start_line}, string_table, period}:
 *               a function whose system_name starts with "py::" is Python
 *               (out_pprof.c writes them so); values [samples, cpu|wall ns]
 */
#include "report.h"
#include "perfpy/profile_format.h"
#include "profile/htab.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define MAX_BYTES (1ull << 31)          /* 2 GiB, gzipped or not */
#define MAX_DEPTH 65536

/* ---- collapsed text ------------------------------------------------------ */

static int ends_with(const char *s, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);
    return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

/* One frame label of a collapsed line into the profile. */
static int64_t label_frame(pp_profile *p, const char *s, size_t n)
{
    const char *open = NULL;

    for (size_t i = n; i-- > 1;)          /* the last " (" */
        if (s[i] == '(' && s[i - 1] == ' ') {
            open = s + i;
            break;
        }
    if (n >= 2 && s[0] == '[' && s[n - 1] == ']')
        return pp_profile_frame(p, PP_FRAME_MARKER, s, n, NULL, 0, 0);
    /* a process's or a thread's root: "python3 (pid 4609)", "worker-1 (tid 4612)" */
    if (open && s + n - open > 6 && (memcmp(open, "(pid ", 5) == 0 || memcmp(open, "(tid ", 5) == 0)
        && s[n - 1] == ')' && strspn(open + 5, "0123456789") == (size_t)(s + n - 1 - open - 5))
        return pp_profile_frame(p, PP_FRAME_MARKER, s, n, NULL, 0, 0);
    if (open && s[n - 1] == ')') {
        const char *file = open + 1, *end = s + n - 1, *colon = NULL;
        size_t fl;
        long line = 0;
        for (const char *c = end; c-- > file;)
            if (*c == ':') {
                colon = c;
                break;
            }
        if (colon && colon + 1 < end && strspn(colon + 1, "0123456789") == (size_t)(end - colon - 1)
            && end - colon - 1 <= 9)
            line = strtol(colon + 1, NULL, 10);
        else
            colon = end;
        fl = (size_t)(colon - file);
        if (fl && (ends_with(file, fl, ".py") || (file[0] == '<' && file[fl - 1] == '>')))
            return pp_profile_frame(p, PP_FRAME_PYTHON, s, (size_t)(open - 1 - s), file, fl,
                                    (int)line);
    }
    return pp_profile_frame(p, PP_FRAME_NATIVE, s, n, NULL, 0, 0);
}

static int collapsed_line(pp_profile *p, const char *s, size_t n, uint32_t *ids)
{
    const char *sp = NULL;
    unsigned long long count;
    size_t nids = 0, at = 0, stack_len;
    char *end;

    for (size_t i = n; i-- > 0;)
        if (s[i] == ' ') {
            sp = s + i;
            break;
        }
    if (!sp || sp == s || sp + 1 == s + n || !memchr("0123456789", sp[1], 10))
        return -EINVAL;
    errno = 0;
    {
        char num[24];
        size_t k = (size_t)(s + n - sp - 1);
        if (k >= sizeof(num))
            return -EINVAL;
        memcpy(num, sp + 1, k);
        num[k] = '\0';
        count = strtoull(num, &end, 10);
        if (errno || *end)
            return -EINVAL;
    }
    stack_len = (size_t)(sp - s);
    while (at < stack_len && nids < MAX_DEPTH) {
        const char *semi = memchr(s + at, ';', stack_len - at);
        size_t fl = semi ? (size_t)(semi - (s + at)) : stack_len - at;
        int64_t id;
        if (fl) {
            if ((id = label_frame(p, s + at, fl)) < 0)
                return (int)id;
            ids[nids++] = (uint32_t)id;
        }
        at += fl + 1;
    }
    if (!count)
        return 0;
    return pp_profile_add(p, ids, nids, count, 0) < 0 ? -ENOMEM : 0;
}

static int read_collapsed(const char *d, size_t len, pp_profile *p)
{
    uint32_t *ids = malloc(MAX_DEPTH * sizeof(*ids));
    size_t at = 0;
    int rc = 0;

    if (!ids)
        return -ENOMEM;
    while (at < len && rc != -ENOMEM) {
        const char *nl = memchr(d + at, '\n', len - at);
        size_t n = nl ? (size_t)(nl - (d + at)) : len - at;
        if (n && d[at + n - 1] == '\r')
            n--;
        if (n && d[at] != '#') {
            rc = collapsed_line(p, d + at, n, ids);
            if (rc == -EINVAL)
                p->bad_lines++;
        }
        at += (nl ? n + 1 : n) + (nl && d[at + n] == '\r');
    }
    free(ids);
    return rc == -ENOMEM ? rc : 0;
}

/* ---- pprof ---------------------------------------------------------------- */

typedef struct pb {
    const uint8_t *p, *end;
} pb;

static int varint(pb *b, uint64_t *v)
{
    uint64_t x = 0;

    for (int shift = 0; shift < 64 && b->p < b->end; shift += 7) {
        uint8_t c = *b->p++;
        x |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return -EINVAL;
}

/* The next field: its number, and its value (wire type 0) or bytes (2,
 * in *sub, *v its length); *wire its wire type. 1: a field, 0: the end,
 * -EINVAL: damaged. */
static int next_wire(pb *b, unsigned *field, unsigned *wire, uint64_t *v, pb *sub)
{
    uint64_t key, n;

    if (b->p >= b->end)
        return 0;
    if (varint(b, &key) < 0)
        return -EINVAL;
    *field = (unsigned)(key >> 3);
    *wire = (unsigned)(key & 7);
    switch (key & 7) {
    case 0:
        return varint(b, v) < 0 ? -EINVAL : 1;
    case 1:
        if (b->end - b->p < 8)
            return -EINVAL;
        b->p += 8;
        *v = 0;
        return 1;
    case 2:
        if (varint(b, &n) < 0 || n > (uint64_t)(b->end - b->p))
            return -EINVAL;
        sub->p = b->p;
        sub->end = b->p + n;
        b->p += n;
        *v = n;
        return 1;
    case 5:
        if (b->end - b->p < 4)
            return -EINVAL;
        b->p += 4;
        *v = 0;
        return 1;
    default:
        return -EINVAL;
    }
}

static int next_field(pb *b, unsigned *field, uint64_t *v, pb *sub)
{
    unsigned wire;

    return next_wire(b, field, &wire, v, sub);
}

/* Packed or single varints of a repeated field, appended to *arr. */
static int repeated(const pb *sub, uint64_t v, int packed, uint64_t **arr, size_t *n, size_t *cap)
{
    pb b = *sub;
    uint64_t x;

    if (!packed) {
        if (pp__grow((void **)arr, cap, *n + 1, sizeof(**arr)) < 0)
            return -ENOMEM;
        (*arr)[(*n)++] = v;
        return 0;
    }
    while (b.p < b.end) {
        if (varint(&b, &x) < 0)
            return -EINVAL;
        if (pp__grow((void **)arr, cap, *n + 1, sizeof(**arr)) < 0)
            return -ENOMEM;
        (*arr)[(*n)++] = x;
    }
    return 0;
}

typedef struct pp_fn {
    uint64_t id, name, system_name, filename, start_line;
} pp_fn;

typedef struct pp_loc {
    uint64_t id, function, line;   /* the first line: perfpy writes one */
} pp_loc;

typedef struct pprof {
    const uint8_t **strs;
    size_t *lens, nstrs, strs_cap, lens_cap;
    pp_fn *fns;
    size_t nfns, fns_cap;
    pp_loc *locs;
    size_t nlocs, locs_cap;
    uint64_t period, wall;
    pb samples[1];                   /* the whole message: samples in a second pass */
} pprof;

static const char *str_of(const pprof *x, uint64_t i, size_t *len)
{
    if (i >= x->nstrs) {
        *len = 0;
        return "";
    }
    *len = x->lens[i];
    return (const char *)x->strs[i];
}

static int read_function(pprof *x, pb *m)
{
    pp_fn f = {0};
    unsigned field;
    uint64_t v;
    pb sub;
    int r;

    while ((r = next_field(m, &field, &v, &sub)) == 1)
        switch (field) {
        case 1: f.id = v; break;
        case 2: f.name = v; break;
        case 3: f.system_name = v; break;
        case 4: f.filename = v; break;
        case 5: f.start_line = v; break;
        default: break;
        }
    if (r < 0 || pp__grow((void **)&x->fns, &x->fns_cap, x->nfns + 1, sizeof(f)) < 0)
        return r < 0 ? r : -ENOMEM;
    x->fns[x->nfns++] = f;
    return 0;
}

static int read_location(pprof *x, pb *m)
{
    pp_loc l = {0};
    unsigned field, lf;
    uint64_t v, lv;
    pb sub, s2;
    int r;

    while ((r = next_field(m, &field, &v, &sub)) == 1) {
        if (field == 1)
            l.id = v;
        else if (field == 4 && !l.function)
            while (next_field(&sub, &lf, &lv, &s2) == 1) {
                if (lf == 1)
                    l.function = lv;
                else if (lf == 2)
                    l.line = lv;
            }
    }
    if (r < 0 || pp__grow((void **)&x->locs, &x->locs_cap, x->nlocs + 1, sizeof(l)) < 0)
        return r < 0 ? r : -ENOMEM;
    x->locs[x->nlocs++] = l;
    return 0;
}

/* First pass: strings, functions, locations, period, the value type. */
static int read_tables(pprof *x, pb all)
{
    unsigned field;
    uint64_t v, nsample_types = 0;
    pb sub;
    int r;

    while ((r = next_field(&all, &field, &v, &sub)) == 1) {
        if (field == 6) {
            if (pp__grow((void **)&x->strs, &x->strs_cap, x->nstrs + 1, sizeof(*x->strs)) < 0 ||
                pp__grow((void **)&x->lens, &x->lens_cap, x->nstrs + 1, sizeof(*x->lens)) < 0)
                return -ENOMEM;
            x->strs[x->nstrs] = sub.p;
            x->lens[x->nstrs++] = (size_t)(sub.end - sub.p);
        } else if (field == 5 && (r = read_function(x, &sub)) < 0) {
            return r;
        } else if (field == 4 && (r = read_location(x, &sub)) < 0) {
            return r;
        } else if (field == 12) {
            x->period = v;
        } else if (field == 1 && nsample_types++ == 1) {
            unsigned f2;
            uint64_t v2;
            pb s2;
            while (next_field(&sub, &f2, &v2, &s2) == 1)
                if (f2 == 1)
                    x->wall = v2;      /* its type's string: "wall"? (checked later) */
        }
    }
    return r;
}

/* perfpy's ids are 1..n in order: looked up there first */
static const pp_fn *fn_of(const pprof *x, uint64_t id)
{
    if (id >= 1 && id <= x->nfns && x->fns[id - 1].id == id)
        return &x->fns[id - 1];
    for (size_t i = 0; i < x->nfns; i++)
        if (x->fns[i].id == id)
            return &x->fns[i];
    return NULL;
}

static const pp_loc *loc_of(const pprof *x, uint64_t id)
{
    if (id >= 1 && id <= x->nlocs && x->locs[id - 1].id == id)
        return &x->locs[id - 1];
    for (size_t i = 0; i < x->nlocs; i++)
        if (x->locs[i].id == id)
            return &x->locs[i];
    return NULL;
}

/* A location's profile frame. */
static int64_t loc_frame(pp_profile *p, const pprof *x, uint64_t id)
{
    const pp_loc *l = loc_of(x, id);
    const pp_fn *f = l ? fn_of(x, l->function) : NULL;
    size_t nl, sl, fl;
    const char *name, *sys, *file;

    if (!f)
        return pp_profile_frame(p, PP_FRAME_MARKER, "[unknown]", 9, NULL, 0, 0);
    name = str_of(x, f->name, &nl);
    sys = str_of(x, f->system_name, &sl);
    file = str_of(x, f->filename, &fl);
    if (sl >= 4 && memcmp(sys, "py::", 4) == 0)
        return pp_profile_frame(p, PP_FRAME_PYTHON, name, nl, file, fl,
                                (int)(l->line ? l->line : f->start_line));
    if (nl >= 2 && name[0] == '[' && name[nl - 1] == ']')
        return pp_profile_frame(p, PP_FRAME_MARKER, name, nl, NULL, 0, 0);
    return pp_profile_frame(p, PP_FRAME_NATIVE, name, nl, file, fl, 0);
}

static int read_sample(pp_profile *p, const pprof *x, pb *m, uint32_t *ids)
{
    uint64_t *locs = NULL, *vals = NULL, v;
    size_t nl = 0, nv = 0, cl = 0, cv = 0, nids = 0;
    unsigned field, wire;
    pb sub;
    int r, rc = 0;

    while (rc == 0 && (r = next_wire(m, &field, &wire, &v, &sub)) == 1) {
        if (field == 1 && (wire == 0 || wire == 2))
            rc = repeated(&sub, v, wire == 2, &locs, &nl, &cl);
        else if (field == 2 && (wire == 0 || wire == 2))
            rc = repeated(&sub, v, wire == 2, &vals, &nv, &cv);
    }
    if (r < 0 || rc == -EINVAL)
        rc = -EINVAL;
    for (size_t i = nl; rc == 0 && i-- > 0 && nids < MAX_DEPTH;) {   /* leaf first -> root first */
        int64_t id = loc_frame(p, x, locs[i]);
        if (id < 0)
            rc = (int)id;
        else
            ids[nids++] = (uint32_t)id;
    }
    if (rc == 0 && nv && vals[0] && pp_profile_add(p, ids, nids, vals[0], nv > 1 ? vals[1] : 0) < 0)
        rc = -ENOMEM;
    free(locs);
    free(vals);
    return rc;
}

static int read_pprof(const uint8_t *d, size_t len, pp_profile *p)
{
    pprof x;
    pb all = {d, d + len}, sub;
    uint32_t *ids = malloc(MAX_DEPTH * sizeof(*ids));
    unsigned field;
    uint64_t v;
    size_t wl;
    int r, rc;

    memset(&x, 0, sizeof(x));
    if (!ids)
        return -ENOMEM;
    rc = read_tables(&x, all);
    if (rc == 0 && x.wall && strncmp(str_of(&x, x.wall, &wl), "wall", 4) == 0 && wl == 4) {
        p->value = PP_VALUE_WALL;
        p->period_ns = x.period;
    }
    while (rc == 0 && (r = next_field(&all, &field, &v, &sub)) == 1)
        if (field == 2 && (rc = read_sample(p, &x, &sub, ids)) == -EINVAL) {
            p->bad_lines++;
            rc = 0;
        }
    free(ids);
    free(x.strs);
    free(x.lens);
    free(x.fns);
    free(x.locs);
    return rc;
}

/* ---- the file ------------------------------------------------------------- */

/* The data inside a gzip stream (malloc'ed); *cut when the stream ended
 * early (what came before is there: a cut perfpy profile is said as such). */
static int gunzip(const uint8_t *d, size_t len, uint8_t **out, size_t *out_len, int *cut)
{
    z_stream z;
    size_t cap = len * 4 + 4096, n = 0;
    uint8_t *buf = malloc(cap);
    int zr = Z_OK;

    memset(&z, 0, sizeof(z));
    if (!buf || inflateInit2(&z, 15 + 32) != Z_OK) {
        free(buf);
        return -ENOMEM;
    }
    z.next_in = (Bytef *)d;
    z.avail_in = len > UINT32_MAX ? UINT32_MAX : (uInt)len;
    while (zr == Z_OK) {
        if (n == cap) {
            uint8_t *more = cap < MAX_BYTES ? realloc(buf, cap * 2) : NULL;
            if (!more) {
                zr = Z_MEM_ERROR;
                break;
            }
            buf = more;
            cap *= 2;
        }
        z.next_out = buf + n;
        z.avail_out = (uInt)(cap - n > UINT32_MAX ? UINT32_MAX : cap - n);
        zr = inflate(&z, Z_NO_FLUSH);
        n = (size_t)(z.next_out - buf);
    }
    inflateEnd(&z);
    *cut = zr == Z_BUF_ERROR;          /* no more input, no end of stream */
    if (zr != Z_STREAM_END && !(*cut && n)) {
        free(buf);
        return zr == Z_MEM_ERROR ? -ENOMEM : -EINVAL;
    }
    *out = buf;
    *out_len = n;
    return 0;
}

/* What a file read as a profile was, and why it could not be read. */
typedef struct what {
    int perfpy;                    /* perfpy's own */
    int cut;                       /* its gzip stream ended early */
    pp_perfpy_error err;
} what;

static int read_any(const uint8_t *d, size_t len, pp_profile *p, what *w)
{
    uint8_t *raw;
    size_t n;
    int rc;

    memset(w, 0, sizeof(*w));
    if (pp_is_perfpy(d, len)) {                 /* not compressed: read as it is */
        w->perfpy = 1;
        return pp_read_perfpy(d, len, p, &w->err);
    }
    if (len >= 2 && d[0] == 0x1f && d[1] == 0x8b) {
        if ((rc = gunzip(d, len, &raw, &n, &w->cut)) < 0)
            return rc;
        if ((w->perfpy = pp_is_perfpy(raw, n)))
            rc = w->cut ? -EINVAL : pp_read_perfpy(raw, n, p, &w->err);
        else
            rc = w->cut ? -EINVAL : read_pprof(raw, n, p);
        free(raw);
        return rc;
    }
    return read_collapsed((const char *)d, len, p);
}

int pp_read_profile_buffer(const uint8_t *d, size_t len, pp_profile *p)
{
    what w;
    int rc = read_any(d, len, p, &w);

    return rc == -EPROTO || rc == -ENOMSG ? -EINVAL : rc;
}

/* The sentence for a perfpy profile that could not be read. */
static int perfpy_error(const char *path, int rc, const what *w, pp_error *e)
{
    if (w->cut)
        return pp_error_set(e, -EINVAL, "%s is a perfpy profile cut short: its gzip stream "
                            "ends early (a copy or a write that did not finish)", path);
    if (rc == -EPROTO)
        return pp_error_set(e, rc, "%s is a perfpy profile of version %u, and this perfpy "
                            "reads version %u: read it with the perfpy that wrote it", path,
                            w->err.version, PP_PROFILE_VERSION);
    if (rc == -EINVAL)
        return pp_error_set(e, rc, "%s is a damaged perfpy profile: %s (at byte %zu of its "
                            "data)", path, w->err.why, w->err.at);
    return pp_error_set(e, rc, "cannot read %s: %s", path, strerror(-rc));
}

int pp_read_profile(const char *path, pp_profile *p, pp_error *e)
{
    struct stat st;
    uint8_t *buf = NULL;
    size_t got = 0;
    int fd = strcmp(path, "-") == 0 ? 0 : open(path, O_RDONLY | O_CLOEXEC), rc;
    what w = {0};

    if (fd < 0)
        return pp_error_set(e, -errno, "cannot read %s: %s", path, strerror(errno));
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        close(fd);
        return pp_error_set(e, -EISDIR, "%s is a directory, not a profile", path);
    }
    for (size_t cap = 0;;) {
        ssize_t r;
        if (got == cap) {
            uint8_t *more = cap < MAX_BYTES ? realloc(buf, cap ? cap * 2 : 1 << 16) : NULL;
            if (!more) {
                free(buf);
                if (fd)
                    close(fd);
                return pp_error_set(e, -EFBIG, "%s is too large to read (over 2 GiB)", path);
            }
            buf = more;
            cap = cap ? cap * 2 : 1 << 16;
        }
        if ((r = read(fd, buf + got, cap - got)) <= 0) {
            if (r < 0 && errno == EINTR)
                continue;
            rc = r < 0 ? -errno : 0;
            break;
        }
        got += (size_t)r;
    }
    if (fd)
        close(fd);
    if (rc == 0)
        rc = read_any(buf, got, p, &w);
    free(buf);
    if (rc < 0 && w.perfpy)
        return perfpy_error(path, rc, &w, e);
    if (rc == -EINVAL)
        return pp_error_set(e, rc, "%s is not a profile perfpy can read (perfpy's own, "
                            "collapsed stacks, or perfpy's pprof: -f perfpy, -f collapsed or "
                            "-f pprof)", path);
    if (rc < 0)
        return pp_error_set(e, rc, "cannot read %s: %s", path, strerror(-rc));
    if (!p->samples)
        return pp_error_set(e, -ENODATA, "%s holds no samples (expected perfpy's own "
                            "profile, collapsed stacks \"a;b;c 12\" or perfpy's pprof)", path);
    return 0;
}
