/*
 * perfpy run [--mode perf|jit] -- PROGRAM [ARGS...]
 *
 * Runs a Python program with perfpy's engine on, without perf and without
 * installing anything: the program's environment gets PERFPY=<mode> and
 * perfpy's module directory first on PYTHONPATH, whose sitecustomize.py
 * switches the engine on in every Python process that starts (children
 * included). perfpy then replaces itself with the program (exec), so the
 * program's exit status and signals are its own.
 *
 *   perf record -F 999 --call-graph dwarf -- perfpy run -- python app.py
 */
#include "cli.h"
#include "help.h"
#include "options.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *const help[] = {
    "usage: perfpy run [--mode perf|jit] [--] PROGRAM [ARGS...]",
    "",
    "Run a Python program with perfpy's engine active, so that perf (run",
    "around it) sees Python functions by name. Nothing is installed: the",
    "program and every Python process it starts load perfpy through",
    "PYTHONPATH. Inside the program, `import perfpy` gives the API to",
    "toggle the engine. The exit status is the program's.",
    "",
    "options:",
    "  -m, --mode MODE      perf: /tmp/perf-<pid>.map, names only; needs",
    "                       frame pointers for whole stacks (default: perf)",
    "                       jit: a jitdump with DWARF unwinding data for",
    "                       `perf inject --jit`: whole stacks without frame",
    "                       pointers (record with -k 1 --call-graph dwarf)",
    "  -h, --help           this help",
    "",
    "environment:",
    "  PERFPY_JITDUMP_DIR   directory for jit-<pid>.dump (default: /tmp)",
    "",
    "exit status: the program's own; 1 if it cannot be started; 2 usage error",
    "",
    "example:",
    "  perf record -F 999 --call-graph dwarf -- perfpy run -- python app.py",
    "  perf report",
    NULL,
};

/* --mode's words: perfpy's, and CPython's for the same engines. */
static const struct {
    const char *word;
    pp_mode mode;
} modes[] = {{"perf", PP_MODE_PERF}, {"map", PP_MODE_PERF}, {"jit", PP_MODE_JIT},
             {"perf_jit", PP_MODE_JIT}};

static int run_option(int c, void *opts, pp_usage *u)
{
    pp_run_opts *o = opts;

    if (c != 'm')
        return PP_PARSED_RUN;
    for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
        if (strcmp(optarg, modes[i].word) == 0) {
            o->mode = modes[i].mode;
            return PP_PARSED_RUN;
        }
    return pp_usage_set(u, "--mode must be perf or jit, not '%s'", optarg);
}

int pp_run_parse(int argc, char **argv, pp_run_opts *o, pp_usage *u)
{
    static const struct option opts[] = {
        {"mode", required_argument, NULL, 'm'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int rc;

    o->mode = PP_MODE_PERF;
    o->argv = NULL;
    if ((rc = pp_getopt_each(argc, argv, "+:m:h", opts, run_option, o, u)) != PP_PARSED_RUN)
        return rc;
    return pp_operand_program(argc, argv, optind, "perfpy run -- python app.py", &o->argv, u);
}

int pp_cmd_run(int argc, char **argv)
{
    pp_run_opts o;
    pp_usage u;
    char libdir[PATH_MAX];
    int rc;

    if ((rc = pp_parsed("run", pp_run_parse(argc, argv, &o, &u), &u, help)) >= 0)
        return rc;
    if (pp_find_libdir(libdir, sizeof(libdir)) < 0)
        return PP_EXIT_FAIL;
    rc = pp_prepare_child_env(libdir, o.mode);
    if (rc < 0)
        return pp_fail("cannot set up the environment: %s", strerror(-rc));
    fflush(NULL);
    return pp_exec(o.argv);
}
