/*
 * The report pipeline's pieces that need no perf: the perf.data scanner on
 * synthetic files (hostile ones included), output writing through a
 * temporary file (a full disk leaves nothing behind), default names.
 */
#include "report/perf_run.h"
#include "report/report.h"
#include "report_helpers.h"
#include "test.h"

#include <dirent.h>
#include <errno.h>

/* A perf.data: header (104 bytes) then records; offsets as perf writes them. */
/* The first n bytes of buf in a heap block of exactly n bytes (1 when n is
 * 0): a parser that reads past the end of a cut or hostile input reads past
 * the block, and ASan sees it (a prefix inside a bigger stack buffer would
 * hide the over-read). Free it. */
static uint8_t *exact_copy(const uint8_t *buf, size_t n)
{
    uint8_t *copy = malloc(n ? n : 1);

    if (!copy) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    memcpy(copy, buf, n);
    return copy;
}

/* An exact-size copy of buf's first cut bytes whose header agrees: the data
 * section (offset at byte 40, size at 48) ends at the cut, inside a record
 * as a hostile or torn file may. */
static uint8_t *cut_in_data(const uint8_t *buf, size_t cut)
{
    uint8_t *copy = exact_copy(buf, cut);
    uint64_t off, size;

    if (cut >= 56) {
        memcpy(&off, copy + 40, 8);
        size = cut > off ? cut - off : 0;
        memcpy(copy + 48, &size, 8);
    }
    return copy;
}

/* pp_perf_data_scan_buffer on an exact-size copy of buf. */
static int scan_exact(const uint8_t *buf, size_t n, pp_perf_data_info *info)
{
    uint8_t *copy = exact_copy(buf, n);
    int rc;

    pp_perf_data_info_free(info);      /* what the last scan of info kept */
    rc = pp_perf_data_scan_buffer(copy, n, info);

    free(copy);
    return rc;
}

static size_t put_rec(uint8_t *buf, size_t at, uint32_t type, const void *body, size_t blen)
{
    uint16_t size = (uint16_t)(8 + blen);
    memcpy(buf + at, &type, 4);
    memset(buf + at + 4, 0, 2);
    memcpy(buf + at + 6, &size, 2);
    memcpy(buf + at + 8, body, blen);
    return at + size;
}

/* Sets the data section of the header to [off, end); returns end. */
static size_t data_section(uint8_t *buf, uint64_t off, uint64_t end)
{
    uint64_t size = end - off;

    memcpy(buf + 40, &off, 8);
    memcpy(buf + 48, &size, 8);
    return (size_t)end;
}

static size_t make_perf_data(uint8_t *buf)
{
    uint8_t body[256];
    uint64_t v, hsize = 104, off = 104;
    size_t at = 104;

    memset(buf, 0, 104);
    memcpy(buf, "PERFILE2", 8);
    memcpy(buf + 8, &hsize, 8);
    /* MMAP2 of a jit dump: pid, tid, addr, len, pgoff, maj, min, ino, gen, prot, flags, name */
    memset(body, 0, sizeof(body));
    strcpy((char *)body + 64, "/tmp/x/jit-4242.dump");
    at = put_rec(buf, at, 10, body, 64 + 24);
    /* the same dump again, and an ordinary library */
    at = put_rec(buf, at, 10, body, 64 + 24);
    strcpy((char *)body + 64, "/usr/lib/libc.so.6");
    at = put_rec(buf, at, 10, body, 64 + 24);
    /* MMAP (old style): pid, tid, addr, len, pgoff, name */
    memset(body, 0, sizeof(body));
    strcpy((char *)body + 32, "/run/jit-7.dump");
    at = put_rec(buf, at, 1, body, 32 + 16);
    /* LOST: id, lost */
    v = 5;
    memset(body, 0, 16);
    memcpy(body + 8, &v, 8);
    at = put_rec(buf, at, 2, body, 16);
    /* two samples */
    at = put_rec(buf, at, 9, body, 16);
    at = put_rec(buf, at, 9, body, 16);
    return data_section(buf, off, at);
}

