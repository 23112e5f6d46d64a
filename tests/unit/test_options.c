/*
 * The subcommands' option parsers (src/cli/options.h) against their own
 * help, which is what a user reads: every option a help lists ("-l,
 * --locals", "--rows N") is parsed, and one with a short form means the
 * same in both forms. The options come from `perfpy CMD --help` run from
 * this build (not from a list kept here, which would miss the next option
 * added); each is parsed in its short and its long form with the same
 * value, with the command's usual operands, without them, or after -a (the
 * options that only go with it), and both answers must be the same, field
 * for field. So a short letter dropped from a parser's getopt string
 * ("perfpy dump -l: unknown option") or sent to another field is named.
 *
 * An option with a long form only has no twin to differ from: a table
 * (rows[]) says what each option sets, as its help says it, and each is
 * checked to set those fields and leave every other byte as it was
 * ("perfpy record --grace 3: grace is 5, want 3 (it changed: duration
 * 0 -> 3)"); every option a help lists must have its row.
 */
#include "cli/options.h"
#include "test.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <unistd.h>

typedef int parse_fn(int argc, char **argv, void *o, pp_usage *u);

static int p_record(int c, char **v, void *o, pp_usage *u) { return pp_record_parse(c, v, o, u); }
static int p_report(int c, char **v, void *o, pp_usage *u) { return pp_report_parse(c, v, o, u); }
static int p_diff(int c, char **v, void *o, pp_usage *u) { return pp_diff_parse(c, v, o, u); }
static int p_run(int c, char **v, void *o, pp_usage *u) { return pp_run_parse(c, v, o, u); }
static int p_dump(int c, char **v, void *o, pp_usage *u) { return pp_dump_parse(c, v, o, u); }
static int p_top(int c, char **v, void *o, pp_usage *u) { return pp_top_parse(c, v, o, u); }
static int p_doctor(int c, char **v, void *o, pp_usage *u) { return pp_doctor_parse(c, v, o, u); }
static int p_jitdump(int c, char **v, void *o, pp_usage *u) { return pp_jitdump_parse(c, v, o, u); }

typedef struct command {
    const char *name;
    parse_fn *parse;
    size_t size;
    const char *operands[4];         /* what usually follows the options */
    const char *format, *mode;       /* a value of -f and --mode other than the default */
    long argv_at;                    /* where its options hold the program (char **
                                        into argv, which moves with the options); -1 */
} command;

static const command commands[] = {
    {"record", p_record, sizeof(pp_record_opts), {"--", "python3", "app.py"}, "pprof", "perf",
     offsetof(pp_record_opts, argv)},
    {"report", p_report, sizeof(pp_report_cli), {"perf.data"}, "pprof", NULL, -1},
    {"diff", p_diff, sizeof(pp_diff_cli), {"a.txt", "b.txt"}, "table", NULL, -1},
    {"run", p_run, sizeof(pp_run_opts), {"--", "python3", "app.py"}, NULL, "jit",
     offsetof(pp_run_opts, argv)},
    {"dump", p_dump, sizeof(pp_dump_cli), {"4242"}, NULL, "read", -1},
    {"top", p_top, sizeof(pp_top_cli), {"--", "python3", "app.py"}, NULL, "read",
     offsetof(pp_top_cli, argv)},
    {"doctor", p_doctor, sizeof(pp_doctor_opts), {NULL}, NULL, NULL, -1},
    {"jitdump", p_jitdump, sizeof(pp_jitdump_opts), {"jit-1.dump"}, NULL, NULL, -1},
};

/* A value for the placeholder a help gives an option. */
static const char *value_for(const command *c, const char *placeholder)
{
    static const struct { const char *name, *value; } values[] = {
        {"FILE", "out.x"}, {"HZ", "97"}, {"SECS", "3"}, {"PID", "4242"}, {"BYTES", "16384"},
        {"WHEN", "split"}, {"KEY=VALUE", "k=v"}, {"N", "7"}, {"DIR", "/tmp"}, {"TEXT", "t"},
        {"EVENT", "page-faults"},
    };

    if (!strcmp(placeholder, "FORMAT"))
        return c->format;
    if (!strcmp(placeholder, "MODE"))
        return c->mode;
    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++)
        if (!strcmp(placeholder, values[i].name))
            return values[i].value;
    return NULL;
}

