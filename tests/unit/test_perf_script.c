/*
 * The perf script parser: real output captured on this kind of machine
 * (the .txt files in tests/data/perf_script, see capture.sh there) and hostile text.
 */
#include "report_helpers.h"
#include "test.h"

#include <fcntl.h>

typedef struct rec {
    int n;
    char comm[64];
    int pid, tid;
    uint64_t time_ns, period;
    char event[64];
    size_t nframes;
    char first_sym[256], first_dso[256], last_sym[256];
    int inlined;
    uint64_t digest;
} rec;

static void copy(char *dst, size_t cap, const char *s, size_t n)
{
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, s, n);
    dst[n] = '\0';
}

static int on_sample(void *ctx, const pp_raw_sample *s)
{
    rec *r = ctx;

    r->n++;
    copy(r->comm, sizeof(r->comm), s->comm, s->comm_len);
    copy(r->event, sizeof(r->event), s->event, s->event_len);
    r->pid = s->pid;
    r->tid = s->tid;
    r->time_ns = s->time_ns;
    r->period = s->period;
    r->nframes = s->nframes;
    r->inlined = 0;
    r->first_sym[0] = r->first_dso[0] = r->last_sym[0] = '\0';
    if (s->nframes) {
        copy(r->first_sym, sizeof(r->first_sym), s->frames[0].sym, s->frames[0].sym_len);
        copy(r->first_dso, sizeof(r->first_dso), s->frames[0].dso, s->frames[0].dso_len);
        copy(r->last_sym, sizeof(r->last_sym), s->frames[s->nframes - 1].sym,
             s->frames[s->nframes - 1].sym_len);
    }
    for (size_t i = 0; i < s->nframes; i++) {
        const pp_raw_frame *f = &s->frames[i];
        r->inlined += f->inlined;
        r->digest = r->digest * 31 + f->ip;
        for (uint32_t k = 0; k < f->sym_len; k++)
            r->digest = r->digest * 131 + (unsigned char)f->sym[k];
        for (uint32_t k = 0; k < f->dso_len; k++)
            r->digest = r->digest * 137 + (unsigned char)f->dso[k];
    }
    r->digest = r->digest * 7 + (uint64_t)s->pid + s->time_ns + s->nframes;
    return 0;
}

static rec parse(const char *text, pp_script_stats *st)
{
    rec r;
    memset(&r, 0, sizeof(r));
    ASSERT_OK(pp_script_parse_buffer(text, strlen(text), on_sample, &r, st));
    return r;
}

TEST(perf_script_header_from_the_right)
{
    pp_script_stats st;
    rec r = parse("my worker 2  1234/1240    635.880467:    1001001 cpu-clock:ppp: \n"
                  "\t    7f00 foo (/lib/x.so)\n\n", &st);
    ASSERT_EQ_INT(r.n, 1);
    ASSERT_EQ_STR(r.comm, "my worker 2");
    ASSERT_EQ_INT(r.pid, 1234);
    ASSERT_EQ_INT(r.tid, 1240);
    ASSERT_EQ_UINT(r.time_ns, 635880467000ull);
    ASSERT_EQ_UINT(r.period, 1001001);
    ASSERT_EQ_STR(r.event, "cpu-clock:ppp");
    ASSERT_EQ_INT(r.nframes, 1);
    ASSERT_EQ_INT(st.bad_lines, 0);
}

TEST(perf_script_comm_looking_like_fields)
{
    /* a thread name holding "12/34" and "5.6:" still parses from the right */
    rec r = parse("w 12/34 5.6: 9  77/78 10.000001: cycles:\n\t1 a (b)\n", NULL);
    ASSERT_EQ_INT(r.n, 1);
    ASSERT_EQ_STR(r.comm, "w 12/34 5.6: 9");
    ASSERT_EQ_INT(r.pid, 77);
    ASSERT_EQ_INT(r.tid, 78);
    ASSERT_EQ_UINT(r.time_ns, 10000001000ull);
    ASSERT_EQ_UINT(r.period, 1);
    ASSERT_EQ_STR(r.event, "cycles");
}

TEST(perf_script_frames_split_on_last_paren)
{
    rec r = parse("python3 1/1 1.0: 1 cpu-clock:\n"
                  "\t    7fc2eea3f2c9 py::Shape.area.<locals>.inner:/src/a (x).py (/tmp/perf-1.map)\n\n",
                  NULL);
    ASSERT_EQ_STR(r.first_sym, "py::Shape.area.<locals>.inner:/src/a (x).py");
    ASSERT_EQ_STR(r.first_dso, "/tmp/perf-1.map");
}

