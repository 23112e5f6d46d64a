/*
 * perf's event names, parsed once for perfpy and perfpy-sample (event.h).
 * A software event is one of perf's names (and its aliases: faults, cs,
 * migrations); anything with a colon is a tracepoint, SYSTEM:NAME, which
 * exists when tracefs has SYSTEM/NAME/id. Neither needs perf.
 */
#include "event.h"
#include "profile/profile.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct {
    const char *name, *alias;
    unsigned long long config;
    const char *what;
} software[] = {
    {"page-faults", "faults", PERF_COUNT_SW_PAGE_FAULTS,
     "page faults: where memory is first touched (RSS grows)"},
    {"minor-faults", NULL, PERF_COUNT_SW_PAGE_FAULTS_MIN, "page faults served from memory"},
    {"major-faults", NULL, PERF_COUNT_SW_PAGE_FAULTS_MAJ, "page faults that read from disk"},
    {"context-switches", "cs", PERF_COUNT_SW_CONTEXT_SWITCHES,
     "a thread leaving its CPU (blocking or preempted)"},
    {"cpu-migrations", "migrations", PERF_COUNT_SW_CPU_MIGRATIONS,
     "a thread moved to another CPU"},
};

#define NSOFTWARE (sizeof(software) / sizeof(software[0]))

int pp_event_software(size_t i, const char **name, const char **what)
{
    if (i >= NSOFTWARE)
        return 0;
    *name = software[i].name;
    *what = software[i].what;
    return 1;
}

/* Where tracepoints are listed: tracefs's own place, then debugfs's. */
static const char *const tracefs_dirs[] = {PP_EVENT_TRACEFS "/events",
                                           "/sys/kernel/debug/tracing/events"};

#define NTRACEFS (sizeof(tracefs_dirs) / sizeof(tracefs_dirs[0]))

static const char *readable_tracefs(void)
{
    for (size_t i = 0; i < NTRACEFS; i++)
        if (access(tracefs_dirs[i], R_OK | X_OK) == 0)
            return tracefs_dirs[i];
    return NULL;
}

int pp_event_tracefs_unmounted(void)
{
    struct stat st;

    for (size_t i = 0; i < NTRACEFS; i++)
        if (stat(tracefs_dirs[i], &st) == 0 || errno != ENOENT)
            return 0;
    return 1;
}

const char *pp_event_tracefs(void)
{
    const char *dir = readable_tracefs();

    /* Not mounted (a machine or container without systemd, which mounts
     * it at boot): mount it where the kernel keeps its place, as perf
     * does. Without CAP_SYS_ADMIN the mount fails and nothing changes;
     * a tracefs that is there but not this user's is left alone. */
    if (!dir && pp_event_tracefs_unmounted() &&
        mount("nodev", PP_EVENT_TRACEFS, "tracefs", 0, NULL) == 0)
        dir = readable_tracefs();
    return dir;
}

/* A tracepoint's half: letters, digits, _ and - (what tracefs names). */
static int word(const char *s, size_t n)
{
    if (!n || n >= 64)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
              (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '-'))
            return 0;
    return 1;
}

static int tracepoint(const char *name, pp_event *out)
{
    const char *colon = strchr(name, ':'), *dir;
    char path[512];

    if (!colon || strlen(name) >= PP_EVENT_NAME_MAX || !word(name, (size_t)(colon - name)) || !word(colon + 1, strlen(colon + 1)))
        return -EINVAL;
    out->kind = PP_EVENT_TRACEPOINT;
    snprintf(out->system, sizeof(out->system), "%.*s", (int)(colon - name), name);
    snprintf(out->tracepoint, sizeof(out->tracepoint), "%s", colon + 1);
    snprintf(out->name, sizeof(out->name), "%s", name);
    out->unit = pp_profile_event_unit(out->name);
    out->every = strcmp(out->unit, "calls") == 0 ? 100 : 1;
    if (!(dir = pp_event_tracefs()))
        return -EACCES;
    snprintf(path, sizeof(path), "%s/%s/%s/id", dir, out->system, out->tracepoint);
    return access(path, R_OK) == 0 ? 0 : errno == EACCES ? -EACCES : -ENOENT;
}

/* A directory entry that is a directory of its own, not . or .. */
static int subdir(const struct dirent *d)
{
    return d->d_name[0] != '.' && (d->d_type == DT_DIR || d->d_type == DT_UNKNOWN);
}

static void free_list(struct dirent **v, int n)
{
    for (int i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* fn on each tracepoint of system (a directory under dir); its return. */
static int each_in(const char *dir, const char *system,
                   int (*fn)(const char *system, const char *name, void *ctx), void *ctx)
{
    char path[512], id[1024];
    struct dirent **names;
    int n, rc = 0;

    snprintf(path, sizeof(path), "%s/%s", dir, system);
    if ((n = scandir(path, &names, subdir, alphasort)) < 0)
        return 0;                   /* a file (enable, filter): no tracepoints */
    for (int i = 0; i < n && !rc; i++) {
        snprintf(id, sizeof(id), "%s/%s/id", path, names[i]->d_name);
        if (access(id, F_OK) == 0)
            rc = fn(system, names[i]->d_name, ctx);
    }
    free_list(names, n);
    return rc;
}

int pp_event_each_tracepoint(int (*fn)(const char *system, const char *name, void *ctx),
                             void *ctx)
{
    const char *dir = pp_event_tracefs();
    struct dirent **systems;
    int n, rc = 0;

    if (!dir)
        return -EACCES;
    if ((n = scandir(dir, &systems, subdir, alphasort)) < 0)
        return -errno;
    for (int i = 0; i < n && !rc; i++)
        rc = each_in(dir, systems[i]->d_name, fn, ctx);
    free_list(systems, n);
    return rc;
}

int pp_event_parse(const char *name, pp_event *out)
{
    memset(out, 0, sizeof(*out));
    if (!name)
        return -EINVAL;
    for (size_t i = 0; i < NSOFTWARE; i++)
        if (strcmp(name, software[i].name) == 0 ||
            (software[i].alias && strcmp(name, software[i].alias) == 0)) {
            out->kind = PP_EVENT_SOFTWARE;
            out->config = software[i].config;
            snprintf(out->name, sizeof(out->name), "%s", software[i].name);
            out->unit = pp_profile_event_unit(out->name);
            out->every = software[i].config == PERF_COUNT_SW_PAGE_FAULTS ||
                         software[i].config == PERF_COUNT_SW_PAGE_FAULTS_MIN ? 100 : 1;
            return 0;
        }
    return tracepoint(name, out);
}
