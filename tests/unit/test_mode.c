/*
 * The mode of a recording, decided once (src/cli/mode.c), where the answer
 * needs nothing of the machine: an option only sample mode honours, the
 * engine a process attached to runs, an option only perf honours, a
 * program that is no CPython, and the request's names of the modes.
 */
#include "cli/mode.h"
#include "test.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const pp_interp cpython_fp = {.known = 1, .cpython = 1, .major = 3, .minor = 12,
                                     .frame_pointers = 1};

TEST(mode_options_that_only_sample_mode_honours_make_it)
{
    static char *argv[] = {"python3", "app.py", NULL};
    const char *const only[] = {"--async", "-a"};
    pp_mode_ask a = {.asked = PP_MODE_AUTO, .argv = argv, .interp = &cpython_fp};
    pp_mode_choice c;

    for (size_t i = 0; i < sizeof(only) / sizeof(only[0]); i++) {
        a.sample_only = only[i];
        ASSERT_EQ_INT(pp_mode_resolve(&a, &c), 0);
        ASSERT_EQ_INT(c.mode, PP_MODE_SAMPLE);
        ASSERT_EQ_INT(c.chosen, 0);           /* nothing chosen, nothing said */
        ASSERT_EQ_STR(c.why, "");
    }
    /* an attached process too: its engine is not asked then */
    a.argv = NULL;
    a.pid = 4242;
    a.engine = PP_ENGINE_JIT;
    ASSERT_EQ_INT(pp_mode_resolve(&a, &c), 0);
    ASSERT_EQ_INT(c.mode, PP_MODE_SAMPLE);
}

TEST(mode_attached_follows_the_engine_the_process_runs)
{
    pp_mode_ask a = {.asked = PP_MODE_AUTO, .pid = 4242};
    pp_mode_choice c;

    a.engine = PP_ENGINE_JIT;
    ASSERT_EQ_INT(pp_mode_resolve(&a, &c), 0);
    ASSERT_EQ_INT(c.mode, PP_MODE_JIT);
    a.engine = PP_ENGINE_MAP;
    ASSERT_EQ_INT(pp_mode_resolve(&a, &c), 0);
    ASSERT_EQ_INT(c.mode, PP_MODE_PERF);
    a.asked = PP_MODE_HOOK;
    ASSERT_EQ_INT(pp_mode_resolve(&a, &c), 0);
    ASSERT_EQ_INT(c.mode, PP_MODE_PERF);
    /* the other engine asked for: refused, saying which to give */
    a.asked = PP_MODE_JIT;
    ASSERT_EQ_INT(pp_mode_resolve(&a, &c), PP_EXIT_FAIL);
    ASSERT_EQ_STR(c.why, "the process 4242 runs perfpy's engine in perf mode, not jit: give "
                         "--mode perf (or auto)");
    /* no engine and a hook mode asked: what to do instead */
    a.engine = PP_ENGINE_NONE;
    ASSERT_EQ_INT(pp_mode_resolve(&a, &c), PP_EXIT_FAIL);
    ASSERT_TRUE(strstr(c.why, "perfpy record --mode read -p 4242 (no root)") != NULL);
    /* sample and read mode asked attach to any process */
    a.asked = PP_MODE_READ;
    ASSERT_EQ_INT(pp_mode_resolve(&a, &c), 0);
    ASSERT_EQ_INT(c.mode, PP_MODE_READ);
}

