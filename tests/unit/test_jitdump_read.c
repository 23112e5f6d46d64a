/*
 * The jitdump reader (src/engine/jitdump_read.c) against crafted input:
 * every header and record check fires with its message and the right byte
 * offset, truncation at every length is caught, byte-swapped dumps read
 * correctly, unknown records are skipped, and errors are sticky; a dump
 * on disk is read as a copy that outlives the file's truncation.
 *
 * The dumps are built here, field by field (optionally byte-swapped), so
 * each test can break exactly one thing.
 */
#include "test.h"
#include "ehframe.h"
#include "perfpy/engine.h"
#include "perfpy/jitdump_format.h"
#include "perfpy/jitdump_read.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PID 4242u
#define CODE 0x7f0000001000ull
#define CSIZE 20u

struct dump {
    uint8_t d[16384];
    size_t n;
    int swap;
};

static void put(struct dump *b, const void *p, size_t n)
{
    if (b->n + n > sizeof(b->d))
        TEST_FAIL_("test dump too large");
    memcpy(b->d + b->n, p, n);
    b->n += n;
}

static void u32(struct dump *b, uint32_t v)
{
    if (b->swap)
        v = __builtin_bswap32(v);
    put(b, &v, 4);
}

static void u64(struct dump *b, uint64_t v)
{
    if (b->swap)
        v = __builtin_bswap64(v);
    put(b, &v, 8);
}

static void set32(struct dump *b, size_t at, uint32_t v)
{
    if (b->swap)
        v = __builtin_bswap32(v);
    memcpy(b->d + at, &v, 4);
}

static void set64(struct dump *b, size_t at, uint64_t v)
{
    if (b->swap)
        v = __builtin_bswap64(v);
    memcpy(b->d + at, &v, 8);
}

static void header(struct dump *b)
{
    u32(b, JITHEADER_MAGIC);
    u32(b, 1);
    u32(b, 40);
    u32(b, 62);
    u32(b, 0);
    u32(b, PID);
    u64(b, 1000);
    u64(b, 0);
}

static void prefix(struct dump *b, uint32_t id, uint32_t size)
{
    u32(b, id);
    u32(b, size);
    u64(b, 2000 + b->n);
}

static size_t unwinding(struct dump *b, uint64_t code_size)
{
    static const struct pp_template_layout l = {4, 5, 8, 10, 11, 12, 0, 0};
    uint8_t data[128] = {0};
    size_t at = b->n;
    ssize_t n = pp__ehframe_build(&pp__arch_x86_64, data, sizeof(data), &l,
                                  code_size);

    ASSERT_EQ_INT(n, 76);
    prefix(b, JIT_CODE_UNWINDING_INFO, 40 + 80);
    u64(b, 76);
    u64(b, 20);
    u64(b, 80);
    put(b, data, 80);   /* 76 bytes and 4 of padding */
    return at;
}

static size_t debug(struct dump *b, uint64_t addr, const char *file)
{
    size_t at = b->n, flen = strlen(file) + 1;

    prefix(b, JIT_CODE_DEBUG_INFO, (uint32_t)(32 + 2 * (16 + flen)));
    u64(b, addr);
    u64(b, 2);
    for (int i = 0; i < 2; i++) {
        u64(b, addr + (i ? CSIZE : 0));
        u32(b, 7);
        u32(b, 0);
        put(b, file, flen);
    }
    return at;
}

static size_t load(struct dump *b, uint64_t addr, uint64_t index,
                   const char *name)
{
    size_t at = b->n, nlen = strlen(name) + 1;
    uint8_t code[CSIZE];

    memset(code, 0xcc, sizeof(code));
    prefix(b, JIT_CODE_LOAD, (uint32_t)(56 + nlen + CSIZE));
    u32(b, PID);
    u32(b, PID);
    u64(b, addr);
    u64(b, addr);
    u64(b, CSIZE);
    u64(b, index);
    put(b, name, nlen);
    put(b, code, CSIZE);
    return at;
}

/* One trampoline's three records; returns the load's offset. */
static size_t entry(struct dump *b, uint64_t index)
{
    uint64_t addr = CODE + 112 * index;

    unwinding(b, CSIZE);
    debug(b, addr, "/src/app.py");
    return load(b, addr, index, "py::f:/src/app.py");
}