TEST(perf_script_unknown_inlined_kernel_offsets)
{
    rec r = parse("python3 1/1 1.0: 1 cpu-clock:\n"
                  "\tffffffff821e8bb6 copy_mc_enhanced_fast_string ([kernel.kallsyms])\n"
                  "\t          1cfe03 pymalloc_alloc (inlined)\n"
                  "\t    7fc2eea3f2c9 py::foo:/x.py+0x9 (/tmp/perf-3291.map)\n"
                  "\t               0 [unknown] ([unknown])\n"
                  "\t            1234 (/usr/lib/libfoo.so)\n\n", NULL);
    ASSERT_EQ_INT(r.nframes, 5);
    ASSERT_EQ_STR(r.first_dso, "[kernel.kallsyms]");
    ASSERT_EQ_INT(r.inlined, 1);
    ASSERT_EQ_STR(r.last_sym, "[unknown]");
}

TEST(perf_script_crlf_garbage_and_empty_stacks)
{
    pp_script_stats st;
    rec r = parse("garbage without structure\r\n"
                  "\t 1234 stray frame (x)\r\n"
                  "python3 1/1 1.0: 1 cpu-clock:\r\n"
                  "\r\n"
                  "python3 2/2 2.0: 1 cpu-clock:\r\n"
                  "\tzz not a frame\r\n"
                  "\t  7f00 ok (/lib/x.so)\r\n"
                  "\r\n", &st);
    ASSERT_EQ_INT(r.n, 2);
    ASSERT_EQ_INT(r.pid, 2);
    ASSERT_EQ_INT(r.nframes, 1);
    ASSERT_EQ_STR(r.first_dso, "/lib/x.so");
    ASSERT_EQ_INT(st.bad_lines, 3);
    ASSERT_EQ_INT(st.samples, 2);
}

TEST(perf_script_one_line_samples_and_no_final_newline)
{
    rec r = parse("      python3.12  7703/7703    782.761519:    1001001 cpu-clock:ppp:      "
                  "7f65c369e2bf _dl_relocate_object (/usr/lib/ld-linux-x86-64.so.2)\n"
                  "python3 9/9 3.5: 1 cpu-clock:\n\t  10 last (/x)", NULL);
    ASSERT_EQ_INT(r.n, 2);
    ASSERT_EQ_INT(r.pid, 9);
    ASSERT_EQ_STR(r.first_sym, "last");
    r = parse("      python3.12  7703/7703    782.761519:    1001001 cpu-clock:ppp:      "
              "7f65c369e2bf _dl_relocate_object (/usr/lib/ld-linux-x86-64.so.2)\n", NULL);
    ASSERT_EQ_INT(r.n, 1);
    ASSERT_EQ_STR(r.comm, "python3.12");
    ASSERT_EQ_INT(r.nframes, 1);
    ASSERT_EQ_STR(r.first_sym, "_dl_relocate_object");
}

/* Any split of the input into feeds delivers the same samples. */
static void check_splits(const char *text, size_t step)
{
    rec whole = parse(text, NULL), fed;
    pp_script_parser *p;
    size_t len = strlen(text);

    memset(&fed, 0, sizeof(fed));
    ASSERT_OK(pp_script_open(&p, on_sample, &fed));
    for (size_t i = 0; i < len; i += step)
        ASSERT_OK(pp_script_feed(p, text + i, len - i < step ? len - i : step));
    ASSERT_OK(pp_script_finish(p));
    ASSERT_EQ_INT(fed.n, whole.n);
    ASSERT_EQ_UINT(fed.digest, whole.digest);
    ASSERT_EQ_UINT(pp_script_stats_of(p)->bad_lines, 0);
    pp_script_close(p);
}

TEST(perf_script_real_captures)
{
    static const char *files[] = {"py38.txt", "py310.txt", "py311-debian.txt", "py312.txt",
                                  "py313.txt"};
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        char path[256];
        size_t len;
        char *text;
        pp_script_stats st;
        rec r;
        size_t headers = 0;

        snprintf(path, sizeof(path), PS_DATA("%s"), files[i]);
        text = test_read_file(path, &len);
        ASSERT_TRUE(text != NULL);
        for (const char *q = text; (q = strstr(q, "cpu-clock:ppp:")); q++)
            headers++;
        r = parse(text, &st);
        ASSERT_EQ_INT(r.n, (long long)headers);
        ASSERT_EQ_INT(st.bad_lines, 0);
        ASSERT_TRUE(strstr(r.last_sym, "py::") == r.last_sym);
        check_splits(text, 1000);
        check_splits(text, 7);
        free(text);
    }
}

