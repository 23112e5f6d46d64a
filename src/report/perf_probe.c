/*
 * What the perf in use can do (see perf_probe.h for why it matters).
 */
#include "perf_probe.h"
#include "spawn.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Whether the build options list feature `name` as on: a line
 * "<spaces>name: [ on  ]". */
static int feature_on(const char *text, const char *name)
{
    size_t n = strlen(name);

    for (const char *p = text; (p = strstr(p, name)) != NULL; p += n) {
        const char *q = p + n;
        if ((p == text || p[-1] == ' ' || p[-1] == '\n') && strncmp(q, ": [ on", 6) == 0)
            return 1;
    }
    return 0;
}

pp_unwinder pp_perf_unwinder_parse(const char *text)
{
    /* perf prefers libunwind when both are built in (6.x) */
    if (feature_on(text, "libunwind"))
        return PP_UNWIND_LIBUNWIND;
    if (feature_on(text, "libdw-dwarf-unwind") || feature_on(text, "dwarf-unwind"))
        return PP_UNWIND_LIBDW;
    return PP_UNWIND_NONE;
}

pp_unwinder pp_perf_unwinder(const char *perf)
{
    char out[8192];
    char *argv[] = {(char *)perf, "version", "--build-options", NULL};
    int st;

    if (pp_capture(argv, 1, NULL, out, sizeof(out), &st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0 || !strstr(out, ": [ "))
        return PP_UNWIND_LIBUNWIND;
    return pp_perf_unwinder_parse(out);
}

const char *pp_unwinder_name(pp_unwinder u)
{
    switch (u) {
    case PP_UNWIND_LIBUNWIND:
        return "libunwind";
    case PP_UNWIND_LIBDW:
        return "libdw";
    default:
        return "none";
    }
}

static int read_int(const char *path, int *v)
{
    FILE *f = fopen(path, "r");
    int ok;

    if (!f)
        return -errno;
    ok = fscanf(f, "%d", v) == 1;
    fclose(f);
    return ok ? 0 : -EINVAL;
}

static int write_int(const char *path, int v)
{
    FILE *f = fopen(path, "w");
    int rc = 0;

    if (!f)
        return -errno;
    if (fprintf(f, "%d\n", v) < 0)
        rc = -EIO;
    if (fclose(f) != 0 && rc == 0)
        rc = -errno;
    return rc;
}

void pp_max_stack_raise(pp_max_stack *m, int want)
{
    int rc;

    m->raised = 0;
    m->err = 0;
    if (read_int(PP_MAX_STACK_PATH, &m->before) < 0) {
        m->before = m->now = -1;
        return;
    }
    m->now = m->before;
    if (m->before >= want)
        return;
    /* EBUSY while another session's call-chain events are open: those
     * come and go, so try for a while */
    for (int i = 0; i < 40; i++) {
        rc = write_int(PP_MAX_STACK_PATH, want);
        if (rc != -EBUSY)
            break;
        usleep(50000);
    }
    if (rc < 0) {
        m->err = -rc;
        return;
    }
    m->now = want;
    m->raised = 1;
}

int pp_max_stack_restore(pp_max_stack *m)
{
    int cur, rc;

    if (!m->raised)
        return 0;
    m->raised = 0;
    if (read_int(PP_MAX_STACK_PATH, &cur) < 0 || cur != m->now)
        return 0;          /* someone else changed it since: theirs now */
    for (int i = 0; i < 50; i++) {
        /* EBUSY while another session's call-chain events are open */
        rc = write_int(PP_MAX_STACK_PATH, m->before);
        if (rc != -EBUSY)
            return rc;
        usleep(100000);
    }
    return rc;
}
