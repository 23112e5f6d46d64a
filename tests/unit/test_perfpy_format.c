/*
 * perfpy's own profile file, -f perfpy (include/perfpy/profile_format.h):
 * every field of a profile written (src/output/out_perfpy.c) and read back
 * (src/report/read_perfpy.c) as it was, judged field by field; a file
 * written again from what was read is the same bytes; and the reader's
 * answer to a file cut at every byte, of another version, not perfpy's,
 * or spoiled (heap copies of exactly the bytes: an over-read is ASan's).
 */
#include "output/output.h"
#include "perfpy/profile_format.h"
#include "report/report.h"
#include "test.h"

#include <errno.h>
#include <zlib.h>

static uint32_t F(pp_profile *p, pp_frame_kind k, const char *name, const char *file, int line)
{
    int64_t id = pp_profile_frame(p, k, name, strlen(name), file, file ? strlen(file) : 0, line);

    ASSERT_TRUE(id >= 0);
    return (uint32_t)id;
}

/* A profile with every field the file keeps set, none to its default. */
static void full_profile(pp_profile *p)
{
    uint32_t mod, fn, c, k, m, s[4];
    int64_t t0, t1, t2;

    ASSERT_OK(pp_profile_init(p));
    p->value = PP_VALUE_WALL;
    p->exec_lines = 1;
    p->period_ns = 2506265;
    p->truncated = 3;
    p->lost = 5;
    p->bad_lines = 7;
    p->time_unix_ns = 1764633600123456789ull;
    p->duration_ns = 4200000000ull;
    p->labelled = 1;
    snprintf(p->event, sizeof(p->event), "cpu-clock");
    snprintf(p->program, sizeof(p->program), "server.py");
    mod = F(p, PP_FRAME_PYTHON, "<module>", "/home/a/shop/server.py", 88);
    fn = F(p, PP_FRAME_PYTHON, "handle", "/home/a/shop/.venv/lib/python3.11/site-packages/flask/app.py", -1);
    c = F(p, PP_FRAME_NATIVE, "sqlite3VdbeExec", "/usr/lib/libsqlite3.so.0", 0);
    k = F(p, PP_FRAME_KERNEL, "do_syscall_64", "[kernel.kallsyms]", 0);
    m = F(p, PP_FRAME_MARKER, "[off-CPU: I/O]", NULL, 0);
    s[0] = (uint32_t)pp_profile_add(p, (uint32_t[]){mod, fn, c}, 3, 0, 0);
    s[1] = (uint32_t)pp_profile_add(p, (uint32_t[]){mod, fn, k, m}, 4, 0, 0);
    s[2] = (uint32_t)pp_profile_add(p, (uint32_t[]){mod}, 1, 0, 0);
    s[3] = (uint32_t)pp_profile_add(p, (uint32_t[]){m, mod}, 2, 9, 123);   /* no log */
    ASSERT_OK(pp_profile_stack_wait(p, s[1], PP_MARKER_WAIT, "[off-CPU: I/O]"));
    ASSERT_OK(pp_profile_stack_wait(p, s[2], PP_MARKER_GIL, "[off-CPU: GIL]"));
    t0 = pp_profile_thread(p, 4609, 4609, "python3", 7);
    t1 = pp_profile_thread(p, 4609, 4612, "Thread-3 (handle)", 17);
    t2 = pp_profile_thread(p, -1, -1, NULL, 0);
    ASSERT_TRUE(t0 == 0 && t1 == 1 && t2 == 2);
    ASSERT_OK(pp_profile_thread_name(p, 0, "MainThread", 10));
    p->stacks[s[0]].count += 2, p->samples += 2;
    ASSERT_OK(pp_profile_log(p, s[0], 0, 5000100000ull, 2506265));
    ASSERT_OK(pp_profile_log(p, s[0], 1, 5000100400ull, 1000));
    p->stacks[s[1]].count++, p->samples++;
    ASSERT_OK(pp_profile_log(p, s[1], 1, 5009000000ull, 5000000000ull));  /* past 32 bits */
    p->stacks[s[2]].count++, p->samples++;
    ASSERT_OK(pp_profile_log(p, s[2], 2, 0, 77));                        /* no time */
    ASSERT_OK(pp_profile_marker(p, 0, PP_MARKER_PROCESS, 4999000000ull, 4999000000ull,
                                "process start", 13));
    ASSERT_OK(pp_profile_marker(p, 1, PP_MARKER_WAIT, 5001000000ull, 5002000000ull,
                                "[off-CPU: I/O]", 14));
    ASSERT_OK(pp_profile_label(p, "service", "shop"));
    ASSERT_OK(pp_profile_label(p, "zone", ""));
    p->time_first_ns = 5000100000ull;
    p->time_last_ns = 5009000000ull;
    p->procs = calloc(2, sizeof(*p->procs));
    p->nprocs = 2;
    p->procs[0] = (pp_process){.pid = 4609, .samples = 4, .truncated = 1, .python = 3,
                               .command = "python3 server.py --port 80", .service = "server.py",
                               .container = "/srv/root", .ns_pid = 7};
    snprintf(p->procs[0].comm, sizeof(p->procs[0].comm), "python3");
    p->procs[1] = (pp_process){.pid = -1};
}