/* One option of a help's line: "  -l, --locals   ...", "      --rows N  ..."
 * ("  --dir DIR" in doctor's); continuation lines are indented further.
 * 1 with its short letter (0: none), long name and placeholder ("" when
 * it takes no value, "[" for an optional one). */
static int option_line(const char *line, char *letter, char *name, size_t ncap, char *ph,
                       size_t pcap)
{
    size_t n = strspn(line, " "), k = 0;
    const char *p = line + n;

    *letter = 0;
    name[0] = ph[0] = '\0';
    if (n < 2 || n > 6 || p[0] != '-')
        return 0;
    if (p[1] != '-') {
        if (!isalnum((unsigned char)p[1]) || strncmp(p + 2, ", --", 4) != 0)
            return 0;
        *letter = p[1];
        p += 4;
    }
    p += 2;
    while ((isalnum((unsigned char)p[k]) || p[k] == '-') && k + 1 < ncap)
        k++;
    if (!k)
        return 0;
    snprintf(name, ncap, "%.*s", (int)k, p);
    p += k;
    if (p[0] == ' ' && (isupper((unsigned char)p[1]) || p[1] == '[')) {
        k = strcspn(p + 1, " \n");
        snprintf(ph, pcap, "%.*s", (int)(p[1] == '[' ? 1 : k), p + 1);
    }
    return 1;
}

typedef struct answer {
    int rc;
    char message[sizeof(((pp_usage *)0)->message)];
    unsigned char opts[1024];
} answer;

/* argv = CMD [prefix] OPTION [VALUE] [operands], in one array the same for
 * every call (the options hand back pointers into it). */
static char *av[16];

static void parse(const command *c, const char *prefix, const char *opt, const char *value,
                  int operands, answer *a)
{
    pp_usage u;
    int n = 0;

    ASSERT_TRUE(c->size <= sizeof(a->opts));
    memset(av, 0, sizeof(av));
    av[n++] = (char *)c->name;
    if (prefix)
        av[n++] = (char *)prefix;
    av[n++] = (char *)opt;
    if (value)
        av[n++] = (char *)value;
    for (int i = 0; operands && i < 4 && c->operands[i]; i++)
        av[n++] = (char *)c->operands[i];
    memset(a, 0, sizeof(*a));
    memset(&u, 0, sizeof(u));
    a->rc = c->parse(n, av, a->opts, &u);
    snprintf(a->message, sizeof(a->message), "%s", u.message);
}

/* The same without the option. */
static void parse_without(const command *c, const char *prefix, int operands, answer *a)
{
    pp_usage u;
    int n = 0;

    memset(av, 0, sizeof(av));
    av[n++] = (char *)c->name;
    if (prefix)
        av[n++] = (char *)prefix;
    for (int i = 0; operands && i < 4 && c->operands[i]; i++)
        av[n++] = (char *)c->operands[i];
    memset(a, 0, sizeof(*a));
    memset(&u, 0, sizeof(u));
    a->rc = c->parse(n, av, a->opts, &u);
}

/* The contexts an option is tried in: with the operands, alone, after -a,
 * after -e (record's -c counts its events). */
static const struct { const char *prefix; int operands; } contexts[] = {
    {NULL, 1}, {NULL, 0}, {"-a", 0}, {"--event=minor-faults", 1},
};