TEST(perf_data_scan_finds_dumps_lost_and_samples)
{
    uint8_t buf[2048];
    size_t len = make_perf_data(buf);
    pp_perf_data_info info = {0};

    ASSERT_OK(pp_perf_data_scan_buffer(buf, len, &info));
    ASSERT_EQ_INT(info.scanned, 1);
    ASSERT_EQ_UINT(info.samples, 2);
    ASSERT_EQ_UINT(info.lost, 5);
    ASSERT_EQ_UINT(info.njitdumps, 2);
    ASSERT_EQ_STR(info.jitdumps[0], "/tmp/x/jit-4242.dump");
    ASSERT_EQ_STR(info.jitdumps[1], "/run/jit-7.dump");
    pp_perf_data_info_free(&info);
}

TEST(perf_data_scan_hostile_inputs)
{
    uint8_t buf[2048];
    size_t len = make_perf_data(buf);
    pp_perf_data_info info = {0};

    ASSERT_EQ_INT(scan_exact((const uint8_t *)"not perf", 8, &info), -EINVAL);
    ASSERT_EQ_INT(scan_exact((const uint8_t *)"hello world, no perf here", 25, &info),
                  -EINVAL);
    /* every truncation of a valid file: never a crash, never an over-read */
    for (size_t cut = 0; cut < len; cut++) {
        uint8_t *copy = cut_in_data(buf, cut);
        (void)scan_exact(buf, cut, &info);
        pp_perf_data_info_free(&info);
        (void)pp_perf_data_scan_buffer(copy, cut, &info);
        pp_perf_data_info_free(&info);
        free(copy);
    }
    /* a record claiming size 0 ends the walk */
    buf[104 + 6] = 0;
    buf[104 + 7] = 0;
    ASSERT_OK(scan_exact(buf, len, &info));
    ASSERT_EQ_UINT(info.samples, 0);
    /* a data section past the end of the file */
    buf[48] = 0xff;
    ASSERT_EQ_INT(scan_exact(buf, len, &info), -EINVAL);
    pp_perf_data_info_free(&info);
}

/* make_perf_data() with feature sections after the data, as perf writes
 * them: bits 2 (build-id), 3 (hostname) and 5 (version) set, so the
 * version's is the third {offset, size}; its text is { u32 len; char[len] }
 * padded with NULs. Returns the file's length. */
static size_t with_version(uint8_t *buf, const char *version)
{
    size_t at = make_perf_data(buf), sec = at, body = at + 3 * 16;
    uint32_t vlen = 64;
    uint64_t v;

    buf[72] = (1u << 2) | (1u << 3) | (1u << 5);
    for (int i = 0; i < 3; i++) {           /* three empty sections, then the version */
        v = body;
        memcpy(buf + sec + 16 * i, &v, 8);
        v = i == 2 ? 4 + vlen : 0;
        memcpy(buf + sec + 16 * i + 8, &v, 8);
    }
    memcpy(buf + body, &vlen, 4);
    memset(buf + body + 4, 0, vlen);
    memcpy(buf + body + 4, version, strlen(version));
    return body + 4 + vlen;
}

TEST(perf_data_scan_reads_the_writers_perf_version)
{
    uint8_t buf[2048];
    size_t len = with_version(buf, "7.2.13");
    pp_perf_data_info info = {0};

    ASSERT_OK(pp_perf_data_scan_buffer(buf, len, &info));
    ASSERT_EQ_STR(info.perf_version, "7.2.13");
    ASSERT_EQ_UINT(info.samples, 2);
    pp_perf_data_info_free(&info);
    /* no version bit: unknown */
    buf[72] &= (uint8_t)~(1u << 5);
    ASSERT_OK(pp_perf_data_scan_buffer(buf, len, &info));
    ASSERT_EQ_STR(info.perf_version, "");
    pp_perf_data_info_free(&info);
}

