/*
 * Profiles read back (src/report/read_profile.c) and compared
 * (src/profile/diff.c): collapsed text and perfpy's pprof each give back
 * the stacks they were written from; shares are of each profile's total;
 * process and thread roots match by name across runs; a profile against
 * itself changes nothing.
 */
#include "report_helpers.h"
#include "report/report.h"
#include "svg_boxes.h"
#include "test.h"

#include <errno.h>
#include <math.h>

static char *written(const pp_profile *p, pp_writer_fn fn, size_t *len)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *m = open_memstream(&buf, &n);

    ASSERT_TRUE(m != NULL);
    ASSERT_OK(fn(p, m, NULL));
    fclose(m);
    *len = n;
    return buf;
}

static const char text[] =
    "python3 (pid 4609);<module> (/app/x.py:1);main (/app/x.py:5);memcpy 812\n"
    "python3 (pid 4609);<module> (/app/x.py:1);main (/app/x.py:5) 97\n"
    "python3 (pid 4609);[truncated];[unknown] 3\n"
    "gzip (pid 4620);[gzip] 1\n";

TEST(read_collapsed_gives_back_its_stacks_and_kinds)
{
    pp_profile p;
    char *out;

    ASSERT_OK(pp_profile_init(&p));
    ASSERT_OK(pp_read_profile_buffer((const uint8_t *)text, strlen(text), &p));
    ASSERT_EQ_UINT(p.samples, 913);
    ASSERT_EQ_UINT(p.nstacks, 4);
    out = collapsed_of(&p);
    ASSERT_EQ_STR(out, "gzip (pid 4620);[gzip] 1\n"
                       "python3 (pid 4609);<module> (/app/x.py:1);main (/app/x.py:5) 97\n"
                       "python3 (pid 4609);<module> (/app/x.py:1);main (/app/x.py:5);memcpy 812\n"
                       "python3 (pid 4609);[truncated];[unknown] 3\n");
    free(out);
    for (uint32_t i = 0; i < p.nframes; i++) {
        const pp_frame *f = &p.frames[i];
        if (!strcmp(f->name, "<module>")) {
            ASSERT_EQ_INT(f->kind, PP_FRAME_PYTHON);
        } else if (!strcmp(f->name, "main")) {
            ASSERT_EQ_INT(f->kind, PP_FRAME_PYTHON);
            ASSERT_EQ_STR(f->file, "/app/x.py");
            ASSERT_EQ_INT(f->line, 5);
        } else if (!strcmp(f->name, "memcpy")) {
            ASSERT_EQ_INT(f->kind, PP_FRAME_NATIVE);
        } else {
            ASSERT_EQ_INT(f->kind, PP_FRAME_MARKER);     /* roots and [..] */
        }
    }
    pp_profile_free(&p);
    /* lines that are not stacks are counted, not fatal */
    ASSERT_OK(pp_profile_init(&p));
    ASSERT_OK(pp_read_profile_buffer((const uint8_t *)"a;b 2\nnonsense\nc x\n\n", 20, &p));
    ASSERT_EQ_UINT(p.samples, 2);
    ASSERT_EQ_UINT(p.bad_lines, 2);
    pp_profile_free(&p);
}

TEST(read_pprof_gives_back_what_perfpy_wrote)
{
    pp_profile p, q;
    size_t len;
    char *gz, *a, *b;

    ASSERT_OK(pp_profile_init(&p));
    ASSERT_OK(pp_read_profile_buffer((const uint8_t *)text, strlen(text), &p));
    gz = written(&p, pp_write_pprof, &len);
    ASSERT_OK(pp_profile_init(&q));
    ASSERT_OK(pp_read_profile_buffer(test_exact_copy(gz, len), len, &q));
    a = collapsed_of(&p);
    b = collapsed_of(&q);
    ASSERT_EQ_STR(b, a);
    ASSERT_EQ_UINT(q.samples, p.samples);
    /* cut anywhere: an error or fewer samples, never a crash */
    for (size_t cut = 1; cut < len; cut += 7) {
        pp_profile r;
        ASSERT_OK(pp_profile_init(&r));
        int rc = pp_read_profile_buffer(test_exact_copy(gz, cut), cut, &r);
        ASSERT_TRUE(rc == 0 || rc == -EINVAL);
        ASSERT_LE_INT(r.samples, p.samples);
        pp_profile_free(&r);
    }
    free(a);
    free(b);
    free(gz);
    pp_profile_free(&p);
    pp_profile_free(&q);
}