static void check_option(const command *c, char letter, const char *name, const char *ph,
                         int *checked)
{
    char shortf[3] = {'-', letter, 0}, longf[96];
    const char *value = ph[0] && ph[0] != '[' ? value_for(c, ph) : NULL;
    answer s, l;

    snprintf(longf, sizeof(longf), "--%s", name);
    if (ph[0] && ph[0] != '[' && !value)
        TEST_FAIL_("perfpy %s --help: %s %s: no value known here for %s (add it to value_for)",
                   c->name, longf, ph, ph);
    for (size_t k = 0; k < sizeof(contexts) / sizeof(contexts[0]); k++) {
        if (contexts[k].prefix && strcmp(c->name, "record") != 0)
            continue;               /* -a is record's */
        parse(c, contexts[k].prefix, longf, value, contexts[k].operands, &l);
        if (letter) {
            parse(c, contexts[k].prefix, shortf, value, contexts[k].operands, &s);
            if (s.rc != l.rc || strcmp(s.message, l.message) != 0)
                TEST_FAIL_("perfpy %s: %s%s%s gives %d \"%s\", %s%s%s gives %d \"%s\"",
                           c->name, shortf, value ? " " : "", value ? value : "", s.rc,
                           s.message, longf, value ? " " : "", value ? value : "", l.rc,
                           l.message);
            if (l.rc == PP_PARSED_RUN && memcmp(s.opts, l.opts, c->size) != 0)
                TEST_FAIL_("perfpy %s: %s and %s are both accepted but set different options",
                           c->name, shortf, longf);
        }
        if (!strcmp(name, "help") && l.rc == PP_PARSED_HELP) {
            (*checked)++;
            return;
        }
        if (l.rc != PP_PARSED_RUN)
            continue;
        /* accepted, it does something: the options differ from those
         * without it (but where it names the default) */
        parse_without(c, contexts[k].prefix, contexts[k].operands, &s);
        if (s.rc == PP_PARSED_RUN && memcmp(s.opts, l.opts, c->size) == 0 &&
            strcmp(name, "native") != 0)
            TEST_FAIL_("perfpy %s: %s%s%s is accepted and changes nothing", c->name, longf,
                       value ? " " : "", value ? value : "");
        (*checked)++;
        return;
    }
    parse(c, NULL, letter ? shortf : longf, value, 1, &s);
    TEST_FAIL_("perfpy %s --help lists %s%s%s%s, which is refused wherever it is put: \"%s\"",
               c->name, letter ? shortf : "", letter ? ", " : "", longf, ph[0] ? " VALUE" : "",
               s.message);
}

/* `perfpy ARGS` of the perfpy beside these tests, its output to read (the
 * command in cmd). Under an emulator (the aarch64 unit tests under
 * qemu-user) that perfpy is not this machine's to run: the runner names
 * the emulator in PERFPY_TEST_EXEC_WRAPPER (a shell prefix), as
 * tests/aarch64/run.py does. */
static FILE *perfpy_out(const char *args, char *cmd, size_t cap)
{
    const char *wrapper = getenv("PERFPY_TEST_EXEC_WRAPPER");
    char dir[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
    char *slash;
    FILE *p;

    ASSERT_TRUE(n > 0);
    dir[n] = '\0';
    slash = strrchr(dir, '/');
    ASSERT_TRUE(slash != NULL);
    *slash = '\0';
    snprintf(cmd, cap, "%s%s'%s/perfpy' %s", wrapper ? wrapper : "", wrapper ? " " : "", dir,
             args);
    if (!(p = popen(cmd, "r")))
        TEST_FAIL_("%s: %s", cmd, strerror(errno));
    return p;
}

/* Its end: exit status 0, or the command and its status named. */
static void perfpy_done(FILE *p, const char *cmd)
{
    int st = pclose(p);

    if (st != 0)
        TEST_FAIL_("%s: wait status %#x, want 0", cmd, st);
}

TEST(options_every_one_a_help_lists_and_both_its_forms)
{
    char cmd[2 * PATH_MAX], args[64], line[512], letter, name[64], ph[32];

    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        const command *c = &commands[i];
        int listed = 0, checked = 0, pairs = 0;
        FILE *help;

        snprintf(args, sizeof(args), "%s --help", c->name);
        help = perfpy_out(args, cmd, sizeof(cmd));
        while (fgets(line, sizeof(line), help)) {
            if (!option_line(line, &letter, name, sizeof(name), ph, sizeof(ph)))
                continue;
            listed++;
            pairs += letter != 0;
            check_option(c, letter, name, ph, &checked);
        }
        perfpy_done(help, cmd);
        if (listed < 2)
            TEST_FAIL_("%s: %d options read from its help", cmd, listed);
        ASSERT_EQ_INT(checked, listed);
        printf("    perfpy %-8s %2d options, %d with a short form: each parsed, both forms "
               "alike\n", c->name, listed, pairs);
    }
}

/* perfpy's own -h/--help and -V/--version: the same words either way. */
TEST(options_perfpy_version_and_help_in_both_forms)
{
    static const char *const pairs[][2] = {{"-V", "--version"}, {"-h", "--help"}};
    char cmd[2 * PATH_MAX], out[2][4096];

    for (size_t i = 0; i < 2; i++) {
        for (int k = 0; k < 2; k++) {
            FILE *p = perfpy_out(pairs[i][k], cmd, sizeof(cmd));
            size_t n;

            n = fread(out[k], 1, sizeof(out[k]) - 1, p);
            out[k][n] = '\0';
            perfpy_done(p, cmd);
            ASSERT_TRUE(n > 8);
        }
        ASSERT_EQ_STR(out[0], out[1]);
    }
}

