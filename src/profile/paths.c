/*
 * Source paths as a Python developer reads them. A frame's file is the path
 * the interpreter compiled it from, and on a real machine most of them are
 * long and say little:
 *
 *     /home/ann/shop/.venv/lib/python3.11/site-packages/flask/app.py
 *     /root/.pyenv/versions/3.11.7/lib/python3.11/threading.py
 *     /home/ann/shop/server.py
 *
 * What identifies the code is the part below the directory Python found it
 * in (its sys.path entry): "flask/app.py", "threading.py", "server.py".
 * py-spy shows that; the labels of every view do too (the full path stays
 * in each view's tooltip or metadata), and `perfpy diff` matches frames by
 * it, so that two checkouts of one program, or one program under two
 * interpreters, compare.
 *
 * The profile does not hold the program's sys.path, so the entries are
 * told from the paths themselves:
 *
 *   library  .../site-packages/X, .../dist-packages/X           -> X
 *   stdlib   .../lib/python3.11/X (lib64, python3.13t, pypy3.10) -> X
 *   special  "<frozen importlib._bootstrap>", "<string>", ""     -> itself
 *   program  anything else: relative to the program's directory, the
 *            directory of a script run as __main__ (the <module> frame at
 *            the root of the Python part of a stack: sys.path[0]), or,
 *            for the program's files outside it (pytest's tests beside a
 *            venv's bin/pytest), their common directory when it is at
 *            least two levels deep; else the full path.
 *
 * Every relative path is a suffix of its full path: nothing is allocated
 * for it, and a view that shows the relative path can give the full one
 * by the length it cut.
 */
#include "profile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The end of a directory component "python3.11", "python3.13t" or
 * "pypy3.10" starting at s, or NULL. */
static const char *python_dir(const char *s)
{
    if (strncmp(s, "python", 6) == 0)
        s += 6;
    else if (strncmp(s, "pypy", 4) == 0)
        s += 4;
    else
        return NULL;
    if (*s < '0' || *s > '9')
        return NULL;
    s += strspn(s, "0123456789.");
    if (*s == 't')                     /* free-threaded builds' directory */
        s++;
    return *s == '/' ? s + 1 : NULL;
}

pp_path_kind pp_path_kind_of(const char *path, size_t *cut)
{
    static const char *const libs[] = {"/site-packages/", "/dist-packages/"};
    const char *best = NULL, *at;

    *cut = 0;
    if (!*path || path[0] == '<')
        return PP_PATH_SPECIAL;
    for (size_t i = 0; i < 2; i++)
        for (at = path; (at = strstr(at, libs[i])); at++)
            if (!best || at + strlen(libs[i]) > best)
                best = at + strlen(libs[i]);
    if (best && *best) {
        *cut = (size_t)(best - path);
        return PP_PATH_LIBRARY;
    }
    for (at = path; (at = strstr(at, "/lib")); at++) {
        const char *d = at + 4, *end;
        if (strncmp(d, "64", 2) == 0)
            d += 2;
        if (*d == '/' && (end = python_dir(d + 1)) && *end)
            best = end;
    }
    if (best) {
        *cut = (size_t)(best - path);
        return PP_PATH_STDLIB;
    }
    return PP_PATH_PROGRAM;
}

/* ---- the program's directories ------------------------------------------ */

static size_t dir_len(const char *path)
{
    const char *slash = strrchr(path, '/');

    return slash ? (size_t)(slash - path) + 1 : 0;
}

static int under(const char *path, const char *dir)
{
    return strncmp(path, dir, strlen(dir)) == 0;
}

static int add_dir(pp_path_roots *r, const char *path, size_t len)
{
    char **more, *d;

    if (!len)
        return 0;
    for (uint32_t i = 0; i < r->n; i++)
        if (strlen(r->dirs[i]) == len && strncmp(r->dirs[i], path, len) == 0)
            return 0;
    if (!(more = realloc(r->dirs, (r->n + 1) * sizeof(*more))))
        return -ENOMEM;
    r->dirs = more;
    if (!(d = strndup(path, len)))
        return -ENOMEM;
    r->dirs[r->n++] = d;
    return 0;
}

/* The directories of the scripts run as __main__: the <module> frame each
 * stack's Python part begins with, when it is the program's own file. */
