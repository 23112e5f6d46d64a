/*
 * The profile model (interning, call tree, function statistics) and every
 * writer: exact collapsed text, escaping in JSON/XML/HTML, the pprof
 * protobuf decoded field by field with a small reader written here, and
 * the time-order views (speedscope, the Firefox Profiler) read back with
 * a small JSON reader, every field a viewer shows judged against the
 * profile they were written from.
 */
#include "report_helpers.h"
#include "test.h"

#include <errno.h>
#include <stdarg.h>
#include <zlib.h>

static int64_t F(pp_profile *p, pp_frame_kind k, const char *name, const char *file, int line)
{
    int64_t id = pp_profile_frame(p, k, name, strlen(name), file, file ? strlen(file) : 0, line);
    ASSERT_TRUE(id >= 0);
    return id;
}

/* <module> -> foo -> memcpy x3, <module> -> foo x2, <module> -> bar x1,
 * plus a frame whose name holds every character that needs escaping. */
static void sample_profile(pp_profile *p)
{
    uint32_t mod, foo, bar, mc, odd, k;

    ASSERT_OK(pp_profile_init(p));
    mod = (uint32_t)F(p, PP_FRAME_PYTHON, "<module>", "/a&b<c>.py", 1);
    foo = (uint32_t)F(p, PP_FRAME_PYTHON, "foo", "/a&b<c>.py", 3);
    bar = (uint32_t)F(p, PP_FRAME_PYTHON, "bar", "/a&b<c>.py", 0);
    mc = (uint32_t)F(p, PP_FRAME_NATIVE, "memcpy", "/usr/lib/libc.so.6", 0);
    odd = (uint32_t)F(p, PP_FRAME_NATIVE, "we\"ird<&>;name\xff'", "", 0);
    k = (uint32_t)F(p, PP_FRAME_KERNEL, "do_syscall_64", "[kernel.kallsyms]", 0);
    ASSERT_EQ_INT(F(p, PP_FRAME_PYTHON, "foo", "/a&b<c>.py", 3), foo);   /* interned */
    {
        uint32_t s1[] = {mod, foo, mc}, s2[] = {mod, foo}, s3[] = {mod, bar}, s4[] = {odd, k};
        /* the stack's index: interned, in order of first sight */
        ASSERT_EQ_INT(pp_profile_add(p, s1, 3, 3, 3000), 0);
        ASSERT_EQ_INT(pp_profile_add(p, s2, 2, 1, 1000), 1);
        ASSERT_EQ_INT(pp_profile_add(p, s2, 2, 1, 1000), 1);
        ASSERT_EQ_INT(pp_profile_add(p, s3, 2, 1, 1000), 2);
        ASSERT_EQ_INT(pp_profile_add(p, s4, 2, 1, 1000), 3);
    }
    ASSERT_EQ_INT(pp_profile_add(p, (uint32_t[]){999}, 1, 1, 1), -EINVAL);
}

static char *render_with(const pp_profile *p, pp_writer_fn fn, const pp_write_opts *o,
                         size_t *len)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *m = open_memstream(&buf, &n);
    ASSERT_TRUE(m != NULL);
    ASSERT_OK(fn(p, m, o));
    fclose(m);
    if (len)
        *len = n;
    return buf;
}

static char *render(const pp_profile *p, pp_writer_fn fn, size_t *len)
{
    return render_with(p, fn, NULL, len);
}

TEST(profile_interns_stacks_and_counts)
{
    pp_profile p;
    pp_func_stat *st;

    sample_profile(&p);
    ASSERT_EQ_UINT(p.nstacks, 4);
    ASSERT_EQ_UINT(p.samples, 7);
    ASSERT_EQ_UINT(p.period, 7000);
    st = pp_profile_func_stats(&p);
    ASSERT_EQ_UINT(st[0].total, 6);   /* <module> */
    ASSERT_EQ_UINT(st[0].self, 0);
    ASSERT_EQ_UINT(st[1].own, 5);     /* foo: innermost Python frame */
    ASSERT_EQ_UINT(st[1].self, 2);
    ASSERT_EQ_UINT(st[3].self, 3);    /* memcpy */
    ASSERT_EQ_UINT(st[3].own, 0);
    ASSERT_EQ_STR(p.frames[0].label, "<module> (/a&b<c>.py:1)");
    ASSERT_EQ_STR(p.frames[2].label, "bar (/a&b<c>.py)");
    free(st);
    pp_profile_free(&p);
}

TEST(profile_tree_is_sorted_and_sums)
{
    pp_profile p;
    pp_tree t;

    sample_profile(&p);
    ASSERT_OK(pp_tree_build(&p, &t));
    ASSERT_EQ_UINT(t.nodes[0].total, 7);
    ASSERT_EQ_UINT(t.max_depth, 3);
    /* children of the root: "<module> ..." then the odd name (byte order) */
    {
        uint32_t c = t.nodes[0].first_child;
        ASSERT_EQ_STR(p.frames[t.nodes[c].frame].name, "<module>");
        ASSERT_EQ_UINT(t.nodes[c].total, 6);
        uint32_t g = t.nodes[c].first_child;       /* bar before foo */
        ASSERT_EQ_STR(p.frames[t.nodes[g].frame].name, "bar");
        g = t.nodes[g].next_sibling;
        ASSERT_EQ_STR(p.frames[t.nodes[g].frame].name, "foo");
        ASSERT_EQ_UINT(t.nodes[g].total, 5);
        ASSERT_EQ_UINT(t.nodes[g].self, 2);
        ASSERT_EQ_UINT(t.nodes[g].next_sibling, PP_NONE);
        ASSERT_TRUE(t.nodes[c].next_sibling != PP_NONE);
    }
    /* preorder: every parent comes before its children */
    for (uint32_t i = 1; i < t.n; i++)
        ASSERT_LT_INT(t.nodes[i].parent, i);
    pp_tree_free(&t);
    pp_profile_free(&p);
}

TEST(writer_collapsed_exact)
{
    pp_profile p;
    char *out;

    sample_profile(&p);
    out = render(&p, pp_write_collapsed, NULL);
    /* files relative to the script's directory, "/" here (paths.c) */
    ASSERT_EQ_STR(out, "<module> (a&b<c>.py:1);bar (a&b<c>.py) 1\n"
                       "<module> (a&b<c>.py:1);foo (a&b<c>.py:3) 2\n"
                       "<module> (a&b<c>.py:1);foo (a&b<c>.py:3);memcpy 3\n"
                       "we\"ird<&>:name\xff';do_syscall_64 1\n");
    free(out);
    pp_profile_free(&p);
}

/* A name with a newline (read from a process's memory, it may hold
 * anything) stays on its line: control characters are written as ' '. */
TEST(writer_collapsed_a_newline_in_a_name_keeps_its_line)
{
    pp_profile p;
    uint32_t s[2];
    char *out;

    ASSERT_OK(pp_profile_init(&p));
    s[0] = (uint32_t)F(&p, PP_FRAME_MARKER, "Accept-Encoding: identity\r\n", NULL, 0);
    s[1] = (uint32_t)F(&p, PP_FRAME_NATIVE, "a\tb;c", "", 0);
    ASSERT_EQ_INT(pp_profile_add(&p, s, 2, 4, 4000), 0);
    out = render(&p, pp_write_collapsed, NULL);
    ASSERT_EQ_STR(out, "Accept-Encoding: identity  ;a b:c 4\n");
    free(out);
    pp_profile_free(&p);
}

TEST(writer_speedscope_escapes_and_shapes)
{
    pp_profile p;
    char *out;

    sample_profile(&p);
    out = render(&p, pp_write_speedscope, NULL);
    ASSERT_CONTAINS(out, "\"$schema\":\"https://www.speedscope.app/file-format-schema.json\"");
    ASSERT_CONTAINS(out, "{\"name\":\"foo\",\"file\":\"/a&b\\u003cc>.py\",\"line\":3}");
    ASSERT_CONTAINS(out, "we\\\"ird\\u003c&>;name\\ufffd'");
    ASSERT_CONTAINS(out, "\"type\":\"sampled\"");
    ASSERT_CONTAINS(out, "\"endValue\":7");
    ASSERT_CONTAINS(out, "\"weights\":[1,2,3,1]");
    /* the frames by use, the most used first: <module> in 6 samples, foo
     * in 5, memcpy in 3, then bar, the odd name and do_syscall_64 in 1
     * each, in their own order */
    ASSERT_CONTAINS(out, "\"samples\":[\n[0,3],\n[0,1],\n[0,1,2],\n[4,5]]");
    ASSERT_CONTAINS(out, "{\"name\":\"memcpy\",\"file\":\"/usr/lib/libc.so.6\"},\n"
                         "{\"name\":\"bar\",\"file\":\"/a&b\\u003cc>.py\"}");
    free(out);
    pp_profile_free(&p);
}