/* ---- every option sets the field its help says --------------------------- */

/* The test above sees an option with a short form sent to another field
 * (its two forms then differ); one with a long form only can still set the
 * wrong field and pass (it changes something). So each option, long-only
 * ones included, is written down here with what its help says it sets:
 * parsed, the named fields must read as said, and every other byte of
 * the options be as without it. The help is still the list: an option it
 * lists without a row here fails. */

enum { K_INT, K_LONG, K_DOUBLE, K_STR, K_ARGV, K_FORMAT, K_ULL, K_MODE };

#define KIND_OF(T, f)                                                                   \
    _Generic(((T *)0)->f, int: K_INT, long: K_LONG, double: K_DOUBLE, const char *: K_STR, \
             char **: K_ARGV, const pp_format *: K_FORMAT, unsigned long long: K_ULL, \
             pp_mode: K_MODE)
#define FIELD(T, f, want) {#f, offsetof(T, f), sizeof(((T *)0)->f), KIND_OF(T, f), want}
#define REC(f, w) FIELD(pp_record_opts, f, w)
#define REP(f, w) FIELD(pp_report_cli, f, w)
#define DIF(f, w) FIELD(pp_diff_cli, f, w)
#define RUN(f, w) FIELD(pp_run_opts, f, w)
#define DMP(f, w) FIELD(pp_dump_cli, f, w)
#define TOP(f, w) FIELD(pp_top_cli, f, w)
#define DOC(f, w) FIELD(pp_doctor_opts, f, w)
#define JIT(f, w) FIELD(pp_jitdump_opts, f, w)

typedef struct field {
    const char *name;
    size_t off, size;
    int kind;
    const char *want;                /* as show_field writes it */
} field;

/* Where an option is tried, and what it is compared with: the same words
 * without it, but for ALONE (then with the command's operands: -p and -a
 * stand in for a program). HELP: it gives the help. */
enum { OPS, ALONE, HOST, EVERY, AFTER_NO_NATIVE, EVENT, HELP };

static const char *const before[HELP + 1][4] = {
    [HOST] = {"-a"}, [EVERY] = {"-a", "--every", "3"}, [AFTER_NO_NATIVE] = {"--no-native"},
    [EVENT] = {"-e", "minor-faults"},
};

typedef struct row {
    const char *cmd;
    int where;
    const char *forms[2];            /* short (NULL: none), long */
    const char *value;               /* NULL: none */
    field sets[6];                   /* as its help says; nothing else changes */
} row;