static void valid(struct dump *b, int entries)
{
    memset(b, 0, sizeof(*b));
    header(b);
    for (int i = 0; i < entries; i++)
        entry(b, (uint64_t)i);
}

/* Reads all; returns the final rc (0 or negative), *records read. */
static int read_all(const uint8_t *d, size_t n, pp_jd_reader *r, int *records)
{
    pp_jd_record rec;
    int rc = pp_jd_open(r, d, n);

    *records = 0;
    while (rc == 0 && (rc = pp_jd_next(r, &rec)) > 0) {
        (*records)++;
        rc = 0;
    }
    return rc;
}

/* Expects the dump to fail with a message containing `what` at `offset`. */
static void expect_error(struct dump *b, const char *what, uint64_t offset)
{
    pp_jd_reader r;
    int n, rc = read_all(b->d, b->n, &r, &n);

    ASSERT_EQ_INT(rc, -EBADMSG);
    ASSERT_CONTAINS(r.error.message, what);
    ASSERT_EQ_UINT(r.error.offset, offset);
    pp_jd_close(&r);
}

TEST(reader_accepts_a_well_formed_dump)
{
    struct dump b;
    pp_jd_reader r;
    pp_jd_record rec;
    int n = 0;

    valid(&b, 3);
    ASSERT_OK(pp_jd_open(&r, b.d, b.n));
    ASSERT_EQ_UINT(r.header.pid, PID);
    ASSERT_EQ_UINT(r.header.elf_mach, 62);
    ASSERT_EQ_INT(r.header.swapped, 0);
    while (pp_jd_next(&r, &rec) > 0) {
        if (rec.id == JIT_CODE_LOAD) {
            ASSERT_EQ_UINT(rec.u.load.code_index, (uint64_t)(n / 3));
            ASSERT_EQ_STR(rec.u.load.name, "py::f:/src/app.py");
            ASSERT_EQ_UINT(rec.u.load.name_len, 17);
            ASSERT_EQ_UINT(rec.u.load.code_size, CSIZE);
            ASSERT_EQ_UINT(rec.u.load.code[0], 0xcc);
            ASSERT_EQ_UINT(rec.u.load.unwinding_at, rec.offset - 88 - 120);
            ASSERT_EQ_UINT(rec.u.load.debug_at, rec.offset - 88);
        }
        n++;
    }
    ASSERT_EQ_INT(n, 9);
    ASSERT_EQ_INT(pp_jd_next(&r, &rec), 0);   /* the end stays the end */
    pp_jd_close(&r);
}

TEST(reader_checks_the_header)
{
    struct dump b;
    pp_jd_reader r;

    ASSERT_EQ_INT(pp_jd_open(&r, "", 0), -EBADMSG);
    ASSERT_CONTAINS(r.error.message, "the file is 0 bytes");
    ASSERT_EQ_INT(pp_jd_open(&r, "JiT", 3), -EBADMSG);

    valid(&b, 0);
    b.d[0] = 'X';
    ASSERT_EQ_INT(pp_jd_open(&r, b.d, b.n), -EBADMSG);
    ASSERT_CONTAINS(r.error.message, "not a jitdump: the magic is 0x4a695458");

    valid(&b, 0);
    ASSERT_EQ_INT(pp_jd_open(&r, b.d, 39), -EBADMSG);
    ASSERT_CONTAINS(r.error.message, "truncated header: the file is 39 bytes");

    valid(&b, 0);
    set32(&b, 4, 2);
    ASSERT_EQ_INT(pp_jd_open(&r, b.d, b.n), -EBADMSG);
    ASSERT_CONTAINS(r.error.message, "version 2 is not 1");
    ASSERT_EQ_UINT(r.error.offset, 4);

    valid(&b, 0);
    set32(&b, 8, 32);
    ASSERT_EQ_INT(pp_jd_open(&r, b.d, b.n), -EBADMSG);
    ASSERT_CONTAINS(r.error.message, "total_size 32 is smaller than the 40-byte header");

    valid(&b, 0);
    set32(&b, 8, 48);
    ASSERT_EQ_INT(pp_jd_open(&r, b.d, b.n), -EBADMSG);
    ASSERT_CONTAINS(r.error.message, "total_size 48 runs past the end of the file (40 bytes)");

    valid(&b, 0);
    set64(&b, 32, 6);
    ASSERT_EQ_INT(pp_jd_open(&r, b.d, b.n), -EBADMSG);
    ASSERT_CONTAINS(r.error.message, "reserved flag bits 0x6");

    valid(&b, 0);
    set64(&b, 32, JITDUMP_FLAGS_ARCH_TIMESTAMP);
    ASSERT_OK(pp_jd_open(&r, b.d, b.n));
}