static const pp_diff_func *find(const pp_diff_func *v, uint32_t n, const char *name)
{
    for (uint32_t i = 0; i < n; i++)
        if (!strcmp(v[i].p->frames[v[i].frame].name, name))
            return &v[i];
    return NULL;
}

TEST(diff_shares_are_of_each_total_and_roots_match_by_name)
{
    static const char before[] = "py (pid 1);m (/a.py:1);f (/a.py:3) 20\n"
                                 "py (pid 1);m (/a.py:1);g (/a.py:9) 80\n";
    static const char after[] = "py (pid 7);m (/a.py:1);f (/a.py:4) 100\n"    /* f moved a line */
                                "py (pid 7);m (/a.py:1);g (/a.py:9) 100\n";
    pp_profile b, a;
    pp_diff_func *v;
    const pp_diff_func *f, *g, *root;
    pp_tree t;
    double *share, *now;
    uint32_t n;

    ASSERT_OK(pp_profile_init(&b));
    ASSERT_OK(pp_profile_init(&a));
    ASSERT_OK(pp_read_profile_buffer((const uint8_t *)before, strlen(before), &b));
    ASSERT_OK(pp_read_profile_buffer((const uint8_t *)after, strlen(after), &a));
    ASSERT_OK(pp_diff_functions(&b, &a, &v, &n));
    ASSERT_EQ_UINT(n, 4);                     /* the root, m, f, g: matched, not doubled */
    f = find(v, n, "f");
    g = find(v, n, "g");
    root = find(v, n, "py (pid 7)");
    ASSERT_TRUE(f && g && root);
    ASSERT_TRUE(fabs(f->base_own - 20.0) < 1e-9 && fabs(f->new_own - 50.0) < 1e-9);
    ASSERT_TRUE(fabs(g->base_own - 80.0) < 1e-9 && fabs(g->new_own - 50.0) < 1e-9);
    ASSERT_TRUE(fabs(root->base_total - 100.0) < 1e-9 && fabs(root->new_total - 100.0) < 1e-9);
    free(v);
    /* the tree: NEW's nodes with BASE's share of the same path */
    ASSERT_OK(pp_tree_build(&a, &t));
    ASSERT_OK(pp_diff_tree(&b, &a, &t, &share, &now));
    for (uint32_t i = 0; i < t.n; i++) {
        const char *name = t.nodes[i].frame == PP_NONE ? "all" : a.frames[t.nodes[i].frame].name;
        double want = !strcmp(name, "f") ? 20.0 : !strcmp(name, "g") ? 80.0 : 100.0;
        double want_now = !strcmp(name, "f") || !strcmp(name, "g") ? 50.0 : 100.0;
        if (!strcmp(name, "f"))       /* f's label names line 4 now: another path */
            want = 0.0;
        if (fabs(share[i] - want) > 1e-9 || fabs(now[i] - want_now) > 1e-9)
            TEST_FAIL_("node %s: base share %f, want %f; new %f, want %f", name, share[i],
                       want, now[i], want_now);
    }
    free(share);
    free(now);
    pp_tree_free(&t);
    /* itself: nothing changes */
    ASSERT_OK(pp_diff_functions(&a, &a, &v, &n));
    for (uint32_t i = 0; i < n; i++)
        ASSERT_TRUE(v[i].base_own == v[i].new_own && v[i].base_total == v[i].new_total);
    free(v);
    pp_profile_free(&a);
    pp_profile_free(&b);
}

/* Like with like: a program (python3) and its child (gzip), the child
 * running three times as long after the change. Each stack is a share of
 * its own process's time, the processes of one name together: work is
 * 18% -> 30% of the program's own time (of all processes' time together
 * it would read 9% -> 7.5%: a loss where the program's work grew), gzip's
 * code 100% of gzip's both times; a second python3 process in NEW (a
 * worker) adds its time to python3's. The tree's shares are the same. */