static const row rows[] = {
    {"record", OPS, {"-o", "--output"}, "out.x", {REC(output, "out.x")}},
    {"record", OPS, {"-f", "--format"}, "pprof", {REC(format, "pprof")}},
    {"record", OPS, {"-r", "--rate"}, "97", {REC(rate, "97")}},
    {"record", OPS, {"-d", "--duration"}, "3", {REC(duration, "3")}},
    {"record", OPS, {NULL, "--grace"}, "3", {REC(grace, "3")}},
    /* every CPython of the host, a root per process, 19 Hz (in sample mode:
     * mode.c, mode_options_that_only_sample_mode_honours_make_it) */
    {"record", ALONE, {"-a", "--all"}, NULL, {REC(host, "1"), REC(argv, "(null)"),
     REC(processes, "1"), REC(rate, "19")}},
    {"record", HOST, {"-r", "--rate"}, "97", {REC(rate, "97")}},
    {"record", HOST, {NULL, "--all-processes"}, NULL, {REC(all_processes, "1")}},
    {"record", HOST, {NULL, "--every"}, "3", {REC(every, "3"), REC(format, "pprof")}},
    {"record", HOST, {NULL, "--label"}, "k=v", {REC(labels[0], "k=v"), REC(nlabels, "1")}},
    {"record", ALONE, {"-p", "--pid"}, "4242", {REC(pid, "4242"), REC(argv, "(null)")}},
    {"record", OPS, {NULL, "--mode"}, "perf", {REC(mode, "perf")}},
    {"record", OPS, {NULL, "--async"}, NULL, {REC(async, "1")}},
    {"record", OPS, {NULL, "--async-aware"}, NULL, {REC(async, "1")}},
    {"record", OPS, {NULL, "--idle"}, NULL, {REC(wall, "1")}},
    {"record", OPS, {NULL, "--wall"}, NULL, {REC(wall, "1")}},
    {"record", OPS, {NULL, "--gil"}, NULL, {REC(gil, "1")}},
    {"record", OPS, {"-e", "--event"}, "page-faults", {REC(event, "page-faults"),
     REC(period, "100")}},
    {"record", OPS, {"-e", "--event"}, "cs", {REC(event, "cs"), REC(period, "1")}},
    {"record", EVENT, {"-c", "--count"}, "7", {REC(period, "7")}},
    {"record", OPS, {NULL, "--stack-size"}, "16384", {REC(stack_size, "16384"),
     REC(stack_size_given, "1")}},
    {"record", AFTER_NO_NATIVE, {NULL, "--native"}, NULL, {REC(no_native, "0")}},
    {"record", OPS, {NULL, "--no-native"}, NULL, {REC(no_native, "1")}},
    {"record", OPS, {NULL, "--inline"}, NULL, {REC(inline_frames, "1")}},
    {"record", OPS, {NULL, "--processes"}, "merge", {REC(processes, "2")}},
    {"record", OPS, {NULL, "--show-perfpy"}, NULL, {REC(show_perfpy, "1")}},
    {"record", OPS, {NULL, "--threads"}, NULL, {REC(threads, "1")}},
    {"record", OPS, {NULL, "--threads"}, "split", {REC(threads, "1"), REC(threads_split, "1")}},
    {"record", OPS, {NULL, "--threads=split"}, NULL, {REC(threads, "1"),
     REC(threads_split, "1")}},
    {"record", OPS, {NULL, "--threads"}, "merge", {REC(threads, "1")}},
    {"record", OPS, {NULL, "--keep"}, NULL, {REC(keep, "1")}},
    {"record", EVERY, {NULL, "--keep"}, "7", {REC(keep_files, "7")}},
    {"record", EVERY, {NULL, "--keep=7"}, NULL, {REC(keep_files, "7")}},
    {"record", EVERY, {NULL, "--keep"}, "500M", {REC(keep_bytes, "524288000")}},
    {"record", OPS, {"-v", "--verbose"}, NULL, {REC(verbose, "1")}},
    {"record", HELP, {"-h", "--help"}, NULL, {{0}}},

    {"report", OPS, {"-f", "--format"}, "pprof", {REP(report.format, "pprof")}},
    {"report", OPS, {"-o", "--output"}, "out.x", {REP(report.output, "out.x")}},
    {"report", AFTER_NO_NATIVE, {NULL, "--native"}, NULL, {REP(report.no_native, "0")}},
    {"report", OPS, {NULL, "--no-native"}, NULL, {REP(report.no_native, "1")}},
    {"report", OPS, {NULL, "--inline"}, NULL, {REP(report.inline_frames, "1")}},
    {"report", OPS, {NULL, "--processes"}, "merge", {REP(report.processes, "2")}},
    {"report", OPS, {NULL, "--show-perfpy"}, NULL, {REP(report.show_perfpy, "1")}},
    {"report", OPS, {NULL, "--threads"}, NULL, {REP(report.threads, "1")}},
    {"report", OPS, {NULL, "--threads"}, "split", {REP(report.threads, "2")}},
    {"report", OPS, {NULL, "--threads=merge"}, NULL, {REP(report.threads, "1")}},
    {"report", OPS, {NULL, "--keep"}, NULL, {REP(report.keep, "1")}},
    {"report", OPS, {NULL, "--lines-dir"}, "/tmp", {REP(report.lines_dir, "/tmp")}},
    {"report", OPS, {NULL, "--title"}, "t", {REP(report.title, "t")}},
    {"report", OPS, {NULL, "--top"}, "7", {REP(top, "7")}},
    {"report", OPS, {NULL, "--from-script"}, NULL, {REP(report.from_script, "1")}},
    {"report", OPS, {"-q", "--quiet"}, NULL, {REP(quiet, "1")}},
    {"report", OPS, {"-v", "--verbose"}, NULL, {REP(verbose, "1")}},
    {"report", HELP, {"-h", "--help"}, NULL, {{0}}},

    {"diff", OPS, {"-f", "--format"}, "table", {DIF(format, "table")}},
    {"diff", OPS, {"-o", "--output"}, "out.x", {DIF(output, "out.x")}},
    {"diff", OPS, {NULL, "--title"}, "t", {DIF(title, "t")}},
    {"diff", OPS, {NULL, "--top"}, "7", {DIF(top, "7")}},
    {"diff", OPS, {"-q", "--quiet"}, NULL, {DIF(quiet, "1")}},
    {"diff", HELP, {"-h", "--help"}, NULL, {{0}}},

    {"run", OPS, {"-m", "--mode"}, "jit", {RUN(mode, "jit")}},
    {"run", OPS, {"-m", "--mode"}, "perf_jit", {RUN(mode, "jit")}},      /* CPython's word */
    {"run", HELP, {"-h", "--help"}, NULL, {{0}}},

    {"dump", ALONE, {"-p", "--pid"}, "4343", {DMP(pid, "4343")}},
    {"dump", OPS, {"-j", "--json"}, NULL, {DMP(json, "1")}},
    {"dump", OPS, {"-l", "--locals"}, NULL, {DMP(locals, "1")}},
    {"dump", OPS, {"-s", "--subprocesses"}, NULL, {DMP(subprocesses, "1")}},
    {"dump", OPS, {NULL, "--nonblocking"}, NULL, {DMP(nonblocking, "1")}},
    {"dump", OPS, {NULL, "--mode"}, "read", {DMP(mode, "read")}},
    {"dump", OPS, {NULL, "--mode"}, "sample", {DMP(mode, "sample")}},
    {"dump", OPS, {NULL, "--no-native"}, NULL, {DMP(no_native, "1")}},
    {"dump", OPS, {NULL, "--async"}, NULL, {DMP(async, "1")}},
    {"dump", HELP, {"-h", "--help"}, NULL, {{0}}},

    {"top", ALONE, {"-p", "--pid"}, "4242", {TOP(pid, "4242"), TOP(argv, "(null)")}},
    {"top", OPS, {"-r", "--rate"}, "97", {TOP(rate, "97")}},
    {"top", OPS, {"-i", "--interval"}, "3", {TOP(interval, "3")}},
    {"top", OPS, {NULL, "--rows"}, "7", {TOP(rows, "7")}},
    {"top", OPS, {NULL, "--mode"}, "read", {TOP(mode, "read")}},
    {"top", OPS, {NULL, "--idle"}, NULL, {TOP(wall, "1")}},
    {"top", OPS, {NULL, "--wall"}, NULL, {TOP(wall, "1")}},
    {"top", OPS, {NULL, "--async"}, NULL, {TOP(async, "1")}},
    {"top", HELP, {"-h", "--help"}, NULL, {{0}}},

    {"doctor", OPS, {NULL, "--dir"}, "/tmp", {DOC(dir, "/tmp")}},
    {"doctor", OPS, {NULL, "--"}, "python3.11", {DOC(python, "python3.11")}},
    {"doctor", HELP, {"-h", "--help"}, NULL, {{0}}},

    {"jitdump", OPS, {"-l", "--list"}, NULL, {JIT(list, "1")}},
    {"jitdump", HELP, {"-h", "--help"}, NULL, {{0}}},
};