TEST(writer_svg_escapes_every_name)
{
    pp_profile p;
    char *out;
    size_t boxes = 0;

    sample_profile(&p);
    out = render(&p, pp_write_flamegraph, NULL);
    ASSERT_TRUE(strncmp(out, "<?xml version=\"1.0\"", 19) == 0);
    /* the box's text, and its name in the frame table the script reads
     * (every character that could end a CDATA or a script escaped) */
    ASSERT_CONTAINS(out, ">we&quot;ird&lt;&amp;&gt;;name\xef\xbf\xbd&#39;</text>");
    ASSERT_CONTAINS(out, "[\"we\\\"ird\\u003c\\u0026\\u003e;name\\ufffd'\",-1,0,1]");
    ASSERT_CONTAINS(out, "[\"foo\",0,3,0]");
    ASSERT_CONTAINS(out, "P=[[\"/a\\u0026b\\u003cc\\u003e.py\",1]]");
    ASSERT_TRUE(strstr(out, "\xff") == NULL);
    ASSERT_TRUE(strstr(out, "<![CDATA[") != NULL);
    ASSERT_EQ_INT(strstr(strstr(out, "<![CDATA[") + 9, "]]>") == strstr(out, "]]></script>"), 1);
    for (const char *q = strstr(out, "<svg id=\"ppbox\""); (q = strstr(q, "<rect ")); q++)
        boxes++;
    ASSERT_EQ_INT(boxes, 7);        /* all + 6 nodes */
    ASSERT_TRUE(strstr(out, "href") == NULL);
    {   /* a height as well as a width, equal to the viewBox's: a browser
           keeps 12 px text and scrolls instead of fitting a deep graph */
        unsigned h = 0, vw = 0, vh = 0;
        const char *svg = strstr(out, "<svg ");
        ASSERT_TRUE(svg && sscanf(strstr(svg, " height=\"") ? strstr(svg, " height=\"") : "",
                                  " height=\"%u\" viewBox=\"0 0 %u %u\"", &h, &vw, &vh) == 3);
        ASSERT_TRUE(strstr(svg, " height=\"") < strchr(svg, '>'));
        ASSERT_EQ_INT(vw, 1200);
        ASSERT_EQ_INT(h, vh);
    }
    free(out);
    pp_profile_free(&p);
}

TEST(writer_html_is_self_contained)
{
    pp_profile p;
    char *out;

    sample_profile(&p);
    p.lost = 4;
    out = render(&p, pp_write_html, NULL);
    ASSERT_TRUE(strncmp(out, "<!DOCTYPE html>", 15) == 0);
    ASSERT_CONTAINS(out, "<svg version=\"1.1\" id=\"ppfg\" xmlns=\"http://www.w3.org/2000/svg\" "
                         "width=\"100%\" viewBox=");   /* the page's width, the ratio's height */
    ASSERT_CONTAINS(out, "4 lost events");
    /* a zero count reads as a dash, not "0 ()" */
    ASSERT_CONTAINS(out, "function num(v){return v?v+' ('+pct(v)+')':'\\u2013';}");
    ASSERT_TRUE(strstr(out, "+' ('+pct(r[") == NULL);
    /* foo, frame 1 (the graph's table names it): self 2, own 5, total 5 */
    ASSERT_CONTAINS(out, "[1,2,5,5]");
    ASSERT_CONTAINS(out, "[\"foo\",0,3,0]");
    ASSERT_TRUE(strstr(out, "src=") == NULL);
    ASSERT_TRUE(strstr(out, "href") == NULL);
    ASSERT_TRUE(strstr(out, "http://") == strstr(out, "http://www.w3.org/2000/svg"));
    ASSERT_TRUE(strstr(out, "https://") == NULL);
    free(out);
    pp_profile_free(&p);
}

/* ---- a minimal protobuf reader for the pprof checks ---------------------- */

typedef struct pb {
    const uint8_t *p, *end;
} pb;

static int pb_varint(pb *b, uint64_t *v)
{
    *v = 0;
    for (int s = 0; s < 64 && b->p < b->end; s += 7) {
        uint8_t c = *b->p++;
        *v |= (uint64_t)(c & 0x7f) << s;
        if (!(c & 0x80))
            return 1;
    }
    return 0;
}

/* Next field: number, wire type, and for type 2 the payload. */
static int pb_next(pb *b, unsigned *field, uint64_t *v, pb *sub)
{
    uint64_t key;
    if (b->p >= b->end || !pb_varint(b, &key))
        return 0;
    *field = (unsigned)(key >> 3);
    if ((key & 7) == 0)
        return pb_varint(b, v);
    ASSERT_EQ_INT(key & 7, 2);
    ASSERT_TRUE(pb_varint(b, v) && *v <= (uint64_t)(b->end - b->p));
    sub->p = b->p;
    sub->end = b->p + *v;
    b->p += *v;
    return 1;
}

TEST(writer_pprof_decodes)
{
    pp_profile p;
    uint8_t *data;
    size_t len;
    pb b, sub, inner;
    unsigned field, f2;
    uint64_t v, v2;
    char strings[64][128];
    int nstr = 0, nsamples = 0, nfunc = 0, nloc = 0, foo_ok = 0;
    uint64_t count = 0, cpu = 0, foo_name = 0, foo_line = 0;

    sample_profile(&p);
    p.time_first_ns = 1000;
    p.time_last_ns = 5000;
    ASSERT_OK(pp_pprof_encode(&p, &data, &len));
    b.p = data;
    b.end = data + len;
    while (pb_next(&b, &field, &v, &sub)) {
        if (field == 6) {
            ASSERT_LT_INT(nstr, 64);
            snprintf(strings[nstr++], 128, "%.*s", (int)v, (const char *)sub.p);
        } else if (field == 2) {
            nsamples++;
            while (pb_next(&sub, &f2, &v2, &inner)) {
                if (f2 == 2) {                       /* packed values */
                    uint64_t c, n;
                    pb_varint(&inner, &c);
                    pb_varint(&inner, &n);
                    count += c;
                    cpu += n;
                }
            }
        } else if (field == 4) {
            nloc++;
        } else if (field == 5) {
            uint64_t id = 0, name = 0, line = 0;
            nfunc++;
            while (pb_next(&sub, &f2, &v2, &inner)) {
                if (f2 == 1) id = v2;
                if (f2 == 2) name = v2;
                if (f2 == 5) line = v2;
            }
            if (id == 2) {
                foo_name = name;
                foo_line = line;
            }
        } else if (field == 10) {
            ASSERT_EQ_UINT(v, 4000);
        }
    }
    ASSERT_TRUE(b.p == b.end);
    ASSERT_EQ_STR(strings[0], "");
    ASSERT_EQ_INT(nsamples, 4);
    ASSERT_EQ_UINT(count, 7);
    ASSERT_EQ_UINT(cpu, 7000);
    ASSERT_EQ_INT(nfunc, 6);
    ASSERT_EQ_INT(nloc, 6);
    ASSERT_LT_INT(foo_name, nstr);
    ASSERT_EQ_STR(strings[foo_name], "foo");
    ASSERT_EQ_UINT(foo_line, 3);
    foo_ok = 1;
    ASSERT_TRUE(foo_ok);
    free(data);
    pp_profile_free(&p);
}

/* Every label of every sample of a labelled profile (sample mode's -a),
 * judged against the thread the sample came from: threads whose tid is
 * not their process's pid (a pid label in place of the tid, or another
 * thread's name, is seen), two processes with their own service and one
 * in a container, and a label of the recording on all. */