TEST(diff_compares_each_process_with_itself)
{
    static const char before[] = "python3 (pid 1);main (/a.py:1);work (/a.py:3) 18\n"
                                 "python3 (pid 1);main (/a.py:1);wait (/a.py:9) 82\n"
                                 "gzip (pid 2);[gzip] 100\n";
    static const char after[] = "python3 (pid 5);main (/a.py:1);work (/a.py:3) 30\n"
                                "python3 (pid 5);main (/a.py:1);wait (/a.py:9) 70\n"
                                "gzip (pid 6);[gzip] 300\n";
    static const char workers[] = "python3 (pid 5);main (/a.py:1);work (/a.py:3) 30\n"
                                  "python3 (pid 5);main (/a.py:1);wait (/a.py:9) 70\n"
                                  "python3 (pid 8);w (/a.py:20) 100\n";
    static const char *const names[] = {"work", "wait", "[gzip]"};
    static const double base_want[] = {18.0, 82.0, 100.0}, new_want[] = {30.0, 70.0, 100.0};
    pp_profile b, a, w;
    pp_diff_func *v;
    const pp_diff_func *d;
    pp_tree t;
    double *share, *now;
    uint32_t n;

    ASSERT_OK(pp_profile_init(&b));
    ASSERT_OK(pp_profile_init(&a));
    ASSERT_OK(pp_profile_init(&w));
    ASSERT_OK(pp_read_profile_buffer((const uint8_t *)before, strlen(before), &b));
    ASSERT_OK(pp_read_profile_buffer((const uint8_t *)after, strlen(after), &a));
    ASSERT_OK(pp_read_profile_buffer((const uint8_t *)workers, strlen(workers), &w));
    ASSERT_OK(pp_diff_functions(&b, &a, &v, &n));
    for (size_t i = 0; i < 3; i++) {
        ASSERT_TRUE((d = find(v, n, names[i])) != NULL);
        if (fabs(d->base_total - base_want[i]) > 1e-9 || fabs(d->new_total - new_want[i]) > 1e-9 ||
            fabs(d->base_own - base_want[i]) > 1e-9 || fabs(d->new_own - new_want[i]) > 1e-9)
            TEST_FAIL_("%s: own %f -> %f, total %f -> %f; want %f -> %f", names[i], d->base_own,
                       d->new_own, d->base_total, d->new_total, base_want[i], new_want[i]);
    }
    free(v);
    ASSERT_OK(pp_tree_build(&a, &t));
    ASSERT_OK(pp_diff_tree(&b, &a, &t, &share, &now));
    for (uint32_t i = 0; i < t.n; i++) {
        const char *name = t.nodes[i].frame == PP_NONE ? "all" : a.frames[t.nodes[i].frame].name;
        for (size_t k = 0; k < 3; k++)
            if (!strcmp(name, names[k]) && (fabs(share[i] - base_want[k]) > 1e-9 ||
                                            fabs(now[i] - new_want[k]) > 1e-9))
                TEST_FAIL_("node %s: %f -> %f, want %f -> %f", name, share[i], now[i],
                           base_want[k], new_want[k]);
        if (!strcmp(name, "gzip (pid 6)") || !strcmp(name, "python3 (pid 5)") || i == 0)
            ASSERT_TRUE(fabs(share[i] - 100.0) < 1e-9 && fabs(now[i] - 100.0) < 1e-9);
    }
    free(share);
    free(now);
    pp_tree_free(&t);
    ASSERT_OK(pp_diff_functions(&b, &w, &v, &n));     /* python3's time: 100 + 100 */
    ASSERT_TRUE((d = find(v, n, "work")) != NULL);
    ASSERT_TRUE(fabs(d->new_total - 15.0) < 1e-9);
    free(v);
    pp_profile_free(&w);
    pp_profile_free(&a);
    pp_profile_free(&b);
}

/* ---- what the diff views show, judged against the two profiles -------------- */

/* BASE and NEW, 100 samples each, under py <- m:
 *   f  20 -> 40   +20 points (grew most: the deepest red)
 *   g  60 -> 45   -15        (blue)
 *   h  10 -> 10     0        (neither)
 *   k  10 ->  5    -5        (a paler blue than g's) */
