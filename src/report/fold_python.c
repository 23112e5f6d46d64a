/*
 * Python frames: perf's "py::<qualname>:<filename>" symbol, at an address in
 * a trampoline (or a qualname and a file as sample mode's reader gave
 * them: pp__fold_python_named), becomes the frame a Python developer reads:
 *
 *   py::Parser.parse:/app/./lib/p.py  (/tmp/perf-4609.map, 7fdd...12f9)
 *     -> "Parser.parse (/app/lib/p.py:41)"
 *
 * The def line is found by the frame's address: in perf-map mode in the
 * perfpy-<pid>.lines sidecar the engine writes beside the map ([start,
 * start+size) -> line); after `perf inject --jit` the frame lives in its own
 * jitted-<pid>-<index>.so and perf prints its address relative to that file,
 * so the line comes from the jitdump's code-load record of that index (or
 * from the sidecar, by the code load's address). The dump is the one beside
 * the ELF, else a copy in the sidecars' directory, else the one the
 * recording names. The file is normalised
 * lexically ("/app/./lib//p.py" -> "/app/lib/p.py"; ".." is kept, since a
 * symlink may stand before it).
 *
 * perfpy's own startup frames are recognised here (C_SELF): the
 * sitecustomize.py that perfpy puts first on PYTHONPATH (its _perfpy_start,
 * whose callees are all perfpy's import and activation, and _chain, whose
 * callee is the sitecustomize it shadows), and the perfpy package.
 */
#include "fold_int.h"
#include "perfpy/lines_format.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the file and perfpy's own frames ----------------------------------- */

/* in[0..n) normalised into out (cap >= n + 1): empty and "." components
 * dropped. Its length. A name without '/' ("<string>") is unchanged. */
static size_t normalise(const char *in, size_t n, char *out)
{
    size_t o = 0, i = 0;

    if (!memchr(in, '/', n)) {
        memcpy(out, in, n);
        return n;
    }
    if (in[0] == '/')
        out[o++] = '/';
    while (i < n) {
        const char *e = memchr(in + i, '/', n - i);
        size_t len = e ? (size_t)(e - (in + i)) : n - i;
        if (len && !(len == 1 && in[i] == '.')) {
            if (o && out[o - 1] != '/')
                out[o++] = '/';
            memcpy(out + o, in + i, len);
            o += len;
        }
        i += len + 1;
    }
    if (o == 0)
        out[o++] = '.';
    return o;
}

/* Does dir hold perfpy's module build (perfpy.cpython-*.so) or package? */
static int perfpy_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int found = 0;

    if (!d)
        return 0;
    while (!found && (e = readdir(d)))
        found = strncmp(e->d_name, "perfpy.", 7) == 0 || strcmp(e->d_name, "perfpy") == 0;
    closedir(d);
    return found;
}

/* C_SELF bits of a Python function (qual, file), file normalised. */
static unsigned self_bits(const char *q, size_t ql, const char *file, size_t fl)
{
    const char *slash = fl ? memrchr(file, '/', fl) : NULL;
    const char *base = slash ? slash + 1 : file;
    size_t bl = fl - (size_t)(base - file);
    char dir[4096];

    if (bl == 16 && memcmp(base, "sitecustomize.py", 16) == 0) {
        if (ql == 13 && memcmp(q, "_perfpy_start", 13) == 0)
            return C_SELF | C_SELF_CUT;
        if (ql == 6 && memcmp(q, "_chain", 6) == 0)
            return C_SELF;
        if (slash && (size_t)(slash - file) < sizeof(dir)) {
            memcpy(dir, file, (size_t)(slash - file));
            dir[slash - file] = '\0';
            return perfpy_dir(dir[0] ? dir : "/") ? C_SELF : 0;
        }
        return 0;
    }
    if (slash && slash - file >= 7 && memcmp(slash - 7, "/perfpy", 7) == 0 &&
        bl == 11 && memcmp(base, "__init__.py", 11) == 0)
        return C_SELF | C_SELF_CUT;  /* the perfpy package (pip install) */
    return 0;
}