TEST(reader_skips_a_longer_header)
{
    struct dump b;
    pp_jd_reader r;
    int n;

    memset(&b, 0, sizeof(b));
    header(&b);
    set32(&b, 8, 48);
    u64(&b, 0xdeadbeef);   /* a header field from the future */
    entry(&b, 0);
    ASSERT_OK(read_all(b.d, b.n, &r, &n));
    ASSERT_EQ_INT(n, 3);
    pp_jd_close(&r);
}

TEST(reader_reads_a_byte_swapped_dump)
{
    struct dump b;
    pp_jd_reader r;
    pp_jd_record rec;
    pp_jd_debug_entry e;
    size_t pos = 0;
    int loads = 0;

    memset(&b, 0, sizeof(b));
    b.swap = 1;
    header(&b);
    entry(&b, 0);
    entry(&b, 1);
    ASSERT_OK(pp_jd_open(&r, b.d, b.n));
    ASSERT_EQ_INT(r.header.swapped, 1);
    ASSERT_EQ_UINT(r.header.magic, JITHEADER_MAGIC_SW);
    ASSERT_EQ_UINT(r.header.pid, PID);
    while (pp_jd_next(&r, &rec) > 0) {
        if (rec.id == JIT_CODE_DEBUG_INFO && pos == 0) {
            ASSERT_TRUE(pp_jd_debug_next(&r, &rec, &pos, &e));
            ASSERT_EQ_UINT(e.addr, CODE);
            ASSERT_EQ_INT(e.lineno, 7);
        }
        if (rec.id == JIT_CODE_LOAD) {
            ASSERT_EQ_UINT(rec.u.load.code_addr, CODE + 112 * (uint64_t)loads);
            ASSERT_EQ_UINT(rec.u.load.code_index, (uint64_t)loads);
            loads++;
        }
    }
    ASSERT_EQ_INT(r.error.err, 0);
    ASSERT_EQ_INT(loads, 2);
    pp_jd_close(&r);
}

/* Cut the dump at every length: never a crash, never a read past the
 * end; whole entries pass, anything else says what is missing. */
TEST(reader_catches_truncation_at_every_byte)
{
    struct dump b;
    size_t ends[3];

    memset(&b, 0, sizeof(b));
    header(&b);
    for (int i = 0; i < 3; i++)
        ends[i] = entry(&b, (uint64_t)i);
    for (size_t len = 0; len <= b.n; len++) {
        uint8_t *copy = malloc(len ? len : 1);
        pp_jd_reader r;
        int n, rc, whole = len == 40;

        memcpy(copy, b.d, len);
        for (int i = 0; i < 3; i++)
            whole |= len == ends[i] + 56 + 18 + CSIZE;
        rc = read_all(copy, len, &r, &n);
        if (whole) {
            ASSERT_EQ_INT(rc, 0);
        } else {
            ASSERT_EQ_INT(rc, -EBADMSG);
            if (len >= 40 && !strstr(r.error.message, "truncated") &&
                !strstr(r.error.message, "belongs to no code load"))
                TEST_FAIL_("length %zu: %s", len, r.error.message);
            /* past the header, a cut dump is told apart from a damaged one */
            ASSERT_EQ_INT(r.error.cut, len > 40);
        }
        pp_jd_close(&r);
        free(copy);
    }
}