TEST(perf_data_scan_version_hostile_inputs)
{
    uint8_t buf[2048];
    size_t len = with_version(buf, "7.2.13"), ver = len - 68;
    pp_perf_data_info info = {0};
    uint32_t big = 0xfffffff0u;
    uint64_t far = 1ull << 40;

    /* every truncation: the whole version or none, never an over-read */
    for (size_t cut = 0; cut < len; cut++)
        if (scan_exact(buf, cut, &info) == 0 && info.perf_version[0])
            ASSERT_EQ_STR(info.perf_version, "7.2.13");
    /* a string length past its section */
    memcpy(buf + ver, &big, 4);
    ASSERT_OK(scan_exact(buf, len, &info));
    ASSERT_EQ_STR(info.perf_version, "");
    /* a string filling its section without a NUL, longer than the field */
    len = with_version(buf, "7.2.13");
    memset(buf + ver + 4, '7', 64);
    ASSERT_OK(scan_exact(buf, len, &info));
    ASSERT_EQ_STR(info.perf_version, "");
    /* control characters are no version */
    len = with_version(buf, "7.2\n\033[2J");
    ASSERT_OK(scan_exact(buf, len, &info));
    ASSERT_EQ_STR(info.perf_version, "");
    /* a section offset past the end of the file */
    len = with_version(buf, "7.2.13");
    memcpy(buf + (ver - 3 * 16) + 2 * 16, &far, 8);
    ASSERT_OK(scan_exact(buf, len, &info));
    ASSERT_EQ_STR(info.perf_version, "");
    /* every feature bit set: the version's entry is read from other bytes */
    len = with_version(buf, "7.2.13");
    memset(buf + 72, 0xff, 32);
    ASSERT_OK(scan_exact(buf, len, &info));
    ASSERT_EQ_STR(info.perf_version, "");
    pp_perf_data_info_free(&info);
}

TEST(perf_data_scan_missing_and_directory)
{
    pp_perf_data_info info = {0};
    ASSERT_EQ_INT(pp_perf_data_scan("/nonexistent/perf.data", &info), -ENOENT);
    ASSERT_EQ_INT(pp_perf_data_scan(test_tmpdir(), &info), -EISDIR);
}

static int leftovers(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;

    while ((e = readdir(d)) != NULL)
        if (strncmp(e->d_name, ".perfpy-out-", 12) == 0)
            n++;
    closedir(d);
    return n;
}

TEST(report_write_via_temporary_file)
{
    pp_profile p;
    pp_error e;
    char path[600], *text;

    fold_text(&p, "python3 1/1 1.0: 1 cpu-clock:\n\t1 py::foo:/x.py (/tmp/perf-1.map)\n\n",
              NULL, NULL);
    snprintf(path, sizeof(path), "%s/out.txt", test_tmpdir());
    ASSERT_OK(pp_output_write(&p, pp_format_find("collapsed"), path, NULL, &e));
    text = test_read_file(path, NULL);
    ASSERT_EQ_STR(text, "[truncated];foo (/x.py) 1\n");
    free(text);
    ASSERT_EQ_INT(leftovers(test_tmpdir()), 0);
    /* a full disk: an error, and no partial or temporary file */
    ASSERT_EQ_INT(pp_output_write(&p, pp_format_find("html"), "/dev/full", NULL, &e), -ENOSPC);
    ASSERT_EQ_STR(e.message, "cannot write /dev/full: No space left on device (free some "
                  "space or choose another place with -o)");
    /* a directory that does not exist */
    snprintf(path, sizeof(path), "%s/no/such/dir/out.svg", test_tmpdir());
    ASSERT_EQ_INT(pp_output_write(&p, pp_format_find("flamegraph"), path, NULL, &e), -ENOENT);
    ASSERT_CONTAINS(e.message, "(check that the directory exists and is writable)");
    ASSERT_EQ_INT(leftovers(test_tmpdir()), 0);
    pp_profile_free(&p);
}

TEST(report_default_output_names)
{
    char buf[256];
    pp_report_default_output("/x/y/perf.data", pp_format_find("flamegraph"), buf, sizeof(buf));
    ASSERT_EQ_STR(buf, "perf.svg");
    pp_report_default_output("app.data", pp_format_find("speedscope"), buf, sizeof(buf));
    ASSERT_EQ_STR(buf, "app.speedscope.json");
    pp_report_default_output("rec", pp_format_find("pprof"), buf, sizeof(buf));
    ASSERT_EQ_STR(buf, "rec.pb.gz");
    pp_report_default_output("perf.data", pp_format_find("perf"), buf, sizeof(buf));
    ASSERT_EQ_STR(buf, "perf-perfpy.data");
    pp_report_default_output(".data", pp_format_find("collapsed"), buf, sizeof(buf));
    ASSERT_EQ_STR(buf, "perf.txt");
}