static const char base_text[] =
    "py (pid 1);m (/a.py:1);f (/a.py:3) 20\n"
    "py (pid 1);m (/a.py:1);g (/a.py:9) 60\n"
    "py (pid 1);m (/a.py:1);h (/a.py:12) 10\n"
    "py (pid 1);m (/a.py:1);k (/a.py:20) 10\n";
static const char new_text[] =
    "py (pid 7);m (/a.py:1);f (/a.py:3) 40\n"
    "py (pid 7);m (/a.py:1);g (/a.py:9) 45\n"
    "py (pid 7);m (/a.py:1);h (/a.py:12) 10\n"
    "py (pid 7);m (/a.py:1);k (/a.py:20) 5\n";

typedef struct want_share {
    const char *label, *func;       /* the box's label; the table's name */
    double before, now;             /* total shares, percent */
    double own_before, own_now;
} want_share;

static const want_share shares[] = {
    {"all", NULL, 100, 100, 0, 0},
    {"py (pid 7)", "py (pid 7)", 100, 100, 0, 0},
    {"m (/a.py:1)", "m (/a.py)", 100, 100, 0, 0},
    {"f (/a.py:3)", "f (/a.py)", 20, 40, 20, 40},
    {"g (/a.py:9)", "g (/a.py)", 60, 45, 60, 45},
    {"h (/a.py:12)", "h (/a.py)", 10, 10, 10, 10},
    {"k (/a.py:20)", "k (/a.py)", 10, 5, 10, 5},
};
#define NSHARES (sizeof(shares) / sizeof(shares[0]))

static const want_share *share_of(const char *label, int by_func)
{
    for (size_t i = 0; i < NSHARES; i++)
        if (!strcmp(by_func ? (shares[i].func ? shares[i].func : "") : shares[i].label, label))
            return &shares[i];
    TEST_FAIL_("a box or row '%s' the profiles do not have", label);
    return NULL;
}

static void diff_profiles(pp_profile *b, pp_profile *a)
{
    ASSERT_OK(pp_profile_init(b));
    ASSERT_OK(pp_profile_init(a));
    ASSERT_OK(pp_read_profile_buffer((const uint8_t *)base_text, strlen(base_text), b));
    ASSERT_OK(pp_read_profile_buffer((const uint8_t *)new_text, strlen(new_text), a));
}

static char *diff_written(const pp_profile *a, const pp_profile *b, pp_writer_fn fn)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *m = open_memstream(&buf, &n);
    pp_write_opts o = {.base = b};

    ASSERT_TRUE(m != NULL);
    ASSERT_OK(fn(a, m, &o));
    fclose(m);
    return buf;
}