int pp__fold_python_raw(pp_folder *f, pp__fold_raw *r, const char *sym, size_t sl)
{
    const char *q = sym + 4, *colon = memchr(q, ':', sl - 4);
    const char *file = colon ? colon + 1 : "";
    size_t fl = colon ? sl - 4 - (size_t)(colon - q) - 1 : 0;

    return pp__fold_python_named(f, r, q, colon ? (size_t)(colon - q) : sl - 4, file, fl);
}

int pp__fold_python_named(pp_folder *f, pp__fold_raw *r, const char *qual, size_t ql,
                          const char *file, size_t fl)
{
    char small[1024], *buf = fl < sizeof(small) ? small : malloc(fl + 1);

    if (!buf)
        return -ENOMEM;
    r->bits |= C_PY;
    r->qual = qual;
    r->qual_len = ql;
    r->file_len = normalise(file, fl, buf);
    r->file = pp_profile_strdup(f->p, buf, r->file_len);
    if (buf != small)
        free(buf);
    if (!r->file)
        return -ENOMEM;
    if (r->qual_len == 0) {
        r->qual = "[unknown]";
        r->qual_len = 9;
    }
    r->bits |= self_bits(r->qual, r->qual_len, r->file, r->file_len);
    return 0;
}

/* ---- lines sidecars and jitdumps --------------------------------------- */

static int cmp_range(const void *a, const void *b)
{
    const pp__fold_range *x = a, *y = b;
    return (x->start > y->start) - (x->start < y->start);
}

/* Parses the lines of include/perfpy/lines_format.h ("<start hex> <size hex>
 * <line dec>\n"); bad lines skipped. */
static int parse_lines(const char *buf, size_t len, pp__fold_range **out, size_t *nout)
{
    pp__fold_range *r = NULL;
    size_t n = 0, cap = 0, pos = 0;

    while (pos < len) {
        const char *s = buf + pos, *e = memchr(s, '\n', len - pos);
        uint64_t v[3] = {0, 0, 0};
        int ok = 1;

        if (!e)
            e = buf + len;
        pos = (size_t)(e - buf) + 1;
        for (int k = 0; k < 3 && ok; k++) {
            int nd = 0;
            while (s < e && *s == ' ')
                s++;
            for (; s < e && *s != ' ' && *s != '\r'; s++, nd++) {
                int d = k < 2 ? ((*s >= '0' && *s <= '9') ? *s - '0' :
                                 (*s >= 'a' && *s <= 'f') ? *s - 'a' + 10 : -1)
                              : ((*s >= '0' && *s <= '9') ? *s - '0' : -1);
                if (d < 0 || nd >= PP_LINES_MAX_DIGITS) {
                    ok = 0;
                    break;
                }
                v[k] = v[k] * (k < 2 ? 16 : 10) + (uint64_t)d;
            }
            if (nd == 0)
                ok = 0;
        }
        if (!ok || v[1] == 0 || v[0] + v[1] < v[0] || v[2] > 0x7fffffff)
            continue;
        if (pp__grow((void **)&r, &cap, n + 1, sizeof(*r)) < 0) {
            free(r);
            return -ENOMEM;
        }
        r[n++] = (pp__fold_range){v[0], v[0] + v[1], (int)v[2]};
    }
    if (n)
        qsort(r, n, sizeof(*r), cmp_range);
    *out = r;
    *nout = n;
    return 0;
}

static pp__fold_sidecar *find_car(pp_folder *f, int pid)
{
    for (size_t i = 0; i < f->ncars; i++)
        if (f->cars[i].pid == pid)
            return &f->cars[i];
    return NULL;
}