static const command *command_named(const char *name)
{
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (!strcmp(commands[i].name, name))
            return &commands[i];
    TEST_FAIL_("no command %s in commands[]", name);
}

/* A field of parsed options as text: numbers, strings ("(null)"), a
 * format's name, a program's words. */
static void show_field(const field *f, const unsigned char *opts, char *buf, size_t cap)
{
    const void *at = opts + f->off;
    int iv;
    long lv;
    double dv;
    unsigned long long uv;
    const char *sv;
    const pp_format *fv;
    char **av_;
    pp_mode mv;

    switch (f->kind) {
    case K_INT:
        memcpy(&iv, at, sizeof(iv));
        snprintf(buf, cap, "%d", iv);
        break;
    case K_LONG:
        memcpy(&lv, at, sizeof(lv));
        snprintf(buf, cap, "%ld", lv);
        break;
    case K_DOUBLE:
        memcpy(&dv, at, sizeof(dv));
        snprintf(buf, cap, "%g", dv);
        break;
    case K_ULL:
        memcpy(&uv, at, sizeof(uv));
        snprintf(buf, cap, "%llu", uv);
        break;
    case K_STR:
        memcpy(&sv, at, sizeof(sv));
        snprintf(buf, cap, "%s", sv ? sv : "(null)");
        break;
    case K_MODE:
        memcpy(&mv, at, sizeof(mv));
        snprintf(buf, cap, "%s", pp_request_mode_name(mv));
        break;
    case K_FORMAT:
        memcpy(&fv, at, sizeof(fv));
        snprintf(buf, cap, "%s", fv ? fv->name : "(null)");
        break;
    case K_ARGV:
        memcpy(&av_, at, sizeof(av_));
        snprintf(buf, cap, "%s", av_ ? "" : "(null)");
        for (int i = 0; av_ && av_[i]; i++)
            snprintf(buf + strlen(buf), cap - strlen(buf), "%s%s", i ? " " : "", av_[i]);
        break;
    }
}