TEST(report_find_perf_missing_says_how_to_install)
{
    char buf[256];
    pp_error e;
    ASSERT_EQ_INT(pp_perf_find("/nonexistent/perf", buf, sizeof(buf), &e), -ENOENT);
    ASSERT_CONTAINS(e.message, "cannot find perf ('/nonexistent/perf'");
    setenv("PATH", "/nonexistent", 1);
    unsetenv("PERF");
    ASSERT_EQ_INT(pp_perf_find(NULL, buf, sizeof(buf), &e), -ENOENT);
    ASSERT_CONTAINS(e.message, "apt-get install linux-perf");
}

/* The header and one attr (sample_type st, sample_id_all) of the perf.data
 * files the fork-exec fixup reads; returns where the records start. */
static size_t fixup_header(uint8_t *buf, uint64_t st)
{
    uint64_t hsize = 104, attr_size = 64, attrs_off = 104, attrs_size = 64;
    uint64_t flags = 1ull << 18;

    memset(buf, 0, 104 + 64);
    memcpy(buf, "PERFILE2", 8);
    memcpy(buf + 8, &hsize, 8);
    memcpy(buf + 16, &attr_size, 8);
    memcpy(buf + 24, &attrs_off, 8);
    memcpy(buf + 32, &attrs_size, 8);
    memcpy(buf + 104 + 24, &st, 8);
    memcpy(buf + 104 + 40, &flags, 8);
    return 104 + 64;
}

/* A perf.data with one attr (sample_type IP|TID|TIME, sample_id_all) and the
 * records the fork-exec fixup reads. *fork_at gets the offsets of the FORK
 * records of pids 100, 200, 300 and of a thread clone. */
static size_t make_fork_data(uint8_t *buf, size_t fork_at[4])
{
    uint64_t off;
    uint8_t body[64];
    size_t at = fixup_header(buf, 0x7), k = 0;

    off = at;
#define FORK(pid, ppid, tid, t)                                                      \
    do {                                                                             \
        uint32_t ids[4] = {pid, ppid, tid, ppid};                                    \
        uint64_t tt = t;                                                             \
        memcpy(body, ids, 16);                                                       \
        memcpy(body + 16, &tt, 8);                                                   \
        memcpy(body + 24, ids, 8);                                                   \
        memcpy(body + 32, &tt, 8);                                                   \
        fork_at[k++] = at;                                                           \
        at = put_rec(buf, at, 7, body, 40);                                          \
    } while (0)
#define COMM_EXEC(pid, t)                                                            \
    do {                                                                             \
        uint32_t ids[2] = {pid, pid};                                                \
        uint64_t tt = t;                                                             \
        memset(body, 0, 32);                                                         \
        memcpy(body, ids, 8);                                                        \
        memcpy(body + 8, "python3", 8);                                              \
        memcpy(body + 16, ids, 8);                                                   \
        memcpy(body + 24, &tt, 8);                                                   \
        uint16_t misc = 1u << 13;                                                    \
        size_t here = at;                                                            \
        at = put_rec(buf, at, 3, body, 32);                                          \
        memcpy(buf + here + 4, &misc, 2);                                            \
    } while (0)
#define SAMPLE(pid, t)                                                               \
    do {                                                                             \
        uint64_t ip = 0x1000, tt = t;                                                \
        uint32_t ids[2] = {pid, pid};                                                \
        memcpy(body, &ip, 8);                                                        \
        memcpy(body + 8, ids, 8);                                                    \
        memcpy(body + 16, &tt, 8);                                                   \
        at = put_rec(buf, at, 9, body, 24);                                          \
    } while (0)
    FORK(100, 99, 100, 10);      /* subprocess: one sample before its exec */
    SAMPLE(100, 15);
    SAMPLE(100, 30);             /* after the exec, earlier in the file */
    COMM_EXEC(100, 20);
    FORK(200, 99, 200, 40);      /* a worker, sampled before its exec: keep the clone */
    SAMPLE(200, 41);
    SAMPLE(200, 42);
    SAMPLE(200, 43);
    SAMPLE(200, 44);
    SAMPLE(200, 60);             /* after the exec, though earlier in the file */
    COMM_EXEC(200, 50);
    FORK(300, 99, 300, 60);      /* a fork that never execs (multiprocessing fork) */
    SAMPLE(300, 70);
    FORK(99, 99, 101, 80);       /* a thread */
    COMM_EXEC(99, 90);
#undef FORK
#undef COMM_EXEC
#undef SAMPLE
    return data_section(buf, off, at);
}

