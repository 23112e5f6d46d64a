/*
 * The summary a command prints after a report (summary.c, summary_wall.c),
 * every line of it: the totals, each process's row, the files perf could
 * not name, every row of the top-functions tables by own and by total
 * time, and of the wall-clock split by reason. Each number is worked out
 * here from the samples the test gives (the comments say how), so that a
 * row left out, a stack not counted or two columns swapped is seen.
 */
#include "report_helpers.h"
#include "report/report.h"
#include "report/summary_int.h"
#include "test.h"

#define MAP "(/tmp/perf-100.map)"
#define AT(comm, pid, tid, time) comm " " #pid "/" #tid " " time ": 1000 cpu-clock:\n"
#define PYF(fn) "\t  7f0000001009 py::" fn ":/app/x.py " MAP "\n"
#define START "\t  1080 _start (/usr/bin/python3)\n\n"

/* Ten samples of two processes:
 *   4  python3 (100): main <- work                      own: work 4
 *   2  python3 (100): main <- work <- helper            own: helper 2
 *   1  python3 (101): main <- helper                    own: helper 1
 *   1  python3 (100): main, its stack cut (no root)    own: main 1
 *   2  gzip (200): deflate in a stripped libz           no Python frame
 * Python functions:   own    total
 *   main               1     8       (10% / 80%)
 *   work               4     6       (40% / 60%)
 *   helper             3     3       (30% / 30%)
 * libz's unnamed frame is in 2 of 10 samples: 20%. Truncated: 1 of 10
 * stacks, 1 of python3's 8 (12.5%), none of gzip's. */
static const char ten_samples[] =
    AT("python3", 100, 100, "5.000100") PYF("work") PYF("main") START
    AT("python3", 100, 100, "5.001100") PYF("work") PYF("main") START
    AT("python3", 100, 100, "5.002100") PYF("work") PYF("main") START
    AT("python3", 100, 100, "5.003100") PYF("work") PYF("main") START
    AT("python3", 100, 100, "5.004100") PYF("helper") PYF("work") PYF("main") START
    AT("python3", 100, 100, "5.005100") PYF("helper") PYF("work") PYF("main") START
    AT("python3", 100, 101, "5.006100") PYF("helper") PYF("main") START
    AT("python3", 100, 100, "5.007100") PYF("main") "\n"        /* no root: truncated */
    AT("gzip", 200, 200, "5.008100")
    "\t  7f2000001000 [unknown] (/usr/lib/x86_64-linux-gnu/libz.so.1.2.13)\n"
    "\t  1080 _start (/usr/bin/gzip)\n\n"
    AT("gzip", 200, 200, "5.009100")
    "\t  7f2000001100 [unknown] (/usr/lib/x86_64-linux-gnu/libz.so.1.2.13)\n"
    "\t  1080 _start (/usr/bin/gzip)\n\n";

static char *summary_of(pp_report_result *r, int top)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);

    ASSERT_TRUE(out != NULL);
    pp_summary_print(out, r, top);
    fclose(out);
    return buf;
}