/* Every field some row names for command c, and its program. */
static size_t known_fields(const command *c, field *out, size_t cap)
{
    size_t n = 0;

    if (c->argv_at >= 0)
        out[n++] = (field){"argv", (size_t)c->argv_at, sizeof(char **), K_ARGV, NULL};
    for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++)
        for (size_t k = 0; strcmp(rows[r].cmd, c->name) == 0 && k < 6 && rows[r].sets[k].name;
             k++) {
            size_t j = 0;
            while (j < n && out[j].off != rows[r].sets[k].off)
                j++;
            if (j == n && n < cap)
                out[n++] = rows[r].sets[k];
        }
    return n;
}

/* What differs between two parses, field by field ("duration 0 -> 3"),
 * and the bytes of no known field that differ. */
static void differences(const command *c, const answer *a, const answer *b, char *buf,
                        size_t cap)
{
    field known[64];
    size_t n = known_fields(c, known, 64);
    char x[256], y[256];

    buf[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        show_field(&known[i], a->opts, x, sizeof(x));
        show_field(&known[i], b->opts, y, sizeof(y));
        if (strcmp(x, y) != 0)
            snprintf(buf + strlen(buf), cap - strlen(buf), "%s%s %s -> %s", buf[0] ? ", " : "",
                     known[i].name, x, y);
    }
    for (size_t off = 0; off < c->size; off++) {
        int mine = 0;
        for (size_t i = 0; i < n; i++)
            mine |= off >= known[i].off && off < known[i].off + known[i].size;
        if (!mine && a->opts[off] != b->opts[off])
            snprintf(buf + strlen(buf), cap - strlen(buf), "%sbyte %zu", buf[0] ? ", " : "",
                     off);
    }
    if (!buf[0])
        snprintf(buf, cap, "nothing");
}

/* av for one parse: CMD [before] [OPTION [VALUE]] [operands]; each parse
 * its own array, as the options keep pointers into it. */
static int words(const command *c, const row *r, const char *opt, char **v)
{
    int n = 0, where = r->where;

    v[n++] = (char *)c->name;
    for (int i = 0; i < 4 && before[where][i]; i++)
        v[n++] = (char *)before[where][i];
    if (opt) {
        v[n++] = (char *)opt;
        if (r->value)
            v[n++] = (char *)r->value;
    }
    for (int i = 0; i < 4 && c->operands[i] && (where != ALONE || !opt) &&
                    where != HOST && where != EVERY; i++)
        v[n++] = (char *)c->operands[i];
    v[n] = NULL;
    return n;
}

static void parse_words(const command *c, const row *r, const char *opt, char **v, answer *a)
{
    pp_usage u;
    int n = words(c, r, opt, v);

    ASSERT_TRUE(c->size <= sizeof(a->opts));
    memset(a, 0, sizeof(*a));
    memset(&u, 0, sizeof(u));
    a->rc = c->parse(n, v, a->opts, &u);
    snprintf(a->message, sizeof(a->message), "%s", u.message);
}

static char *av_base[16], *av_with[16];

