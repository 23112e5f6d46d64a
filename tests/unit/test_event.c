/*
 * perf's event names as perfpy record -e takes them (src/collect/event.c):
 * software events by perf's names and aliases, tracepoints SYSTEM:NAME
 * looked up in this kernel's tracefs, anything else refused; the unit each
 * profile counts in (profile.c); and the request that carries the event
 * to perfpy-sample, refused with a mode that cannot sample it.
 */
#include "collect/event.h"
#include "profile/profile.h"
#include "sampler/request.h"
#include "test.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>
#include <unistd.h>

TEST(event_software_names_and_aliases)
{
    static const struct { const char *name, *canon; unsigned long long config; } ok[] = {
        {"page-faults", "page-faults", PERF_COUNT_SW_PAGE_FAULTS},
        {"faults", "page-faults", PERF_COUNT_SW_PAGE_FAULTS},
        {"minor-faults", "minor-faults", PERF_COUNT_SW_PAGE_FAULTS_MIN},
        {"major-faults", "major-faults", PERF_COUNT_SW_PAGE_FAULTS_MAJ},
        {"context-switches", "context-switches", PERF_COUNT_SW_CONTEXT_SWITCHES},
        {"cs", "context-switches", PERF_COUNT_SW_CONTEXT_SWITCHES},
        {"cpu-migrations", "cpu-migrations", PERF_COUNT_SW_CPU_MIGRATIONS},
    };
    pp_event ev;

    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        ASSERT_EQ_INT(pp_event_parse(ok[i].name, &ev), 0);
        ASSERT_EQ_INT(ev.kind, PP_EVENT_SOFTWARE);
        ASSERT_EQ_INT(ev.config, ok[i].config);
        ASSERT_EQ_STR(ev.name, ok[i].canon);
    }
    ASSERT_EQ_STR((pp_event_parse("page-faults", &ev), ev.unit), "faults");
    ASSERT_EQ_INT(ev.every, 100);
    ASSERT_EQ_INT((pp_event_parse("major-faults", &ev), ev.every), 1);
    ASSERT_EQ_STR((pp_event_parse("cs", &ev), ev.unit), "switches");
}

TEST(event_names_that_are_none_are_refused)
{
    static const char *const bad[] = {
        "", "pagefaults", "page-faults ", "cycles", ":", "syscalls:", ":sys_enter_write",
        "syscalls:sys enter", "../../etc:passwd", "syscalls:sys_enter_write:extra",
        "sys/calls:x",
        "a_very_long_system_name_that_goes_on_and_on_and_on_and_on_and_on:x",
    };
    pp_event ev;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ASSERT_EQ_INT(pp_event_parse(bad[i], &ev), -EINVAL);
    ASSERT_EQ_INT(pp_event_parse(NULL, &ev), -EINVAL);
}

TEST(event_tracepoints_as_this_kernel_has_them)
{
    pp_event ev;
    const char *dir = pp_event_tracefs();

    if (!dir || access("/sys/kernel/tracing/events/syscalls/sys_enter_write/id", R_OK) != 0)
        TEST_SKIP("tracefs with syscalls:sys_enter_write cannot be read here (root)");
    ASSERT_EQ_INT(pp_event_parse("syscalls:sys_enter_write", &ev), 0);
    ASSERT_EQ_INT(ev.kind, PP_EVENT_TRACEPOINT);
    ASSERT_EQ_STR(ev.system, "syscalls");
    ASSERT_EQ_STR(ev.tracepoint, "sys_enter_write");
    ASSERT_EQ_STR(ev.unit, "calls");
    ASSERT_EQ_INT(ev.every, 100);
    ASSERT_EQ_INT(pp_event_parse("sched:sched_process_fork", &ev), 0);
    ASSERT_EQ_STR(ev.unit, "events");
    ASSERT_EQ_INT(ev.every, 1);
    ASSERT_EQ_INT(pp_event_parse("syscalls:sys_enter_no_such_call", &ev), -ENOENT);
    ASSERT_EQ_INT(pp_event_parse("nosuchsystem:x", &ev), -ENOENT);
}

TEST(event_units_the_writers_print)
{
    pp_profile p;

    ASSERT_EQ_STR(pp_profile_event_unit("major-faults"), "faults");
    ASSERT_EQ_STR(pp_profile_event_unit("page-faults:u"), "faults");
    ASSERT_EQ_STR(pp_profile_event_unit("syscalls:sys_exit_read"), "calls");
    ASSERT_EQ_STR(pp_profile_event_unit("raw_syscalls:sys_enter"), "calls");
    ASSERT_EQ_STR(pp_profile_event_unit("irq:irq_handler_entry"), "events");
    ASSERT_EQ_STR(pp_profile_event_unit("cpu-clock"), "ns");
    ASSERT_EQ_STR(pp_profile_event_unit("page-faultsx"), "events");
    memset(&p, 0, sizeof(p));
    strcpy(p.event, "page-faults");
    ASSERT_EQ_STR(pp_profile_unit(&p), "samples");         /* a CPU profile of perf's */
    p.value = PP_VALUE_EVENTS;
    p.samples = 4;
    p.period = 40;
    ASSERT_EQ_STR(pp_profile_unit(&p), "faults");
    ASSERT_EQ_INT(pp_profile_every(&p), 10);
    ASSERT_EQ_STR(pp_profile_unit_n(&p, 10), "faults");
    ASSERT_EQ_STR(pp_profile_unit_n(&p, 1), "fault");
    strcpy(p.event, "cs");
    ASSERT_EQ_STR(pp_profile_unit_n(&p, 1), "switch");
    strcpy(p.event, "syscalls:sys_enter_read");
    ASSERT_EQ_STR(pp_profile_unit_n(&p, 1), "call");
}

TEST(event_request_carries_it_and_refuses_what_cannot_sample_it)
{
    static char *prog[] = {"python3", "app.py", NULL};
    pp_request rq, back;
    char **argv = NULL, why[512];
    int n = 0;

    memset(&rq, 0, sizeof(rq));
    rq.mode = PP_MODE_SAMPLE;
    rq.argv = prog;
    rq.rate = 399;
    rq.format = "collapsed";
    rq.output = "out.txt";
    rq.event = "syscalls:sys_enter_write";
    rq.period = 7;
    ASSERT_EQ_INT(pp_request_argv(&rq, "perfpy-sample", &argv), 0);
    while (argv[n])
        n++;
    ASSERT_EQ_INT(pp_request_read(n, argv, &back, why, sizeof(why)), 0);
    ASSERT_EQ_STR(back.event, "syscalls:sys_enter_write");
    ASSERT_EQ_INT(back.period, 7);
    pp_request_argv_free(argv);
    rq.wall = 1;                     /* an event's samples are not time */
    ASSERT_EQ_INT(pp_request_argv(&rq, "perfpy-sample", &argv), 0);
    ASSERT_EQ_INT(pp_request_read(n, argv, &back, why, sizeof(why)), PP_EXIT_USAGE);
    pp_request_argv_free(argv);
}