static int main_dirs(const pp_profile *p, pp_path_roots *r)
{
    size_t cut;

    for (uint32_t si = 0; si < p->nstacks; si++) {
        const pp_stack *s = &p->stacks[si];
        const uint32_t *ids = pp_stack_ids(p, s);
        for (uint32_t d = 0; d < s->depth; d++) {
            const pp_frame *f = &p->frames[ids[d]];
            if (f->kind != PP_FRAME_PYTHON)
                continue;
            if (strcmp(f->name, "<module>") == 0 &&
                pp_path_kind_of(f->file, &cut) == PP_PATH_PROGRAM &&
                add_dir(r, f->file, dir_len(f->file)) < 0)
                return -ENOMEM;
            break;
        }
    }
    return 0;
}

/* The common directory of the program's files no script's directory holds,
 * when it is at least two levels deep ("/home/ann/", not "/home/"). */
static int common_dir(const pp_profile *p, pp_path_roots *r)
{
    const char *first = NULL;
    size_t len = 0, cut, levels = 0;

    for (uint32_t i = 0; i < p->nframes; i++) {
        const pp_frame *f = &p->frames[i];
        int held = 0;
        if (f->kind != PP_FRAME_PYTHON || f->file[0] != '/' ||
            pp_path_kind_of(f->file, &cut) != PP_PATH_PROGRAM)
            continue;
        for (uint32_t k = 0; k < r->n && !held; k++)
            held = under(f->file, r->dirs[k]);
        if (held)
            continue;
        if (!first) {
            first = f->file;
            len = dir_len(first);
            continue;
        }
        while (len && strncmp(first, f->file, len) != 0)   /* up one directory */
            for (len--; len && first[len - 1] != '/'; len--)
                ;
    }
    for (size_t i = 0; i < len; i++)
        levels += first[i] == '/';
    return levels > 2 ? add_dir(r, first, len) : 0;
}

int pp_path_roots_find(const pp_profile *p, pp_path_roots *r)
{
    int rc;

    memset(r, 0, sizeof(*r));
    if ((rc = main_dirs(p, r)) < 0 || (rc = common_dir(p, r)) < 0) {
        pp_path_roots_free(r);
        return rc;
    }
    return 0;
}

void pp_path_roots_free(pp_path_roots *r)
{
    for (uint32_t i = 0; i < r->n; i++)
        free(r->dirs[i]);
    free(r->dirs);
    memset(r, 0, sizeof(*r));
}

const char *pp_path_rel(const pp_path_roots *r, const char *path)
{
    size_t cut, best = 0;

    if (pp_path_kind_of(path, &cut) != PP_PATH_PROGRAM)
        return path + cut;
    for (uint32_t i = 0; r && i < r->n; i++) {
        size_t n = strlen(r->dirs[i]);
        if (n > best && under(path, r->dirs[i]) && path[n])
            best = n;
    }
    return path + best;
}

/* ---- labels with relative paths ------------------------------------------ */

int pp_labels_make(const pp_profile *p, pp_labels *l)
{
    size_t need = 1;
    char *at;
    int rc;

    memset(l, 0, sizeof(*l));
    if ((rc = pp_path_roots_find(p, &l->roots)) < 0)
        return rc;
    for (uint32_t i = 0; i < p->nframes; i++)
        if (p->frames[i].kind == PP_FRAME_PYTHON)
            need += strlen(p->frames[i].label) + 1;
    l->label = malloc((p->nframes ? p->nframes : 1) * sizeof(*l->label));
    l->rel = malloc((p->nframes ? p->nframes : 1) * sizeof(*l->rel));
    l->arena = malloc(need);
    if (!l->label || !l->rel || !l->arena) {
        pp_labels_free(l);
        return -ENOMEM;
    }
    at = l->arena;
    for (uint32_t i = 0; i < p->nframes; i++) {
        const pp_frame *f = &p->frames[i];
        const char *rel = pp_path_rel(&l->roots, f->file);
        size_t room = need - (size_t)(at - l->arena);
        int n;

        l->rel[i] = rel;
        l->label[i] = f->label;
        if (f->kind != PP_FRAME_PYTHON || rel == f->file)
            continue;
        /* the label with a shorter file: it fits where the label would */
        n = f->line > 0 ? snprintf(at, room, "%s (%s:%d)", f->name, rel, f->line)
                        : snprintf(at, room, "%s (%s)", f->name, rel);
        if (n < 0 || (size_t)n >= room)
            continue;
        l->label[i] = at;
        at += n + 1;
    }
    return 0;
}

void pp_labels_free(pp_labels *l)
{
    free(l->label);
    free(l->rel);
    free(l->arena);
    pp_path_roots_free(&l->roots);
    memset(l, 0, sizeof(*l));
}
