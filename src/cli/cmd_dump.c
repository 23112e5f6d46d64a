/*
 * perfpy dump [--json] [--locals] [--subprocesses] [--nonblocking] PID
 *
 * What every thread of a running Python program is doing now: its state
 * (running, or waiting in which system call) and its stack as a profile
 * reads it (Python frames at their executing lines, native frames, kernel
 * frames). The reading is perfpy-sample's (src/sampler/dump_print.c: it links
 * elfutils); this file parses the options and hands over.
 */
#include "cli.h"
#include "help.h"
#include "options.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const help[] = {
    "usage: perfpy dump [options] PID",
    "",
    "Show what every thread of the running Python program PID is doing now:",
    "its name, its state (running, or waiting in which system call), whether",
    "it holds the GIL, and its stack: Python frames at their executing lines,",
    "the C and kernel frames under them. Nothing is installed in the program",
    "and no code runs in it. CPython 3.8 to 3.15.",
    "",
    "How it is read, the best way this machine allows (said in the output):",
    "  sample mode (root, or CAP_BPF and CAP_PERFMON; a kernel with BPF and",
    "      BTF): with BPF, the program is never stopped: each thread off the",
    "      CPU is read where it waits, each one running in its next sample",
    "  read mode (otherwise): every thread is stopped together with ptrace",
    "      for as long as its registers, stack and Python frames are read",
    "      (milliseconds; the time is said), then let go. That needs",
    "      the right to trace PID: its own user (unless",
    "      kernel.yama.ptrace_scope forbids it), or root; root also gets",
    "      each thread's whole kernel stack (others the kernel function it",
    "      waits in). A thread another tracer holds (a debugger, strace) is",
    "      read without stopping, without its C frames.",
    "",
    "options:",
    "  -p, --pid PID        the process (default: the operand PID)",
    "  -j, --json           one JSON object on stdout: {\"processes\": [...]}",
    "                       (default: text)",
    "  -l, --locals         each Python frame's local variables: ints, floats,",
    "                       strs, bytes, bools and None by value, other objects",
    "                       by their type (read from memory; default: off)",
    "  -s, --subprocesses   the program's descendants too (default: off)",
    "      --nonblocking    never stop the program, even for a moment (in",
    "                       read mode: no C frames then; sample mode never",
    "                       stops it; default: off)",
    "      --mode MODE      auto, sample (BPF; refused where it cannot load)",
    "                       or read (ptrace) (default: auto: sample mode where",
    "                       it loads, else read mode)",
    "      --no-native      Python frames only (default: C and kernel frames too)",
    "      --async          then asyncio's task tree (CPython 3.14+), as python3 -m",
    "                       asyncio pstree PID draws it: every task under the",
    "                       task awaiting it, with its coroutines at their lines;",
    "                       read from outside until two reads agree (or while no",
    "                       thread ran), else marked as changing (default: off)",
    "  -h, --help           this help",
    "",
    "exit status: 0 read, 1 the process could not be read (no such process,",
    "not a Python, a Python older than 3.8, not permitted, it ended), 2 usage",
    "error",
    "",
    "examples:",
    "  perfpy dump 4242",
    "  perfpy dump --locals --json 4242",
    NULL,
};

static int dump_option(int c, void *opts, pp_usage *u)
{
    pp_dump_cli *o = opts;

    switch (c) {
    case 'p':
        if (pp_parse_long(optarg, 1, INT_MAX, &o->pid) < 0)
            return pp_usage_set(u, "--pid needs a process id, not '%s'", optarg);
        break;
    case 'j':
        o->json = 1;
        break;
    case 'l':
        o->locals = 1;
        break;
    case 's':
        o->subprocesses = 1;
        break;
    case 'B':
        o->nonblocking = 1;
        break;
    case 'N':
        o->no_native = 1;
        break;
    case 'A':
        o->async = 1;
        break;
    case 'M':
        return pp_parse_live_mode(optarg, &o->mode, u);
    }
    return PP_PARSED_RUN;
}

int pp_dump_parse(int argc, char **argv, pp_dump_cli *o, pp_usage *u)
{
    static const struct option opts[] = {
        {"pid", required_argument, NULL, 'p'},
        {"json", no_argument, NULL, 'j'},
        {"locals", no_argument, NULL, 'l'},
        {"subprocesses", no_argument, NULL, 's'},
        {"nonblocking", no_argument, NULL, 'B'},
        {"no-native", no_argument, NULL, 'N'},
        {"async", no_argument, NULL, 'A'},
        {"mode", required_argument, NULL, 'M'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *operand = NULL;
    int rc;

    memset(o, 0, sizeof(*o));
    o->mode = PP_MODE_AUTO;
    rc = pp_getopt_each(argc, argv, ":p:jlsh", opts, dump_option, o, u);
    if (rc != PP_PARSED_RUN)
        return rc;
    if (optind < argc) {
        if ((rc = pp_operand_one(argc, argv, "process id", "perfpy dump PID", &operand, u)) !=
            PP_PARSED_RUN)
            return rc;
        if (o->pid)
            return pp_usage_set(u, "the process is given twice (-p and an operand)");
        if (pp_parse_long(operand, 1, INT_MAX, &o->pid) < 0)
            return pp_usage_set(u, "'%s' is not a process id (perfpy dump PID)", operand);
    }
    if (!o->pid)
        return pp_usage_set(u, "no process given (perfpy dump PID)");
    if (o->async && o->json)
        return pp_usage_set(u, "--async draws a text tree: give it without --json");
    return PP_PARSED_RUN;
}

int pp_cmd_dump(int argc, char **argv)
{
    pp_dump_cli o;
    pp_usage u;
    char libdir[PATH_MAX], helper[PATH_MAX + 16], why[512], said[1024];
    pp_request rq;
    int rc;

    if ((rc = pp_parsed("dump", pp_dump_parse(argc, argv, &o, &u), &u, help)) >= 0)
        return rc;
    if (pp_find_libdir_quiet(libdir, sizeof(libdir)) < 0)
        libdir[0] = '\0';
    if (pp_sampler_find(libdir[0] ? libdir : NULL, helper, sizeof(helper), why,
                        sizeof(why)) != 0) {
        pp_sampler_absent(helper, why, said, sizeof(said));
        return pp_fail("perfpy dump reads with perfpy-sample, and %s", said);
    }
    memset(&rq, 0, sizeof(rq));
    rq.what = PP_REQUEST_DUMP;
    rq.mode = o.mode;           /* auto: perfpy-sample tries its collector first */
    rq.target = PP_TARGET_PID;
    rq.pid = o.pid;
    rq.json = o.json;
    rq.locals = o.locals;
    rq.subprocesses = o.subprocesses;
    rq.nonblocking = o.nonblocking;
    rq.no_native = o.no_native;
    rq.async = o.async;
    return pp_sampler_exec(helper, &rq);
}