/* Large feeds go through the buffered path; pending samples are rescanned. */
TEST(perf_script_fd_reader_matches_buffer)
{
    char path[512];
    size_t len;
    char *text = test_read_file(PS_DATA("py312.txt"), &len);
    pp_script_parser *p;
    rec whole, fed;
    FILE *f;
    int fd;

    ASSERT_TRUE(text != NULL);
    snprintf(path, sizeof(path), "%s/big.txt", test_tmpdir());
    f = fopen(path, "w");
    for (int i = 0; i < 40; i++)
        fwrite(text, 1, len, f);
    fclose(f);
    free(text);
    text = test_read_file(path, &len);
    whole = parse(text, NULL);
    memset(&fed, 0, sizeof(fed));
    ASSERT_OK(pp_script_open(&p, on_sample, &fed));
    fd = open(path, 0);
    ASSERT_OK(pp_script_parse_fd(p, fd));
    ASSERT_EQ_INT(fed.n, whole.n);
    ASSERT_EQ_UINT(fed.digest, whole.digest);
    pp_script_close(p);
    free(text);
}

TEST(perf_script_hostile_bytes_never_crash)
{
    char buf[4096];
    unsigned seed = 12345;
    for (int round = 0; round < 300; round++) {
        size_t n = (size_t)(rand_r(&seed) % (sizeof(buf) - 1));
        for (size_t i = 0; i < n; i++) {
            static const char alphabet[] = "\t\n\r ()[]:/.0123456789abcdefpy:+x-";
            buf[i] = (rand_r(&seed) & 3) ? alphabet[rand_r(&seed) % (sizeof(alphabet) - 1)]
                                         : (char)rand_r(&seed);
        }
        buf[n] = '\0';
        pp_script_stats st;
        pp_profile p;
        fold_text(&p, buf, NULL, &st);
        ASSERT_EQ_UINT(p.samples, st.samples);
        pp_profile_free(&p);
    }
}

/* The line cache: identical frame lines share a nonzero key, different
 * lines get different keys, and a cached frame reads exactly as a parsed
 * one (sym and dso views into the cache, "[unknown]" kept). */
typedef struct keys {
    int n;
    uint32_t key[8];
    char sym[8][64], dso[8][64];
    uint64_t ip[8];
} keys;

static int on_keys(void *ctx, const pp_raw_sample *s)
{
    keys *k = ctx;
    for (size_t i = 0; i < s->nframes && k->n < 8; i++, k->n++) {
        k->key[k->n] = s->frames[i].key;
        k->ip[k->n] = s->frames[i].ip;
        copy(k->sym[k->n], sizeof(k->sym[0]), s->frames[i].sym, s->frames[i].sym_len);
        copy(k->dso[k->n], sizeof(k->dso[0]), s->frames[i].dso, s->frames[i].dso_len);
    }
    return 0;
}

TEST(perf_script_line_cache_keys)
{
    const char *text = "p 1/1 1.000001: 1 cpu-clock:\n"
                       "\t    7f00 py::f:/a b.py (/tmp/perf-1.map)\n"
                       "\t    7f10 [unknown] ([unknown])\n"
                       "\n"
                       "p 1/1 1.000002: 1 cpu-clock:\n"
                       "\t    7f00 py::f:/a b.py (/tmp/perf-1.map)\n"
                       "\t    7f10 [unknown] ([unknown])\n"
                       "\t    7f00 py::g:/a b.py (/tmp/perf-1.map)\n"
                       "\n";
    keys k;
    memset(&k, 0, sizeof(k));
    ASSERT_OK(pp_script_parse_buffer(text, strlen(text), on_keys, &k, NULL));
    ASSERT_EQ_INT(k.n, 5);
    ASSERT_NE_INT(k.key[0], 0);
    ASSERT_EQ_INT(k.key[2], k.key[0]);
    ASSERT_EQ_INT(k.key[3], k.key[1]);
    ASSERT_NE_INT(k.key[4], k.key[0]);
    ASSERT_NE_INT(k.key[1], k.key[0]);
    ASSERT_EQ_STR(k.sym[2], "py::f:/a b.py");
    ASSERT_EQ_STR(k.dso[2], "/tmp/perf-1.map");
    ASSERT_EQ_STR(k.sym[3], "[unknown]");
    ASSERT_EQ_STR(k.dso[3], "[unknown]");
    ASSERT_EQ_STR(k.sym[4], "py::g:/a b.py");
    ASSERT_EQ_UINT(k.ip[4], 0x7f00);
}