TEST(writer_pprof_every_label_of_every_sample)
{
    static const struct {
        int pid, tid;
        const char *thread, *service, *container;
        uint64_t samples;           /* of stack 0 (main <- work) */
    } th[] = {
        {100, 100, "MainThread", "app.py", NULL, 1},
        {100, 107, "pool-1", "app.py", NULL, 2},
        {200, 203, "", "worker.py", "/var/lib/machines/c1", 3},
    };
    pp_profile p;
    uint32_t ids[2];
    uint8_t *data;
    size_t len;
    pb b, sub, inner, lab;
    unsigned field, f2, f3;
    uint64_t v, v2, v3;
    char strings[64][64];
    uint64_t keys[16], vals[16], count[3] = {0, 0, 0};
    int nstr = 0, nsamples = 0;
    /* samples are decoded after the string table is known: kept raw */
    pb samples[16];

    ASSERT_OK(pp_profile_init(&p));
    ids[0] = (uint32_t)F(&p, PP_FRAME_PYTHON, "main", "/app.py", 1);
    ids[1] = (uint32_t)F(&p, PP_FRAME_PYTHON, "work", "/app.py", 5);
    p.labelled = 1;
    ASSERT_OK(pp_profile_label(&p, "env", "prod"));
    p.procs = calloc(2, sizeof(*p.procs));
    ASSERT_TRUE(p.procs != NULL);
    p.nprocs = 2;
    p.procs[0] = (pp_process){.pid = 100, .comm = "python3", .service = "app.py"};
    p.procs[1] = (pp_process){.pid = 200, .comm = "python3", .service = "worker.py",
                              .container = "/var/lib/machines/c1"};
    for (uint32_t t = 0; t < 3; t++) {
        ASSERT_EQ_INT(pp_profile_thread(&p, th[t].pid, th[t].tid, th[t].thread,
                                        strlen(th[t].thread)), t);
        for (uint64_t k = 0; k < th[t].samples; k++)
            ASSERT_TRUE(pp_profile_sample(&p, ids, 2, t, 1000000 * (t * 10 + k + 1),
                                          1000000) >= 0);
    }
    ASSERT_OK(pp_pprof_encode(&p, &data, &len));
    b.p = data;
    b.end = data + len;
    while (pb_next(&b, &field, &v, &sub)) {
        if (field == 6) {
            ASSERT_LT_INT(nstr, 64);
            snprintf(strings[nstr++], 64, "%.*s", (int)v, (const char *)sub.p);
        } else if (field == 2) {
            ASSERT_LT_INT(nsamples, 16);
            samples[nsamples++] = sub;
        }
    }
    ASSERT_EQ_INT(nsamples, 3);                 /* one per stack and thread */
    for (int i = 0; i < nsamples; i++) {
        int nl = 0, t = -1;
        char want[6][2][64], got[6][2][64];
        int nw = 0;
        uint64_t n = 0, weight = 0;

        while (pb_next(&samples[i], &f2, &v2, &inner)) {
            if (f2 == 2) {                              /* its count, its weight */
                ASSERT_TRUE(pb_varint(&inner, &n));
                ASSERT_TRUE(pb_varint(&inner, &weight));
            }
            if (f2 != 3)
                continue;
            ASSERT_LT_INT(nl, 16);
            keys[nl] = vals[nl] = 0;
            lab = inner;
            while (pb_next(&lab, &f3, &v3, &inner)) {
                if (f3 == 1)
                    keys[nl] = v3;
                if (f3 == 2)
                    vals[nl] = v3;
            }
            ASSERT_LT_INT(keys[nl], nstr);
            ASSERT_LT_INT(vals[nl], nstr);
            snprintf(got[nl][0], 64, "%s", strings[keys[nl]]);
            snprintf(got[nl][1], 64, "%s", strings[vals[nl]]);
            nl++;
            ASSERT_LE_INT(nl, 6);
        }
        /* its thread: the one whose tid the sample says */
        for (int k = 0; k < nl; k++)
            if (!strcmp(got[k][0], "tid"))
                for (int x = 0; x < 3; x++)
                    if (atoi(got[k][1]) == th[x].tid)
                        t = x;
        if (t < 0)
            TEST_FAIL_("sample %d: no tid label of a thread of the profile", i);
        count[t] += n;
        if (weight != n * 1000000)
            TEST_FAIL_("thread %d's sample: %llu samples weighing %llu ns, each 1 ms", th[t].tid,
                       (unsigned long long)n, (unsigned long long)weight);
        snprintf(want[nw][0], 64, "service"), snprintf(want[nw++][1], 64, "%s", th[t].service);
        snprintf(want[nw][0], 64, "pid"), snprintf(want[nw++][1], 64, "%d", th[t].pid);
        snprintf(want[nw][0], 64, "tid"), snprintf(want[nw++][1], 64, "%d", th[t].tid);
        if (th[t].thread[0])
            snprintf(want[nw][0], 64, "thread"), snprintf(want[nw++][1], 64, "%s", th[t].thread);
        if (th[t].container)
            snprintf(want[nw][0], 64, "container"),
                snprintf(want[nw++][1], 64, "%s", th[t].container);
        snprintf(want[nw][0], 64, "env"), snprintf(want[nw++][1], 64, "prod");
        for (int k = 0; k < nw || k < nl; k++)
            if (k >= nl || k >= nw || strcmp(got[k][0], want[k][0]) ||
                strcmp(got[k][1], want[k][1]))
                TEST_FAIL_("thread %d's sample, label %d: %s=%s, want %s=%s", th[t].tid, k,
                           k < nl ? got[k][0] : "(none)", k < nl ? got[k][1] : "",
                           k < nw ? want[k][0] : "(none)", k < nw ? want[k][1] : "");
    }
    for (int t = 0; t < 3; t++)                 /* each thread's samples, its own */
        ASSERT_EQ_UINT(count[t], th[t].samples);
    free(data);
    pp_profile_free(&p);
}

TEST(writer_pprof_is_gzip_of_the_encoding)
{
    pp_profile p;
    uint8_t *raw, *gz, out[65536];
    size_t rawlen, gzlen;
    z_stream z;

    sample_profile(&p);
    ASSERT_OK(pp_pprof_encode(&p, &raw, &rawlen));
    gz = (uint8_t *)render(&p, pp_write_pprof, &gzlen);
    ASSERT_TRUE(gzlen > 18 && gz[0] == 0x1f && gz[1] == 0x8b);
    memset(&z, 0, sizeof(z));
    ASSERT_EQ_INT(inflateInit2(&z, 15 + 16), Z_OK);
    z.next_in = gz;
    z.avail_in = (uInt)gzlen;
    z.next_out = out;
    z.avail_out = sizeof(out);
    ASSERT_EQ_INT(inflate(&z, Z_FINISH), Z_STREAM_END);
    ASSERT_EQ_UINT(z.total_out, rawlen);
    ASSERT_EQ_MEM(out, raw, rawlen);
    inflateEnd(&z);
    free(raw);
    free(gz);
    pp_profile_free(&p);
}

/* The Firefox Profiler's markers of a thread are in time order whatever
 * order the profile got them in (an exit read before its start). */
TEST(writer_firefox_markers_in_time_order)
{
    pp_profile p;
    uint32_t f;
    const uint64_t ms = 1000000;
    char *out, *at;

    ASSERT_OK(pp_profile_init(&p));
    f = (uint32_t)F(&p, PP_FRAME_PYTHON, "work", "/w.py", 1);
    ASSERT_EQ_INT(pp_profile_thread(&p, 7, 8, "cruncher-1", 10), 0);
    ASSERT_EQ_INT(pp_profile_sample(&p, &f, 1, 0, 1 * ms, ms), 0);
    ASSERT_EQ_INT(pp_profile_sample(&p, &f, 1, 0, 5 * ms, ms), 0);
    ASSERT_OK(pp_profile_marker(&p, 0, PP_MARKER_PROCESS, 6 * ms, 6 * ms, "thread exit", 11));
    ASSERT_OK(pp_profile_marker(&p, 0, PP_MARKER_PROCESS, 1 * ms, 1 * ms, "thread start", 12));
    ASSERT_OK(pp_profile_marker(&p, 0, PP_MARKER_WAIT, 2 * ms, 3 * ms, "[off-CPU: sleep]", 16));
    out = render(&p, pp_write_firefox, NULL);
    at = strstr(out, "\"markers\":");
    ASSERT_TRUE(at != NULL);
    ASSERT_TRUE(strstr(at, "\"startTime\":[1.000,2.000,6.000]") != NULL);
    ASSERT_TRUE(strstr(at, "\"endTime\":[null,3.000,null]") != NULL);
    ASSERT_TRUE(strstr(at, "\"phase\":[0,1,0]") != NULL);
    ASSERT_TRUE(strstr(at, "\"length\":3}") != NULL);
    free(out);
    pp_profile_free(&p);
}

