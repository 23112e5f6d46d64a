/*
 * The request's one writer and one reader (request.h), both walking the
 * table below: a field is a key, a kind and its place in pp_request. The
 * writer writes every field as KEY=VALUE (repeated ones once per value),
 * then "--" and the program; the reader takes each word up to "--" by its
 * key, refuses a key it does not know or a value that is not of its kind,
 * and checks that the request asks for something it can do.
 */
#include "request.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const mode_names[PP_MODE_N] = {"auto", "sample", "read", "hook", "perf", "jit"};
static const char *const what_names[] = {"record", "top", "dump", NULL};
static const char *const target_names[] = {"program", "pid", "host", NULL};

const char *pp_request_mode_name(pp_mode m)
{
    return (unsigned)m < PP_MODE_N ? mode_names[m] : "?";
}

/* The index of name in names (NULL-terminated, or n long), or -1. */
static int word_index(const char *const *names, size_t n, const char *name)
{
    for (size_t i = 0; i < n && names[i]; i++)
        if (strcmp(names[i], name) == 0)
            return (int)i;
    return -1;
}

int pp_request_mode_of(const char *name, pp_mode *out)
{
    int i = word_index(mode_names, PP_MODE_N, name);

    if (i < 0)
        return -EINVAL;
    *out = (pp_mode)i;
    return 0;
}

/* ---- the fields ------------------------------------------------------------- */

typedef enum kind { K_WHAT, K_MODE, K_TARGET, K_INT, K_LONG, K_ULL, K_DOUBLE, K_STR,
                    K_LABEL } kind;

typedef struct field {
    const char *key;
    kind kind;
    size_t at;                   /* offsetof(pp_request, ...) */
} field;

#define F(key, kind, member) {key, kind, offsetof(pp_request, member)}
static const field fields[] = {
    F("what", K_WHAT, what),
    F("mode", K_MODE, mode),
    F("target", K_TARGET, target),
    F("pid", K_LONG, pid),
    F("rate", K_LONG, rate),
    F("wall", K_INT, wall),
    F("gil", K_INT, gil),
    F("async", K_INT, async),
    F("duration", K_DOUBLE, duration),
    F("event", K_STR, event),
    F("period", K_LONG, period),
    F("format", K_STR, format),
    F("output", K_STR, output),
    F("no-native", K_INT, no_native),
    F("processes", K_INT, processes),
    F("threads", K_INT, threads),
    F("verbose", K_INT, verbose),
    F("every", K_DOUBLE, every),
    F("keep-files", K_LONG, keep_files),
    F("keep-bytes", K_ULL, keep_bytes),
    F("all-processes", K_INT, all_processes),
    F("label", K_LABEL, labels),
    F("interval", K_DOUBLE, interval),
    F("rows", K_LONG, rows),
    F("json", K_INT, json),
    F("locals", K_INT, locals),
    F("subprocesses", K_INT, subprocesses),
    F("nonblocking", K_INT, nonblocking),
};
#undef F
#define NFIELDS (sizeof(fields) / sizeof(fields[0]))

/* ---- the writer ------------------------------------------------------------- */

/* "key=value" of one field (a label: of its i-th value), malloc'ed. */
static char *word(const pp_request *rq, const field *f, int i)
{
    const char *base = (const char *)rq + f->at;
    char *out = NULL;
    int n = -1;

    switch (f->kind) {
    case K_WHAT:
        n = asprintf(&out, "%s=%s", f->key, what_names[*(const pp_request_what *)base]);
        break;
    case K_MODE:
        n = asprintf(&out, "%s=%s", f->key, pp_request_mode_name(*(const pp_mode *)base));
        break;
    case K_TARGET:
        n = asprintf(&out, "%s=%s", f->key, target_names[*(const pp_request_target *)base]);
        break;
    case K_INT:
        n = asprintf(&out, "%s=%d", f->key, *(const int *)base);
        break;
    case K_LONG:
        n = asprintf(&out, "%s=%ld", f->key, *(const long *)base);
        break;
    case K_ULL:
        n = asprintf(&out, "%s=%llu", f->key, *(const unsigned long long *)base);
        break;
    case K_DOUBLE:
        n = asprintf(&out, "%s=%.17g", f->key, *(const double *)base);
        break;
    case K_STR:
        n = asprintf(&out, "%s=%s", f->key, *(const char *const *)base ? *(const char *const *)base : "");
        break;
    case K_LABEL:
        n = asprintf(&out, "%s=%s", f->key, rq->labels[i]);
        break;
    }
    return n < 0 ? NULL : out;
}

void pp_request_argv_free(char **argv)
{
    for (size_t i = 0; argv && argv[i]; i++)
        free(argv[i]);
    free(argv);
}

int pp_request_argv(const pp_request *rq, const char *sampler, char ***out)
{
    size_t nprog = 0, k = 0, cap;
    char **argv;
    int rc = 0;

    while (rq->target == PP_TARGET_PROGRAM && rq->argv && rq->argv[nprog])
        nprog++;
    cap = 4 + NFIELDS + (size_t)rq->nlabels + 1 + nprog + 1;
    if (!(argv = calloc(cap, sizeof(*argv))))
        return -ENOMEM;
    if (!(argv[k++] = strdup(sampler)) || !(argv[k++] = strdup("--request")) ||
        asprintf(&argv[k++], "%d", PP_REQUEST_VERSION) < 0) {
        argv[k - 1] = NULL;
        rc = -ENOMEM;
    }
    for (size_t i = 0; rc == 0 && i < NFIELDS; i++) {
        int n = fields[i].kind == K_LABEL ? rq->nlabels : 1;

        for (int j = 0; rc == 0 && j < n; j++)
            if (!(argv[k++] = word(rq, &fields[i], j)))
                rc = -ENOMEM;
    }
    if (rc == 0 && !(argv[k++] = strdup("--")))
        rc = -ENOMEM;
    for (size_t i = 0; rc == 0 && i < nprog; i++)
        if (!(argv[k++] = strdup(rq->argv[i])))
            rc = -ENOMEM;
    if (rc != 0) {
        pp_request_argv_free(argv);
        return rc;
    }
    *out = argv;
    return 0;
}