static pp__fold_sidecar *get_car(pp_folder *f, int pid)
{
    pp__fold_sidecar *c = find_car(f, pid);

    if (c)
        return c;
    if (pp__grow((void **)&f->cars, &f->cars_cap, f->ncars + 1, sizeof(pp__fold_sidecar)) < 0)
        return NULL;
    c = &f->cars[f->ncars++];
    memset(c, 0, sizeof(*c));
    c->pid = pid;
    return c;
}

/* The dump at path among the pid's, read on first use; NULL when out of
 * memory. */
static struct pp__fold_jdump *dump_of(pp__fold_sidecar *c, const char *path)
{
    struct pp__fold_jdump *d;

    for (size_t i = 0; i < c->ndumps; i++)
        if (strcmp(c->dumps[i].path, path) == 0)
            return &c->dumps[i];
    if (pp__grow((void **)&c->dumps, &c->dumps_cap, c->ndumps + 1, sizeof(*d)) < 0)
        return NULL;
    d = &c->dumps[c->ndumps];
    memset(d, 0, sizeof(*d));
    if (!(d->path = strdup(path)))
        return NULL;
    c->ndumps++;
    pp_jitdump_codes(path, &d->codes, &d->ncodes);
    return d;
}

/* The code load of index in the jitdump perf inject made the jitted ELF
 * dso from, or NULL. That is jit-<pid>.dump beside the ELF (inject writes
 * them together; a process can have two, perfpy's and CPython's own, with
 * index spaces of their own); when it is gone, the pid's dump the
 * recording names. */