TEST(writer_formats_table)
{
    ASSERT_EQ_STR(pp_format_find("flamegraph")->ext, ".svg");
    ASSERT_EQ_STR(pp_format_find("html")->ext, ".html");
    ASSERT_EQ_STR(pp_format_find("speedscope")->ext, ".speedscope.json");
    ASSERT_EQ_STR(pp_format_find("pprof")->ext, ".pb.gz");
    ASSERT_EQ_STR(pp_format_find("collapsed")->ext, ".txt");
    ASSERT_TRUE(pp_format_find("perf")->write == NULL);
    ASSERT_TRUE(pp_format_find("svg") == NULL);
    ASSERT_TRUE(pp_format_find(NULL) == NULL);
}

/* ---- a minimal JSON reader for the time-order writers -------------------- */

/* A parsed value; its nodes and strings are allocations kept in a jdoc and
 * freed with it (LeakSanitizer runs these tests under make asan). */
typedef struct jv {
    char t;                        /* 'o'bject, 'a'rray, 's'tring, 'n'umber, 'b'ool, 'z' null */
    double num;                    /* 'n', and 'b' (0 or 1) */
    const char *str;               /* 's': unescaped, \u as UTF-8 */
    struct jv *v;                  /* 'o', 'a': the members */
    const char **k;                /* 'o': their keys */
    size_t n;
} jv;

typedef struct jdoc {
    jv root;
    void **blocks;
    size_t nblocks, cap;
    const char *text, *at;
} jdoc;

static void *jkeep(jdoc *d, void *block)
{
    ASSERT_TRUE(block != NULL);
    if (d->nblocks == d->cap) {
        d->cap = d->cap ? 2 * d->cap : 64;
        d->blocks = realloc(d->blocks, d->cap * sizeof(*d->blocks));
        ASSERT_TRUE(d->blocks != NULL);
    }
    return d->blocks[d->nblocks++] = block;
}

#define JFAIL(d, what)                                                    \
    TEST_FAIL_("JSON byte %ld: %s, at \"%.40s\"", (long)((d)->at - (d)->text), what, (d)->at)

static void jspace(jdoc *d)
{
    while (*d->at == ' ' || *d->at == '\n' || *d->at == '\t' || *d->at == '\r')
        d->at++;
}

static unsigned jhex4(jdoc *d)
{
    unsigned v = 0;

    for (int i = 0; i < 4; i++, d->at++) {
        char c = *d->at;
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')))
            JFAIL(d, "a \\u escape without 4 hex digits");
        v = v * 16 + (unsigned)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
    }
    return v;
}

static const char *jstring(jdoc *d)
{
    size_t cap = 1, n = 0;
    char *out;

    /* its escaped length bounds its text's (\uXXXX is 6 bytes, at most 3
     * in UTF-8; a surrogate pair 12, 4) */
    while (d->at[cap] && d->at[cap] != '"')
        cap += d->at[cap] == '\\' && d->at[cap + 1] ? 2 : 1;
    out = jkeep(d, malloc(cap));

    d->at++;                                          /* the opening quote */
    while (*d->at != '"') {
        unsigned c = (unsigned char)*d->at++;

        if (!c || c < 0x20)
            JFAIL(d, "a string not closed, or a raw control character in it");
        if (c != '\\') {
            out[n++] = (char)c;
            continue;
        }
        c = (unsigned char)*d->at++;
        if (c == 'u') {
            c = jhex4(d);
            if (c >= 0xd800 && c < 0xdc00 && d->at[0] == '\\' && d->at[1] == 'u') {
                d->at += 2;
                c = 0x10000 + ((c - 0xd800) << 10) + (jhex4(d) - 0xdc00);
            }
            if (c < 0x80) {
                out[n++] = (char)c;
            } else if (c < 0x800) {
                out[n++] = (char)(0xc0 | c >> 6);
                out[n++] = (char)(0x80 | (c & 0x3f));
            } else if (c < 0x10000) {
                out[n++] = (char)(0xe0 | c >> 12);
                out[n++] = (char)(0x80 | (c >> 6 & 0x3f));
                out[n++] = (char)(0x80 | (c & 0x3f));
            } else {
                out[n++] = (char)(0xf0 | c >> 18);
                out[n++] = (char)(0x80 | (c >> 12 & 0x3f));
                out[n++] = (char)(0x80 | (c >> 6 & 0x3f));
                out[n++] = (char)(0x80 | (c & 0x3f));
            }
            continue;
        }
        out[n++] = c == 'n' ? '\n' : c == 't' ? '\t' : c == 'r' ? '\r' : c == 'b' ? '\b'
                   : c == 'f' ? '\f' : (char)c;
        if (!strchr("\"\\/ntrbf", (int)c))
            JFAIL(d, "an unknown escape");
    }
    d->at++;
    out[n] = '\0';
    return out;
}

static void jvalue(jdoc *d, jv *out);

/* The members of an array or object, to its closing bracket. */
static void jmembers(jdoc *d, jv *out, char close)
{
    size_t cap = 0;

    out->n = 0;
    out->v = NULL;
    out->k = NULL;
    d->at++;
    jspace(d);
    if (*d->at == close) {
        d->at++;
        return;
    }
    for (;;) {
        if (out->n == cap) {
            cap = cap ? 2 * cap : 8;
            out->v = realloc(out->v, cap * sizeof(*out->v));
            out->k = realloc(out->k, cap * sizeof(*out->k));
            ASSERT_TRUE(out->v && out->k);
        }
        jspace(d);
        out->k[out->n] = NULL;
        if (close == '}') {
            if (*d->at != '"')
                JFAIL(d, "an object's key is not a string");
            out->k[out->n] = jstring(d);
            jspace(d);
            if (*d->at++ != ':')
                JFAIL(d, "no ':' after a key");
        }
        jvalue(d, &out->v[out->n++]);
        jspace(d);
        if (*d->at == ',') {
            d->at++;
            continue;
        }
        if (*d->at++ != close)
            JFAIL(d, close == '}' ? "an object not closed" : "an array not closed");
        break;
    }
    jkeep(d, out->v);
    jkeep(d, out->k);
}

static void jvalue(jdoc *d, jv *out)
{
    char *end;

    memset(out, 0, sizeof(*out));
    jspace(d);
    if (*d->at == '{' || *d->at == '[') {
        out->t = *d->at == '{' ? 'o' : 'a';
        jmembers(d, out, *d->at == '{' ? '}' : ']');
    } else if (*d->at == '"') {
        out->t = 's';
        out->str = jstring(d);
    } else if (!strncmp(d->at, "true", 4) || !strncmp(d->at, "false", 5)) {
        out->t = 'b';
        out->num = *d->at == 't';
        d->at += *d->at == 't' ? 4 : 5;
    } else if (!strncmp(d->at, "null", 4)) {
        out->t = 'z';
        d->at += 4;
    } else {
        out->t = 'n';
        out->num = strtod(d->at, &end);
        if (end == d->at || !(*d->at == '-' || (*d->at >= '0' && *d->at <= '9')))
            JFAIL(d, "not a JSON value");
        d->at = end;
    }
}

/* The whole text as one value, nothing after it. */
static void jparse(jdoc *d, const char *text)
{
    memset(d, 0, sizeof(*d));
    d->text = d->at = text;
    jvalue(d, &d->root);
    jspace(d);
    if (*d->at)
        JFAIL(d, "text after the value");
}

static void jdoc_free(jdoc *d)
{
    for (size_t i = 0; i < d->nblocks; i++)
        free(d->blocks[i]);
    free(d->blocks);
}

static const jv *jget(const jv *o, const char *key)
{
    if (o->t != 'o')
        TEST_FAIL_("JSON: looking for \"%s\" in a value that is not an object", key);
    for (size_t i = 0; i < o->n; i++)
        if (!strcmp(o->k[i], key))
            return &o->v[i];
    TEST_FAIL_("JSON: no key \"%s\"", key);
}

static const jv *jat(const jv *a, size_t i)
{
    if (a->t != 'a' || i >= a->n)
        TEST_FAIL_("JSON: no element %zu (%s of %zu)", i, a->t == 'a' ? "an array" : "not an array",
                   a->n);
    return &a->v[i];
}