/* ---- the reader ------------------------------------------------------------- */

/* value into the field f of rq: 0, or -EINVAL (not of its kind). */
static int set(pp_request *rq, const field *f, const char *value)
{
    char *base = (char *)rq + f->at, *end = NULL;
    int i = 0;

    errno = 0;
    switch (f->kind) {
    case K_WHAT:
        i = word_index(what_names, SIZE_MAX, value);
        *(pp_request_what *)base = (pp_request_what)i;
        return i < 0 ? -EINVAL : 0;
    case K_MODE:
        return pp_request_mode_of(value, (pp_mode *)base);
    case K_TARGET:
        i = word_index(target_names, SIZE_MAX, value);
        *(pp_request_target *)base = (pp_request_target)i;
        return i < 0 ? -EINVAL : 0;
    case K_INT: {
        long v = strtol(value, &end, 10);

        *(int *)base = (int)v;
        return v < INT_MIN || v > INT_MAX ? -EINVAL : 0;
    }
    case K_LONG:
        *(long *)base = strtol(value, &end, 10);
        break;
    case K_ULL:
        *(unsigned long long *)base = strtoull(value, &end, 10);
        break;
    case K_DOUBLE:
        *(double *)base = strtod(value, &end);
        break;
    case K_STR:
        *(const char **)base = value;
        return 0;
    case K_LABEL:
        if (rq->nlabels == PP_REQUEST_LABELS)
            return -EINVAL;
        rq->labels[rq->nlabels++] = value;
        return 0;
    }
    return errno || end == value || *end ? -EINVAL : 0;
}

/* What no part of perfpy-sample can do, or NULL. */
static const char *unfit(const pp_request *rq)
{
    if (rq->target == PP_TARGET_PROGRAM && (!rq->argv || !rq->argv[0]))
        return "no program to start";
    if (rq->target == PP_TARGET_PID && rq->pid <= 0)
        return "no process id";
    if (rq->what == PP_REQUEST_DUMP)
        return rq->target != PP_TARGET_PID ? "a dump reads a running process" :
               rq->mode > PP_MODE_READ ? "a dump reads in sample or read mode" : NULL;
    if (rq->mode != PP_MODE_SAMPLE && rq->mode != PP_MODE_READ)
        return "it records in sample or read mode only";
    if (rq->rate <= 0 || !rq->format || !rq->output)
        return "no rate, format or output";
    if (rq->event && *rq->event && (rq->mode != PP_MODE_SAMPLE || rq->wall || rq->period <= 0 ||
                                     rq->target == PP_TARGET_HOST))
        return "an event is sampled in sample mode, of one program or process, every "
               "period'th";
    if (rq->what == PP_REQUEST_TOP && (!(rq->interval > 0) || rq->target == PP_TARGET_HOST))
        return "perfpy top shows one program or process, every interval";
    if (rq->mode == PP_MODE_READ && rq->target == PP_TARGET_HOST)
        return "read mode reads one program or process";
    return NULL;
}

int pp_request_read(int argc, char **argv, pp_request *rq, char *why, size_t cap)
{
    const char *bad;
    char *end = NULL;
    int i;

    memset(rq, 0, sizeof(*rq));
    if (argc < 3 || strcmp(argv[1], "--request") != 0) {
        snprintf(why, cap, "perfpy-sample is run by perfpy (record --mode sample or read, "
                 "top, dump)");
        return PP_EXIT_USAGE;
    }
    if (strtol(argv[2], &end, 10) != PP_REQUEST_VERSION || end == argv[2] || *end) {
        snprintf(why, cap, "perfpy asked in its request version %.16s, and this "
                 "perfpy-sample reads version %d: the two come from different builds "
                 "(install them together)", argv[2], PP_REQUEST_VERSION);
        return PP_EXIT_USAGE;
    }
    for (i = 3; i < argc && strcmp(argv[i], "--") != 0; i++) {
        const char *eq = strchr(argv[i], '=');
        size_t n = eq ? (size_t)(eq - argv[i]) : strlen(argv[i]), f;

        for (f = 0; f < NFIELDS; f++)
            if (strlen(fields[f].key) == n && strncmp(fields[f].key, argv[i], n) == 0)
                break;
        if (f == NFIELDS || !eq || set(rq, &fields[f], eq + 1) != 0) {
            snprintf(why, cap, "perfpy-sample does not understand '%.64s' in perfpy's "
                     "request (version %d): perfpy and perfpy-sample come from different "
                     "builds (install them together)", argv[i], PP_REQUEST_VERSION);
            return PP_EXIT_USAGE;
        }
    }
    rq->argv = i + 1 < argc ? argv + i + 1 : NULL;
    if ((bad = unfit(rq))) {
        snprintf(why, cap, "perfpy's request cannot be done: %s", bad);
        return PP_EXIT_USAGE;
    }
    return 0;
}