TEST(reader_checks_record_sizes)
{
    struct dump b;

    valid(&b, 1);
    set32(&b, 40 + 4, 8);
    expect_error(&b, "JIT_CODE_UNWINDING_INFO record at offset 40: total_size 8 "
                 "is smaller than the 16-byte record prefix", 40);

    valid(&b, 1);
    set32(&b, 40 + 4, 0x7fffffff);
    expect_error(&b, "runs past the end of the file", 40);

    valid(&b, 1);
    b.n -= 1;
    expect_error(&b, "JIT_CODE_LOAD record at offset 248: total_size 94 runs "
                 "past the end of the file (93 bytes left): truncated", 248);
}

TEST(reader_checks_code_loads)
{
    struct dump b;
    size_t at;

    valid(&b, 1);
    at = load(&b, CODE + 112, 1, "py::g:/x.py");
    b.d[at + 56 + 10] = 'X';                    /* overwrite the NUL ... */
    memset(b.d + at + 56 + 11, 'Y', CSIZE);     /* ... and the code */
    expect_error(&b, "the name is not NUL-terminated within the record's 88 bytes", at);

    valid(&b, 1);
    at = load(&b, CODE + 112, 1, "py::g:/x.py");
    set64(&b, at + 40, CSIZE + 1);
    expect_error(&b, "code_size 21 is larger than the 20 bytes after the name", at);

    valid(&b, 1);
    at = load(&b, CODE + 112, 1, "py::g:/x.py");
    set64(&b, at + 40, CSIZE - 4);
    expect_error(&b, "4 bytes between the name and the 16 bytes of code are "
                 "not counted by code_size: a padded code-load record", at);

    valid(&b, 1);
    at = load(&b, CODE + 112, 1, "");
    set64(&b, at + 40, 0);
    set32(&b, at + 4, 57);
    b.n = at + 57;
    expect_error(&b, "code_size is 0", at);

    valid(&b, 1);
    at = load(&b, CODE + 112, 1, "py::g:/x.py");
    set32(&b, at + 16, PID + 1);
    expect_error(&b, "pid 4243 differs from the header's pid 4242", at);

    valid(&b, 2);
    at = load(&b, CODE + 224, 1, "py::again:/x.py");
    expect_error(&b, "code_index 1 was used by an earlier code load (perf "
                 "writes both to jitted-4242-1.so", at);

    valid(&b, 1);
    at = b.n;
    prefix(&b, JIT_CODE_LOAD, 56);
    b.n += 40;
    expect_error(&b, "total_size 56 is smaller than 57", at);
}

TEST(reader_checks_debug_records)
{
    struct dump b;
    size_t at;

    valid(&b, 1);
    at = debug(&b, CODE + 112, "/x.py");
    set64(&b, at + 24, 1000);
    expect_error(&b, "nr_entry 1000 entries cannot fit in the 44 bytes", at);

    valid(&b, 1);
    at = debug(&b, CODE + 112, "/x.py");
    set64(&b, at + 24, 1);
    expect_error(&b, "22 bytes follow the last of its 1 debug entries", at);

    valid(&b, 1);
    at = debug(&b, CODE + 112, "/x.py");
    b.d[at + 32 + 22 + 16 + 5] = 'X';           /* 2nd name's NUL */
    expect_error(&b, "the file name of debug entry 1 (at offset 396) is not "
                 "NUL-terminated", at);

    valid(&b, 1);
    unwinding(&b, CSIZE);
    at = debug(&b, CODE + 8, "/x.py");
    load(&b, CODE + 112, 1, "py::g:/x.py");
    expect_error(&b, "code_addr 0x7f0000001008 differs from 0x7f0000001070", at);

    valid(&b, 1);
    at = debug(&b, CODE + 112, "/x.py");
    set64(&b, at + 32 + 22, CODE + 112 + CSIZE + 1);
    load(&b, CODE + 112, 1, "py::g:/x.py");
    expect_error(&b, "debug entry 1 is at 0x7f0000001085, outside the code", at);

    valid(&b, 1);
    at = debug(&b, CODE + 112, "/x.py");
    set64(&b, at + 32, CODE + 112 + 4);
    set64(&b, at + 32 + 22, CODE + 112 + 2);
    load(&b, CODE + 112, 1, "py::g:/x.py");
    expect_error(&b, "debug entry 1 at 0x7f0000001072 comes before the "
                 "previous one", at);

    valid(&b, 1);
    at = b.n;
    prefix(&b, JIT_CODE_DEBUG_INFO, 24);
    b.n += 8;
    expect_error(&b, "total_size 24 is smaller than the 32-byte record header", at);
}