TEST(diff_every_box_coloured_by_its_change)
{
    pp_profile b, a;
    char *svg, label[512];
    int boxes = 0;
    double sat[NSHARES] = {0};
    svg_box *bx;
    size_t nb;

    diff_profiles(&b, &a);
    svg = diff_written(&a, &b, pp_write_diff_flamegraph);
    ASSERT_CONTAINS(svg, "red grew, blue shrank since BASE");
    bx = svg_boxes(svg, &nb);
    for (size_t i = 0; i < nb; i++) {
        const want_share *w;
        double now, before, d;
        int r = bx[i].r, g = bx[i].g, bl = bx[i].b, n = 0;

        snprintf(label, sizeof(label), "%s", bx[i].label);
        w = share_of(label, 0);
        /* the tooltip: both shares and the change, as the data has them */
        ASSERT_EQ_INT(sscanf(bx[i].note, "%lf%% now, %lf%% before: %lf points%n", &now, &before,
                             &d, &n) >= 3, 1);
        if (fabs(now - w->now) > 0.005 || fabs(before - w->before) > 0.005 ||
            fabs(d - (w->now - w->before)) > 0.005)
            TEST_FAIL_("%s: tooltip %.2f%% now, %.2f%% before, %+.2f; the profiles: %.2f, %.2f",
                       label, now, before, d, w->now, w->before);
        /* as wide as its share of NEW (1180 px for all of it) */
        if (fabs(bx[i].width - 11.8 * w->now) > 0.01)
            TEST_FAIL_("%s: %.2f px wide for %.0f%% of NEW", label, bx[i].width, w->now);
        d = w->now - w->before;
        if (d > 0 && !(r == 255 && g < r && bl < r))
            TEST_FAIL_("%s grew %+.0f points: drawn rgb(%d,%d,%d), not red", label, d, r, g, bl);
        if (d < 0 && !(bl == 255 && r < bl && g < bl))
            TEST_FAIL_("%s shrank %+.0f points: drawn rgb(%d,%d,%d), not blue", label, d, r, g,
                       bl);
        if (d == 0 && (abs(r - g) > 15 || abs(g - bl) > 15 || abs(r - bl) > 15))
            TEST_FAIL_("%s did not change: drawn rgb(%d,%d,%d), not grey", label, r, g, bl);
        sat[w - shares] = (double)((r > g ? (r > bl ? r : bl) : (g > bl ? g : bl)) -
                                   (r < g ? (r < bl ? r : bl) : (g < bl ? g : bl)));
        boxes++;
    }
    free(bx);
    ASSERT_EQ_INT(boxes, (int)NSHARES);
    /* the deeper the colour, the larger the change: f (20) > g (15) > k (5),
     * the largest drawn deepest */
    if (!(sat[3] > sat[4] && sat[4] > sat[6] && sat[3] >= 200))
        TEST_FAIL_("colour depths f %.0f, g %.0f, k %.0f for changes of 20, 15 and 5 points",
                   sat[3], sat[4], sat[6]);
    free(svg);
    pp_profile_free(&a);
    pp_profile_free(&b);
}

/* The table, as text and in the page: every row's six numbers and, in the
 * page, the colour class of each change (up: grew, down: shrank). */