TEST(mode_auto_is_a_hook_where_perf_or_the_hook_is_the_answer)
{
    static char *argv[] = {"python3", "app.py", NULL}, *shell[] = {"./run.sh", NULL};
    pp_interp unknown = {0};
    pp_mode_ask a = {.asked = PP_MODE_AUTO, .argv = argv, .interp = &cpython_fp,
                     .perf_only = "-f perf (a perf.data for perf's own tools)"};
    pp_mode_choice c;

    ASSERT_EQ_INT(pp_mode_resolve(&a, &c), 0);
    ASSERT_EQ_INT(c.mode, PP_MODE_PERF);      /* frame pointers: perf map */
    ASSERT_EQ_INT(c.chosen, 1);
    ASSERT_EQ_STR(c.why, "perf mode: -f perf (a perf.data for perf's own tools) needs perf's "
                         "recording, which only the trampoline modes make");
    a.perf_only = NULL;
    a.argv = shell;
    a.interp = &unknown;
    ASSERT_EQ_INT(pp_mode_resolve(&a, &c), 0);
    ASSERT_EQ_INT(c.mode, PP_MODE_JIT);
    ASSERT_EQ_STR(c.why, "jit mode: './run.sh' is not a CPython perfpy can read from outside "
                         "(the hook starts in every Python process it runs)");
    /* hook asked: the interpreter says which, nothing said */
    a.asked = PP_MODE_HOOK;
    a.interp = &cpython_fp;
    ASSERT_EQ_INT(pp_mode_resolve(&a, &c), 0);
    ASSERT_EQ_INT(c.mode, PP_MODE_PERF);
    ASSERT_EQ_STR(c.why, "");
}

TEST(mode_names_are_the_requests_one_table)
{
    const char *const names[] = {"auto", "sample", "read", "hook", "perf", "jit"};
    pp_mode m;

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        ASSERT_EQ_INT(pp_request_mode_of(names[i], &m), 0);
        ASSERT_EQ_INT(m, (int)i);
        ASSERT_EQ_STR(pp_request_mode_name(m), names[i]);
    }
    ASSERT_EQ_INT(pp_request_mode_of("map", &m), -EINVAL);
    ASSERT_EQ_INT(pp_request_mode_of("", &m), -EINVAL);
}

/* The answers of a machine (pp_mode_here) where sample mode's check said
 * sample (0 or -errno, with why) and reading the target said read. */
static pp_mode_here here(int sample, const char *why, int read)
{
    pp_mode_here h = {PP_MODE_PERF, "perf", "auto", sample, "", read};

    snprintf(h.sample_why, sizeof(h.sample_why), "%s", why);
    return h;
}

TEST(mode_idle_and_gil_take_sample_mode_else_read_mode_said)
{
    static char *argv[] = {"python3", "app.py", NULL};
    const char *const opts[] = {"--idle", "--gil"};
    pp_mode_ask a = {.asked = PP_MODE_AUTO, .argv = argv, .interp = &cpython_fp};
    pp_mode_here h;
    pp_mode_choice c;

    for (size_t i = 0; i < 2; i++) {
        a.sample_or_read = opts[i];
        a.argv = argv;
        a.pid = 0;
        a.engine = PP_ENGINE_NONE;
        h = here(0, "", 0);                     /* BPF allowed: sample mode, unsaid */
        ASSERT_EQ_INT(pp_mode_rules(&a, &h, &c), 0);
        ASSERT_EQ_INT(c.mode, PP_MODE_SAMPLE);
        ASSERT_EQ_INT(c.chosen, 0);             /* as the options fixed it: no module asked */
        ASSERT_EQ_STR(c.why, "");
        h = here(-EPERM, "bpf(): not permitted", 0);   /* a user: read mode, said */
        ASSERT_EQ_INT(pp_mode_rules(&a, &h, &c), 0);
        ASSERT_EQ_INT(c.mode, PP_MODE_READ);
        ASSERT_EQ_INT(c.chosen, 1);
        ASSERT_TRUE(strstr(c.why, "read mode, which needs no privilege, for ") == c.why);
        ASSERT_CONTAINS(c.why, opts[i]);
        ASSERT_CONTAINS(c.why, "(bpf(): not permitted: it needs root, or CAP_BPF and "
                               "CAP_PERFMON)");
        h.read = -EPERM;                        /* neither: refused with both reasons */
        ASSERT_EQ_INT(pp_mode_rules(&a, &h, &c), PP_EXIT_FAIL);
        ASSERT_CONTAINS(c.why, "needs sample or read mode: sample mode cannot run here "
                               "(bpf(): not permitted), and read mode cannot read another "
                               "process (not permitted");
        h = here(-ENOENT, "perfpy-sample is not built", 0);   /* no read mode either */
        ASSERT_EQ_INT(pp_mode_rules(&a, &h, &c), PP_EXIT_FAIL);
        ASSERT_CONTAINS(c.why, "perfpy-sample is not built");
        /* attached, whatever engine it runs: the same, never a hook mode */
        a.argv = NULL;
        a.pid = 4242;
        a.engine = PP_ENGINE_JIT;
        h = here(-EPERM, "bpf(): not permitted", 0);
        ASSERT_EQ_INT(pp_mode_rules(&a, &h, &c), 0);
        ASSERT_EQ_INT(c.mode, PP_MODE_READ);
        h.read = -EPERM;
        ASSERT_EQ_INT(pp_mode_rules(&a, &h, &c), PP_EXIT_FAIL);
        ASSERT_CONTAINS(c.why, "read mode cannot read that process (not permitted: run "
                               "perfpy as that process's user)");
        /* asked for by name: no choice */
        a.asked = PP_MODE_READ;
        ASSERT_EQ_INT(pp_mode_rules(&a, &h, &c), 0);
        ASSERT_EQ_INT(c.mode, PP_MODE_READ);
        ASSERT_EQ_INT(c.chosen, 0);
        a.asked = PP_MODE_AUTO;
    }
}

