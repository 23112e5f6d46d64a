/*
 * Fuzz target: the option parsers of every subcommand (src/cli/options.h),
 * called as the command line would call them, without running anything.
 *
 *   input  = CMD ARG '\0' ARG '\0' ...      CMD: one byte, the subcommand
 *            (run, record, report, jitdump, doctor, __exec, dump, top); the arguments
 *            follow argv[0] = the subcommand's name; at most 64 of them
 *
 *   libFuzzer: scripts/fuzz (make fuzz) builds build-fuzz/fuzz-options
 *   replay:    build/fuzz-replay-options tests/fuzz/corpus/options  (make test)
 *   corpus:    python3 tests/fuzz/make_options_corpus.py tests/fuzz/corpus/options
 *
 * Checked for every input: the parser returns run, help or a usage error
 * with a message; what it returns to run with is within the documented
 * ranges (a rate from 1 to 100000, a stack size that is a multiple of 8, a
 * program or a pid for record but not both, ...) and every string it hands
 * back is readable; and parsing a second fresh copy of the same arguments
 * gives the same answer (no state left over from one parse to the next:
 * glibc's getopt kept a pointer into the previous argv when only optind
 * was reset).
 */
#include "cli/options.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ARGS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const names[] = {"run", "record", "report", "jitdump", "doctor", "__exec",
                                     "dump", "top"};

typedef struct answer {
    int rc;
    char message[sizeof(((pp_usage *)0)->message)];
    uint64_t digest;         /* of what the options say */
} answer;

static volatile size_t sink;

static uint64_t mix(uint64_t h, uint64_t v)
{
    return (h ^ v) * 0x100000001b3ull;
}

static uint64_t str(uint64_t h, const char *s)
{
    size_t n;

    if (!s)
        return mix(h, 1);
    n = strlen(s);           /* readable, NUL-terminated */
    sink += n;
    for (size_t i = 0; i < n; i++)
        h = mix(h, (unsigned char)s[i]);
    return h;
}

static uint64_t program(uint64_t h, char **argv)
{
    if (!argv || !argv[0])
        abort();             /* "run" always comes with a program */
    for (size_t i = 0; argv[i]; i++)
        h = str(h, argv[i]);
    return h;
}

