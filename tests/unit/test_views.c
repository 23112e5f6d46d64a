/*
 * What the views show, judged against the samples behind them: in the
 * flame graph every box's colour (by the kind of its frame), width and
 * tooltip; in the line heatmap every line's own and total share, its heat
 * (deeper for more own time, pale for a line only on the stack, none for a
 * line without samples) and every row of its list of functions. (The diff
 * views: test_diff.c.)
 */
#include "report_helpers.h"
#include "svg_boxes.h"
#include "test.h"

#include <math.h>

static uint32_t frame(pp_profile *p, pp_frame_kind k, const char *name, const char *file,
                      int line)
{
    int64_t id = pp_profile_frame(p, k, name, strlen(name), file, file ? strlen(file) : 0, line);

    ASSERT_TRUE(id >= 0);
    return (uint32_t)id;
}

static char *written(const pp_profile *p, pp_writer_fn fn)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *m = open_memstream(&buf, &n);

    ASSERT_TRUE(m != NULL);
    ASSERT_OK(fn(p, m, NULL));
    fclose(m);
    return buf;
}

/* The flame graph's palette (out_flamegraph.c's header): Python green-blue,
 * native warm, kernel orange-brown, markers grey; each kind's shades from
 * a hash of the name, within these bounds. */
static int kind_of_colour(int r, int g, int b, pp_frame_kind k)
{
    switch (k) {
    case PP_FRAME_PYTHON:
        return r >= 60 && r < 120 && g >= 170 && g < 230 && b >= 150 && b < 230;
    case PP_FRAME_KERNEL:
        return r >= 200 && r < 240 && g >= 120 && g < 170 && b >= 40 && b < 70;
    case PP_FRAME_MARKER:
        return r == g && g == b && r >= 170 && r < 190;
    default:
        return r >= 225 && r < 255 && g >= 80 && g < 210 && b >= 40 && b < 80;
    }
}

static const char *kind_name(pp_frame_kind k)
{
    return k == PP_FRAME_PYTHON ? "Python" : k == PP_FRAME_KERNEL ? "kernel"
           : k == PP_FRAME_MARKER ? "marker" : "native";
}

/* Twelve leaves of each kind under one Python root, leaf i with i + 1
 * samples (the hash gives each name another shade: a kind drawn in
 * another's colours falls outside its bounds for some of them). */
TEST(flamegraph_every_box_coloured_by_its_kind_and_sized_by_its_samples)
{
    static const pp_frame_kind kinds[] = {PP_FRAME_PYTHON, PP_FRAME_NATIVE, PP_FRAME_KERNEL,
                                          PP_FRAME_MARKER};
    pp_profile p;
    uint32_t root, ids[2];
    char name[32], *svg, label[512];
    uint64_t total = 0;
    int boxes = 0, wrong[4] = {0, 0, 0, 0};
    svg_box *bx;
    size_t nb;

    ASSERT_OK(pp_profile_init(&p));
    root = frame(&p, PP_FRAME_PYTHON, "<module>", "/a.py", 1);
    for (size_t k = 0; k < 4; k++)
        for (int i = 0; i < 12; i++) {
            snprintf(name, sizeof(name), "%s_%c%d", kind_name(kinds[k]), 'a' + i, i * 7);
            if (kinds[k] == PP_FRAME_MARKER)
                snprintf(name, sizeof(name), "[mark %d]", i);
            ids[0] = root;
            ids[1] = frame(&p, kinds[k], name, kinds[k] == PP_FRAME_PYTHON ? "/a.py" :
                           kinds[k] == PP_FRAME_KERNEL ? "[kernel.kallsyms]" :
                           kinds[k] == PP_FRAME_NATIVE ? "/usr/lib/libc.so.6" : NULL, 0);
            ASSERT_TRUE(pp_profile_add(&p, ids, 2, (uint64_t)i + 1, (uint64_t)i + 1) >= 0);
            total += (uint64_t)i + 1;
        }
    svg = written(&p, pp_write_flamegraph);
    ASSERT_CONTAINS(svg, "data-total=\"312\"");     /* what the tooltips' shares are of */
    bx = svg_boxes(svg, &nb);
    for (size_t i = 0; i < nb; i++) {
        const svg_box *x = &bx[i];
        size_t k;
        int64_t fi;
        pp_frame_kind kind;

        snprintf(label, sizeof(label), "%s", x->label);
        boxes++;
        if (!strcmp(label, "all") || !strncmp(label, "<module>", 8)) {
            /* the root and the one frame every sample has: all of them */
            ASSERT_EQ_UINT(x->n, total);
            if (fabs(x->width - 1180.0) > 0.01)
                TEST_FAIL_("%s: %.2f px for all the samples", label, x->width);
            continue;
        }
        /* its frame, its kind, its samples: i + 1 for the name's i */
        for (fi = 0; fi < p.nframes && strcmp(p.frames[fi].label, label); fi++)
            ;
        ASSERT_LT_INT(fi, p.nframes);
        kind = p.frames[fi].kind;
        ASSERT_EQ_INT(x->kind, kind);
        for (k = 0; k < 4 && kinds[k] != kind; k++)
            ;
        if (x->n != (uint64_t)(fi - 1) % 12 + 1)
            TEST_FAIL_("%s: %llu samples in the graph, %llu in the profile", label, x->n,
                       (unsigned long long)((fi - 1) % 12 + 1));
        if (fabs(x->width - 1180.0 * (double)x->n / (double)total) > 0.01)
            TEST_FAIL_("%s: %.2f px for %llu of %llu samples", label, x->width, x->n,
                       (unsigned long long)total);
        if (!kind_of_colour(x->r, x->g, x->b, kind)) {
            printf("    %s (%s) drawn rgb(%d,%d,%d)\n", label, kind_name(kind), x->r, x->g,
                   x->b);
            wrong[k]++;
        }
    }
    free(bx);
    ASSERT_EQ_INT(boxes, 2 + 48);
    for (size_t k = 0; k < 4; k++)
        if (wrong[k])
            TEST_FAIL_("%d of 12 %s frames drawn outside their kind's colours", wrong[k],
                       kind_name(kinds[k]));
    free(svg);
    pp_profile_free(&p);
}