/* Every field of a and b, one by one. */
static void same_profiles(const pp_profile *a, const pp_profile *b)
{
    ASSERT_EQ_INT(a->value, b->value);
    ASSERT_EQ_INT(a->exec_lines, b->exec_lines);
    ASSERT_EQ_UINT(a->period_ns, b->period_ns);
    ASSERT_EQ_UINT(a->samples, b->samples);
    ASSERT_EQ_UINT(a->period, b->period);
    ASSERT_EQ_UINT(a->truncated, b->truncated);
    ASSERT_EQ_UINT(a->lost, b->lost);
    ASSERT_EQ_UINT(a->bad_lines, b->bad_lines);
    ASSERT_EQ_UINT(a->time_first_ns, b->time_first_ns);
    ASSERT_EQ_UINT(a->time_last_ns, b->time_last_ns);
    ASSERT_EQ_UINT(a->time_base_ns, b->time_base_ns);
    ASSERT_EQ_UINT(a->time_unix_ns, b->time_unix_ns);
    ASSERT_EQ_UINT(a->duration_ns, b->duration_ns);
    ASSERT_EQ_INT(a->labelled, b->labelled);
    ASSERT_EQ_STR(a->event, b->event);
    ASSERT_EQ_STR(a->program, b->program);
    ASSERT_EQ_UINT(a->nframes, b->nframes);
    for (uint32_t i = 0; i < a->nframes; i++) {
        ASSERT_EQ_INT(a->frames[i].kind, b->frames[i].kind);
        ASSERT_EQ_INT(a->frames[i].line, b->frames[i].line);
        ASSERT_EQ_STR(a->frames[i].name, b->frames[i].name);
        ASSERT_EQ_STR(a->frames[i].file, b->frames[i].file);
        ASSERT_EQ_STR(a->frames[i].label, b->frames[i].label);
    }
    ASSERT_EQ_UINT(a->nstacks, b->nstacks);
    for (uint32_t i = 0; i < a->nstacks; i++) {
        const pp_stack *x = &a->stacks[i], *y = &b->stacks[i];
        ASSERT_EQ_UINT(x->depth, y->depth);
        ASSERT_EQ_MEM(pp_stack_ids(a, x), pp_stack_ids(b, y), x->depth * sizeof(uint32_t));
        ASSERT_EQ_UINT(x->count, y->count);
        ASSERT_EQ_UINT(x->period, y->period);
        ASSERT_EQ_UINT(x->wait, y->wait);
        ASSERT_EQ_UINT(x->wait_kind, y->wait_kind);
    }
    ASSERT_EQ_UINT(a->nthreads, b->nthreads);
    for (uint32_t i = 0; i < a->nthreads; i++) {
        const pp_thread *x = &a->threads[i], *y = &b->threads[i];
        ASSERT_EQ_INT(x->pid, y->pid);
        ASSERT_EQ_INT(x->tid, y->tid);
        ASSERT_EQ_STR(x->name, y->name);
        ASSERT_EQ_INT(x->name_set, y->name_set);
        ASSERT_EQ_UINT(x->first_ns, y->first_ns);
        ASSERT_EQ_UINT(x->last_ns, y->last_ns);
        ASSERT_EQ_UINT(x->samples, y->samples);
    }
    ASSERT_EQ_UINT(a->nlog, b->nlog);
    for (uint64_t i = 0; i < a->nlog; i++) {
        pp_logged x = pp_profile_rec(a, i), y = pp_profile_rec(b, i);
        ASSERT_EQ_UINT(x.time_ns, y.time_ns);
        ASSERT_EQ_UINT(x.weight, y.weight);
        ASSERT_EQ_UINT(x.stack, y.stack);
        ASSERT_EQ_UINT(x.thread, y.thread);
    }
    ASSERT_EQ_UINT(a->nmarker_names, b->nmarker_names);
    for (size_t i = 0; i < a->nmarker_names; i++)
        ASSERT_EQ_STR(a->marker_names[i], b->marker_names[i]);
    ASSERT_EQ_UINT(a->nmarkers, b->nmarkers);
    for (size_t i = 0; i < a->nmarkers; i++) {
        const pp_marker *x = &a->markers[i], *y = &b->markers[i];
        ASSERT_EQ_UINT(x->start_ns, y->start_ns);
        ASSERT_EQ_UINT(x->end_ns, y->end_ns);
        ASSERT_EQ_UINT(x->thread, y->thread);
        ASSERT_EQ_UINT(x->kind, y->kind);
        ASSERT_EQ_UINT(x->name, y->name);
    }
    ASSERT_EQ_UINT(a->nlabels, b->nlabels);
    for (uint32_t i = 0; i < a->nlabels; i++) {
        ASSERT_EQ_STR(a->labels[i].key, b->labels[i].key);
        ASSERT_EQ_STR(a->labels[i].value, b->labels[i].value);
    }
    ASSERT_EQ_UINT(a->nprocs, b->nprocs);
    for (uint32_t i = 0; i < a->nprocs; i++) {
        const pp_process *x = &a->procs[i], *y = &b->procs[i];
        ASSERT_EQ_INT(x->pid, y->pid);
        ASSERT_EQ_INT(x->ns_pid, y->ns_pid);
        ASSERT_EQ_STR(x->comm, y->comm);
        ASSERT_EQ_UINT(x->samples, y->samples);
        ASSERT_EQ_UINT(x->truncated, y->truncated);
        ASSERT_EQ_UINT(x->python, y->python);
        ASSERT_EQ_STR(x->command ? x->command : "(none)", y->command ? y->command : "(none)");
        ASSERT_EQ_STR(x->service ? x->service : "(none)", y->service ? y->service : "(none)");
        ASSERT_EQ_STR(x->container ? x->container : "(none)",
                      y->container ? y->container : "(none)");
    }
}