TEST(reader_checks_unwinding_records)
{
    /* One field of a valid unwinding record changed: {offset, value, why} */
    static const struct {
        size_t field;
        uint64_t value;
        const char *why;
    } cases[] = {
        {16, 81, "unwinding_size 81 is larger than the 80 bytes after the "
                 "record header"},
        {16, 60, "20 bytes follow the 60 bytes of unwinding data"},
        {24, 77, "eh_frame_hdr_size 77 is larger than unwinding_size 76"},
        {24, 0, "eh_frame_hdr_size is 0"},
        {32, 0, "mapped_size is 0: perf maps only the code, so no stack "
                "unwinds past this function"},
        {32, 72, "mapped_size 72 is smaller than the 76 bytes"},
    };
    struct dump b;
    size_t at;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        valid(&b, 1);
        at = unwinding(&b, CSIZE);
        set64(&b, at + cases[i].field, cases[i].value);
        expect_error(&b, cases[i].why, at);
    }

    /* An .eh_frame_hdr that does not point at its .eh_frame. */
    valid(&b, 1);
    at = unwinding(&b, CSIZE);
    b.d[at + 40 + 56 + 4] ^= 0x10;
    debug(&b, CODE + 112, "/x.py");
    load(&b, CODE + 112, 1, "py::g:/x.py");
    expect_error(&b, "JIT_CODE_UNWINDING_INFO record at offset 342: for the "
                 "code load at offset 538: .eh_frame_hdr eh_frame_ptr points", at);

    valid(&b, 1);
    at = b.n;
    prefix(&b, JIT_CODE_UNWINDING_INFO, 32);
    b.n += 16;
    expect_error(&b, "total_size 32 is smaller than the 40-byte record header", at);
}

TEST(reader_checks_the_order_of_records)
{
    struct dump b;
    size_t first;

    valid(&b, 1);
    first = unwinding(&b, CSIZE);
    unwinding(&b, CSIZE);
    expect_error(&b, "a second unwinding record before any code load: perf "
                 "drops the one at offset 342", first + 120);

    valid(&b, 1);
    first = debug(&b, CODE, "/x.py");
    debug(&b, CODE, "/x.py");
    expect_error(&b, "a second debug record before any code load: perf drops "
                 "the one at offset 342", first + 76);

    valid(&b, 2);
    first = debug(&b, CODE + 224, "/x.py");
    expect_error(&b, "JIT_CODE_DEBUG_INFO record at offset 644 belongs to no "
                 "code load: the file ends first", first);

    valid(&b, 2);
    first = unwinding(&b, CSIZE);
    expect_error(&b, "JIT_CODE_UNWINDING_INFO record at offset 644 belongs to "
                 "no code load", first);
}

TEST(reader_allows_bare_loads_and_skips_unknown_records)
{
    struct dump b;
    pp_jd_reader r;
    pp_jd_record rec;
    int loads = 0, unknown = 0, moves = 0, closes = 0;

    valid(&b, 1);
    prefix(&b, 77, 16 + 5);                   /* unknown, odd size */
    put(&b, "hello", 5);
    load(&b, CODE + 112, 1, "py::bare:/x.py");  /* no unwinding, no debug */
    prefix(&b, JIT_CODE_MOVE, 64);
    u32(&b, PID);
    u32(&b, PID);
    u64(&b, CODE);
    u64(&b, CODE);
    u64(&b, CODE + 4096);
    u64(&b, CSIZE);
    u64(&b, 1);
    prefix(&b, JIT_CODE_CLOSE, 16);
    ASSERT_OK(pp_jd_open(&r, b.d, b.n));
    while (pp_jd_next(&r, &rec) > 0) {
        if (rec.id == JIT_CODE_LOAD && rec.u.load.code_index == 1) {
            ASSERT_EQ_INT(rec.u.load.unwinding_at, -1);
            ASSERT_EQ_INT(rec.u.load.debug_at, -1);
        }
        loads += rec.id == JIT_CODE_LOAD;
        unknown += rec.id == 77;
        closes += rec.id == JIT_CODE_CLOSE;
        if (rec.id == JIT_CODE_MOVE) {
            moves++;
            ASSERT_EQ_UINT(rec.u.move.new_code_addr, CODE + 4096);
        }
    }
    ASSERT_EQ_INT(r.error.err, 0);
    ASSERT_EQ_INT(loads, 2);
    ASSERT_EQ_INT(unknown, 1);
    ASSERT_EQ_INT(moves, 1);
    ASSERT_EQ_INT(closes, 1);
    ASSERT_EQ_STR(pp_jd_record_name(77), "unknown");
    ASSERT_EQ_STR(pp_jd_record_name(JIT_CODE_MOVE), "JIT_CODE_MOVE");
    pp_jd_close(&r);

    valid(&b, 1);
    prefix(&b, JIT_CODE_MOVE, 40);
    b.n += 24;
    expect_error(&b, "total_size 40 is smaller than the 64-byte record", 342);
}