TEST(summary_every_row_of_every_table)
{
    static pp_report_result r;
    char *got;

    fold_text(&r.profile, ten_samples, NULL, NULL);
    r.profile.lost = 3;
    snprintf(r.profile.event, sizeof(r.profile.event), "cpu-clock");
    snprintf(r.output, sizeof(r.output), "out.svg");
    r.sample_mode = 1;          /* rows named by function and file */
    r.verbose = 1;              /* the processes too */
    got = summary_of(&r, 10);
    ASSERT_SAME_TEXT("the summary", got,
        "perfpy: 10 samples (cpu-clock), 3 lost events, 10.0% of stacks truncated, 0.01 s "
        "recorded\n"
        "perfpy: 2 processes:\n"
        "        8 samples   12.5% truncated  python3 (pid 100)\n"
        "        2 samples    0.0% truncated  gzip (pid 200), no Python frame\n"
        "perfpy: truncated: 12.5% of the Python processes' 8 samples, 0.0% of the other "
        "processes' 2\n"
        "perfpy: 20.0% of samples pass through code perfpy could not name in "
        "/usr/lib/x86_64-linux-gnu/libz.so.1.2.13 (shown as its file, '[libz.so.1.2.13]'): it "
        "is stripped of its symbols; install its debug symbols to see its functions (for the "
        "interpreter, `perfpy doctor -- PYTHON` says how)\n"
        "perfpy: the shares below are of all 2 processes' samples together\n"
        "perfpy: top Python functions by own time (own = innermost Python frame):\n"
        "     own   total  function\n"
        "   40.0%   60.0%  work (/app/x.py)\n"
        "   30.0%   30.0%  helper (/app/x.py)\n"
        "   10.0%   80.0%  main (/app/x.py)\n"
        "perfpy: top Python functions by total time (own = innermost Python frame):\n"
        "     own   total  function\n"
        "   10.0%   80.0%  main (/app/x.py)\n"
        "   40.0%   60.0%  work (/app/x.py)\n"
        "   30.0%   30.0%  helper (/app/x.py)\n"
        "perfpy: wrote out.svg\n");
    free(got);
    /* top 2: the third row of each table left out, nothing else */
    got = summary_of(&r, 2);
    ASSERT_SAME_TEXT("the summary's top 2", got,
        "perfpy: 10 samples (cpu-clock), 3 lost events, 10.0% of stacks truncated, 0.01 s "
        "recorded\n"
        "perfpy: 2 processes:\n"
        "        8 samples   12.5% truncated  python3 (pid 100)\n"
        "        2 samples    0.0% truncated  gzip (pid 200), no Python frame\n"
        "perfpy: truncated: 12.5% of the Python processes' 8 samples, 0.0% of the other "
        "processes' 2\n"
        "perfpy: 20.0% of samples pass through code perfpy could not name in "
        "/usr/lib/x86_64-linux-gnu/libz.so.1.2.13 (shown as its file, '[libz.so.1.2.13]'): it "
        "is stripped of its symbols; install its debug symbols to see its functions (for the "
        "interpreter, `perfpy doctor -- PYTHON` says how)\n"
        "perfpy: the shares below are of all 2 processes' samples together\n"
        "perfpy: top Python functions by own time (own = innermost Python frame):\n"
        "     own   total  function\n"
        "   40.0%   60.0%  work (/app/x.py)\n"
        "   30.0%   30.0%  helper (/app/x.py)\n"
        "perfpy: top Python functions by total time (own = innermost Python frame):\n"
        "     own   total  function\n"
        "   10.0%   80.0%  main (/app/x.py)\n"
        "   40.0%   60.0%  work (/app/x.py)\n"
        "perfpy: wrote out.svg\n");
    free(got);
    pp_profile_free(&r.profile);
}

/* One wall-clock sample: main <- fn (both Python functions of /a.py), its
 * reason's marker at the leaf when off the CPU, weighing `periods` periods
 * of 1 ms. */
static void fold_wall(pp_folder *f, int wait, uint64_t periods, const char *fn)
{
    pp_raw_frame fr[3];
    pp_raw_sample s;

    memset(fr, 0, sizeof(fr));
    fr[0] = (pp_raw_frame){.kind = PP_RAW_PYTHON, .ip = 3, .qualname = fn, .file = "/a.py",
                           .qualname_len = (uint32_t)strlen(fn), .file_len = 5, .line = 5};
    fr[1] = (pp_raw_frame){.kind = PP_RAW_PYTHON, .ip = 2, .qualname = "main", .file = "/a.py",
                           .qualname_len = 4, .file_len = 5, .line = 2};
    fr[2] = (pp_raw_frame){.ip = 1, .sym = "_start", .dso = "/usr/bin/python3",
                              .sym_len = 6, .dso_len = 16};
    memset(&s, 0, sizeof(s));
    s.comm = "python3", s.comm_len = 7, s.pid = 1, s.tid = 1, s.period = 1000;
    s.weight_ns = periods * 1000000;
    s.event = "wall-clock", s.event_len = 10, s.frames = fr, s.nframes = 3, s.wait = wait;
    ASSERT_EQ_INT(pp_fold_sample(f, &s), 0);
}

/* A folder into r's profile, of wall time in periods of 1 ms, each
 * process under its root or not (PP_PROCESSES_*). */
static pp_folder *wall_folder(pp_report_result *r, int processes)
{
    pp_fold_opts o = {.processes = processes};
    pp_folder *f = NULL;

    ASSERT_OK(pp_profile_init(&r->profile));
    r->profile.value = PP_VALUE_WALL;
    r->profile.period_ns = 1000000;
    ASSERT_OK(pp_fold_open(&f, &r->profile, &o));
    return f;
}

/* f closed, and the summary of r's profile (wall-clock, sample mode's
 * rows, to standard output) with 10 rows a table; malloc'ed. */