static double jnum(const jv *v)
{
    if (v->t != 'n')
        TEST_FAIL_("JSON: a '%c' where a number was wanted", v->t);
    return v->num;
}

static const char *jstr(const jv *v)
{
    if (v->t != 's')
        TEST_FAIL_("JSON: a '%c' where a string was wanted", v->t);
    return v->str;
}

/* An array's length, which must be n. */
static size_t jlen(const jv *a, size_t n, const char *what)
{
    if (a->t != 'a' || a->n != n)
        TEST_FAIL_("%s: %zu elements, want %zu", what, a->t == 'a' ? a->n : 0, n);
    return n;
}

/* Appends a formatted line to a growing text (what the writers' output
 * reads as, compared whole with what it should read). */
static void addf(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void addf(char *buf, size_t cap, const char *fmt, ...)
{
    size_t n = strlen(buf);
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf + n, cap - n, fmt, ap);
    va_end(ap);
}

/* ---- the time-order writers: speedscope and the Firefox Profiler ---------- */

#define MS 1000000ull                  /* ns */
#define T0 (1000 * MS)                 /* the first sample's span starts here */

/* A wall-clock profile of two processes and three threads whose tids are
 * not their pids but the main thread's, each with its own shape: runs of
 * one stack, a wait (a marked stack) and a gap between samples, samples of
 * 1 and 2 ms, markers stored on threads (a process start before the first
 * sample, a GIL wait, an exit) and a thread known only by a marker.
 *
 *   ms from T0       0    1    2    3    4    5    6    7    8    9
 *   MainThread 100   |main;work |mc |  [off-CPU: sleep] (5 ms) |work|
 *   pool-1 107                 |sys|main|  gap    |main|
 *   crunch 203 (pid 200)                 |memcpy 2 ms|memcpy 2 ms|
 *
 * main;work = main <- work, mc = main <- work <- memcpy, sys = main <-
 * do_syscall_64. Stacks and frames are numbered in order of first sight. */
static void timed_profile(pp_profile *p)
{
    static const struct {
        uint32_t thread, stack;
        uint64_t at_ms, weight_ms;
    } log[] = {
        {0, 0, 1, 1}, {0, 0, 2, 1}, {0, 1, 3, 1}, {1, 2, 3, 1}, {1, 3, 4, 1},
        {2, 1, 6, 2}, {1, 3, 7, 1}, {0, 4, 8, 5}, {2, 1, 8, 2}, {0, 0, 9, 1},
    };
    uint32_t main_, work, mc, sys, sleep_;
    uint32_t stacks[5][3];
    size_t depth[5];

    ASSERT_OK(pp_profile_init(p));
    snprintf(p->program, sizeof(p->program), "app");
    snprintf(p->event, sizeof(p->event), "wall-clock");
    p->value = PP_VALUE_WALL;
    p->period_ns = MS;
    main_ = (uint32_t)F(p, PP_FRAME_PYTHON, "main", "/app.py", 1);
    work = (uint32_t)F(p, PP_FRAME_PYTHON, "work", "/app.py", 5);
    mc = (uint32_t)F(p, PP_FRAME_NATIVE, "memcpy", "/usr/lib/libc.so.6", 0);
    sys = (uint32_t)F(p, PP_FRAME_KERNEL, "do_syscall_64", "[kernel.kallsyms]", 0);
    sleep_ = (uint32_t)F(p, PP_FRAME_MARKER, "[off-CPU: sleep]", NULL, 0);
    memcpy(stacks, (uint32_t[5][3]){{main_, work}, {main_, work, mc}, {main_, sys}, {main_},
                                    {main_, sleep_}}, sizeof(stacks));
    memcpy(depth, (size_t[5]){2, 3, 2, 1, 2}, sizeof(depth));
    p->procs = calloc(2, sizeof(*p->procs));
    ASSERT_TRUE(p->procs != NULL);
    p->nprocs = 2;
    p->procs[0] = (pp_process){.pid = 100, .comm = "python3"};
    p->procs[1] = (pp_process){.pid = 200, .comm = "worker"};
    ASSERT_EQ_INT(pp_profile_thread(p, 100, 100, "MainThread", 10), 0);
    ASSERT_EQ_INT(pp_profile_thread(p, 100, 107, "pool-1", 6), 1);
    ASSERT_EQ_INT(pp_profile_thread(p, 200, 203, "crunch", 6), 2);
    ASSERT_EQ_INT(pp_profile_thread(p, 200, 204, "idle", 4), 3);
    for (size_t i = 0; i < sizeof(log) / sizeof(log[0]); i++)
        ASSERT_EQ_INT(pp_profile_sample(p, stacks[log[i].stack], depth[log[i].stack],
                                        log[i].thread, T0 + log[i].at_ms * MS,
                                        log[i].weight_ms * MS), log[i].stack);
    ASSERT_OK(pp_profile_stack_wait(p, 4, PP_MARKER_WAIT, "[off-CPU: sleep]"));
    ASSERT_OK(pp_profile_marker(p, 2, PP_MARKER_PROCESS, T0 + 9 * MS, T0 + 9 * MS,
                                "process exit", 12));
    ASSERT_OK(pp_profile_marker(p, 1, PP_MARKER_GIL, T0 + 4 * MS, T0 + 6 * MS,
                                "[off-CPU: GIL]", 14));
    ASSERT_OK(pp_profile_marker(p, 2, PP_MARKER_PROCESS, T0 - MS, T0 - MS, "process start", 13));
    ASSERT_OK(pp_profile_marker(p, 3, PP_MARKER_PROCESS, T0 + 2 * MS, T0 + 2 * MS,
                                "thread start", 12));
    p->time_first_ns = T0 + MS;
    p->time_last_ns = T0 + 9 * MS;
    ASSERT_EQ_UINT(p->time_base_ns, T0);
}

/* No speedscope sample shorter than a hundredth of the period (10 us of a
 * 1 ms period here): a span that short (timer jitter, a sample overlapping
 * the one before) joins the span before it, or the next when it is its
 * thread's first, and each thread's samples still end where they did.
 *
 *   thread 0  [A 1 ms][B 3 us][gap 97 us][A 1 ms][gap 8 us][B 100 us]
 *   thread 1  [B 4 us][A 1 ms]
 */
TEST(writer_speedscope_no_sample_shorter_than_a_hundredth_of_the_period)
{
    static const char *const want[] = {
        "1003 main;work\n97 (not sampled)\n1008 main;work\n100 main;work;memcpy\n",
        "1004 main;work\n",
    };
    pp_profile p;
    uint32_t m, w, c, st[2][3];
    jdoc d;
    char *out, text[1024];
    const jv *profiles, *frames;

    ASSERT_OK(pp_profile_init(&p));
    p.value = PP_VALUE_WALL;
    p.period_ns = MS;
    m = (uint32_t)F(&p, PP_FRAME_PYTHON, "main", "/app.py", 1);
    w = (uint32_t)F(&p, PP_FRAME_PYTHON, "work", "/app.py", 5);
    c = (uint32_t)F(&p, PP_FRAME_NATIVE, "memcpy", "/usr/lib/libc.so.6", 0);
    memcpy(st, (uint32_t[2][3]){{m, w}, {m, w, c}}, sizeof(st));
    ASSERT_EQ_INT(pp_profile_thread(&p, 1, 1, "a", 1), 0);
    ASSERT_EQ_INT(pp_profile_thread(&p, 1, 2, "b", 1), 1);
    ASSERT_EQ_INT(pp_profile_sample(&p, st[0], 2, 0, T0 + MS, MS), 0);
    ASSERT_EQ_INT(pp_profile_sample(&p, st[1], 3, 0, T0 + MS + 3000, 3000), 1);
    ASSERT_EQ_INT(pp_profile_sample(&p, st[0], 2, 0, T0 + 2100000, MS), 0);
    ASSERT_EQ_INT(pp_profile_sample(&p, st[1], 3, 0, T0 + 2208000, 100000), 1);
    ASSERT_EQ_INT(pp_profile_sample(&p, st[1], 3, 1, T0 + 5 * MS, 4000), 1);
    ASSERT_EQ_INT(pp_profile_sample(&p, st[0], 2, 1, T0 + 6 * MS, MS), 0);
    p.time_first_ns = T0 + MS;
    p.time_last_ns = T0 + 6 * MS;
    out = render(&p, pp_write_speedscope, NULL);
    jparse(&d, out);
    frames = jget(jget(&d.root, "shared"), "frames");
    profiles = jget(&d.root, "profiles");
    jlen(profiles, 2, "speedscope's profiles");
    for (size_t t = 0; t < 2; t++) {
        const jv *pr = jat(profiles, t), *samples = jget(pr, "samples");
        const jv *weights = jget(pr, "weights");
        double at = jnum(jget(pr, "startValue")), start = t ? (5 * MS - 4000) / 1000 : 0;
        text[0] = '\0';
        for (size_t i = 0; i < samples->n; i++) {
            const jv *x = jat(samples, i);
            addf(text, sizeof(text), "%.0f ", jnum(jat(weights, i)));
            if (!x->n)
                addf(text, sizeof(text), "(not sampled)");
            for (size_t k = 0; k < x->n; k++)
                addf(text, sizeof(text), "%s%s", k ? ";" : "",
                     jstr(jget(jat(frames, (size_t)jnum(jat(x, k))), "name")));
            addf(text, sizeof(text), "\n");
            at += jnum(jat(weights, i));
        }
        ASSERT_SAME_TEXT(t ? "thread b's samples" : "thread a's samples", text, want[t]);
        /* where each thread's samples start and end: where its spans did */
        if (jnum(jget(pr, "startValue")) != start || at != jnum(jget(pr, "endValue")) ||
            at != (t ? 6.0 * MS / 1000 : 2208.0))
            TEST_FAIL_("thread %zu: from %.0f to %.0f (endValue %.0f)", t,
                       jnum(jget(pr, "startValue")), at, jnum(jget(pr, "endValue")));
    }
    jdoc_free(&d);
    free(out);
    pp_profile_free(&p);
}

