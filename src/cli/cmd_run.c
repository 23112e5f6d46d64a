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
#include "options.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void help(FILE *out)
{
    fprintf(out,
            "usage: perfpy run [--mode perf|jit] [--] PROGRAM [ARGS...]\n"
            "\n"
            "Run a Python program with perfpy's engine active, so that perf (run\n"
            "around it) sees Python functions by name. Nothing is installed: the\n"
            "program and every Python process it starts load perfpy through\n"
            "PYTHONPATH. Inside the program, `import perfpy` gives the API to\n"
            "toggle the engine. The exit status is the program's.\n"
            "\n"
            "options:\n"
            "  -m, --mode MODE      perf: /tmp/perf-<pid>.map, names only; needs\n"
            "                       frame pointers for whole stacks (default: perf)\n"
            "                       jit: a jitdump with DWARF unwinding data for\n"
            "                       `perf inject --jit`: whole stacks without frame\n"
            "                       pointers (record with -k 1 --call-graph dwarf)\n"
            "  -h, --help           this help\n"
            "\n"
            "environment:\n"
            "  PERFPY_JITDUMP_DIR   directory for jit-<pid>.dump (default: /tmp)\n"
            "\n"
            "exit status: the program's own; 1 if it cannot be started; 2 usage error\n"
            "\n"
            "example:\n"
            "  perf record -F 999 --call-graph dwarf -- perfpy run -- python app.py\n"
            "  perf report\n");
}

static const char *mode_env(const char *mode)
{
    if (strcmp(mode, "perf") == 0 || strcmp(mode, "map") == 0)
        return "perf";
    if (strcmp(mode, "jit") == 0 || strcmp(mode, "perf_jit") == 0)
        return "jit";
    return NULL;
}

static int run_option(int c, void *opts, pp_usage *u)
{
    pp_run_opts *o = opts;

    if (c == 'm' && !(o->mode = mode_env(optarg)))
        return pp_usage_set(u, "--mode must be perf or jit, not '%s'", optarg);
    return PP_PARSED_RUN;
}

int pp_run_parse(int argc, char **argv, pp_run_opts *o, pp_usage *u)
{
    static const struct option opts[] = {
        {"mode", required_argument, NULL, 'm'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int rc;

    o->mode = "perf";
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