TEST(reader_errors_are_sticky)
{
    struct dump b;
    pp_jd_reader r;
    pp_jd_record rec;
    int n;

    valid(&b, 2);
    set32(&b, 40 + 4, 8);
    ASSERT_EQ_INT(read_all(b.d, b.n, &r, &n), -EBADMSG);
    ASSERT_EQ_INT(n, 0);
    ASSERT_EQ_INT(pp_jd_next(&r, &rec), -EBADMSG);
    ASSERT_EQ_INT(pp_jd_next(&r, &rec), -EBADMSG);
    ASSERT_EQ_UINT(r.error.offset, 40);
    pp_jd_close(&r);
    pp_jd_close(&r);   /* twice is harmless */

    memset(&r, 0, sizeof(r));
    ASSERT_EQ_INT(pp_jd_next(&r, &rec), -EBADMSG);   /* never opened */
}

TEST(reader_handles_many_code_indices)
{
    static struct dump b;
    pp_jd_reader r;
    int n;

    memset(&b, 0, sizeof(b));
    header(&b);
    for (uint64_t i = 0; i < 180; i++)
        load(&b, CODE + 112 * i, i * 0x100000001ull, "py::f:/a.py");
    ASSERT_OK(read_all(b.d, b.n, &r, &n));
    ASSERT_EQ_INT(n, 180);
    pp_jd_close(&r);
}

/* The one way a dump is read from disk: a copy. A new process with the
 * same pid truncates jit-<pid>.dump; a reader holding a mapping would fault
 * (SIGBUS) on the pages past the new end, a copy reads on. */
TEST(reader_reads_a_file_as_a_copy)
{
    struct dump b;
    char path[4096];
    uint8_t *data;
    size_t size;
    pp_jd_reader r;
    int n, fd;

    valid(&b, 3);
    snprintf(path, sizeof(path), "%s/jit-%u.dump", test_tmpdir(), PID);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    ASSERT_TRUE(fd >= 0);
    ASSERT_EQ_INT(write(fd, b.d, b.n), (long)b.n);
    ASSERT_OK(pp_jd_read_file(path, &data, &size));
    ASSERT_EQ_UINT(size, b.n);
    ASSERT_EQ_INT(memcmp(data, b.d, b.n), 0);
    ASSERT_OK(ftruncate(fd, 0));          /* the pid's next process */
    close(fd);
    ASSERT_OK(read_all(data, size, &r, &n));
    ASSERT_EQ_INT(n, 9);
    pp_jd_close(&r);
    free(data);
    ASSERT_OK(pp_jd_read_file(path, &data, &size));   /* now empty */
    ASSERT_EQ_UINT(size, 0);
    free(data);
    ASSERT_EQ_INT(pp_jd_read_file(test_tmpdir(), &data, &size), -EINVAL);
    ASSERT_TRUE(data == NULL);
    snprintf(path, sizeof(path), "%s/absent.dump", test_tmpdir());
    ASSERT_EQ_INT(pp_jd_read_file(path, &data, &size), -ENOENT);
}