/* A wait logged second but begun first: thread b's first sample, 3 ms
 * after thread a's, weighs 5 ms, so its span begins 2 ms before the log's
 * base. Its profile starts at 0 (before: startValue wrapped to 2^64 - 2
 * ms), its weights still summing to endValue - startValue. */
TEST(writer_speedscope_a_wait_begun_before_the_first_sample_starts_at_zero)
{
    pp_profile p;
    uint32_t st[1];
    jdoc d;
    char *out;
    const jv *profiles;

    ASSERT_OK(pp_profile_init(&p));
    p.value = PP_VALUE_WALL;
    p.period_ns = MS;
    st[0] = (uint32_t)F(&p, PP_FRAME_PYTHON, "main", "/app.py", 1);
    ASSERT_EQ_INT(pp_profile_thread(&p, 1, 1, "a", 1), 0);
    ASSERT_EQ_INT(pp_profile_thread(&p, 1, 2, "b", 1), 1);
    ASSERT_EQ_INT(pp_profile_sample(&p, st, 1, 0, T0 + MS, MS), 0);
    ASSERT_EQ_INT(pp_profile_sample(&p, st, 1, 1, T0 + 3 * MS, 5 * MS), 0);
    p.time_first_ns = T0 + MS;
    p.time_last_ns = T0 + 3 * MS;
    out = render(&p, pp_write_speedscope, NULL);
    jparse(&d, out);
    profiles = jget(&d.root, "profiles");
    jlen(profiles, 2, "speedscope's profiles");
    for (size_t t = 0; t < 2; t++) {
        const jv *pr = jat(profiles, t), *weights = jget(pr, "weights");
        double sum = 0;

        for (size_t i = 0; i < weights->n; i++)
            sum += jnum(jat(weights, i));
        if (jnum(jget(pr, "startValue")) != 0 ||
            jnum(jget(pr, "endValue")) - jnum(jget(pr, "startValue")) != sum)
            TEST_FAIL_("thread %zu: startValue %.0f, endValue %.0f, weights %.0f", t,
                       jnum(jget(pr, "startValue")), jnum(jget(pr, "endValue")), sum);
    }
    jdoc_free(&d);
    free(out);
    pp_profile_free(&p);
}

/* speedscope's file read as speedscope reads it: every frame's name, file
 * and line; a profile per thread (a marker's thread has none), named by
 * its thread and process, in microseconds, its samples laid end to end from
 * its startValue by their weights (each run's and gap's start and end, to
 * the microsecond), ending at its endValue. */
TEST(writer_speedscope_every_frame_thread_run_and_time)
{
    static const char *const frames_want =
        "main /app.py:1\n"
        "work /app.py:5\n"
        "memcpy /usr/lib/libc.so.6\n"
        "do_syscall_64 [kernel.kallsyms]\n"
        "[off-CPU: sleep]\n";
    static const struct {
        const char *name, *runs;
    } want[] = {
        {"MainThread (tid 100), python3 (pid 100)",
         "0.000-2.000 main;work\n"
         "2.000-3.000 main;work;memcpy\n"
         "3.000-8.000 main;[off-CPU: sleep]\n"
         "8.000-9.000 main;work\n"},
        {"pool-1 (tid 107), python3 (pid 100)",
         "2.000-3.000 main;do_syscall_64\n"
         "3.000-4.000 main\n"
         "4.000-6.000 (not sampled)\n"
         "6.000-7.000 main\n"},
        {"crunch (tid 203), worker (pid 200)",
         "4.000-8.000 main;work;memcpy\n"},
    };
    pp_profile p;
    jdoc d;
    char *out, text[4096], what[128];
    const jv *frames, *profiles;

    timed_profile(&p);
    out = render(&p, pp_write_speedscope, NULL);
    jparse(&d, out);
    ASSERT_EQ_STR(jstr(jget(&d.root, "$schema")),
                  "https://www.speedscope.app/file-format-schema.json");
    ASSERT_EQ_STR(jstr(jget(&d.root, "name")), "app");
    frames = jget(jget(&d.root, "shared"), "frames");
    text[0] = '\0';
    for (size_t i = 0; i < frames->n; i++) {
        const jv *f = jat(frames, i);
        addf(text, sizeof(text), "%s", jstr(jget(f, "name")));
        for (size_t k = 0; k < f->n; k++)
            if (!strcmp(f->k[k], "file"))
                addf(text, sizeof(text), " %s", jstr(&f->v[k]));
        for (size_t k = 0; k < f->n; k++)
            if (!strcmp(f->k[k], "line"))
                addf(text, sizeof(text), ":%g", jnum(&f->v[k]));
        addf(text, sizeof(text), "\n");
    }
    ASSERT_SAME_TEXT("speedscope's frames", text, frames_want);       /* name file:line */
    profiles = jget(&d.root, "profiles");
    jlen(profiles, 3, "speedscope's profiles (one per thread with samples)");
    for (size_t t = 0; t < 3; t++) {
        const jv *pr = jat(profiles, t);
        const jv *samples = jget(pr, "samples"), *weights = jget(pr, "weights");
        double at = jnum(jget(pr, "startValue"));

        ASSERT_EQ_STR(jstr(jget(pr, "type")), "sampled");
        if (strcmp(jstr(jget(pr, "name")), want[t].name) || strcmp(jstr(jget(pr, "unit")),
                                                                   "microseconds"))
            TEST_FAIL_("profile %zu is \"%s\" in %s, want \"%s\" in microseconds", t,
                       jstr(jget(pr, "name")), jstr(jget(pr, "unit")), want[t].name);
        jlen(weights, samples->n, "its weights (one per sample)");
        text[0] = '\0';
        for (size_t i = 0; i < samples->n; i++) {
            const jv *s = jat(samples, i);
            double w = jnum(jat(weights, i));

            addf(text, sizeof(text), "%.3f-%.3f ", at / 1e3, (at + w) / 1e3);
            if (!s->n)
                addf(text, sizeof(text), "(not sampled)");
            for (size_t k = 0; k < s->n; k++) {
                size_t f = (size_t)jnum(jat(s, k));
                addf(text, sizeof(text), "%s%s", k ? ";" : "", jstr(jget(jat(frames, f), "name")));
            }
            addf(text, sizeof(text), "\n");
            at += w;
        }
        snprintf(what, sizeof(what), "%s's runs", want[t].name);        /* ms */
        ASSERT_SAME_TEXT(what, text, want[t].runs);
        if (jnum(jget(pr, "endValue")) != at)
            TEST_FAIL_("%s: endValue %.0f, its samples end at %.0f", want[t].name,
                       jnum(jget(pr, "endValue")), at);
    }
    jdoc_free(&d);
    free(out);
    pp_profile_free(&p);
}