TEST(diff_every_column_of_every_row)
{
    pp_profile b, a;
    char *txt, *html, *line, name[64], cls[2][16];
    int rows = 0;

    diff_profiles(&b, &a);
    txt = diff_written(&a, &b, pp_write_diff_table);
    ASSERT_CONTAINS(txt, "perfpy diff: 100 samples in BASE, 100 in NEW");
    for (line = strchr(txt, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        double dd, bo, no, dt, bt, nt;
        const want_share *w;

        if (sscanf(line + 1, "%lf %lf%% %lf%% %lf %lf%% %lf%% %63[^\n]", &dd, &bo, &no, &dt,
                   &bt, &nt, name) != 7)
            continue;
        w = share_of(name, 1);
        if (fabs(bo - w->own_before) > 0.05 || fabs(no - w->own_now) > 0.05 ||
            fabs(dd - (w->own_now - w->own_before)) > 0.05 || fabs(bt - w->before) > 0.05 ||
            fabs(nt - w->now) > 0.05 || fabs(dt - (w->now - w->before)) > 0.05)
            TEST_FAIL_("text row %s: %+.1f %.1f %.1f %+.1f %.1f %.1f; the profiles: own "
                       "%.1f -> %.1f, total %.1f -> %.1f", name, dd, bo, no, dt, bt, nt,
                       w->own_before, w->own_now, w->before, w->now);
        rows++;
    }
    ASSERT_EQ_INT(rows, (int)NSHARES - 1);         /* every function, "all" aside */
    html = diff_written(&a, &b, pp_write_diff_html);
    rows = 0;
    for (line = strstr(html, "<tr><td class=\""); line; line = strstr(line + 1, "<tr><td class=\"")) {
        double dd, bo, no, dt, bt, nt;
        const want_share *w;

        const char *q = line + 15, *e = strchr(q, '"');

        /* <tr><td class="C">Δ</td><td>B%</td><td>N%</td><td class="C">Δ</td>... */
        snprintf(cls[0], sizeof(cls[0]), "%.*s", (int)(e - q), q);
        ASSERT_EQ_INT(sscanf(e, "\">%lf</td><td>%lf%%</td><td>%lf%%</td><td class=\"", &dd, &bo,
                             &no), 3);
        q = strstr(e, "</td><td class=\"") + 16;      /* the fourth cell's */
        e = strchr(q, '"');
        snprintf(cls[1], sizeof(cls[1]), "%.*s", (int)(e - q), q);
        ASSERT_EQ_INT(sscanf(e, "\">%lf</td><td>%lf%%</td><td>%lf%%</td><td class=\"l\">%63[^<]",
                             &dt, &bt, &nt, name), 4);
        w = share_of(name, 1);
        if (fabs(bo - w->own_before) > 0.05 || fabs(no - w->own_now) > 0.05 ||
            fabs(dd - (w->own_now - w->own_before)) > 0.05 || fabs(bt - w->before) > 0.05 ||
            fabs(nt - w->now) > 0.05 || fabs(dt - (w->now - w->before)) > 0.05)
            TEST_FAIL_("page row %s: numbers not the profiles'", name);
        for (int c = 0; c < 2; c++) {
            double ch = c ? w->now - w->before : w->own_now - w->own_before;
            const char *want = ch > 0 ? "up" : ch < 0 ? "down" : "";

            if (strcmp(cls[c], want) != 0)
                TEST_FAIL_("page row %s: its %s change %+.0f is class \"%s\", want \"%s\"", name,
                           c ? "total" : "own", ch, cls[c], want);
        }
        rows++;
    }
    ASSERT_EQ_INT(rows, (int)NSHARES - 1);
    /* the page's graph is the flame graph's, colours and all */
    ASSERT_CONTAINS(html, "fill=\"#ff");
    free(txt);
    free(html);
    pp_profile_free(&a);
    pp_profile_free(&b);
}

/* Two checkouts of one program, each under its own interpreter: frames
 * match by their file below its sys.path entry (paths.c), not by the
 * full path, so every function and node is in both. */
TEST(diff_matches_two_checkouts_by_their_relative_paths)
{
    static const char base_co[] =
        "<module> (/home/a/co1/app.py:1);handle (/home/a/co1/shop/views.py:9);"
        "route (/home/a/co1/.venv/lib/python3.11/site-packages/flask/app.py:70) 60\n"
        "<module> (/home/a/co1/app.py:1);wait (/usr/lib/python3.11/threading.py:300) 40\n";
    static const char new_co[] =
        "<module> (/srv/b/co2/app.py:1);handle (/srv/b/co2/shop/views.py:9);"
        "route (/opt/venv/lib/python3.12/site-packages/flask/app.py:70) 30\n"
        "<module> (/srv/b/co2/app.py:1);wait (/root/.pyenv/versions/3.12.1/lib/python3.12/"
        "threading.py:300) 70\n";
    pp_profile b, a;
    pp_diff_func *v;
    pp_tree t;
    double *share, *now;
    uint32_t n;

    ASSERT_OK(pp_profile_init(&b));
    ASSERT_OK(pp_profile_init(&a));
    ASSERT_OK(pp_read_profile_buffer((const uint8_t *)base_co, strlen(base_co), &b));
    ASSERT_OK(pp_read_profile_buffer((const uint8_t *)new_co, strlen(new_co), &a));
    ASSERT_OK(pp_diff_functions(&b, &a, &v, &n));
    ASSERT_EQ_UINT(n, 4);                      /* <module>, handle, route, wait: each once */
    for (uint32_t i = 0; i < n; i++) {
        const char *name = v[i].p->frames[v[i].frame].name;
        double want_base = !strcmp(name, "wait") ? 40 : !strcmp(name, "<module>") ? 100 : 60;
        double want_new = !strcmp(name, "wait") ? 70 : !strcmp(name, "<module>") ? 100 : 30;
        if (v[i].base_total != want_base || v[i].new_total != want_new)
            TEST_FAIL_("%s: %.0f%% -> %.0f%%, want %.0f%% -> %.0f%%", name, v[i].base_total,
                       v[i].new_total, want_base, want_new);
    }
    free(v);
    ASSERT_OK(pp_tree_build(&a, &t));
    ASSERT_OK(pp_diff_tree(&b, &a, &t, &share, &now));
    for (uint32_t i = 1; i < t.n; i++)         /* every node of NEW found in BASE */
        if (share[i] == 0)
            TEST_FAIL_("node %s has no match in BASE", a.frames[t.nodes[i].frame].label);
    free(share);
    free(now);
    pp_tree_free(&t);
    pp_profile_free(&a);
    pp_profile_free(&b);
}