TEST(mode_auto_ladder_sample_then_read_then_hook)
{
    static char *argv[] = {"python3", "app.py", NULL};
    pp_mode_ask a = {.asked = PP_MODE_AUTO, .argv = argv, .interp = &cpython_fp};
    pp_mode_here h = here(0, "", 0);
    pp_mode_choice c;

    ASSERT_EQ_INT(pp_mode_rules(&a, &h, &c), 0);
    ASSERT_EQ_INT(c.mode, PP_MODE_SAMPLE);
    ASSERT_EQ_STR(c.why, "sample mode, the best here: BPF may be used (nothing installed in "
                         "the program; --mode hook for the trampoline modes)");
    h = here(-ENOTSUP, "sample mode is not in this perfpy: built with PERFPY_NO_SAMPLE=1", 0);
    ASSERT_EQ_INT(pp_mode_rules(&a, &h, &c), 0);
    ASSERT_EQ_INT(c.mode, PP_MODE_READ);
    ASSERT_EQ_STR(c.why, "read mode, which needs no privilege: sample mode is not in this "
                         "perfpy: built with PERFPY_NO_SAMPLE=1");
    h = here(-EPERM, "cannot load: not permitted", 0);
    ASSERT_EQ_INT(pp_mode_rules(&a, &h, &c), 0);
    ASSERT_EQ_INT(c.mode, PP_MODE_READ);
    ASSERT_EQ_STR(c.why, "read mode, which needs no privilege: sample mode cannot run here "
                         "(cannot load: not permitted: it needs root, or CAP_BPF and "
                         "CAP_PERFMON)");
    h = here(-ENOENT, "sample mode is not in this perfpy (x is missing)", 0);
    ASSERT_EQ_INT(pp_mode_rules(&a, &h, &c), 0);
    ASSERT_EQ_INT(c.mode, PP_MODE_PERF);        /* no perfpy-sample: no read mode either */
    ASSERT_EQ_STR(c.why, "perf mode: sample mode is not in this perfpy (x is missing) (read "
                         "mode is in the same program)");
    h = here(-EPERM, "no BTF", -EPERM);
    ASSERT_EQ_INT(pp_mode_rules(&a, &h, &c), 0);
    ASSERT_EQ_INT(c.mode, PP_MODE_PERF);
    ASSERT_EQ_STR(c.why, "perf mode: sample mode cannot run here (no BTF), and read mode "
                         "cannot read another process (process_vm_readv Operation not "
                         "permitted: a seccomp policy, or kernel.yama.ptrace_scope 3)");
    h = here(PP_MODE_UNASKED, "", 0);           /* a rule reached an answer not asked */
    ASSERT_EQ_INT(pp_mode_rules(&a, &h, &c), -EINVAL);
}