static char *closed_summary(pp_report_result *r, pp_folder *f)
{
    ASSERT_OK(pp_fold_close(f));
    snprintf(r->profile.event, sizeof(r->profile.event), "wall-clock");
    snprintf(r->output, sizeof(r->output), "-");
    r->sample_mode = 1;
    return summary_of(r, 10);
}

/* Ten periods of wall time, the first stack on the CPU (a stack the split
 * skips is seen at once); without -v the table by total time alone, which
 * has an own column:
 *   main <- crunch   on-CPU 2, CPU wait 1
 *   main <- doze     sleep 2, GIL 1
 *   main <- fetch    I/O 2
 *   main <- take     lock 1
 *   main <- reap     child 1
 * The split: on-CPU 20%, off-CPU 80%: sleep 20, I/O 20, lock 10, GIL 10,
 * child 10, CPU wait 10, other 0. By total time: main 100 (own 0), crunch
 * 30, doze 30, fetch 20, take 10, reap 10 (each its own; ties in the order
 * first seen); each row's shares are of its own total (crunch: 2 of 3 on
 * the CPU, 67%). */
TEST(summary_wall_every_row_and_column)
{
    static pp_report_result r;
    pp_folder *f = wall_folder(&r, PP_PROCESSES_AUTO);
    char *got;

    fold_wall(f, PP_WAIT_NONE, 2, "crunch");
    fold_wall(f, PP_WAIT_SLEEP, 2, "doze");
    fold_wall(f, PP_WAIT_IO, 2, "fetch");
    fold_wall(f, PP_WAIT_LOCK, 1, "take");
    fold_wall(f, PP_WAIT_CHILD, 1, "reap");
    fold_wall(f, PP_WAIT_GIL, 1, "doze");
    fold_wall(f, PP_WAIT_CPU, 1, "crunch");
    got = closed_summary(&r, f);
    ASSERT_SAME_TEXT("the summary", got,
        "perfpy: 10 samples of 1 ms (wall-clock), 0 lost events, 0.0% of stacks truncated\n"
        "perfpy: wall time: on-CPU 20.0%, off-CPU 80.0%: sleep 20.0%, I/O 20.0%, lock 10.0%, "
        "GIL 10.0%, child 10.0%, CPU wait 10.0%, other 0.0%\n"
        "perfpy: top Python functions by total time, and where it went (own = innermost "
        "Python frame):\n"
        "     own   total   on-CPU   sleep     I/O    lock     GIL   child CPU wait   other"
        "  function\n"
        "    0.0%  100.0%      20%     20%     20%     10%     10%     10%     10%      0%"
        "  main (/a.py)\n"
        "   30.0%   30.0%      67%      0%      0%      0%      0%      0%     33%      0%"
        "  crunch (/a.py)\n"
        "   30.0%   30.0%       0%     67%      0%      0%     33%      0%      0%      0%"
        "  doze (/a.py)\n"
        "   20.0%   20.0%       0%      0%    100%      0%      0%      0%      0%      0%"
        "  fetch (/a.py)\n"
        "   10.0%   10.0%       0%      0%      0%    100%      0%      0%      0%      0%"
        "  take (/a.py)\n"
        "   10.0%   10.0%       0%      0%      0%      0%      0%    100%      0%      0%"
        "  reap (/a.py)\n"
        "perfpy: wrote standard output\n");
    free(got);
    /* -v: the table by own time too, before the split */
    r.verbose = 1;
    got = summary_of(&r, 10);
    ASSERT_CONTAINS(got, "perfpy: top Python functions by own time (own = innermost Python "
                         "frame):\n"
                         "     own   total  function\n"
                         "   30.0%   30.0%  crunch (/a.py)\n"
                         "   30.0%   30.0%  doze (/a.py)\n"
                         "   20.0%   20.0%  fetch (/a.py)\n"
                         "   10.0%   10.0%  take (/a.py)\n"
                         "   10.0%   10.0%  reap (/a.py)\n"
                         "perfpy: wall time:");
    free(got);
    pp_profile_free(&r.profile);
}

/* One wall-clock sample of process pid (comm): main <- fn of /a.py, or
 * with fn NULL a native stack alone (a program that is not Python). */