static const pp_jit_code *jit_code(pp_folder *f, int pid, uint64_t index, const char *dso,
                                   size_t dso_len)
{
    pp__fold_sidecar *c = get_car(f, pid);
    const char *slash = memrchr(dso, '/', dso_len);
    struct pp__fold_jdump *d = NULL;
    char want[32], path[4096];
    int wl = snprintf(want, sizeof(want), "/jit-%d.dump", pid);
    size_t lo = 0, hi;

    if (!c)
        return NULL;
    if (slash && (size_t)(slash - dso) + (size_t)wl < sizeof(path)) {
        memcpy(path, dso, (size_t)(slash - dso));
        memcpy(path + (slash - dso), want, (size_t)wl + 1);
        d = dump_of(c, path);
    }
    /* record -f perf keeps a copy beside its line sidecars (FILE.jit/) when
     * the dumps were made in /tmp, which it cleans */
    if ((!d || !d->ncodes) && f->o.lines_dir &&
        snprintf(path, sizeof(path), "%s%s", f->o.lines_dir, want) < (int)sizeof(path))
        d = dump_of(c, path);
    for (size_t i = 0; (!d || !d->ncodes) && f->o.jit && i < f->o.jit->njitdumps; i++) {
        const char *named = f->o.jit->jitdumps[i];
        size_t pl = strlen(named);
        if (pl >= (size_t)wl && strcmp(named + pl - (size_t)wl, want) == 0)
            d = dump_of(c, named);
    }
    if (!d)
        return NULL;
    hi = d->ncodes;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (d->codes[mid].index == index)
            return &d->codes[mid];
        if (d->codes[mid].index < index)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

int pp_fold_load_lines(pp_folder *f, int pid, const char *path)
{
    FILE *in = path ? fopen(path, "rb") : NULL;
    char *buf = NULL;
    size_t len = 0, cap = 0;
    pp__fold_sidecar *c = get_car(f, pid);
    int rc = 0;

    if (!c) {
        if (in)
            fclose(in);
        return -ENOMEM;
    }
    free(c->r);
    c->r = NULL;
    c->n = 0;
    c->loaded = 1;
    if (!in)
        return 0;                    /* no sidecar: names without lines */
    for (;;) {
        size_t got;
        if (len + 65536 > cap) {
            char *nb;
            if (cap > (256u << 20)) {
                break;               /* absurdly large: use what was read */
            }
            cap = cap ? cap * 2 : 65536 * 2;
            nb = realloc(buf, cap);
            if (!nb) {
                rc = -ENOMEM;
                goto out;
            }
            buf = nb;
        }
        got = fread(buf + len, 1, cap - len, in);
        len += got;
        if (got == 0)
            break;
    }
    rc = parse_lines(buf, len, &c->r, &c->n);
out:
    fclose(in);
    free(buf);
    return rc;
}

static int line_of(pp_folder *f, int pid, uint64_t ip, int *line)
{
    pp__fold_sidecar *c = find_car(f, pid);
    size_t lo = 0, hi;

    *line = 0;
    if (!f->o.lines_dir)
        return 0;
    if (!c || !c->loaded) {
        char path[4096];
        int rc;
        if (snprintf(path, sizeof(path), PP_LINES_PATH, f->o.lines_dir, pid) >=
            (int)sizeof(path))
            return 0;
        rc = pp_fold_load_lines(f, pid, path);
        if (rc < 0)
            return rc;
        c = find_car(f, pid);
    }
    hi = c->n;
    while (lo < hi) {                /* the last range starting at or below ip */
        size_t mid = lo + (hi - lo) / 2;
        if (c->r[mid].start <= ip)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo > 0 && ip < c->r[lo - 1].end)
        *line = c->r[lo - 1].line;
    return 0;
}

int64_t pp__fold_python_frame(pp_folder *f, uint32_t ri, int pid, uint64_t ip)
{
    pp__fold_raw *r = &f->raws[ri];
    uint64_t h;
    pp_htab_iter it;
    uint32_t *slot;
    int line = 0, rc;
    int64_t id;

    if ((!f->o.lines_dir && r->jit_pid < 0) || pid < 0) {
        if (r->frame < 0)
            r->frame = pp_profile_frame(f->p, PP_FRAME_PYTHON, r->qual, r->qual_len,
                                        r->file, r->file_len, 0);
        return r->frame;
    }
    h = pp__hash(&ip, sizeof(ip), (uint64_t)(uint32_t)pid * 0x100000001ull + ri);
    for (slot = pp__htab_first(&f->pyline_index, h, &it); slot;
         slot = pp__htab_next(&f->pyline_index, h, &it)) {
        struct pp__fold_pyline *pl = &f->pylines[*slot];
        if (pl->pid == pid && pl->ip == ip && pl->raw == ri)
            return pl->frame;
    }
    if (r->jit_pid >= 0) {
        /* the sidecar's line if there is one (line_of leaves 0 without a
         * lines_dir), else the dump's */
        const pp_jit_code *c = jit_code(f, r->jit_pid, r->jit_index, r->dso, r->dso_len);
        if (c && (rc = line_of(f, r->jit_pid, c->addr, &line)) < 0)
            return rc;
        if (c && !line)
            line = c->line;
    } else if ((rc = line_of(f, pid, ip, &line)) < 0) {
        return rc;
    }
    r = &f->raws[ri];
    id = pp_profile_frame(f->p, PP_FRAME_PYTHON, r->qual, r->qual_len, r->file,
                          r->file_len, line);
    if (id < 0)
        return id;
    if (pp__grow((void **)&f->pylines, &f->pylines_cap, f->npylines + 1, sizeof(*f->pylines)) < 0 ||
        pp__htab_insert(&f->pyline_index, h, (uint32_t)f->npylines) < 0)
        return -ENOMEM;
    f->pylines[f->npylines++] = (struct pp__fold_pyline){pid, ri, ip, (uint32_t)id};
    return id;
}

void pp__fold_python_free(pp_folder *f)
{
    for (size_t i = 0; i < f->ncars; i++) {
        free(f->cars[i].r);
        for (size_t k = 0; k < f->cars[i].ndumps; k++) {
            free(f->cars[i].dumps[k].path);
            free(f->cars[i].dumps[k].codes);
        }
        free(f->cars[i].dumps);
    }
    free(f->cars);
    free(f->pylines);
    pp__htab_free(&f->pyline_index);
}