TEST(mode_attached_without_an_engine_samples_else_reads_else_says_what_to_do)
{
    pp_mode_ask a = {.asked = PP_MODE_AUTO, .pid = 4242, .engine = PP_ENGINE_NONE};
    pp_mode_here h = here(0, "", 0);
    pp_mode_choice c;

    ASSERT_EQ_INT(pp_mode_rules(&a, &h, &c), 0);
    ASSERT_EQ_INT(c.mode, PP_MODE_SAMPLE);
    ASSERT_EQ_STR(c.why, "the process 4242 was not started with perfpy's engine: attaching "
                         "in sample mode, which reads its Python frames from outside "
                         "(nothing installed in it)");
    a.sample_refused = "--keep keeps perf's recording";
    ASSERT_EQ_INT(pp_mode_rules(&a, &h, &c), PP_EXIT_FAIL);
    ASSERT_EQ_STR(c.why, "the process 4242 was not started with perfpy's engine, and sample "
                         "mode, which could attach to it, cannot do this: --keep keeps "
                         "perf's recording");
    a.sample_refused = NULL;
    h = here(-EPERM, "no BTF", 0);
    ASSERT_EQ_INT(pp_mode_rules(&a, &h, &c), 0);
    ASSERT_EQ_INT(c.mode, PP_MODE_READ);
    ASSERT_TRUE(strstr(c.why, "sample mode cannot run here (no BTF): attaching in read mode")
                != NULL);
    a.read_refused = "--inline is not built in read mode";
    ASSERT_EQ_INT(pp_mode_rules(&a, &h, &c), PP_EXIT_FAIL);
    a.read_refused = NULL;
    h = here(-ENOTSUP, "built without it", 0);  /* no collector: refused, not read */
    ASSERT_EQ_INT(pp_mode_rules(&a, &h, &c), PP_EXIT_FAIL);
    h = here(-EPERM, "no BTF", -EPERM);
    ASSERT_EQ_INT(pp_mode_rules(&a, &h, &c), PP_EXIT_FAIL);
    ASSERT_TRUE(strstr(c.why, "start it with `perfpy run --mode jit") != NULL);
}

TEST(mode_top_samples_else_reads_unless_sample_mode_is_needed)
{
    pp_mode_ask a = {.asked = PP_MODE_AUTO, .live = 1, .pid = 4242};
    pp_mode_here h = here(0, "", -EPERM);
    pp_mode_choice c;

    ASSERT_EQ_INT(pp_mode_rules(&a, &h, &c), 0);
    ASSERT_EQ_INT(c.mode, PP_MODE_SAMPLE);      /* as root the process need not be readable */
    h = here(-EPERM, "no BTF", 0);
    ASSERT_EQ_INT(pp_mode_rules(&a, &h, &c), 0);
    ASSERT_EQ_INT(c.mode, PP_MODE_READ);
    h.read = -EPERM;
    ASSERT_EQ_INT(pp_mode_rules(&a, &h, &c), PP_EXIT_FAIL);
    ASSERT_TRUE(strstr(c.why, "cannot read the memory of the process 4242: not permitted")
                == c.why);
    a.sample_only = "--async";
    ASSERT_EQ_INT(pp_mode_rules(&a, &h, &c), PP_EXIT_FAIL);
    ASSERT_TRUE(strstr(c.why, "perfpy top --async needs sample mode, which cannot sample here "
                              "(no BTF)") == c.why);
    h = here(-ENOTSUP, "built without it", 0);
    ASSERT_EQ_INT(pp_mode_rules(&a, &h, &c), PP_EXIT_FAIL);
    ASSERT_EQ_STR(c.why, "perfpy top --async needs sample mode, and built without it");
    a.sample_only = NULL;
    a.asked = PP_MODE_SAMPLE;
    h = here(-EPERM, "no BTF", 0);
    ASSERT_EQ_INT(pp_mode_rules(&a, &h, &c), PP_EXIT_FAIL);
    ASSERT_TRUE(strstr(c.why, "; --mode read needs none of them") != NULL);
    a.asked = PP_MODE_READ;
    h = here(PP_MODE_UNASKED, "", 0);
    ASSERT_EQ_INT(pp_mode_rules(&a, &h, &c), 0);
    ASSERT_EQ_INT(c.mode, PP_MODE_READ);
}
