/*
 * perfpy report [-f FORMAT] [-o FILE] [--no-native] [--keep] perf.data
 * perfpy report [-f FORMAT] [-o FILE] PROFILE.perfpy.gz
 *
 * Writes a profile from an existing recording: the command-line face of
 * the pipeline in report.c (which `perfpy record` runs too); or writes a
 * profile perfpy wrote (-f perfpy) again in another format.
 *
 *   perf record -k 1 --call-graph dwarf -- perfpy run --mode jit -- python app.py
 *   perfpy report -f html -o app.html perf.data
 */
#include "cli.h"
#include "help.h"
#include "options.h"
#include "report/report.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const help[] = {
    "usage: perfpy report [-f FORMAT] [-o FILE] [--no-native] [--keep] perf.data",
    "       perfpy report [-f FORMAT] [-o FILE] PROFILE.perfpy.gz",
    "       perfpy report --from-script [-f FORMAT] [-o FILE] perf-script.txt",
    "",
    "Write a Python-aware profile from a perf.data recorded with perfpy's engine",
    "active (`perfpy run` under `perf record`, or `perfpy record -f perf`). Runs",
    "`perf inject --jit` when the recording used jitdump mode, then `perf script`,",
    "folds interpreter plumbing away and writes the profile. The input is only",
    "read. A summary goes to stderr.",
    "",
    "Or write again, in any format, a profile perfpy wrote with -f perfpy (any mode,",
    "sample mode's too): record once, render many; the same samples and totals as",
    "the format written at once. A file cut short, of another version or not",
    "perfpy's is refused in one line, and nothing is written. (perfpy's pprof",
    "is read too, with only what it keeps: the stacks and their totals.)",
    "",
    "options:",
    "  -f, --format FORMAT  flamegraph (default; interactive .svg), html (page with",
    "                       flame graph and function table), speedscope",
    "                       (.speedscope.json, a profile per thread in time",
    "                       order, one for more than 16 threads named alike),",
    "                       firefox (.firefox.json, the Firefox",
    "                       Profiler's: a track per thread, markers), heatmap",
    "                       (.heatmap.html, each source line's share), table",
    "                       (.table.txt, functions by own and total time), pprof",
    "                       (.pb.gz), collapsed (.txt, flamegraph.pl's input),",
    "                       perfpy (.perfpy.gz, perfpy's own: the whole profile,",
    "                       for any format later), perf (the injected perf.data,",
    "                       for perf report/Hotspot)",
    "  -o, --output FILE    where to write (default: the input's name with the",
    "                       format's extension, in the current directory:",
    "                       perf.data -> perf.svg); '-' for standard output",
    "      --native         keep C, libc and kernel frames (default)",
    "      --no-native      Python frames only: drop C, libc and kernel frames",
    "                       (default: off)",
    "      --inline         keep C functions the compiler inlined (shown as",
    "                       'name (inlined)'); slower: perf then runs addr2line",
    "                       for every library and Python function sampled",
    "                       (default: off)",
    PP_HELP_FOLD(17),
    "      --keep           keep intermediate files (injected perf.data, the",
    "                       jitted-*.so files perf inject writes next to the dump;",
    "                       default: removed)",
    "      --lines-dir DIR  where perfpy-<pid>.lines files give def lines (default:",
    "                       $PERFPY_LINES_DIR, else the directory of perf.data)",
    "      --title TEXT     title of graphical outputs (default: program name)",
    "      --top N          Python functions listed in the summary (default: 10)",
    "      --from-script    the input is the text of `perf script -F",
    "                       " PP_SCRIPT_FIELDS "`",
    "                       (e.g. made on another machine; '-' reads stdin;",
    "                       default: the input is a perf.data)",
    "  -q, --quiet          no summary, no progress (default: both on stderr)",
    "  -v, --verbose        the summary's accounting notes too: its processes,",
    "                       how long the profile took to make (default: the",
    "                       totals, the table, the file written, and one line for",
    "                       a gap of 1% or more of a figure)",
    "  -h, --help           this help",
    "",
    "environment:",
    "  PERF                 the perf executable (default: perf on PATH)",
    "  TMPDIR               where the temporary directory goes (default: /tmp)",
    "",
    "exit status: 0 written, 1 failed (nothing written), 2 usage error",
    "",
    "example:",
    "  perfpy report -f speedscope -o app.speedscope.json perf.data",
    NULL,
};