/* The file of p (gzipped) in memory. */
static uint8_t *written(const pp_profile *p, size_t *len)
{
    char *buf = NULL;
    FILE *m = open_memstream(&buf, len);

    ASSERT_TRUE(m != NULL);
    ASSERT_OK(pp_write_perfpy(p, m, NULL));
    fclose(m);
    return (uint8_t *)buf;
}

/* The data inside the gzip stream. */
static uint8_t *inflated(const uint8_t *gz, size_t len, size_t *out_len)
{
    size_t cap = 1 << 20;
    uint8_t *out = malloc(cap);
    z_stream z = {0};

    ASSERT_TRUE(out && inflateInit2(&z, 15 + 32) == Z_OK);
    z.next_in = (Bytef *)gz;
    z.avail_in = (uInt)len;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    ASSERT_EQ_INT(inflate(&z, Z_FINISH), Z_STREAM_END);
    *out_len = z.total_out;
    inflateEnd(&z);
    return out;
}

TEST(perfpy_format_keeps_every_field)
{
    pp_profile a, b;
    pp_perfpy_error err;
    size_t len, n, len2;
    uint8_t *gz, *raw, *copy, *again;

    full_profile(&a);
    gz = written(&a, &len);
    ASSERT_TRUE(len > 2 && gz[0] == 0x1f && gz[1] == 0x8b);
    raw = inflated(gz, len, &n);
    ASSERT_TRUE(pp_is_perfpy(raw, n));
    ASSERT_EQ_MEM(raw, PP_PROFILE_MAGIC "\x01\0\0\0", 12);
    copy = test_exact_copy(raw, n);
    ASSERT_OK(pp_profile_init(&b));
    ASSERT_OK(pp_read_perfpy(copy, n, &b, &err));
    same_profiles(&a, &b);
    /* written again from what was read: the same bytes */
    again = written(&b, &len2);
    ASSERT_EQ_UINT(len2, len);
    ASSERT_EQ_MEM(again, gz, len);
    /* and through the reader of every profile file (perfpy diff's, report's) */
    pp_profile_free(&b);
    ASSERT_OK(pp_profile_init(&b));
    ASSERT_OK(pp_read_profile_buffer(gz, len, &b));
    same_profiles(&a, &b);
    free(again);
    free(copy);
    free(raw);
    free(gz);
    pp_profile_free(&a);
    pp_profile_free(&b);
}

/* A file cut anywhere is refused, never read in part as if whole: the
 * data cut at every byte, and the gzip stream cut at every byte. */
