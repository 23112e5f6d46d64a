/*
 * perfpy diff [-f html|flamegraph|table] [-o FILE] BASE NEW
 *
 * What changed between two profiles perfpy wrote (collapsed stacks, or its
 * pprof), each normalised by its own total: a differential flame graph and
 * the table of the functions whose share changed most (out_diff.c), the
 * comparison one needs after a change:
 *
 *   perfpy record -f collapsed -o before.txt -- python app.py
 *   (change the code)
 *   perfpy record -f collapsed -o after.txt -- python app.py
 *   perfpy diff before.txt after.txt            (after-diff.html, the table on stderr)
 */
#include "cli.h"
#include "help.h"
#include "options.h"
#include "report/report.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

static const pp_format formats[] = {
    {.name = "html", .ext = "-diff.html", .write = pp_write_diff_html,
     .summary = "page: the differential flame graph and the table"},
    {.name = "flamegraph", .ext = "-diff.svg", .write = pp_write_diff_flamegraph,
     .summary = "the differential flame graph"},
    {.name = "table", .ext = "-diff.txt", .write = pp_write_diff_table,
     .summary = "the table as text"},
};

static const char *const help[] = {
    "usage: perfpy diff [-f FORMAT] [-o FILE] BASE NEW",
    "",
    "Compare two profiles perfpy wrote (-f perfpy, -f collapsed or -f pprof),",
    "BASE the one before and NEW the one after a change. Each profile's numbers",
    "are shares of its own samples, so runs of different lengths or rates",
    "compare, and each process's of its own (the processes of one name",
    "together: a child that ran longer does not shrink its parent's shares); a",
    "change is NEW's share minus BASE's, in percentage points. A frame's file is",
    "compared by its path below its sys.path entry ('app.py', 'flask/app.py',",
    "'threading.py'), so two checkouts of a program, or two interpreters,",
    "compare. The table of the functions whose own share changed most goes to",
    "stderr.",
    "",
    "options:",
    "  -f, --format FORMAT  html (default: the differential flame graph, NEW's",
    "                       call tree red where it grew and blue where it shrank,",
    "                       and the table), flamegraph (.svg, the graph alone),",
    "                       table (text, to standard output unless -o)",
    "  -o, --output FILE    where to write; '-' for standard output (default:",
    "                       NEW's file name without its extension, then",
    "                       -diff.html or -diff.svg, in the current directory;",
    "                       standard output for table)",
    "      --title TEXT     title of the page (default: 'NEW vs BASE', their",
    "                       file names)",
    "      --top N          rows of the table (default: 25 in text, 200 in html,",
    "                       10 on stderr)",
    "  -q, --quiet          no table on stderr (default: printed)",
    "  -h, --help           this help",
    "",
    "exit status: 0 written, 1 failed (a profile unreadable, nothing written),",
    "2 usage error",
    "",
    "example:",
    "  perfpy diff before.txt after.txt",
    NULL,
};

static int diff_option(int c, void *opts, pp_usage *u)
{
    pp_diff_cli *o = opts;

    switch (c) {
    case 'f':
        for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
            if (strcmp(optarg, formats[i].name) == 0) {
                o->format = &formats[i];
                return PP_PARSED_RUN;
            }
        return pp_usage_set(u, "unknown format '%s' (formats: html, flamegraph, table)", optarg);
    case 'o':
        return pp_option_output(optarg, &o->output, u);
    case 'T':
        o->title = optarg;
        break;
    case 'q':
        o->quiet = 1;
        break;
    case 't':
        if (pp_parse_long(optarg, 1, 1000000, &o->top) < 0)
            return pp_usage_set(u, "--top needs a number from 1 to 1000000, not '%s'", optarg);
        break;
    }
    return PP_PARSED_RUN;
}

int pp_diff_parse(int argc, char **argv, pp_diff_cli *o, pp_usage *u)
{
    static const struct option opts[] = {
        {"format", required_argument, NULL, 'f'},
        {"output", required_argument, NULL, 'o'},
        {"title", required_argument, NULL, 'T'},
        {"quiet", no_argument, NULL, 'q'},
        {"top", required_argument, NULL, 't'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int rc;

    memset(o, 0, sizeof(*o));
    o->format = &formats[0];
    rc = pp_getopt_each(argc, argv, ":f:o:qh", opts, diff_option, o, u);
    if (rc != PP_PARSED_RUN)
        return rc;
    if (argc - optind != 2)
        return pp_usage_set(u, argc - optind < 2 ? "give two profiles, BASE and NEW (perfpy "
                            "diff before.txt after.txt)" : "two profiles, BASE and NEW ('%s' "
                            "is extra)", argc - optind < 2 ? "" : argv[optind + 2]);
    o->base = argv[optind];
    o->nw = argv[optind + 1];
    return PP_PARSED_RUN;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash && slash[1] ? slash + 1 : path;
}

/* NEW's name without its directory and extension, then the format's. */
static void default_output(const pp_diff_cli *o, char *buf, size_t cap)
{
    const char *slash = strrchr(o->nw, '/'), *name = slash ? slash + 1 : o->nw;
    const char *dot = strchr(name, '.');
    int n = dot && dot != name ? (int)(dot - name) : (int)strlen(name);

    snprintf(buf, cap, "%.*s%s", n, name, o->format->ext);
}

int pp_cmd_diff(int argc, char **argv)
{
    pp_diff_cli o;
    pp_usage u;
    pp_profile base, nw;
    pp_error e;
    pp_write_opts wo = {NULL};
    char path[PATH_MAX], title[2 * PATH_MAX + 8];
    int rc, to_stdout = 0;

    if ((rc = pp_parsed("diff", pp_diff_parse(argc, argv, &o, &u), &u, help)) >= 0)
        return rc;
    if (!o.output)
        default_output(&o, path, sizeof(path));
    if (pp_profile_init(&base) < 0 || pp_profile_init(&nw) < 0)
        return pp_fail("out of memory");
    rc = pp_read_profile(o.base, &base, &e);
    if (rc == 0)
        rc = pp_read_profile(o.nw, &nw, &e);
    if (rc == 0) {
        const char *out = o.output ? o.output
                          : o.format->write == pp_write_diff_table ? "-" : path;
        to_stdout = strcmp(out, "-") == 0;
        snprintf(title, sizeof(title), "%s vs %s", base_name(o.nw), base_name(o.base));
        wo.title = o.title ? o.title : title;
        wo.base = &base;
        wo.rows = (int)o.top;
        rc = pp_output_write(&nw, o.format, out, &wo, &e);
        if (rc == 0 && !o.quiet && o.format->write != pp_write_diff_table) {
            wo.rows = o.top ? (int)o.top : 10;
            pp_write_diff_table(&nw, stderr, &wo);
            fprintf(stderr, "perfpy: wrote %s\n", to_stdout ? "standard output" : out);
        }
    }
    if (rc < 0)
        pp_fail_error(&e);
    pp_profile_free(&base);
    pp_profile_free(&nw);
    if (rc < 0)
        return PP_EXIT_FAIL;
    return to_stdout ? pp_close_stdout() : PP_EXIT_OK;
}
