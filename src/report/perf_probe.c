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