/* The words being parsed: --threads takes the one after it when it is
 * merge or split. */
static char **parsed_argv;
static int parsed_argc;

static int report_option(int c, void *opts, pp_usage *u)
{
    pp_report_cli *cli = opts;
    pp_report_opts *o = &cli->report;

    switch (c) {
    case 'f':
        return pp_option_format(optarg, &o->format, u);
    case 'o':
        return pp_option_output(optarg, &o->output, u);
    case 'N':
    case 'n':
        o->no_native = c == 'N';
        break;
    case 'k':
        o->keep = 1;
        break;
    case 'L':
        o->lines_dir = optarg;
        break;
    case 'T':
        o->title = optarg;
        break;
    case 't':
        if (pp_parse_long(optarg, 0, 100000, &cli->top) < 0)
            return pp_usage_set(u, "--top needs a number from 0 to 100000, not '%s'", optarg);
        break;
    case 'q':
        cli->quiet = 1;
        break;
    case 'v':
        cli->verbose = 1;
        break;
    case 'S':
        o->from_script = 1;
        break;
    case 'I':
        o->inline_frames = 1;
        break;
    case 'P':
        return pp_option_processes(optarg, &o->processes, u);
    case 'Y':
        o->show_perfpy = 1;
        break;
    case 'H':
        return pp_option_threads(optarg, parsed_argc, parsed_argv, &o->threads, u);
    }
    return PP_PARSED_RUN;
}

int pp_report_parse(int argc, char **argv, pp_report_cli *cli, pp_usage *u)
{
    static const struct option opts[] = {
        {"format", required_argument, NULL, 'f'},
        {"output", required_argument, NULL, 'o'},
        {"no-native", no_argument, NULL, 'N'},
        {"native", no_argument, NULL, 'n'},
        {"keep", no_argument, NULL, 'k'},
        {"lines-dir", required_argument, NULL, 'L'},
        {"title", required_argument, NULL, 'T'},
        {"top", required_argument, NULL, 't'},
        {"quiet", no_argument, NULL, 'q'},
        {"verbose", no_argument, NULL, 'v'},
        {"from-script", no_argument, NULL, 'S'},
        {"inline", no_argument, NULL, 'I'},
        {"processes", required_argument, NULL, 'P'},
        {"show-perfpy", no_argument, NULL, 'Y'},
        {"threads", optional_argument, NULL, 'H'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    static const pp_report_opts defaults = PP_REPORT_OPTS_INIT;
    int rc;

    cli->report = defaults;
    cli->top = 10;
    cli->quiet = 0;
    cli->verbose = 0;
    parsed_argv = argv;
    parsed_argc = argc;
    rc = pp_getopt_each(argc, argv, ":f:o:qvh", opts, report_option, cli, u);
    if (rc != PP_PARSED_RUN)
        return rc;
    return pp_operand_one(argc, argv, "perf.data", "perfpy report perf.data",
                          &cli->report.input, u);
}

int pp_cmd_report(int argc, char **argv)
{
    pp_report_cli cli;
    pp_report_result r;
    pp_usage u;
    int rc;

    if ((rc = pp_parsed("report", pp_report_parse(argc, argv, &cli, &u), &u, help)) >= 0)
        return rc;
    cli.report.progress = pp_progress_on_stderr(cli.quiet);
    rc = pp_report(&cli.report, &r);
    if (r.warning[0])
        fprintf(stderr, "perfpy: warning: %s\n", r.warning);
    if (rc < 0)
        pp_fail_error(&r.err);
    else if (!cli.quiet) {
        r.verbose = cli.verbose;
        pp_summary_print(stderr, &r, (int)cli.top);
    }
    pp_report_result_free(&r);
    if (rc < 0)
        return PP_EXIT_FAIL;
    if (cli.report.output && strcmp(cli.report.output, "-") == 0)
        return pp_close_stdout();
    return PP_EXIT_OK;
}