/* ---- the line heatmap ------------------------------------------------------ */

static const char source[] =
    "def main():\n"                 /* 1 */
    "    work()\n"                  /* 2: on the stack of 9 (a call) */
    "    x = 1\n"                   /* 3: own 1 */
    "def work():\n"                 /* 4 */
    "    total = sum(range(9))\n"   /* 5: own 6, the hottest */
    "    return sorted([total])\n"  /* 6: own 3 */
    "# end\n";                      /* 7 */

/* Per line of source: own and total samples (of 10). */
static const struct { int own, total; } heat_lines[8] = {
    {0, 0}, {0, 0}, {0, 9}, {1, 1}, {0, 0}, {6, 6}, {3, 3}, {0, 0},
};

TEST(heatmap_every_line_and_function_judged_against_the_samples)
{
    pp_profile p;
    char path[512], *html, *at, want[64];
    uint32_t m2, m3, w5, w6;
    FILE *f;
    double alpha[8] = {0};
    int green[8] = {0};

    snprintf(path, sizeof(path), "%s/app.py", test_tmpdir());
    ASSERT_TRUE((f = fopen(path, "w")) != NULL);
    fputs(source, f);
    fclose(f);
    ASSERT_OK(pp_profile_init(&p));
    p.exec_lines = 1;
    m2 = frame(&p, PP_FRAME_PYTHON, "main", path, 2);
    m3 = frame(&p, PP_FRAME_PYTHON, "main", path, 3);
    w5 = frame(&p, PP_FRAME_PYTHON, "work", path, 5);
    w6 = frame(&p, PP_FRAME_PYTHON, "work", path, 6);
    ASSERT_TRUE(pp_profile_add(&p, (uint32_t[]){m2, w5}, 2, 6, 6) >= 0);
    ASSERT_TRUE(pp_profile_add(&p, (uint32_t[]){m2, w6}, 2, 3, 3) >= 0);
    ASSERT_TRUE(pp_profile_add(&p, (uint32_t[]){m3}, 1, 1, 1) >= 0);
    html = written(&p, pp_write_heatmap);
    for (int line = 1; line <= 7; line++) {
        char id[32];
        double own, total;

        snprintf(id, sizeof(id), "<tr id=\"f0-L%d\"", line);
        ASSERT_TRUE((at = strstr(html, id)) != NULL);
        at += strlen(id);
        if (!heat_lines[line].total) {
            /* no samples: no heat, no numbers */
            snprintf(want, sizeof(want), "><td class=\"ln\">%d</td><td class=\"p\"></td>", line);
            if (strncmp(at, want, strlen(want)) != 0)
                TEST_FAIL_("line %d has no samples but reads: %.80s", line, at);
            continue;
        }
        if (sscanf(at, " style=\"background:rgba(255,%d,0,%lf)\"><td class=\"ln\">%*d</td>"
                   "<td class=\"p\">%lf%%</td><td class=\"p\">%lf%%", &green[line],
                   &alpha[line], &own, &total) != 4)
            TEST_FAIL_("line %d: %.120s", line, at);
        if (fabs(own - 10.0 * heat_lines[line].own) > 0.05 ||
            fabs(total - 10.0 * heat_lines[line].total) > 0.05)
            TEST_FAIL_("line %d: own %.1f%%, total %.1f%%; the samples: %d and %d of 10", line,
                       own, total, heat_lines[line].own, heat_lines[line].total);
    }
    /* the heat: more own time, deeper (more opaque, redder); the line only
     * on the stack paler than any line with own time */
    if (!(alpha[5] > alpha[6] && alpha[6] > alpha[3] && alpha[3] > alpha[2] &&
          green[5] < green[6] && green[6] < green[3] && green[3] < green[2] && green[5] >= 0 &&
          green[2] <= 255))
        TEST_FAIL_("heat of lines 5, 6, 3, 2 (own 6, 3, 1, 0): alpha %.2f %.2f %.2f %.2f, "
                   "green %d %d %d %d", alpha[5], alpha[6], alpha[3], alpha[2], green[5],
                   green[6], green[3], green[2]);
    /* the functions: work 90% own and total, its hottest line 5; main 10%
     * own, 100% total, its hottest line 3 */
    ASSERT_CONTAINS(html, "<tr><td class=\"n\">90.0%</td><td class=\"n\">90.0%</td><td>"
                          "<a href=\"#f0-L5\" ");
    ASSERT_CONTAINS(html, "<tr><td class=\"n\">10.0%</td><td class=\"n\">100.0%</td><td>"
                          "<a href=\"#f0-L3\" ");
    ASSERT_TRUE(strstr(html, "90.0%</td><td class=\"n\">90.0%") <
                strstr(html, "10.0%</td><td class=\"n\">100.0%"));   /* by own share */
    /* the numbers for tools, the same */
    ASSERT_CONTAINS(html, "\"lines\":{\"2\":[0,9],\"3\":[1,1],\"5\":[6,6],\"6\":[3,3]}");
    free(html);
    pp_profile_free(&p);
}

