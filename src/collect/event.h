/*
 * The events sample mode samples beside CPU time (perfpy record -e NAME):
 * perf's own names for its software events (page-faults, minor-faults,
 * major-faults, context-switches, cpu-migrations) and any tracepoint of
 * the kernel, SYSTEM:NAME as perf spells it (syscalls:sys_enter_write,
 * sched:sched_process_fork). One parser for perfpy, which refuses a name
 * this kernel lacks before the program starts, and perfpy-sample, which
 * opens the event the name says:
 *
 *   page-faults   -> a software perf event (PERF_COUNT_SW_PAGE_FAULTS),
 *                    its sample period the kernel's: every Nth fault of
 *                    each thread runs the BPF program
 *   sys:name      -> a tracepoint (its id in tracefs); the BPF program runs
 *                    at each hit of a target's thread and keeps every Nth
 *
 * What a sample counts is said by its unit (pp_profile_event_unit: faults,
 * switches, migrations, calls, events), which every writer prints.
 */
#ifndef PERFPY_COLLECT_EVENT_H
#define PERFPY_COLLECT_EVENT_H

#include <stddef.h>

typedef enum pp_event_kind {
    PP_EVENT_SOFTWARE = 1,          /* a perf software event: config below */
    PP_EVENT_TRACEPOINT = 2,        /* system:name in tracefs */
} pp_event_kind;

#define PP_EVENT_NAME_MAX 64      /* a profile's event name's room (profile.h) */

typedef struct pp_event {
    pp_event_kind kind;
    unsigned long long config;      /* PERF_COUNT_SW_* (software) */
    char name[PP_EVENT_NAME_MAX];   /* perf's name: "page-faults", "syscalls:sys_enter_write" */
    char system[64], tracepoint[64];  /* the tracepoint's two halves */
    const char *unit;               /* what one event is: "faults", "calls", ... */
    unsigned long every;            /* the default period (-c): 100 for the events a
                                       program makes by the hundred thousand a
                                       second (page-faults, minor-faults, system
                                       calls), each sample 13-41 us of the
                                       thread's CPU (docs/PERFORMANCE.md); else 1 */
} pp_event;

/* The event named name, its tracepoint looked up in tracefs (root):
 * 0, -EINVAL (no such event: not perf's name of a software event, nor
 * SYSTEM:NAME), -ENOENT (a tracepoint this kernel does not have), or
 * -EACCES (tracefs cannot be read here: it may exist). */
int pp_event_parse(const char *name, pp_event *out);

/* Where the kernel's tracefs belongs. */
#define PP_EVENT_TRACEFS "/sys/kernel/tracing"

/* The directory of this kernel's tracepoints (/sys/kernel/tracing/events,
 * or debugfs's), or NULL when neither can be read. tracefs not mounted
 * at all is mounted at PP_EVENT_TRACEFS first when this process may
 * (CAP_SYS_ADMIN), as perf does. */
const char *pp_event_tracefs(void);

/* 1 when no tracefs is mounted (neither at PP_EVENT_TRACEFS nor under
 * debugfs), 0 when one is, readable here or not. */
int pp_event_tracefs_unmounted(void);

/* Calls fn on each tracepoint of this kernel (tracefs's SYSTEM/NAME/id),
 * systems and names in alphabetical order, until fn returns non-zero
 * (returned). 0, or -errno: -EACCES when tracefs cannot be read here. */
int pp_event_each_tracepoint(int (*fn)(const char *system, const char *name, void *ctx),
                             void *ctx);

/* The i-th software event sample mode takes (for -e list): 1 with its
 * name and what it counts, 0 past the last. */
int pp_event_software(size_t i, const char **name, const char **what);

#endif
