/*
 * What perfpy asks of perfpy-sample (src/sampler/request.c): the request
 * perfpy writes is the one perfpy-sample reads, field for field; a request
 * of another version, a key or a value it does not know, and a request it
 * cannot do are refused with a sentence and the usage status, never
 * skipped.
 */
#include "sampler/request.h"
#include "test.h"

#include <string.h>

/* A request with every field set to something other than its zero. */
static void every_field(pp_request *rq, char **prog)
{
    memset(rq, 0, sizeof(*rq));
    rq->what = PP_REQUEST_TOP;
    rq->mode = PP_MODE_READ;
    rq->target = PP_TARGET_PROGRAM;
    rq->pid = 77;
    rq->argv = prog;
    rq->rate = 997;
    rq->wall = rq->gil = rq->async = 1;
    rq->duration = 2.5;
    rq->format = "pprof";
    rq->output = "/tmp/out dir/p.pb.gz";          /* a space stays one word */
    rq->no_native = 1;
    rq->processes = 2;
    rq->threads = 1;
    rq->verbose = 1;
    rq->every = 0.125;
    rq->keep_files = 12;
    rq->keep_bytes = 1ull << 40;
    rq->all_processes = 1;
    rq->labels[0] = "env=prod";
    rq->labels[1] = "team=a=b";                   /* '=' in a value */
    rq->nlabels = 2;
    rq->interval = 1.0 / 3;
    rq->rows = 40;
    rq->json = rq->locals = rq->subprocesses = rq->nonblocking = 1;
}

static int count(char **argv)
{
    int n = 0;

    while (argv[n])
        n++;
    return n;
}

TEST(request_perfpy_writes_is_the_one_perfpy_sample_reads)
{
    static char *prog[] = {"python3", "-c", "print('a b')", NULL};
    pp_request rq, back;
    char **argv = NULL, why[512];

    every_field(&rq, prog);
    ASSERT_EQ_INT(pp_request_argv(&rq, "/opt/perfpy-sample", &argv), 0);
    ASSERT_EQ_STR(argv[0], "/opt/perfpy-sample");
    ASSERT_EQ_STR(argv[1], "--request");
    ASSERT_EQ_STR(argv[2], "3");
    ASSERT_EQ_INT(pp_request_read(count(argv), argv, &back, why, sizeof(why)), 0);
    ASSERT_EQ_INT(back.what, rq.what);
    ASSERT_EQ_INT(back.mode, rq.mode);
    ASSERT_EQ_INT(back.target, rq.target);
    ASSERT_EQ_INT(back.pid, rq.pid);
    ASSERT_EQ_INT(back.rate, rq.rate);
    ASSERT_EQ_INT(back.wall + back.gil + back.async, 3);
    ASSERT_TRUE(back.duration == rq.duration);
    ASSERT_EQ_STR(back.format, rq.format);
    ASSERT_EQ_STR(back.output, rq.output);
    ASSERT_EQ_INT(back.no_native, 1);
    ASSERT_EQ_INT(back.processes, 2);
    ASSERT_EQ_INT(back.threads, 1);
    ASSERT_EQ_INT(back.verbose, 1);
    ASSERT_TRUE(back.every == rq.every);
    ASSERT_EQ_INT(back.keep_files, 12);
    ASSERT_TRUE(back.keep_bytes == rq.keep_bytes);
    ASSERT_EQ_INT(back.all_processes, 1);
    ASSERT_EQ_INT(back.nlabels, 2);
    ASSERT_EQ_STR(back.labels[0], "env=prod");
    ASSERT_EQ_STR(back.labels[1], "team=a=b");
    ASSERT_TRUE(back.interval == rq.interval);    /* %.17g: every bit of a double */
    ASSERT_EQ_INT(back.rows, 40);
    ASSERT_EQ_INT(back.json + back.locals + back.subprocesses + back.nonblocking, 4);
    ASSERT_EQ_STR(back.argv[0], "python3");
    ASSERT_EQ_STR(back.argv[2], "print('a b')");
    ASSERT_TRUE(back.argv[3] == NULL);
    pp_request_argv_free(argv);
}

TEST(request_of_another_build_is_refused_saying_so)
{
    char *other[] = {"perfpy-sample", "--request", "4", "what=record", "--", "python3", NULL};
    char *old[] = {"perfpy-sample", "--check-old", "python3", NULL};
    pp_request rq;
    char why[512];

    ASSERT_EQ_INT(pp_request_read(6, other, &rq, why, sizeof(why)), PP_EXIT_USAGE);
    ASSERT_EQ_STR(why, "perfpy asked in its request version 4, and this perfpy-sample reads "
                       "version 3: the two come from different builds (install them "
                       "together)");
    ASSERT_EQ_INT(pp_request_read(3, old, &rq, why, sizeof(why)), PP_EXIT_USAGE);
    ASSERT_EQ_STR(why, "perfpy-sample is run by perfpy (record --mode sample or read, top, "
                       "dump)");
}

TEST(request_key_or_value_not_known_is_refused_never_skipped)
{
    const char *bad[] = {"colour=red", "rate=fast", "wall", "mode=loud", "what=stop",
                         "target=moon", "wall=99999999999", "duration=1s", "pid="};
    pp_request rq;
    char why[512];

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char *argv[] = {"perfpy-sample", "--request", "3", (char *)bad[i], "--", "python3",
                        NULL};

        ASSERT_EQ_INT(pp_request_read(6, argv, &rq, why, sizeof(why)), PP_EXIT_USAGE);
        ASSERT_CONTAINS(why, bad[i]);
        ASSERT_CONTAINS(why, "come from different builds");
    }
}

TEST(request_that_asks_what_no_part_does_is_refused)
{
    const struct {
        const char *words[8];
        const char *why;
    } cases[] = {
        {{"what=record", "mode=sample", "rate=99", "format=x", "output=o"},
         "no program to start"},
        {{"what=dump", "mode=auto", "--", "python3"}, "a dump reads a running process"},
        {{"what=dump", "target=pid", "pid=0"}, "no process id"},
        {{"what=record", "mode=perf", "format=x", "output=o", "--", "python3"},
         "it records in sample or read mode only"},
        {{"what=record", "mode=sample", "rate=0", "format=x", "output=o", "--", "python3"},
         "no rate, format or output"},
        {{"what=top", "mode=sample", "target=host", "rate=9", "format=x", "output=o",
          "interval=1"}, "perfpy top shows one program or process, every interval"},
        {{"what=record", "mode=read", "target=host", "rate=9", "format=x", "output=o"},
         "read mode reads one program or process"},
    };
    pp_request rq;
    char why[512];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *argv[12] = {"perfpy-sample", "--request", "3"};
        int n = 3;

        for (int w = 0; w < 8 && cases[i].words[w]; w++)
            argv[n++] = (char *)cases[i].words[w];
        ASSERT_EQ_INT(pp_request_read(n, argv, &rq, why, sizeof(why)), PP_EXIT_USAGE);
        ASSERT_CONTAINS(why, "perfpy's request cannot be done: ");
        ASSERT_CONTAINS(why, cases[i].why);
    }
}