/* A profile of MainThread and n workers "worker-1".."worker-n" (tids 1,
 * 2, 3, ...): MainThread [B 1 ms], worker-1 [A 1 ms], worker-2 three
 * spans of 1.4 us [A][B][A], every later worker [B 1.4 us]. */
static void workers_profile(pp_profile *p, uint32_t n)
{
    uint32_t m, w, c, st[2][3];

    ASSERT_OK(pp_profile_init(p));
    p->value = PP_VALUE_WALL;
    p->period_ns = 100000;            /* no span is short enough to be merged */
    m = (uint32_t)F(p, PP_FRAME_PYTHON, "main", "/app.py", 1);
    w = (uint32_t)F(p, PP_FRAME_PYTHON, "work", "/app.py", 5);
    c = (uint32_t)F(p, PP_FRAME_NATIVE, "memcpy", "/usr/lib/libc.so.6", 0);
    memcpy(st, (uint32_t[2][3]){{m, w}, {m, w, c}}, sizeof(st));
    ASSERT_EQ_INT(pp_profile_thread(p, 1, 1, "MainThread", 10), 0);
    ASSERT_EQ_INT(pp_profile_sample(p, st[1], 3, 0, T0 + MS, MS), 0);
    for (uint32_t i = 1; i <= n; i++) {
        char name[32];
        int len = snprintf(name, sizeof(name), "worker-%u", i);

        ASSERT_EQ_INT(pp_profile_thread(p, 1, (int32_t)i + 1, name, (size_t)len), i);
        if (i == 1) {
            ASSERT_EQ_INT(pp_profile_sample(p, st[0], 2, i, T0 + MS, MS), 1);
        } else if (i == 2) {
            ASSERT_EQ_INT(pp_profile_sample(p, st[0], 2, i, T0 + MS + 1400, 1400), 1);
            ASSERT_EQ_INT(pp_profile_sample(p, st[1], 3, i, T0 + MS + 2800, 1400), 0);
            ASSERT_EQ_INT(pp_profile_sample(p, st[0], 2, i, T0 + MS + 4200, 1400), 1);
        } else {
            ASSERT_EQ_INT(pp_profile_sample(p, st[1], 3, i, T0 + 2 * MS, 1400), 0);
        }
    }
    p->time_first_ns = T0 + MS;
    p->time_last_ns = T0 + 2 * MS;
}

/* "name: weight stack\n..." of each of speedscope's profiles, checking
 * that each one's weights sum to endValue - startValue. */
static void speedscope_tracks(const char *out, char *text, size_t cap, size_t *nprofiles)
{
    const jv *profiles, *frames;
    jdoc d;

    jparse(&d, out);
    frames = jget(jget(&d.root, "shared"), "frames");
    profiles = jget(&d.root, "profiles");
    *nprofiles = profiles->n;
    text[0] = '\0';
    for (size_t t = 0; t < profiles->n; t++) {
        const jv *pr = jat(profiles, t), *samples = jget(pr, "samples");
        const jv *weights = jget(pr, "weights");
        double sum = 0;

        addf(text, cap, "%s:", jstr(jget(pr, "name")));
        for (size_t i = 0; i < samples->n; i++) {
            const jv *x = jat(samples, i);

            addf(text, cap, " %.0f ", jnum(jat(weights, i)));
            for (size_t k = 0; k < x->n; k++)
                addf(text, cap, "%s%s", k ? ";" : "",
                     jstr(jget(jat(frames, (size_t)jnum(jat(x, k))), "name")));
            sum += jnum(jat(weights, i));
        }
        addf(text, cap, "\n");
        if (jnum(jget(pr, "endValue")) - jnum(jget(pr, "startValue")) != sum)
            TEST_FAIL_("%s: endValue - startValue %.0f, weights %.0f", jstr(jget(pr, "name")),
                       jnum(jget(pr, "endValue")) - jnum(jget(pr, "startValue")), sum);
    }
    jdoc_free(&d);
}

/* More than 16 threads named alike share one speedscope profile, as they
 * share a root: worker-1's spans, then worker-2's, ... (the order they
 * began), named by the pattern and how many threads; 16 keep one each,
 * named as threading named them; `--threads split` (pp_write_opts) gives
 * each its own however many. Weights are whole microseconds, each sample
 * ending at its exact end rounded: the fifteen later workers' 1.4 us
 * spans, one after another, weigh 2, 1, 2, 1, 1, ...: their 21 us, none
 * 0 (each rounded alone: 1 each, 15 us, and the track ends early). */
TEST(writer_speedscope_many_threads_named_alike_share_a_profile)
{
    static const char *const shared =
        "MainThread (tid 1): 1000 main;work;memcpy\n"
        "worker-* (17 threads): 1000 main;work 1 main;work 2 main;work;memcpy 1 main;work"
        " 2 main;work;memcpy 1 main;work;memcpy 2 main;work;memcpy 1 main;work;memcpy"
        " 1 main;work;memcpy 2 main;work;memcpy 1 main;work;memcpy 2 main;work;memcpy"
        " 1 main;work;memcpy 1 main;work;memcpy 2 main;work;memcpy 1 main;work;memcpy"
        " 2 main;work;memcpy 1 main;work;memcpy 1 main;work;memcpy\n";
    static const char *const head_of_own =
        "MainThread (tid 1): 1000 main;work;memcpy\n"
        "worker-1 (tid 2): 1000 main;work\n"
        "worker-2 (tid 3): 1 main;work 2 main;work;memcpy 1 main;work\n"
        "worker-3 (tid 4): 1 main;work;memcpy\n";
    pp_write_opts split = {.threads = PP_THREAD_ROOTS_SPLIT};
    pp_profile p;
    char *out, text[8192];
    size_t n;

    workers_profile(&p, 17);
    out = render(&p, pp_write_speedscope, NULL);
    speedscope_tracks(out, text, sizeof(text), &n);
    ASSERT_SAME_TEXT("17 workers' profiles", text, shared);
    free(out);
    out = render_with(&p, pp_write_speedscope, &split, NULL);
    speedscope_tracks(out, text, sizeof(text), &n);
    ASSERT_EQ_UINT(n, 18);
    if (strlen(text) > strlen(head_of_own))
        text[strlen(head_of_own)] = '\0';
    ASSERT_SAME_TEXT("17 workers' profiles, --threads split", text, head_of_own);
    free(out);
    pp_profile_free(&p);

    workers_profile(&p, 16);
    out = render(&p, pp_write_speedscope, NULL);
    speedscope_tracks(out, text, sizeof(text), &n);
    ASSERT_EQ_UINT(n, 17);
    if (strlen(text) > strlen(head_of_own))
        text[strlen(head_of_own)] = '\0';
    ASSERT_SAME_TEXT("16 workers' profiles", text, head_of_own);
    free(out);
    pp_profile_free(&p);
}

/* The Firefox Profiler's name of stack node `node`, root first: its
 * functions' names joined by ';'. */
static void firefox_stack(const jv *shared, const jv *strings, const jv *node, char *buf,
                          size_t cap)
{
    const jv *st = jget(shared, "stackTable"), *frame = jget(st, "frame");
    const jv *prefix = jget(st, "prefix");
    const jv *func = jget(jget(shared, "frameTable"), "func");
    const jv *names = jget(jget(shared, "funcTable"), "name");
    size_t chain[32], n = 0;

    buf[0] = '\0';
    if (node->t == 'z') {
        snprintf(buf, cap, "-");
        return;
    }
    for (const jv *at = node; at->t != 'z'; at = jat(prefix, (size_t)jnum(at))) {
        if (n == 32)
            TEST_FAIL_("a stack deeper than 32 (a loop in stackTable.prefix?)");
        chain[n++] = (size_t)jnum(jat(frame, (size_t)jnum(at)));
    }
    while (n--) {
        size_t f = (size_t)jnum(jat(func, chain[n]));
        addf(buf, cap, "%s%s", buf[0] ? ";" : "",
             jstr(jat(strings, (size_t)jnum(jat(names, f)))));
    }
}