/* ---- the table ------------------------------------------------------------- */

/* Ten samples of 1 ms (cpu-clock) of one thread:
 *   4  main <- work
 *   3  main <- work <- memcpy       (work's own: the C it calls directly)
 *   2  main <- helper
 *   1  main
 *          own  self  total   own s  total s
 *   work     7     4      7   0.007    0.007
 *   helper   2     2      2   0.002    0.002
 *   main     1     1     10   0.001    0.010
 *   memcpy   0     3      3   0.000    0.003
 * Rows by own, then self, then total. */
TEST(table_every_row_and_column_judged_against_the_samples)
{
    pp_profile p;
    uint32_t m, w, h, c;
    char *out;

    ASSERT_OK(pp_profile_init(&p));
    snprintf(p.event, sizeof(p.event), "cpu-clock");
    p.period_ns = 1000000;
    m = frame(&p, PP_FRAME_PYTHON, "main", "/a.py", 1);
    w = frame(&p, PP_FRAME_PYTHON, "work", "/a.py", 5);
    h = frame(&p, PP_FRAME_PYTHON, "helper", "/a.py", 9);
    c = frame(&p, PP_FRAME_NATIVE, "memcpy", "/usr/lib/x86_64-linux-gnu/libc.so.6", 0);
    ASSERT_EQ_INT(pp_profile_thread(&p, 1, 1, "python3", 7), 0);
    for (int i = 0; i < 10; i++) {
        uint32_t s[3] = {m, i < 7 ? w : h, c};
        size_t depth = i < 4 ? 2 : i < 7 ? 3 : i < 9 ? 2 : 1;

        ASSERT_TRUE(pp_profile_sample(&p, s, depth, 0, 1000000000 + 1000000 * (uint64_t)i,
                                      1000000) >= 0);
    }
    out = written(&p, pp_write_table);
    ASSERT_EQ_STR(out,
        "perfpy: perfpy, 10 samples (cpu-clock), 1 thread\n"
        "    own%   self%  total%     own s   total s  function\n"
        "   70.0%   40.0%   70.0%     0.007     0.007  work (/a.py:5)\n"
        "   20.0%   20.0%   20.0%     0.002     0.002  helper (/a.py:9)\n"
        "   10.0%   10.0%  100.0%     0.001     0.010  main (/a.py:1)\n"
        "    0.0%   30.0%   30.0%     0.000     0.003  memcpy (libc.so.6)\n");
    free(out);
    pp_profile_free(&p);
}