static void check(int cmd, int argc, char **argv, answer *a)
{
    pp_usage u;
    uint64_t h = 0xcbf29ce484222325ull;

    memset(&u, 0, sizeof(u));
    switch (cmd) {
    case 0: {
        pp_run_opts o;
        a->rc = pp_run_parse(argc, argv, &o, &u);
        if (a->rc == PP_PARSED_RUN) {
            if (o.mode != PP_MODE_PERF && o.mode != PP_MODE_JIT)
                abort();
            h = program(mix(h, (uint64_t)o.mode), o.argv);
        }
        break;
    }
    case 1: {
        pp_record_opts o;
        a->rc = pp_record_parse(argc, argv, &o, &u);
        if (a->rc == PP_PARSED_RUN) {
            if (o.rate < 1 || o.rate > 100000 || o.stack_size < 8 || o.stack_size > 65528 ||
                o.stack_size % 8 || !(o.duration >= 0 && o.duration <= 1e7) || !o.format ||
                (!o.argv) == (!o.pid) || o.pid < 0 ||
                (unsigned)o.mode >= PP_MODE_N)
                abort();
            h = mix(mix(mix(h, (uint64_t)o.rate), (uint64_t)o.stack_size), (uint64_t)o.pid);
            h = mix(str(str(h, o.output), o.format->name), (uint64_t)o.mode);
            h = mix(h, (uint64_t)(o.no_native * 4 + o.keep * 2 + o.inline_frames));
            if (o.argv)
                h = program(h, o.argv);
        }
        break;
    }
    case 2: {
        pp_report_cli o;
        a->rc = pp_report_parse(argc, argv, &o, &u);
        if (a->rc == PP_PARSED_RUN) {
            if (!o.report.input || o.top < 0 || o.top > 100000 ||
                (o.report.output && !o.report.output[0]))
                abort();
            h = str(str(str(h, o.report.input), o.report.output), o.report.title);
            h = str(str(h, o.report.lines_dir), o.report.format ? o.report.format->name : NULL);
            h = mix(mix(h, (uint64_t)o.top), (uint64_t)(o.quiet * 8 + o.report.keep * 4 +
                    o.report.no_native * 2 + o.report.from_script));
        }
        break;
    }
    case 3: {
        pp_jitdump_opts o;
        a->rc = pp_jitdump_parse(argc, argv, &o, &u);
        if (a->rc == PP_PARSED_RUN) {
            if (!o.path)
                abort();
            h = mix(str(h, o.path), (uint64_t)o.list);
        }
        break;
    }
    case 4: {
        pp_doctor_opts o;
        a->rc = pp_doctor_parse(argc, argv, &o, &u);
        if (a->rc == PP_PARSED_RUN) {
            if (!o.python)
                abort();
            h = str(str(h, o.dir), o.python);
        }
        break;
    }
    case 6: {
        pp_dump_cli o;
        a->rc = pp_dump_parse(argc, argv, &o, &u);
        if (a->rc == PP_PARSED_RUN) {
            if (o.pid < 1 || o.pid > INT32_MAX || (o.async && o.json) ||
                (unsigned)o.mode > PP_MODE_READ)
                abort();
            h = mix(mix(h, (uint64_t)o.pid), (uint64_t)o.mode);
            h = mix(h, (uint64_t)(o.async * 32 + o.json * 16 + o.locals * 8 +
                                  o.subprocesses * 4 + o.nonblocking * 2 + o.no_native));
        }
        break;
    }
    case 7: {
        pp_top_cli o;
        a->rc = pp_top_parse(argc, argv, &o, &u);
        if (a->rc == PP_PARSED_RUN) {
            if ((!o.argv) == (!o.pid) || o.pid < 0 || o.rate < 1 || o.rate > 100000 ||
                !(o.interval >= 0.1 && o.interval <= 3600) || o.rows < 0 ||
                o.rows > 1000000 || (o.async && o.mode == PP_MODE_READ) ||
                (unsigned)o.mode > PP_MODE_READ)
                abort();
            h = mix(mix(mix(mix(mix(h, (uint64_t)o.pid), (uint64_t)o.rate), (uint64_t)o.wall),
                        (uint64_t)o.rows), (uint64_t)o.mode);
            if (o.argv)
                h = program(h, o.argv);
        }
        break;
    }
    default: {
        pp_exec_opts o;
        a->rc = pp_exec_parse(argc, argv, &o, &u);
        if (a->rc == PP_PARSED_RUN) {
            if ((o.stderr_fd != -1 && o.stderr_fd < 3) || (o.pid_fd != -1 && o.pid_fd < 3))
                abort();
            h = program(mix(mix(h, (uint64_t)o.stderr_fd), (uint64_t)o.pid_fd), o.argv);
        }
        break;
    }
    }
    if (a->rc != PP_PARSED_RUN && a->rc != PP_PARSED_HELP && a->rc != PP_EXIT_USAGE)
        abort();
    if (a->rc == PP_EXIT_USAGE &&
        (u.message[0] == '\0' || memchr(u.message, '\0', sizeof(u.message)) == NULL))
        abort();             /* every usage error says what is wrong */
    snprintf(a->message, sizeof(a->message), "%s", a->rc == PP_EXIT_USAGE ? u.message : "");
    a->digest = a->rc == PP_PARSED_RUN ? h : 0;
}

/* A fresh, writable argv (getopt reorders it) of the input's arguments. */
static int make_argv(int cmd, const uint8_t *data, size_t size, char *buf, char **argv)
{
    int argc = 0;
    size_t at = 0;

    memcpy(buf, data, size);
    buf[size] = '\0';
    argv[argc++] = (char *)names[cmd];
    while (at <= size && argc < MAX_ARGS + 1) {
        argv[argc++] = buf + at;
        at += strlen(buf + at) + 1;
    }
    argv[argc] = NULL;
    return argc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *argv1[MAX_ARGS + 2], *argv2[MAX_ARGS + 2];
    char *buf1, *buf2;
    answer a1, a2;
    int cmd, argc1, argc2;

    if (size == 0)
        return 0;
    cmd = data[0] % 8;
    data++;
    size--;
    buf1 = malloc(size + 1);
    buf2 = malloc(size + 1);
    if (!buf1 || !buf2)
        abort();
    argc1 = make_argv(cmd, data, size, buf1, argv1);
    argc2 = make_argv(cmd, data, size, buf2, argv2);
    check(cmd, argc1, argv1, &a1);
    check(cmd, argc2, argv2, &a2);
    if (a1.rc != a2.rc || strcmp(a1.message, a2.message) != 0 || a1.digest != a2.digest)
        abort();             /* the same arguments, another answer */
    free(buf1);
    free(buf2);
    return 0;
}