static uint16_t misc_at(const uint8_t *buf, size_t at)
{
    uint16_t m;
    memcpy(&m, buf + at + 4, 2);
    return m;
}

TEST(fork_exec_fixup_marks_only_children_that_exec_before_sampled)
{
    uint8_t buf[2048];
    size_t forks[4], n = 99;
    size_t len = make_fork_data(buf, forks);

    ASSERT_OK(pp_perf_data_fix_exec_forks_buffer(buf, len, 0, &n));
    ASSERT_EQ_UINT(n, 1);
    ASSERT_EQ_UINT(misc_at(buf, forks[0]), 0);          /* counting changes nothing */
    ASSERT_OK(pp_perf_data_fix_exec_forks_buffer(buf, len, 1, &n));
    ASSERT_EQ_UINT(n, 1);
    ASSERT_EQ_UINT(misc_at(buf, forks[0]), 1u << 13);
    ASSERT_EQ_UINT(misc_at(buf, forks[1]), 0);
    ASSERT_EQ_UINT(misc_at(buf, forks[2]), 0);
    ASSERT_EQ_UINT(misc_at(buf, forks[3]), 0);
    /* idempotent: marked forks are not counted again */
    ASSERT_OK(pp_perf_data_fix_exec_forks_buffer(buf, len, 1, &n));
    ASSERT_EQ_UINT(n, 0);
}

/* perf record killed: the header says 0 bytes of data and no feature
 * section was written; perfpy record finishes the file from its records. */
TEST(perf_data_finish_makes_a_killed_recording_readable)
{
    uint8_t buf[2048], copy[2048];
    size_t len = make_perf_data(buf), full;
    uint64_t zero = 0, bytes, feat = 0x3ffff;
    pp_perf_data_info info = {0};
    char path[PATH_MAX];
    FILE *f;

    ASSERT_OK(pp_perf_data_finish_buffer(buf, len, &bytes));
    ASSERT_EQ_UINT(bytes, 0);                         /* finished: left alone */
    memcpy(buf + 48, &zero, 8);
    memcpy(buf + 72, &feat, 8);
    memset(buf + len, 0, 12);
    buf[len + 6] = 64;                                /* the record perf was writing */
    full = len + 12;
    ASSERT_OK(pp_perf_data_scan_buffer(buf, full, &info));
    ASSERT_EQ_UINT(info.samples, 0);
    pp_perf_data_info_free(&info);
    memcpy(copy, buf, full);
    ASSERT_OK(pp_perf_data_finish_buffer(copy, full, &bytes));
    ASSERT_EQ_UINT(bytes, len - 104);
    ASSERT_EQ_UINT(copy[72], 0);                      /* no feature sections */
    ASSERT_OK(pp_perf_data_scan_buffer(copy, full, &info));
    ASSERT_EQ_UINT(info.samples, 2);
    ASSERT_EQ_UINT(info.njitdumps, 2);
    pp_perf_data_info_free(&info);
    /* the file: finished and cut after the last whole record */
    snprintf(path, sizeof(path), "%s/perf.data", test_tmpdir());
    f = fopen(path, "wb");
    ASSERT_TRUE(f && fwrite(buf, 1, full, f) == full && fclose(f) == 0);
    ASSERT_OK(pp_perf_data_finish(path, &bytes));
    ASSERT_EQ_UINT(bytes, len - 104);
    ASSERT_OK(pp_perf_data_scan(path, &info));
    ASSERT_EQ_UINT(info.samples, 2);
    pp_perf_data_info_free(&info);
    ASSERT_OK(pp_perf_data_finish(path, &bytes));     /* once finished, left alone */
    ASSERT_EQ_UINT(bytes, 0);
    for (size_t cut = 0; cut < full; cut++) {         /* hostile: any prefix */
        uint8_t *cutcopy = exact_copy(buf, cut);
        ASSERT_OK(pp_perf_data_finish_buffer(cutcopy, cut, &bytes));
        ASSERT_TRUE(bytes == 0 || 104 + bytes <= cut);
        free(cutcopy);
    }
}

