/*
 * The profile model (interning, call tree, function statistics) and every
 * writer: exact collapsed text, escaping in JSON/XML/HTML, and the pprof
 * protobuf decoded field by field with a small reader written here.
 */
#include "report_helpers.h"
#include "test.h"

#include <errno.h>
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

static char *render(const pp_profile *p, pp_writer_fn fn, size_t *len)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *m = open_memstream(&buf, &n);
    ASSERT_TRUE(m != NULL);
    ASSERT_OK(fn(p, m, NULL));
    fclose(m);
    if (len)
        *len = n;
    return buf;
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
    ASSERT_EQ_STR(out, "<module> (/a&b<c>.py:1);bar (/a&b<c>.py) 1\n"
                       "<module> (/a&b<c>.py:1);foo (/a&b<c>.py:3) 2\n"
                       "<module> (/a&b<c>.py:1);foo (/a&b<c>.py:3);memcpy 3\n"
                       "we\"ird<&>:name\xff';do_syscall_64 1\n");
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
    ASSERT_CONTAINS(out, "\"samples\":[\n[0,2],\n[0,1],\n[0,1,3],\n[4,5]]");
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
    ASSERT_CONTAINS(out, "data-l=\"we&quot;ird&lt;&amp;&gt;;name\xef\xbf\xbd&#39;\"");
    ASSERT_CONTAINS(out, "<title>foo (/a&amp;b&lt;c&gt;.py:3) (5 samples, 71.43%)</title>");
    ASSERT_TRUE(strstr(out, "\xff") == NULL);
    ASSERT_TRUE(strstr(out, "<![CDATA[") != NULL);
    ASSERT_TRUE(strstr(strstr(out, "<![CDATA[") + 9, "]]>") != NULL);
    for (const char *q = out; (q = strstr(q, "<g class=\"f\"")); q++)
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
    ASSERT_CONTAINS(out, "[\"foo (/a&b\\u003cc>.py:3)\",\"py\",\"/a&b\\u003cc>.py\",2,5,5]");
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
