/*
 * The roots a profile gives threads (`--threads`). A server's flame graph
 * had 495 roots, one per short-lived request thread, "Thread-12
 * (handler) (tid 4612)" next to "Thread-13 (handler) (tid 4613)": 12-16 MB
 * that no browser drew, and a root per tid that never matches another
 * run's in a diff. Threads named alike are one kind of thread, so by
 * default they share a root named by their pattern, the number that tells
 * them apart taken out:
 *
 *     ThreadPoolExecutor-0_3, ThreadPoolExecutor-0_7   -> ThreadPoolExecutor-0_*
 *     Thread-12 (handler), Thread-13 (handler)         -> Thread-* (handler)
 *     worker-3                                         -> worker-*
 *     MainThread                                       -> MainThread
 *
 * (the pool's own number, "-0_", stays: two pools are two roots). With
 * `--threads split` each thread keeps its own, with its tid. The folder
 * names its roots with pp_profile_thread_root; speedscope's tracks follow
 * the same rule (pp_thread_root_name), Firefox's stay one per thread
 * (pp_thread_label).
 */
#include "profile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where name's target suffix " (...)" begins (3.10+: "Thread-3 (handler)"),
 * or its end. */
static size_t base_len(const char *name)
{
    size_t n = strlen(name);
    const char *open;

    if (!n || name[n - 1] != ')')
        return n;
    for (open = name + n - 1; open > name && !(open[0] == '(' && open[-1] == ' '); open--)
        ;
    return open > name ? (size_t)(open - 1 - name) : n;
}

int pp_thread_pattern(const char *name, char *buf, size_t cap)
{
    size_t base = base_len(name), end = base, start;

    while (end > 0 && !(name[end - 1] >= '0' && name[end - 1] <= '9'))
        end--;
    for (start = end; start > 0 && name[start - 1] >= '0' && name[start - 1] <= '9'; start--)
        ;
    if (end == 0 || (start > 0 && !strchr("-_ ", name[start - 1])))
        return snprintf(buf, cap, "%s", name);
    return snprintf(buf, cap, "%.*s*%s", (int)start, name, name + end);
}

int pp_thread_root_label(const pp_thread *t, int mode, char *buf, size_t cap)
{
    if (mode == PP_THREAD_ROOTS_SPLIT)
        return pp_thread_label(t, buf, cap);
    return pp_thread_pattern(t->name[0] ? t->name : "[unknown]", buf, cap);
}

/* The most of a name a thread's comm keeps (TASK_COMM_LEN - 1). */
#define COMM_KEPT 15

int pp_thread_patterns_known(const pp_profile *p, pp_thread_patterns *out)
{
    char buf[320];

    out->n = 0;
    if (!(out->v = calloc(PP_THREAD_PATTERNS_KNOWN, sizeof(*out->v))))
        return -ENOMEM;
    for (uint32_t i = 0; i < p->nthreads && out->n < PP_THREAD_PATTERNS_KNOWN; i++) {
        size_t k;

        if (!p->threads[i].name_set || !p->threads[i].name)
            continue;
        pp_thread_pattern(p->threads[i].name, buf, sizeof(buf));
        for (k = 0; k < out->n && strcmp(out->v[k], buf) != 0; k++)
            ;
        if (k == out->n && !(out->v[out->n++] = strdup(buf))) {
            pp_thread_patterns_free(out);
            return -ENOMEM;
        }
    }
    return 0;
}

void pp_thread_patterns_free(pp_thread_patterns *k)
{
    for (size_t i = 0; k->v && i < k->n; i++)
        free(k->v[i]);
    free(k->v);
    k->v = NULL;
    k->n = 0;
}

/* t's name as the kernel cut it (its comm, 15 bytes, never named by a
 * reader): the known pattern its own pattern begins, or NULL. */
static const char *whole_pattern(const pp_thread *t, const pp_thread_patterns *among,
                                 const char *cut)
{
    size_t n = strlen(cut);

    if (!among || t->name_set || !t->name || strlen(t->name) != COMM_KEPT)
        return NULL;
    for (size_t i = 0; i < among->n; i++)
        if (strlen(among->v[i]) > n && strncmp(among->v[i], cut, n) == 0)
            return among->v[i];
    return NULL;
}

int pp_thread_root_name(const pp_thread *t, int mode, const pp_thread_patterns *among,
                        char *buf, size_t cap)
{
    int n = pp_thread_root_label(t, mode, buf, cap);
    const char *whole = mode == PP_THREAD_ROOTS_SPLIT || n < 0 ? NULL
                        : whole_pattern(t, among, buf);

    if (whole)
        n = snprintf(buf, cap, "%s", whole);
    if (n >= 0 && cap && (size_t)n >= cap)
        n = (int)cap - 1;
    return n;
}

int64_t pp_profile_thread_root(pp_profile *p, const pp_thread *t, int mode,
                               const pp_thread_patterns *among)
{
    char label[320];
    int n = pp_thread_root_name(t, mode, among, label, sizeof(label));

    if (n < 0)
        return -EINVAL;
    return pp_profile_frame(p, PP_FRAME_MARKER, label, (size_t)n, NULL, 0, 0);
}