static void fold_in(pp_folder *f, const char *comm, int pid, int wait, uint64_t periods,
                    const char *fn)
{
    pp_raw_frame fr[3];
    pp_raw_sample s;

    memset(fr, 0, sizeof(fr));
    fr[0] = (pp_raw_frame){.kind = PP_RAW_PYTHON, .ip = 3, .qualname = fn, .file = "/a.py",
                           .qualname_len = fn ? (uint32_t)strlen(fn) : 0, .file_len = 5};
    fr[1] = (pp_raw_frame){.kind = PP_RAW_PYTHON, .ip = 2, .qualname = "main", .file = "/a.py",
                           .qualname_len = 4, .file_len = 5, .line = 2};
    fr[2] = (pp_raw_frame){.ip = 1, .sym = "_start", .dso = "/usr/bin/x", .sym_len = 6,
                           .dso_len = 10};
    memset(&s, 0, sizeof(s));
    s.comm = comm, s.comm_len = strlen(comm), s.pid = pid, s.tid = pid, s.period = 1000;
    s.weight_ns = periods * 1000000;
    s.event = "wall-clock", s.event_len = 10, s.wait = wait;
    s.frames = fn ? fr : fr + 2, s.nframes = fn ? 3 : 1;
    ASSERT_EQ_INT(pp_fold_sample(f, &s), 0);
}

/* A parent that waits for its child, 20 periods of its own, and the child
 * asleep 60 (more time than its parent: it comes first):
 *   python3 (1): main <- work on-CPU 2, main <- reap child 18
 *   sleep (2): native frames, sleep 60
 * Each process's shares are of its own time: reap 90% of the parent's 20
 * periods (not 18 of 80, 22.5%), the child's sleep 100% of its 60. */
TEST(summary_wall_a_block_per_process_of_its_own_time)
{
    static pp_report_result r;
    pp_folder *f = wall_folder(&r, PP_PROCESSES_AUTO);
    char *got;

    fold_in(f, "python3", 1, PP_WAIT_NONE, 2, "work");
    fold_in(f, "python3", 1, PP_WAIT_CHILD, 18, "reap");
    fold_in(f, "sleep", 2, PP_WAIT_SLEEP, 60, NULL);
    r.verbose = 1;
    got = closed_summary(&r, f);
    ASSERT_SAME_TEXT("the summary", got,
        "perfpy: 80 samples of 1 ms (wall-clock), 0 lost events, 0.0% of stacks truncated\n"
        "perfpy: 2 processes:\n"
        "        2 samples    0.0% truncated  python3 (pid 1)\n"
        "        1 samples    0.0% truncated  sleep (pid 2), no Python frame\n"
        "perfpy: truncated: 0.0% of the Python processes' 2 samples, 0.0% of the other "
        "processes' 1\n"
        "perfpy: process sleep (pid 2): 0.06 s of its threads' time, the basis of its shares, "
        "no Python frame:\n"
        "perfpy: wall time: on-CPU 0.0%, off-CPU 100.0%: sleep 100.0%, I/O 0.0%, lock 0.0%, "
        "GIL 0.0%, child 0.0%, CPU wait 0.0%, other 0.0%\n"
        "perfpy: process python3 (pid 1): 0.02 s of its threads' time, the basis of its "
        "shares:\n"
        "perfpy: wall time: on-CPU 10.0%, off-CPU 90.0%: sleep 0.0%, I/O 0.0%, lock 0.0%, "
        "GIL 0.0%, child 90.0%, CPU wait 0.0%, other 0.0%\n"
        "perfpy: top Python functions by total time, and where it went (own = innermost "
        "Python frame):\n"
        "     own   total   on-CPU   sleep     I/O    lock     GIL   child CPU wait   other"
        "  function\n"
        "    0.0%  100.0%      10%      0%      0%      0%      0%     90%      0%      0%"
        "  main (/a.py)\n"
        "   90.0%   90.0%       0%      0%      0%      0%      0%    100%      0%      0%"
        "  reap (/a.py)\n"
        "   10.0%   10.0%     100%      0%      0%      0%      0%      0%      0%      0%"
        "  work (/a.py)\n"
        "perfpy: wrote standard output\n");
    free(got);
    pp_profile_free(&r.profile);
}

/* Without -v: the totals, the unnamed code (a gap of 20%), the table and
 * the file; no list of processes, no truncated share of each kind. */