/* A wall-clock profile's table: a function's own time split into what it
 * ran on the CPU itself (own) and what it waited for (wait: its samples
 * off the CPU, wait stacks), ranked by both together. Ten periods of 1 ms:
 *   3  main <- work                       on the CPU
 *   1  main <- work <- memcpy             on the CPU (work's own: C it calls)
 *   4  main <- read <- [off-CPU: I/O]     waiting (read's)
 *   2  main <- [off-CPU: sleep]           waiting (main's)
 *          own  wait  total
 *   work     4     0      4    (4 in all: the CPU's first)
 *   read     0     4      4
 *   main     0     2     10
 * then the rest by total.                                                 */
TEST(table_wall_clock_own_on_the_cpu_and_waiting_apart)
{
    pp_profile p;
    uint32_t m, w, r, c, io, sl, s[4][4];
    size_t depth[4] = {2, 3, 3, 2};
    int per[4] = {3, 1, 4, 2};
    uint64_t t = 1000000000;
    char *out;

    ASSERT_OK(pp_profile_init(&p));
    snprintf(p.event, sizeof(p.event), "wall-clock");
    p.value = PP_VALUE_WALL;
    p.exec_lines = 1;
    p.period_ns = 1000000;
    m = frame(&p, PP_FRAME_PYTHON, "main", "/srv/app/a.py", 1);
    w = frame(&p, PP_FRAME_PYTHON, "work", "/srv/app/a.py", 5);
    r = frame(&p, PP_FRAME_PYTHON, "read", "/usr/lib/python3.12/socket.py", 9);
    c = frame(&p, PP_FRAME_NATIVE, "memcpy", "/usr/lib/x86_64-linux-gnu/libc.so.6", 0);
    io = frame(&p, PP_FRAME_MARKER, "[off-CPU: I/O]", NULL, 0);
    sl = frame(&p, PP_FRAME_MARKER, "[off-CPU: sleep]", NULL, 0);
    memcpy(s, (uint32_t[4][4]){{m, w}, {m, w, c}, {m, r, io}, {m, sl}}, sizeof(s));
    ASSERT_EQ_INT(pp_profile_thread(&p, 1, 1, "python3", 7), 0);
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < per[k]; i++, t += 1000000)
            ASSERT_TRUE(pp_profile_sample(&p, s[k], depth[k], 0, t, 1000000) == k);
    ASSERT_OK(pp_profile_stack_wait(&p, 2, PP_MARKER_WAIT, "[off-CPU: I/O]"));
    ASSERT_OK(pp_profile_stack_wait(&p, 3, PP_MARKER_WAIT, "[off-CPU: sleep]"));
    out = written(&p, pp_write_table);
    ASSERT_EQ_STR(out,
        "perfpy: perfpy, 10 samples (wall-clock), 1 thread\n"
        "    own%   wait%  total%     own s    wait s   total s  function\n"
        "   40.0%    0.0%   40.0%     0.004     0.000     0.004  work (a.py)\n"
        "    0.0%   40.0%   40.0%     0.000     0.004     0.004  read (socket.py)\n"
        "    0.0%   20.0%  100.0%     0.000     0.002     0.010  main (a.py)\n"
        "    0.0%    0.0%   40.0%     0.000     0.000     0.004  [off-CPU: I/O]\n"
        "    0.0%    0.0%   20.0%     0.000     0.000     0.002  [off-CPU: sleep]\n"
        "    0.0%    0.0%   10.0%     0.000     0.000     0.001  memcpy (libc.so.6)\n");
    free(out);
    pp_profile_free(&p);
}

/* The heatmap opens on the program's hottest file, not on threading.py,
 * which every thread's stack holds (its run() the largest total) and
 * whose wait() may even own more: the program's own files first, each
 * group by its lines' own samples; the page scrolls to the first file's
 * hottest line; files are named relative to their sys.path entry, their
 * full path the tooltip. */