static void check_row(const row *r)
{
    const command *c = command_named(r->cmd);

    for (int k = 0; k < 2; k++) {
        const char *opt = r->forms[k];
        char said[128], x[256], y[256], diff[1024];
        answer base, with;
        int named_argv = 0;

        if (!opt)
            continue;
        snprintf(said, sizeof(said), "perfpy %s %s%s%s%s", r->cmd,
                 r->where == HOST ? "-a " : r->where == EVERY ? "-a --every 3 " :
                 r->where == AFTER_NO_NATIVE ? "--no-native " :
                 r->where == EVENT ? "-e minor-faults " : "", opt, r->value ? " " : "",
                 r->value ? r->value : "");
        parse_words(c, r, NULL, av_base, &base);
        parse_words(c, r, opt, av_with, &with);
        if (r->where == HELP) {
            if (with.rc != PP_PARSED_HELP)
                TEST_FAIL_("%s gives %d \"%s\", not the help", said, with.rc, with.message);
            continue;
        }
        if (base.rc != PP_PARSED_RUN)
            TEST_FAIL_("%s: without it the words are refused: \"%s\"", said, base.message);
        if (with.rc != PP_PARSED_RUN)
            TEST_FAIL_("%s is refused: %d \"%s\"", said, with.rc, with.message);
        for (int i = 0; i < 6 && r->sets[i].name; i++) {
            const field *f = &r->sets[i];

            named_argv |= f->kind == K_ARGV;
            show_field(f, with.opts, x, sizeof(x));
            show_field(f, base.opts, y, sizeof(y));
            if (strcmp(x, f->want) != 0) {
                differences(c, &base, &with, diff, sizeof(diff));
                TEST_FAIL_("%s: %s is %s, want %s (it changed: %s)", said, f->name, x, f->want,
                           diff);
            }
            if (!strcmp(y, f->want))
                TEST_FAIL_("%s: %s is %s without it already: the row tests nothing", said,
                           f->name, y);
        }
        /* nothing else: every other byte as without it, the program the same */
        for (size_t off = 0; off < c->size; off++) {
            int named = c->argv_at >= 0 && off >= (size_t)c->argv_at &&
                        off < (size_t)c->argv_at + sizeof(char **);
            for (int i = 0; i < 6 && r->sets[i].name; i++)
                named |= off >= r->sets[i].off && off < r->sets[i].off + r->sets[i].size;
            if (!named && base.opts[off] != with.opts[off]) {
                differences(c, &base, &with, diff, sizeof(diff));
                TEST_FAIL_("%s changes more than its help says: %s", said, diff);
            }
        }
        if (c->argv_at >= 0 && !named_argv) {
            field prog = {"argv", (size_t)c->argv_at, sizeof(char **), K_ARGV, NULL};
            show_field(&prog, with.opts, x, sizeof(x));
            show_field(&prog, base.opts, y, sizeof(y));
            if (strcmp(x, y) != 0)
                TEST_FAIL_("%s: the program is \"%s\", without it \"%s\"", said, x, y);
        }
    }
}

TEST(options_every_one_sets_the_field_its_help_says)
{
    char cmd[2 * PATH_MAX], args[64], line[512], letter, name[64], ph[32];

    unsetenv("PERFPY_RECORD_MODE");     /* record's default mode: auto */
    for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++)
        check_row(&rows[r]);
    /* every option a help lists has its row, with its short form */
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        const command *c = &commands[i];
        int listed = 0, nrows = 0;
        FILE *help;

        for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++)
            nrows += !strcmp(rows[r].cmd, c->name);
        snprintf(args, sizeof(args), "%s --help", c->name);
        help = perfpy_out(args, cmd, sizeof(cmd));
        while (fgets(line, sizeof(line), help)) {
            char longf[96], shortf[3] = {'-', 0, 0};
            size_t r = 0;

            if (!option_line(line, &letter, name, sizeof(name), ph, sizeof(ph)))
                continue;
            listed++;
            snprintf(longf, sizeof(longf), "--%s", name);
            shortf[1] = letter;
            while (r < sizeof(rows) / sizeof(rows[0]) &&
                   (strcmp(rows[r].cmd, c->name) || strcmp(rows[r].forms[1], longf)))
                r++;
            if (r == sizeof(rows) / sizeof(rows[0]))
                TEST_FAIL_("perfpy %s --help lists %s: no row here says what it sets (add one "
                           "to rows[])", c->name, longf);
            if (letter ? !rows[r].forms[0] || strcmp(rows[r].forms[0], shortf)
                       : rows[r].forms[0] != NULL)
                TEST_FAIL_("perfpy %s --help lists %s%s%s; its row has %s", c->name,
                           letter ? shortf : "", letter ? ", " : "", longf,
                           rows[r].forms[0] ? rows[r].forms[0] : "no short form");
        }
        perfpy_done(help, cmd);
        ASSERT_GE_INT(listed, 2);
        printf("    perfpy %-8s %2d options listed, %2d rows: each sets what its help says\n",
               c->name, listed, nrows);
    }
}