TEST(fork_exec_fixup_survives_truncated_and_foreign_inputs)
{
    uint8_t buf[2048], *copy;
    size_t forks[4], n;
    size_t len = make_fork_data(buf, forks);

    for (size_t cut = 0; cut < len; cut++) {
        copy = exact_copy(buf, cut);
        (void)pp_perf_data_fix_exec_forks_buffer(copy, cut, 1, &n);
        free(copy);
        copy = cut_in_data(buf, cut);
        (void)pp_perf_data_fix_exec_forks_buffer(copy, cut, 1, &n);
        free(copy);
    }
    copy = exact_copy((const uint8_t *)"not a perf file at all....", 26);
    ASSERT_OK(pp_perf_data_fix_exec_forks_buffer(copy, 26, 1, &n));
    ASSERT_EQ_UINT(n, 0);
    free(copy);
}

/* A DWARF recording (sample_type IP|TID|TIME|STACK_USER, sample_id_all) of
 * `perfpy record`'s start: perf-exec, then the perfpy shim maps libz and
 * forks a helper, execs python3, which maps libz again and is sampled.
 * at[]: offsets of the records whose pids the split may move, in order:
 * COMM perf-exec, COMM exec perfpy, MMAP2 shim libz, FORK helper, SAMPLE
 * shim, COMM exec python3, MMAP2 python libz, SAMPLE python, SAMPLE helper. */
static size_t make_exec_data(uint8_t *buf, uint64_t sample_type, size_t at_out[9])
{
    uint64_t off;
    uint8_t body[128];
    size_t at = fixup_header(buf, sample_type), k = 0;

    off = at;
#define TRAILER(pos, pid, t)                                                         \
    do {                                                                             \
        uint32_t ids_[2] = {pid, pid};                                               \
        uint64_t tt_ = t;                                                            \
        memcpy(body + (pos), ids_, 8);                                               \
        memcpy(body + (pos) + 8, &tt_, 8);                                           \
    } while (0)
#define COMM(pid, name, t, exec)                                                     \
    do {                                                                             \
        uint32_t ids[2] = {pid, pid};                                                \
        uint16_t misc = (exec) ? 1u << 13 : 0;                                       \
        memset(body, 0, 32);                                                         \
        memcpy(body, ids, 8);                                                        \
        memcpy(body + 8, name, strlen(name));                                        \
        TRAILER(16, pid, t);                                                         \
        at_out[k++] = at;                                                            \
        at = put_rec(buf, at, 3, body, 32);                                          \
        memcpy(buf + at_out[k - 1] + 4, &misc, 2);                                   \
    } while (0)
#define MMAP2(pid, t)                                                                \
    do {                                                                             \
        uint32_t ids[2] = {pid, pid};                                                \
        memset(body, 0, 96);                                                         \
        memcpy(body, ids, 8);                                                        \
        memcpy(body + 64, "/lib/libz.so.1", 15);                                     \
        TRAILER(80, pid, t);                                                         \
        at_out[k++] = at;                                                            \
        at = put_rec(buf, at, 10, body, 96);                                         \
    } while (0)
#define SAMPLE(pid, t)                                                               \
    do {                                                                             \
        uint64_t ip = 0x1000, tt = t;                                                \
        uint32_t ids[2] = {pid, pid};                                                \
        memcpy(body, &ip, 8);                                                        \
        memcpy(body + 8, ids, 8);                                                    \
        memcpy(body + 16, &tt, 8);                                                   \
        at_out[k++] = at;                                                            \
        at = put_rec(buf, at, 9, body, 24);                                          \
    } while (0)
    COMM(500, "perf-exec", 0, 0);
    COMM(500, "perfpy", 10, 1);
    MMAP2(500, 11);
    {   /* the shim forks helper 501 at 12 */
        uint32_t ids[4] = {501, 500, 501, 500};
        uint64_t tt = 12;
        memcpy(body, ids, 16);
        memcpy(body + 16, &tt, 8);
        TRAILER(24, 500, 12);
        at_out[k++] = at;
        at = put_rec(buf, at, 7, body, 40);
    }
    SAMPLE(500, 13);
    COMM(500, "python3", 20, 1);
    MMAP2(500, 21);
    SAMPLE(500, 30);
    SAMPLE(501, 31);
#undef TRAILER
#undef COMM
#undef MMAP2
#undef SAMPLE
    return data_section(buf, off, at);
}