TEST(heatmap_opens_at_the_programs_hottest_file)
{
    static const char *const files[] = {"lib/python3.12/threading.py", "app/util.py",
                                        "app/app.py"};
    char path[3][512], *html, want[2048];
    pp_profile p;
    uint32_t run, wait, util, hot;
    const char *h2;

    for (int i = 0; i < 3; i++) {
        FILE *f;
        snprintf(path[i], sizeof(path[i]), "%s/%s", test_tmpdir(), files[i]);
        snprintf(want, sizeof(want), "mkdir -p $(dirname %s)", path[i]);
        ASSERT_EQ_INT(system(want), 0);
        ASSERT_TRUE((f = fopen(path[i], "w")) != NULL);
        fputs("a = 1\nb = 2\nc = 3\nd = 4\ne = 5\n", f);
        fclose(f);
    }
    ASSERT_OK(pp_profile_init(&p));
    p.exec_lines = 1;
    run = frame(&p, PP_FRAME_PYTHON, "Thread.run", path[0], 1);
    wait = frame(&p, PP_FRAME_PYTHON, "Condition.wait", path[0], 2);
    util = frame(&p, PP_FRAME_PYTHON, "helper", path[1], 2);
    hot = frame(&p, PP_FRAME_PYTHON, "handle", path[2], 4);
    ASSERT_TRUE(pp_profile_add(&p, (uint32_t[]){run, wait}, 2, 50, 50) >= 0);
    ASSERT_TRUE(pp_profile_add(&p, (uint32_t[]){run, hot}, 2, 30, 30) >= 0);
    ASSERT_TRUE(pp_profile_add(&p, (uint32_t[]){run, util}, 2, 20, 20) >= 0);
    html = written(&p, pp_write_heatmap);
    h2 = strstr(html, "<h2 id=\"f");
    ASSERT_TRUE(h2 != NULL);
    /* the program's hottest file first (f2: the third file seen), named
     * below the program's directory, its full path its tooltip */
    snprintf(want, sizeof(want), "<h2 id=\"f2\" title=\"%s\">app.py</h2>", path[2]);
    ASSERT_TRUE(strncmp(h2, want, strlen(want)) == 0);
    ASSERT_TRUE(strstr(html, ">util.py</h2>") < strstr(html, ">threading.py</h2>"));
    ASSERT_TRUE(strstr(html, ">app.py</h2>") < strstr(html, ">util.py</h2>"));
    ASSERT_CONTAINS(html, "getElementById('f2-L4');if(e)e.scrollIntoView(");
    free(html);
    pp_profile_free(&p);
}

/* Boxes narrower than a thousandth of the whole are left out, as py-spy
 * does (the file of a server's 495 threads was 12-16 MB): their samples stay
 * in their parent's width, and the frame table names none of them. 1500
 * leaves of 1 sample (under 2.5 of 2500) and one of 1000 under <module>. */
TEST(flamegraph_boxes_under_a_thousandth_left_out_their_time_in_the_parent)
{
    pp_profile p;
    uint32_t root, ids[2];
    char name[32], *svg;
    svg_box *bx;
    size_t nb;

    ASSERT_OK(pp_profile_init(&p));
    root = frame(&p, PP_FRAME_PYTHON, "<module>", "/a.py", 1);
    ids[0] = root;
    ids[1] = frame(&p, PP_FRAME_PYTHON, "big", "/a.py", 3);
    ASSERT_TRUE(pp_profile_add(&p, ids, 2, 1000, 1000) >= 0);
    for (int i = 0; i < 1500; i++) {
        snprintf(name, sizeof(name), "tiny_%d", i);
        ids[1] = frame(&p, PP_FRAME_PYTHON, name, "/a.py", 10 + i);
        ASSERT_TRUE(pp_profile_add(&p, ids, 2, 1, 1) >= 0);
    }
    svg = written(&p, pp_write_flamegraph);
    bx = svg_boxes(svg, &nb);
    ASSERT_EQ_UINT(nb, 3);                        /* all, <module>, big */
    ASSERT_EQ_STR(bx[1].label, "<module> (/a.py:1)");
    ASSERT_EQ_UINT(bx[1].n, 2500);                /* the left-out samples within it */
    ASSERT_TRUE(fabs(bx[1].width - 1180.0) < 0.01);
    ASSERT_EQ_STR(bx[2].label, "big (/a.py:3)");
    ASSERT_TRUE(strstr(svg, "tiny_") == NULL);
    free(bx);
    free(svg);
    pp_profile_free(&p);
}