TEST(summary_quiet_the_totals_the_table_and_the_file)
{
    static pp_report_result r;
    char *got;

    fold_text(&r.profile, ten_samples, NULL, NULL);
    snprintf(r.profile.event, sizeof(r.profile.event), "cpu-clock");
    snprintf(r.output, sizeof(r.output), "out.svg");
    r.sample_mode = 1;
    r.seconds = 1.5;            /* how long it took: said with -v only */
    got = summary_of(&r, 1);
    ASSERT_SAME_TEXT("the quiet summary", got,
        "perfpy: 10 samples (cpu-clock), 0 lost events, 10.0% of stacks truncated, 0.01 s "
        "recorded\n"
        "perfpy: 20.0% of samples pass through code perfpy could not name in "
        "/usr/lib/x86_64-linux-gnu/libz.so.1.2.13 (shown as its file, '[libz.so.1.2.13]'): it "
        "is stripped of its symbols; install its debug symbols to see its functions (for the "
        "interpreter, `perfpy doctor -- PYTHON` says how)\n"
        "perfpy: the shares below are of all 2 processes' samples together\n"
        "perfpy: top Python functions by own time (own = innermost Python frame):\n"
        "     own   total  function\n"
        "   40.0%   60.0%  work (/app/x.py)\n"
        "perfpy: top Python functions by total time (own = innermost Python frame):\n"
        "     own   total  function\n"
        "   10.0%   80.0%  main (/app/x.py)\n"
        "perfpy: wrote out.svg\n");
    free(got);
    r.verbose = 1;
    got = summary_of(&r, 1);
    ASSERT_CONTAINS(got, "perfpy: 2 processes:\n");
    ASSERT_CONTAINS(got, "perfpy: the profile took 1.5 s to make after the recording ended");
    free(got);
    pp_profile_free(&r.profile);
}

/* Without -v, a wall-clock block for each Python process and each other
 * process with 5% of all the time or more (the sleep child, 60 of 81
 * periods); a shell's 1 period (1.2%) is summed in one line that says -v
 * gives it a block. With -v, the shell's block too. */
TEST(summary_quiet_wall_blocks_of_python_and_of_the_heavy)
{
    static pp_report_result r;
    pp_folder *f = wall_folder(&r, PP_PROCESSES_AUTO);
    char *got;

    fold_in(f, "python3", 1, PP_WAIT_NONE, 2, "work");
    fold_in(f, "python3", 1, PP_WAIT_CHILD, 18, "reap");
    fold_in(f, "sleep", 2, PP_WAIT_SLEEP, 60, NULL);
    fold_in(f, "sh", 3, PP_WAIT_IO, 1, NULL);
    got = closed_summary(&r, f);
    ASSERT_CONTAINS(got, "perfpy: process sleep (pid 2): 0.06 s of its threads' time");
    ASSERT_CONTAINS(got, "perfpy: process python3 (pid 1): 0.02 s of its threads' time");
    ASSERT_CONTAINS(got, "perfpy: ... and 1 more process, 0.00 s of their threads' time "
                         "(-v: a block each)\n");
    ASSERT_TRUE(strstr(got, "process sh (pid 3)") == NULL);
    ASSERT_TRUE(strstr(got, "processes:") == NULL);
    free(got);
    r.verbose = 1;
    got = summary_of(&r, 10);
    ASSERT_CONTAINS(got, "perfpy: process sh (pid 3): 0.00 s of its threads' time");
    ASSERT_TRUE(strstr(got, "more process") == NULL);
    free(got);
    pp_profile_free(&r.profile);
}

/* Processes merged under no root of their own, one stack holding samples
 * of both: they cannot be told apart, so one block, said to be of both
 * together (reap's 18 of the 38 periods). */
TEST(summary_wall_merged_processes_say_their_basis)
{
    static pp_report_result r;
    pp_folder *f = wall_folder(&r, PP_PROCESSES_MERGE);
    char *got;

    fold_in(f, "python3", 1, PP_WAIT_NONE, 2, "work");
    fold_in(f, "python3", 1, PP_WAIT_CHILD, 18, "reap");
    fold_in(f, "python3", 2, PP_WAIT_NONE, 18, "work");
    got = closed_summary(&r, f);
    ASSERT_CONTAINS(got, "perfpy: the shares below are of all 2 processes' time together "
                         "(their stacks are merged)\n");
    ASSERT_CONTAINS(got, "perfpy: wall time: on-CPU 52.6%, off-CPU 47.4%: sleep 0.0%, I/O "
                         "0.0%, lock 0.0%, GIL 0.0%, child 47.4%,");
    ASSERT_TRUE(strstr(got, "perfpy: process ") == NULL);
    free(got);
    pp_profile_free(&r.profile);
}
