/*
 * perfpy record -e list: what -e takes on this machine, as perf list
 * shows it: perf's software events that sample mode opens on each thread,
 * then every tracepoint of this kernel (tracefs), one a line, with what
 * each needs. All of them are sampled by sample mode's BPF program: root,
 * or CAP_BPF and CAP_PERFMON; tracefs itself is root's on most systems,
 * so a user who cannot read it is told how to see the tracepoints.
 */
#include "record.h"
#include "collect/event.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

typedef struct listing {
    FILE *out;
    unsigned long n;
    char system[64];                /* the last one headed */
} listing;

static int one_tracepoint(const char *system, const char *name, void *ctx)
{
    listing *l = ctx;

    if (strcmp(system, l->system) != 0) {
        snprintf(l->system, sizeof(l->system), "%s", system);
        fprintf(l->out, "\n");
    }
    fprintf(l->out, "  %s:%s\n", system, name);
    l->n++;
    return 0;
}

int pp__record_list_events(FILE *out)
{
    listing l = {out, 0, ""};
    const char *name, *what;
    int rc;

    fprintf(out, "perfpy record -e EVENT [-c N]: the events this machine offers, sampled in "
            "sample mode (root, or the capabilities CAP_BPF and CAP_PERFMON), every N'th of "
            "each thread (default: 100 for page-faults, minor-faults and system calls, "
            "else 1)\n\nsoftware events (perf's names):\n");
    for (size_t i = 0; pp_event_software(i, &name, &what); i++)
        fprintf(out, "  %-20s %s\n", name, what);
    fprintf(out, "\ntracepoints (SYSTEM:NAME; syscalls:sys_enter_* count the calls a line "
            "makes):\n");
    rc = pp_event_each_tracepoint(one_tracepoint, &l);
    if (rc == -EACCES || (rc == 0 && !l.n))
        fprintf(out, "  (the kernel's tracing directory, /sys/kernel/tracing, cannot be read "
                "by this user: run perfpy record -e list as root to see them)\n");
    else if (rc < 0)
        fprintf(out, "  (the kernel's tracepoints could not be listed: %s)\n", strerror(-rc));
    else
        fprintf(out, "\n%lu tracepoints\n", l.n);
    return 0;
}