static uint32_t u32_at(const uint8_t *buf, size_t at)
{
    uint32_t v;
    memcpy(&v, buf + at, 4);
    return v;
}

TEST(exec_fixup_gives_each_image_before_the_last_exec_its_own_pid)
{
    uint8_t buf[4096];
    size_t at[9], n = 99;
    size_t len = make_exec_data(buf, 0x2007, at);
    const uint32_t img1 = 500 + (1u << 22), img2 = 500 + (2u << 22);

    ASSERT_OK(pp_perf_data_fix_exec_forks_buffer(buf, len, 0, &n));
    ASSERT_EQ_UINT(n, 5);
    ASSERT_EQ_UINT(u32_at(buf, at[2] + 8), 500);            /* counting changes nothing */
    ASSERT_OK(pp_perf_data_fix_exec_forks_buffer(buf, len, 1, &n));
    ASSERT_EQ_UINT(n, 5);
    ASSERT_EQ_UINT(u32_at(buf, at[0] + 8), img1);           /* COMM perf-exec: image 1 */
    ASSERT_EQ_UINT(u32_at(buf, at[1] + 8), img2);           /* exec perfpy starts image 2 */
    ASSERT_EQ_UINT(u32_at(buf, at[2] + 8), img2);           /* the shim's libz: pid ... */
    ASSERT_EQ_UINT(u32_at(buf, at[2] + 12), img2);          /* ... and tid */
    ASSERT_EQ_UINT(u32_at(buf, at[3] + 8), 501);            /* the helper keeps its pid */
    ASSERT_EQ_UINT(u32_at(buf, at[3] + 12), img2);          /* its parent: the shim's image */
    ASSERT_EQ_UINT(u32_at(buf, at[3] + 20), img2);          /* parent tid */
    ASSERT_EQ_UINT(u32_at(buf, at[4] + 16), img2);          /* the shim's sample */
    ASSERT_EQ_UINT(u32_at(buf, at[5] + 8), 500);            /* exec python3: the last image */
    ASSERT_EQ_UINT(u32_at(buf, at[6] + 8), 500);            /* python's libz stays */
    ASSERT_EQ_UINT(u32_at(buf, at[7] + 16), 500);
    ASSERT_EQ_UINT(u32_at(buf, at[8] + 16), 501);
    /* idempotent */
    ASSERT_OK(pp_perf_data_fix_exec_forks_buffer(buf, len, 1, &n));
    ASSERT_EQ_UINT(n, 0);
}

TEST(exec_fixup_leaves_frame_pointer_recordings_alone)
{
    uint8_t buf[4096], orig[4096];
    size_t at[9], n = 99;
    size_t len = make_exec_data(buf, 0x7, at);

    memcpy(orig, buf, len);
    ASSERT_OK(pp_perf_data_fix_exec_forks_buffer(buf, len, 1, &n));
    ASSERT_EQ_UINT(n, 0);
    ASSERT_TRUE(memcmp(orig, buf, len) == 0);
}

TEST(exec_fixup_survives_truncated_inputs)
{
    uint8_t buf[4096];
    size_t at[9], n, m;
    size_t len = make_exec_data(buf, 0x2007, at);

    for (size_t cut = 0; cut < len; cut++) {
        for (int agree = 0; agree < 2; agree++) {
            uint8_t *copy = agree ? cut_in_data(buf, cut) : exact_copy(buf, cut);
            if (pp_perf_data_fix_exec_forks_buffer(copy, cut, 0, &n) == 0 &&
                pp_perf_data_fix_exec_forks_buffer(copy, cut, 1, &m) == 0)
                ASSERT_EQ_UINT(n, m);
            free(copy);
        }
    }
}
