/*
 * perfpy: the command. A table of subcommands, one file each.
 *
 *   perfpy record  [options] -- python app.py ...
 *   perfpy run     [--mode perf|jit] -- python app.py ...
 *   perfpy report  [-f FORMAT] [-o FILE] perf.data
 *   perfpy diff    [-f FORMAT] [-o FILE] BASE NEW
 *   perfpy jitdump [--list] FILE
 *   perfpy dump    [--json] [--locals] PID
 *   perfpy top     [-p PID | -- python app.py ...]
 *   perfpy doctor  [-- python]
 *
 * Rows without a summary are internal (not listed in --help).
 */
#include "cli.h"
#include "perfpy/engine.h"

#include <stdio.h>
#include <string.h>

static const pp_command commands[] = {
    {"record", pp_cmd_record, "profile a Python program with perf and write a profile"},
    {"run", pp_cmd_run, "run a Python program with the engine active (no perf)"},
    {"report", pp_cmd_report, "write a profile from an existing perf.data"},
    {"diff", pp_cmd_diff, "compare two profiles: what changed, and where"},
    {"jitdump", pp_cmd_jitdump, "check and summarise a jit-<pid>.dump file"},
    {"dump", pp_cmd_dump, "show what every thread of a running Python program is doing"},
    {"top", pp_cmd_top, "a live view of a Python program's busiest functions"},
    {"doctor", pp_cmd_doctor, "check perf, permissions, /tmp and the interpreter"},
    {"__exec", pp_cmd_exec, NULL},
};

static void help(FILE *out)
{
    fprintf(out,
            "usage: perfpy <command> [options] [-- program args...]\n"
            "\n"
            "Python functions, C extensions and the kernel in one perf profile,\n"
            "on every CPython from 3.8.\n"
            "\n"
            "commands:\n");
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (commands[i].summary)
            fprintf(out, "  %-8s  %s\n", commands[i].name, commands[i].summary);
    fprintf(out,
            "\n"
            "options:\n"
            "  -h, --help     this help; `perfpy <command> --help` for a command\n"
            "  -V, --version  print the version\n"
            "\n"
            "environment:\n"
            "  PERFPY_LIBDIR  perfpy's module directory (default: lib/ beside the perfpy\n"
            "                 executable in a build tree, else PREFIX/lib/perfpy)\n"
            "\n"
            "exit status: 0 success, 1 failure, 2 usage error; record and run exit\n"
            "with the program's own status\n"
            "\n"
            "examples:\n"
            "  perfpy record -- python app.py                 (writes app-<time>.svg)\n"
            "  perfpy record -f html -o app.html -- python app.py\n");
}

int main(int argc, char **argv)
{
    const char *cmd = argc > 1 ? argv[1] : NULL;

    if (!cmd) {
        help(stderr);
        return PP_EXIT_USAGE;
    }
    if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 ||
        strcmp(cmd, "help") == 0) {
        help(stdout);
        return pp_close_stdout();
    }
    if (strcmp(cmd, "-V") == 0 || strcmp(cmd, "--version") == 0) {
        printf("perfpy %s\n", PERFPY_VERSION);
        return pp_close_stdout();
    }
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (strcmp(cmd, commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "perfpy: unknown command '%s'\n", cmd);
    fprintf(stderr, "Try 'perfpy --help' for the list of commands.\n");
    return PP_EXIT_USAGE;
}
