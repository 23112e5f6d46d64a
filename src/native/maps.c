/*
 * /proc/PID/maps parser (see maps.h for the format). Two passes over the
 * text: the first counts lines and path bytes, the second fills one array of
 * mappings and one block of NUL-terminated paths, so a parse makes exactly
 * two allocations whatever the input.
 */
#include "maps.h"
#include "text.h"

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int skip_field(const char **p, const char *end)
{
    const char *s = *p;

    while (s < end && *s != ' ')
        s++;
    if (s == *p)
        return -1;
    *p = s;
    return 0;
}

static int expect(const char **p, const char *end, char c)
{
    if (*p >= end || **p != c)
        return -1;
    (*p)++;
    return 0;
}

/* One line [s, end) -> *m, the path as [*path, *path + *plen). 0 or -1. */
static int parse_line(const char *s, const char *end, pp_map *m, const char **path,
                      size_t *plen)
{
    if (pp__hex64(&s, end, &m->start) < 0 || expect(&s, end, '-') < 0 ||
        pp__hex64(&s, end, &m->end) < 0 || expect(&s, end, ' ') < 0)
        return -1;
    if (end - s < 5 || s[4] != ' ')
        return -1;
    m->prot = (s[0] == 'r' ? PP_MAP_R : 0) | (s[1] == 'w' ? PP_MAP_W : 0) |
              (s[2] == 'x' ? PP_MAP_X : 0);
    s += 5;
    if (pp__hex64(&s, end, &m->pgoff) < 0 || expect(&s, end, ' ') < 0 ||
        skip_field(&s, end) < 0 ||                   /* device */
        expect(&s, end, ' ') < 0 || skip_field(&s, end) < 0)   /* inode */
        return -1;
    while (s < end && *s == ' ')
        s++;
    if (m->end <= m->start)
        return -1;
    *path = s;
    *plen = (size_t)(end - s);
    return 0;
}

static int cmp_start(const void *a, const void *b)
{
    const pp_map *x = a, *y = b;

    return x->start < y->start ? -1 : x->start > y->start;
}

int pp_maps_parse(const char *text, size_t len, pp_maps *out)
{
    const char *end = text + len, *s;
    size_t lines = 0, bytes = 0, n = 0, used = 0;

    memset(out, 0, sizeof(*out));
    for (s = text; s < end;) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        const char *e = nl ? nl : end;
        lines++;
        bytes += (size_t)(e - s) + 1;
        s = nl ? nl + 1 : end;
    }
    out->v = calloc(lines ? lines : 1, sizeof(*out->v));
    out->strings = malloc(bytes ? bytes : 1);
    if (!out->v || !out->strings)
        return -ENOMEM;
    for (s = text; s < end;) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        const char *e = nl ? nl : end, *path;
        size_t plen;
        pp_map m;

        if (parse_line(s, e, &m, &path, &plen) == 0 && memchr(path, '\0', plen) == NULL) {
            memcpy(out->strings + used, path, plen);
            out->strings[used + plen] = '\0';
            m.path = out->strings + used;
            used += plen + 1;
            out->v[n++] = m;
        } else if (e > s) {
            out->bad_lines++;
        }
        s = nl ? nl + 1 : end;
    }
    /* the kernel prints them sorted; hostile text need not be: sort, then
     * drop what overlaps its predecessor */
    qsort(out->v, n, sizeof(*out->v), cmp_start);
    out->n = 0;
    for (size_t i = 0; i < n; i++) {
        if (out->n && out->v[i].start < out->v[out->n - 1].end) {
            out->bad_lines++;
            continue;
        }
        out->v[out->n++] = out->v[i];
    }
    return 0;
}

/* A chroot's (or a container's, when its root is reachable from ours)
 * files are printed with the path of its root in front: taken off, so the
 * paths are the ones the process itself opened. */
static void as_the_process_sees(pp_maps *m)
{
    char link[64], root[4096];
    ssize_t n;

    snprintf(link, sizeof(link), "/proc/%d/root", m->pid);
    if ((n = readlink(link, root, sizeof(root) - 1)) <= 1)
        return;                                  /* "/" or unreadable */
    root[n] = '\0';
    for (size_t i = 0; i < m->n; i++)
        if (strncmp(m->v[i].path, root, (size_t)n) == 0 && m->v[i].path[n] == '/')
            m->v[i].path += n;
}

int pp_maps_read(int pid, pp_maps *out)
{
    char path[64], *buf;
    size_t n;
    int rc;

    memset(out, 0, sizeof(*out));
    snprintf(path, sizeof(path), "/proc/%d/maps", pid);
    rc = pp__read_proc(path, &buf, &n);
    if (rc == 0)
        rc = pp_maps_parse(buf, n, out);
    free(buf);
    out->pid = pid;
    if ((out->other_root = pp_maps_other_root(pid)))
        as_the_process_sees(out);
    return rc;
}

int pp_maps_other_root(int pid)
{
    char path[64];
    struct stat theirs, ours;

    snprintf(path, sizeof(path), "/proc/%d/root/", pid);
    if (stat(path, &theirs) != 0 || stat("/", &ours) != 0)
        return 0;
    return theirs.st_dev != ours.st_dev || theirs.st_ino != ours.st_ino;
}

const char *pp_maps_open_path(const pp_maps *m, const char *path, char *buf, size_t len)
{
    if (!m->other_root || path[0] != '/' ||
        snprintf(buf, len, "/proc/%d/root%s", m->pid, path) >= (int)len)
        return path;
    return buf;
}

const pp_map *pp_maps_find(const pp_maps *m, uint64_t addr)
{
    /* the first mapping ending above addr */
    size_t lo = pp__count_le(m->v, m->n, sizeof(*m->v), offsetof(pp_map, end), addr);

    return lo < m->n && m->v[lo].start <= addr ? &m->v[lo] : NULL;
}

void pp_maps_free(pp_maps *m)
{
    free(m->v);
    free(m->strings);
    memset(m, 0, sizeof(*m));
}