/* The Firefox Profiler's file read as the profiler reads it: every frame's
 * function, file (resource and source), line and category (its colour);
 * a track per thread with samples, with its name, process, pid, tid and
 * main-thread flag; every sample's time, stack and weight (in periods of
 * a wall-clock profile: 2 for a 2 ms sample), the gaps with no stack; every
 * marker's name, start, end or instant, and category; times in ms from the
 * recording's start, a process start before the first sample. */
TEST(writer_firefox_every_frame_track_sample_and_marker)
{
    static const char *const frames_want =
        "main | app.py | /app.py:1 | Python | JS\n"
        "work | app.py | /app.py:5 | Python | JS\n"
        "memcpy | libc.so.6 | - | Native | -\n"
        "do_syscall_64 | [kernel.kallsyms] | - | Kernel | -\n"
        "[off-CPU: sleep] | - | - | Other | -\n";
    static const struct {
        const char *track, *samples, *markers;
    } want[] = {
        {"MainThread | python3 | pid 100 | tid 100 | main thread | 1.000 to 10.000",
         "1.000 main;work 1\n"
         "2.000 main;work 1\n"
         "3.000 main;work;memcpy 1\n"
         "4.000 main;[off-CPU: sleep] 5\n"
         "9.000 main;work 1\n"
         "10.000 - 0\n",
         "4.000 to 9.000 [off-CPU: sleep] Wait\n"},
        {"pool-1 | python3 | pid 100 | tid 107 | not main | 3.000 to 8.000",
         "3.000 main;do_syscall_64 1\n"
         "4.000 main 1\n"
         "5.000 - 0\n"
         "6.999 - 0\n"
         "7.000 main 1\n"
         "8.000 - 0\n",
         "5.000 to 7.000 [off-CPU: GIL] GIL\n"},
        {"crunch | worker | pid 200 | tid 203 | not main | 5.000 to 9.000",
         "5.000 main;work;memcpy 2\n"
         "7.000 main;work;memcpy 2\n"
         "9.000 - 0\n",
         "0.000 instant process start Process\n"
         "10.000 instant process exit Process\n"},
    };
    pp_profile p;
    jdoc d;
    char *out, text[4096], stack[512], what[128];
    const jv *meta, *cats, *shared, *strings, *ft, *fn, *threads;

    timed_profile(&p);
    out = render(&p, pp_write_firefox, NULL);
    jparse(&d, out);
    meta = jget(&d.root, "meta");
    ASSERT_EQ_INT(jnum(jget(meta, "preprocessedProfileVersion")), 61);
    ASSERT_EQ_STR(jstr(jget(meta, "product")), "app");
    ASSERT_EQ_INT(jnum(jget(meta, "interval")) * 1000, 1000);          /* 1 ms */
    /* the last sample or marker (the exit at 10 ms) and one interval */
    ASSERT_EQ_INT(jnum(jget(meta, "profilingEndTime")) * 1000, 11000);
    cats = jget(meta, "categories");
    shared = jget(&d.root, "shared");
    strings = jget(shared, "stringArray");
    ft = jget(shared, "frameTable");
    fn = jget(shared, "funcTable");
    text[0] = '\0';
    for (size_t i = 0; i < jlen(jget(ft, "func"), p.nframes, "frameTable.func"); i++) {
        size_t f = (size_t)jnum(jat(jget(ft, "func"), i));
        const jv *res = jat(jget(fn, "resource"), f), *src = jat(jget(fn, "source"), f);
        const jv *line = jat(jget(ft, "line"), i), *def = jat(jget(fn, "lineNumber"), f);
        const char *cat = jstr(jget(jat(cats, (size_t)jnum(jat(jget(ft, "category"), i))),
                                    "name"));

        addf(text, sizeof(text), "%s | ", jstr(jat(strings, (size_t)jnum(jat(jget(fn, "name"), f)))));
        if (jnum(res) < 0)
            addf(text, sizeof(text), "- | ");
        else
            addf(text, sizeof(text), "%s | ", jstr(jat(strings, (size_t)jnum(jat(jget(
                jget(shared, "resourceTable"), "name"), (size_t)jnum(res))))));
        if (src->t == 'z')
            addf(text, sizeof(text), "-");
        else
            addf(text, sizeof(text), "%s", jstr(jat(strings, (size_t)jnum(jat(jget(
                jget(shared, "sources"), "filename"), (size_t)jnum(src))))));
        if (line->t != 'z')
            addf(text, sizeof(text), ":%g", jnum(line));
        addf(text, sizeof(text), " | %s | %s\n", cat,
             jat(jget(fn, "isJS"), f)->num ? "JS" : "-");
        /* the function's line (its def) is its frame's, where there is one */
        if ((line->t == 'z') != (def->t == 'z') || (line->t != 'z' && jnum(line) != jnum(def)))
            TEST_FAIL_("frame %zu: line %s, its function's lineNumber %s", i,
                       line->t == 'z' ? "null" : "a number", def->t == 'z' ? "null" : "another");
    }
    /* function | resource | source:line | category | JS */
    ASSERT_SAME_TEXT("the Firefox Profiler's frames", text, frames_want);
    threads = jget(&d.root, "threads");
    jlen(threads, 3, "the Firefox Profiler's threads (one per thread with samples)");
    for (size_t t = 0; t < 3; t++) {
        const jv *th = jat(threads, t), *s = jget(th, "samples"), *m = jget(th, "markers");
        size_t n;

        text[0] = '\0';
        addf(text, sizeof(text), "%s | %s | pid %s | tid %g | %s | %.3f to %.3f",
             jstr(jget(th, "name")), jstr(jget(th, "processName")), jstr(jget(th, "pid")),
             jnum(jget(th, "tid")), jget(th, "isMainThread")->num ? "main thread" : "not main",
             jnum(jget(th, "registerTime")), jnum(jget(th, "unregisterTime")));
        if (strcmp(text, want[t].track) != 0)
            TEST_FAIL_("track %zu is \"%s\", want \"%s\"", t, text, want[t].track);
        ASSERT_TRUE(jnum(jget(th, "processStartupTime")) == jnum(jget(th, "registerTime")));
        n = jlen(jget(s, "stack"), (size_t)jnum(jget(s, "length")), "samples.stack");
        jlen(jget(s, "time"), n, "samples.time");
        jlen(jget(s, "weight"), n, "samples.weight");
        ASSERT_EQ_STR(jstr(jget(s, "weightType")), "samples");
        text[0] = '\0';
        for (size_t i = 0; i < n; i++) {
            firefox_stack(shared, strings, jat(jget(s, "stack"), i), stack, sizeof(stack));
            addf(text, sizeof(text), "%.3f %s %g\n", jnum(jat(jget(s, "time"), i)), stack,
                 jnum(jat(jget(s, "weight"), i)));
        }
        snprintf(what, sizeof(what), "%.*s's samples", (int)strcspn(want[t].track, " "),
                 want[t].track);                   /* ms, stack, weight */
        ASSERT_SAME_TEXT(what, text, want[t].samples);
        n = jlen(jget(m, "name"), (size_t)jnum(jget(m, "length")), "markers.name");
        jlen(jget(m, "data"), n, "markers.data");
        text[0] = '\0';
        for (size_t i = 0; i < n; i++) {
            const jv *end = jat(jget(m, "endTime"), i);
            int phase = (int)jnum(jat(jget(m, "phase"), i));

            addf(text, sizeof(text), "%.3f ", jnum(jat(jget(m, "startTime"), i)));
            if (end->t == 'z')
                addf(text, sizeof(text), "instant ");
            else
                addf(text, sizeof(text), "to %.3f ", jnum(end));
            addf(text, sizeof(text), "%s %s\n",
                 jstr(jat(strings, (size_t)jnum(jat(jget(m, "name"), i)))),
                 jstr(jget(jat(cats, (size_t)jnum(jat(jget(m, "category"), i))), "name")));
            if (phase != (end->t == 'z' ? 0 : 1))   /* 0 instant, 1 interval */
                TEST_FAIL_("%s, marker %zu: phase %d with %s end", want[t].track, i, phase,
                           end->t == 'z' ? "no" : "an");
        }
        snprintf(what, sizeof(what), "%.*s's markers", (int)strcspn(want[t].track, " "),
                 want[t].track);                   /* ms, name, category */
        ASSERT_SAME_TEXT(what, text, want[t].markers);
    }
    jdoc_free(&d);
    free(out);
    pp_profile_free(&p);
}