TEST(perfpy_format_cut_anywhere_is_refused)
{
    pp_profile a, b;
    pp_perfpy_error err;
    size_t len, n;
    uint8_t *gz, *raw;

    full_profile(&a);
    gz = written(&a, &len);
    raw = inflated(gz, len, &n);
    for (size_t cut = 0; cut < n; cut++) {
        uint8_t *copy = test_exact_copy(raw, cut);
        int rc;
        ASSERT_OK(pp_profile_init(&b));
        rc = pp_read_perfpy(copy, cut, &b, &err);
        if (rc != (cut < PP_PROFILE_MAGIC_LEN ? -ENOMSG : -EINVAL))
            TEST_FAIL_("the data cut at byte %zu of %zu: %d (%s)", cut, n, rc,
                       err.why ? err.why : "");
        pp_profile_free(&b);
        free(copy);
    }
    for (size_t cut = 2; cut < len; cut++) {
        uint8_t *copy = test_exact_copy(gz, cut);
        ASSERT_OK(pp_profile_init(&b));
        if (pp_read_profile_buffer(copy, cut, &b) != -EINVAL)
            TEST_FAIL_("the gzip stream cut at byte %zu of %zu was read", cut, len);
        pp_profile_free(&b);
        free(copy);
    }
    free(raw);
    free(gz);
    pp_profile_free(&a);
}

/* Another version, not perfpy's, a count that lies, a record out of order,
 * an index past what was read: each refused with its reason. */
TEST(perfpy_format_each_spoiling_refused)
{
    pp_profile a, b;
    pp_perfpy_error err;
    size_t len, n;
    uint8_t *gz, *raw, *copy;

    full_profile(&a);
    gz = written(&a, &len);
    raw = inflated(gz, len, &n);
    copy = test_exact_copy(raw, n);
    copy[8] = 2;                                     /* version 2 */
    ASSERT_OK(pp_profile_init(&b));
    ASSERT_EQ_INT(pp_read_perfpy(copy, n, &b, &err), -EPROTO);
    ASSERT_EQ_UINT(err.version, 2);
    pp_profile_free(&b);
    copy[8] = 1;
    copy[1] = 'p';                                   /* not perfpy's */
    ASSERT_OK(pp_profile_init(&b));
    ASSERT_EQ_INT(pp_read_perfpy(copy, n, &b, &err), -ENOMSG);
    pp_profile_free(&b);
    copy[1] = 'P';
    /* the END record's last count (samples logged) one more */
    copy[n - 1]++;
    ASSERT_OK(pp_profile_init(&b));
    ASSERT_EQ_INT(pp_read_perfpy(copy, n, &b, &err), -EINVAL);
    ASSERT_CONTAINS(err.why, "END record");
    pp_profile_free(&b);
    copy[n - 1]--;
    /* the META record's tag made MARKER_NAMES': out of order */
    ASSERT_EQ_INT(copy[12], PP_PF_META);
    copy[12] = PP_PF_MARKER_NAMES;
    ASSERT_OK(pp_profile_init(&b));
    ASSERT_EQ_INT(pp_read_perfpy(copy, n, &b, &err), -EINVAL);
    pp_profile_free(&b);
    copy[12] = PP_PF_META;
    /* an unknown record is skipped: the same file with one before END */
    {
        uint8_t *more = malloc(n + 4);
        size_t end_at = n - 8;                       /* END: tag, length 6, six counts < 128 */
        ASSERT_EQ_INT(copy[end_at], PP_PF_END);
        memcpy(more, copy, end_at);
        memcpy(more + end_at, "\x0c\x02\x01\x02", 4);   /* tag 12, 2 bytes */
        memcpy(more + end_at + 4, copy + end_at, 8);
        ASSERT_OK(pp_profile_init(&b));
        ASSERT_OK(pp_read_perfpy(more, n + 4, &b, &err));
        same_profiles(&a, &b);
        pp_profile_free(&b);
        free(more);
    }
    free(copy);
    free(raw);
    free(gz);
    pp_profile_free(&a);
}

/* What `perfpy report` and `perfpy diff` say of a bad file: one line naming
 * what is wrong. */
TEST(perfpy_format_bad_files_one_sentence_each)
{
    pp_profile a, b;
    pp_error e;
    size_t len;
    uint8_t *gz;
    char path[4096];
    FILE *f;

    full_profile(&a);
    gz = written(&a, &len);
    snprintf(path, sizeof(path), "%s/x.perfpy.gz", test_tmpdir());
    ASSERT_TRUE((f = fopen(path, "w")) && fwrite(gz, 1, len / 2, f) == len / 2);
    fclose(f);
    ASSERT_OK(pp_profile_init(&b));
    ASSERT_EQ_INT(pp_read_profile(path, &b, &e), -EINVAL);
    ASSERT_CONTAINS(e.message, "x.perfpy.gz is a perfpy profile cut short");
    ASSERT_TRUE(strchr(e.message, '\n') == NULL);
    pp_profile_free(&b);
    ASSERT_TRUE((f = fopen(path, "w")) && fwrite(gz, 1, len, f) == len);
    fclose(f);
    ASSERT_OK(pp_profile_init(&b));
    ASSERT_OK(pp_read_profile(path, &b, &e));
    same_profiles(&a, &b);
    pp_profile_free(&b);
    free(gz);
    pp_profile_free(&a);
}
