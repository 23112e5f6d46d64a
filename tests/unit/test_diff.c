/*
 * Profiles read back (src/report/read_profile.c) and compared
 * (src/profile/diff.c): collapsed text and perfpy's pprof each give back
 * the stacks they were written from; shares are of each profile's total;
 * process and thread roots match by name across runs; a profile against
 * itself changes nothing.
 */
#include "report_helpers.h"
#include "report/report.h"
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
    double *share;
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
    ASSERT_OK(pp_diff_tree(&b, &a, &t, &share));
    for (uint32_t i = 0; i < t.n; i++) {
        const char *name = t.nodes[i].frame == PP_NONE ? "all" : a.frames[t.nodes[i].frame].name;
        double want = !strcmp(name, "f") ? 20.0 : !strcmp(name, "g") ? 80.0 : 100.0;
        if (!strcmp(name, "f"))       /* f's label names line 4 now: another path */
            want = 0.0;
        if (fabs(share[i] - want) > 1e-9)
            TEST_FAIL_("node %s: base share %f, want %f", name, share[i], want);
    }
    free(share);
    pp_tree_free(&t);
    /* itself: nothing changes */
    ASSERT_OK(pp_diff_functions(&a, &a, &v, &n));
    for (uint32_t i = 0; i < n; i++)
        ASSERT_TRUE(v[i].base_own == v[i].new_own && v[i].base_total == v[i].new_total);
    free(v);
    pp_profile_free(&a);
    pp_profile_free(&b);
}
