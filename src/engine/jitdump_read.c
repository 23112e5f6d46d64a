/*
 * The jitdump reader: hostile input in, records or a precise error out.
 *
 * A dump comes from a process that may have been killed mid-write, from a
 * disk that filled up, from another JIT, or from someone who wants perfpy
 * (or perf behind it) to crash. So every length is checked against what
 * remains before anything is read, arithmetic never overflows (sizes are
 * compared by subtraction from a known-good bound), strings are searched
 * for their NUL inside the record, and the first problem stops the walk
 * with its offset and a sentence:
 *
 *   0      header (40)            magic, version, total_size, flags
 *   40     record  id | total_size | timestamp | payload ...
 *          ^ offset reported      ^ checked against size - offset
 *   ...
 *
 * perf attaches an unwinding or debug record to the next code load, so
 * the reader keeps each one pending until its load arrives and checks the
 * pair there (same code address, .eh_frame_hdr pointing into that code).
 * See include/perfpy/jitdump_read.h for the list of checks.
 *
 * A dump on disk is read one way, by pp_jd_read_file at the end: a copy,
 * never a mapping (the header says why).
 */
#include "perfpy/jitdump_read.h"
#include "ehframe.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LOAD_MIN (sizeof(struct jr_code_load) + 1)    /* header + "\0" */
#define ENTRY_MIN (sizeof(struct debug_entry) + 1)

static uint32_t rd32(const pp_jd_reader *r, const uint8_t *p)
{
    uint32_t v;

    memcpy(&v, p, 4);
    return r->header.swapped ? __builtin_bswap32(v) : v;
}

static uint64_t rd64(const pp_jd_reader *r, const uint8_t *p)
{
    uint64_t v;

    memcpy(&v, p, 8);
    return r->header.swapped ? __builtin_bswap64(v) : v;
}

const char *pp_jd_record_name(uint32_t id)
{
    switch (id) {
    case JIT_CODE_LOAD: return "JIT_CODE_LOAD";
    case JIT_CODE_MOVE: return "JIT_CODE_MOVE";
    case JIT_CODE_DEBUG_INFO: return "JIT_CODE_DEBUG_INFO";
    case JIT_CODE_CLOSE: return "JIT_CODE_CLOSE";
    case JIT_CODE_UNWINDING_INFO: return "JIT_CODE_UNWINDING_INFO";
    default: return "unknown";
    }
}

/* Keeps the first error; returns it. */
static int failv(pp_jd_reader *r, uint64_t offset, int err,
                 const char *fmt, va_list ap)
{
    if (r->error.err)
        return r->error.err;
    r->error.err = err;
    r->error.offset = offset;
    vsnprintf(r->error.message, sizeof(r->error.message), fmt, ap);
    return err;
}

static int fail(pp_jd_reader *r, uint64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(pp_jd_reader *r, uint64_t offset, const char *fmt, ...)
{
    va_list ap;
    int rc;

    va_start(ap, fmt);
    rc = failv(r, offset, -EBADMSG, fmt, ap);
    va_end(ap);
    return rc;
}

static int oom(pp_jd_reader *r, uint64_t offset)
{
    if (r->error.err)
        return r->error.err;
    r->error.err = -ENOMEM;
    r->error.offset = offset;
    snprintf(r->error.message, sizeof(r->error.message),
             "out of memory at offset %" PRIu64, offset);
    return -ENOMEM;
}

/* An error about one record: "<TYPE> record at offset N: ..." */
static int bad(pp_jd_reader *r, const pp_jd_record *rec, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int bad(pp_jd_reader *r, const pp_jd_record *rec, const char *fmt, ...)
{
    char what[256];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    return fail(r, rec->offset, "%s record at offset %" PRIu64 ": %s",
                pp_jd_record_name(rec->id), rec->offset, what);
}

/* ---- code_index set --------------------------------------------------------- */

static uint64_t mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static int index_grow(pp_jd_reader *r)
{
    size_t cap = r->index_cap ? r->index_cap * 2 : 256;
    uint64_t *keys = calloc(cap, sizeof(*keys));
    uint8_t *used = calloc(cap, 1);

    if (!keys || !used) {
        free(keys);
        free(used);
        return -ENOMEM;
    }
    for (size_t i = 0; i < r->index_cap; i++) {
        if (!r->index_used[i])
            continue;
        size_t j = mix(r->index_keys[i]) & (cap - 1);
        while (used[j])
            j = (j + 1) & (cap - 1);
        used[j] = 1;
        keys[j] = r->index_keys[i];
    }
    free(r->index_keys);
    free(r->index_used);
    r->index_keys = keys;
    r->index_used = used;
    r->index_cap = cap;
    return 0;
}

/* 1 if added, 0 if already there, or -ENOMEM. */
static int index_add(pp_jd_reader *r, uint64_t key)
{
    size_t j;

    if ((r->index_count + 1) * 2 > r->index_cap) {
        int rc = index_grow(r);
        if (rc < 0)
            return rc;
    }
    j = mix(key) & (r->index_cap - 1);
    while (r->index_used[j]) {
        if (r->index_keys[j] == key)
            return 0;
        j = (j + 1) & (r->index_cap - 1);
    }
    r->index_used[j] = 1;
    r->index_keys[j] = key;
    r->index_count++;
    return 1;
}

/* ---- header ------------------------------------------------------------------ */

int pp_jd_open(pp_jd_reader *r, const void *data, size_t size)
{
    const uint8_t *p = data;
    pp_jd_header *h = &r->header;
    uint32_t magic;

    memset(r, 0, sizeof(*r));
    r->data = p;
    r->size = size;
    if (!p && size)
        return fail(r, 0, "no input");
    if (size < 4)
        return fail(r, 0, "the file is %zu bytes; a jitdump starts with a "
                    "40-byte header", size);
    memcpy(&magic, p, 4);
    if (magic == JITHEADER_MAGIC_SW)
        h->swapped = 1;
    else if (magic != JITHEADER_MAGIC)
        return fail(r, 0, "not a jitdump: the magic is 0x%08" PRIx32 ", "
                    "expected 0x%08x (\"JiTD\") or its byte-swapped form",
                    magic, JITHEADER_MAGIC);
    if (size < sizeof(struct jitheader))
        return fail(r, 0, "truncated header: the file is %zu bytes, the "
                    "header alone is %zu", size, sizeof(struct jitheader));
    h->magic = magic;
    h->version = rd32(r, p + 4);
    h->total_size = rd32(r, p + 8);
    h->elf_mach = rd32(r, p + 12);
    h->pid = rd32(r, p + 20);
    h->timestamp = rd64(r, p + 24);
    h->flags = rd64(r, p + 32);
    if (h->version != JITHEADER_VERSION)
        return fail(r, 4, "header: version %" PRIu32 " is not %u, the one "
                    "version of the format perf and perfpy know",
                    h->version, JITHEADER_VERSION);
    if (h->total_size < sizeof(struct jitheader))
        return fail(r, 8, "header: total_size %" PRIu32 " is smaller than "
                    "the %zu-byte header", h->total_size,
                    sizeof(struct jitheader));
    if (h->total_size > size)
        return fail(r, 8, "header: total_size %" PRIu32 " runs past the end "
                    "of the file (%zu bytes)", h->total_size, size);
    if (h->flags & ~(uint64_t)JITDUMP_FLAGS_ARCH_TIMESTAMP)
        return fail(r, 32, "header: reserved flag bits 0x%" PRIx64 " are set "
                    "(perf refuses such a file)",
                    h->flags & ~(uint64_t)JITDUMP_FLAGS_ARCH_TIMESTAMP);
    r->pos = h->total_size;
    r->started = 1;
    return 0;
}

void pp_jd_close(pp_jd_reader *r)
{
    free(r->index_keys);
    free(r->index_used);
    r->index_keys = NULL;
    r->index_used = NULL;
    r->index_cap = r->index_count = 0;
}

/* ---- records ----------------------------------------------------------------- */

static int parse_unwinding(pp_jd_reader *r, pp_jd_record *rec)
{
    const uint8_t *p = rec->bytes;
    uint64_t avail, usize, hsize, mapped;

    if (rec->total_size < sizeof(struct jr_code_unwinding_info))
        return bad(r, rec, "total_size %" PRIu32 " is smaller than the "
                   "%zu-byte record header", rec->total_size,
                   sizeof(struct jr_code_unwinding_info));
    avail = rec->total_size - sizeof(struct jr_code_unwinding_info);
    usize = rd64(r, p + 16);
    hsize = rd64(r, p + 24);
    mapped = rd64(r, p + 32);
    if (usize > avail)
        return bad(r, rec, "unwinding_size %" PRIu64 " is larger than the "
                   "%" PRIu64 " bytes after the record header", usize, avail);
    if (avail - usize > 7)
        return bad(r, rec, "%" PRIu64 " bytes follow the %" PRIu64 " bytes of "
                   "unwinding data (padding is at most 7)", avail - usize,
                   usize);
    if (hsize > usize)
        return bad(r, rec, "eh_frame_hdr_size %" PRIu64 " is larger than "
                   "unwinding_size %" PRIu64, hsize, usize);
    if (hsize == 0)
        return bad(r, rec, "eh_frame_hdr_size is 0: perf ignores unwinding "
                   "data without an .eh_frame_hdr");
    if (mapped == 0)
        return bad(r, rec, "mapped_size is 0: perf maps only the code, so no "
                   "stack unwinds past this function");
    if (mapped < usize)
        return bad(r, rec, "mapped_size %" PRIu64 " is smaller than the %"
                   PRIu64 " bytes of unwinding data: perf's map of the code "
                   "ends before its .eh_frame_hdr", mapped, usize);
    if (r->has_unwinding)
        return bad(r, rec, "a second unwinding record before any code load: "
                   "perf drops the one at offset %" PRIu64,
                   r->unwinding.offset);
    rec->u.unwinding.unwinding_size = usize;
    rec->u.unwinding.eh_frame_hdr_size = hsize;
    rec->u.unwinding.mapped_size = mapped;
    rec->u.unwinding.data = p + sizeof(struct jr_code_unwinding_info);
    r->unwinding = *rec;
    r->has_unwinding = 1;
    return 0;
}

static int parse_debug(pp_jd_reader *r, pp_jd_record *rec)
{
    const uint8_t *entries = rec->bytes + sizeof(struct jr_code_debug_info);
    uint64_t avail, nr;
    size_t pos = 0;

    if (rec->total_size < sizeof(struct jr_code_debug_info))
        return bad(r, rec, "total_size %" PRIu32 " is smaller than the "
                   "%zu-byte record header", rec->total_size,
                   sizeof(struct jr_code_debug_info));
    avail = rec->total_size - sizeof(struct jr_code_debug_info);
    rec->u.debug.code_addr = rd64(r, rec->bytes + 16);
    nr = rd64(r, rec->bytes + 24);
    if (nr > avail / ENTRY_MIN)
        return bad(r, rec, "nr_entry %" PRIu64 " entries cannot fit in the "
                   "%" PRIu64 " bytes after the record header (each takes at "
                   "least %zu)", nr, avail, ENTRY_MIN);
    for (uint64_t i = 0; i < nr; i++) {
        const uint8_t *name;
        const uint8_t *nul;

        if (avail - pos < ENTRY_MIN)
            return bad(r, rec, "debug entry %" PRIu64 " (at offset %" PRIu64
                       ") runs past the record's end", i,
                       rec->offset + sizeof(struct jr_code_debug_info) + pos);
        name = entries + pos + sizeof(struct debug_entry);
        nul = memchr(name, 0, avail - pos - sizeof(struct debug_entry));
        if (!nul)
            return bad(r, rec, "the file name of debug entry %" PRIu64
                       " (at offset %" PRIu64 ") is not NUL-terminated "
                       "within the record", i,
                       rec->offset + sizeof(struct jr_code_debug_info) + pos);
        pos = (size_t)(nul + 1 - entries);
    }
    if (avail - pos > 7)
        return bad(r, rec, "%" PRIu64 " bytes follow the last of its %" PRIu64
                   " debug entries (padding is at most 7)", avail - pos, nr);
    if (r->has_debug)
        return bad(r, rec, "a second debug record before any code load: perf "
                   "drops the one at offset %" PRIu64, r->debug.offset);
    rec->u.debug.nr_entry = nr;
    rec->u.debug.entries = entries;
    rec->u.debug.entries_size = pos;
    r->debug = *rec;
    r->has_debug = 1;
    return 0;
}

int pp_jd_debug_next(const pp_jd_reader *r, const pp_jd_record *rec,
                     size_t *pos, pp_jd_debug_entry *out)
{
    const uint8_t *e = rec->u.debug.entries;
    size_t size = rec->u.debug.entries_size;
    const uint8_t *nul;

    if (rec->id != JIT_CODE_DEBUG_INFO || !e || *pos > size ||
        size - *pos < ENTRY_MIN)
        return 0;
    nul = memchr(e + *pos + 16, 0, size - *pos - 16);
    if (!nul)
        return 0;
    out->addr = rd64(r, e + *pos);
    out->lineno = (int32_t)rd32(r, e + *pos + 8);
    out->discrim = (int32_t)rd32(r, e + *pos + 12);
    out->name = (const char *)(e + *pos + 16);
    *pos = (size_t)(nul + 1 - e);
    return 1;
}

/* The pending debug record against the load it belongs to. */
static int check_debug(pp_jd_reader *r, const pp_jd_record *load)
{
    const pp_jd_record *d = &r->debug;
    uint64_t lo = load->u.load.code_addr, n = load->u.load.code_size;
    uint64_t last = 0;
    pp_jd_debug_entry e;
    size_t pos = 0;

    if (d->u.debug.code_addr != lo)
        return bad(r, d, "code_addr 0x%" PRIx64 " differs from 0x%" PRIx64
                   ", the address of the code load at offset %" PRIu64
                   " it belongs to", d->u.debug.code_addr, lo, load->offset);
    for (uint64_t i = 0; pp_jd_debug_next(r, d, &pos, &e); i++) {
        if (e.addr < lo || e.addr - lo > n)
            return bad(r, d, "debug entry %" PRIu64 " is at 0x%" PRIx64
                       ", outside the code [0x%" PRIx64 ", +%" PRIu64 "] of "
                       "the code load at offset %" PRIu64, i, e.addr, lo, n,
                       load->offset);
        if (e.addr < last)
            return bad(r, d, "debug entry %" PRIu64 " at 0x%" PRIx64 " comes "
                       "before the previous one at 0x%" PRIx64 " (entries "
                       "must be in address order)", i, e.addr, last);
        last = e.addr;
    }
    return 0;
}

static int check_unwinding(pp_jd_reader *r, const pp_jd_record *load)
{
    const pp_jd_record *u = &r->unwinding;
    char why[200];

    if (r->header.swapped)
        return 0;   /* the CFI bytes are in the other order; not checked */
    if (pp__ehframe_check(u->u.unwinding.data, u->u.unwinding.unwinding_size,
                          u->u.unwinding.eh_frame_hdr_size,
                          load->u.load.code_size, why, sizeof(why)) < 0)
        return bad(r, u, "for the code load at offset %" PRIu64 ": %s",
                   load->offset, why);
    return 0;
}

static int parse_load(pp_jd_reader *r, pp_jd_record *rec)
{
    const uint8_t *p = rec->bytes;
    const uint8_t *nul;
    uint64_t after_name;
    size_t name_len;
    int rc;

    if (rec->total_size < LOAD_MIN)
        return bad(r, rec, "total_size %" PRIu32 " is smaller than %zu (the "
                   "record header and at least an empty name)",
                   rec->total_size, LOAD_MIN);
    rec->u.load.pid = rd32(r, p + 16);
    rec->u.load.tid = rd32(r, p + 20);
    rec->u.load.vma = rd64(r, p + 24);
    rec->u.load.code_addr = rd64(r, p + 32);
    rec->u.load.code_size = rd64(r, p + 40);
    rec->u.load.code_index = rd64(r, p + 48);
    nul = memchr(p + sizeof(struct jr_code_load), 0,
                 rec->total_size - sizeof(struct jr_code_load));
    if (!nul)
        return bad(r, rec, "the name is not NUL-terminated within the "
                   "record's %" PRIu32 " bytes", rec->total_size);
    name_len = (size_t)(nul - (p + sizeof(struct jr_code_load)));
    after_name = rec->total_size - sizeof(struct jr_code_load) - name_len - 1;
    if (rec->u.load.code_size > after_name)
        return bad(r, rec, "code_size %" PRIu64 " is larger than the %" PRIu64
                   " bytes after the name", rec->u.load.code_size, after_name);
    if (rec->u.load.code_size < after_name)
        return bad(r, rec, "%" PRIu64 " bytes between the name and the %"
                   PRIu64 " bytes of code are not counted by code_size: a "
                   "padded code-load record (perf takes the code from the "
                   "record's end)", after_name - rec->u.load.code_size,
                   rec->u.load.code_size);
    if (rec->u.load.code_size == 0)
        return bad(r, rec, "code_size is 0 (\"%.80s\")",
                   (const char *)p + sizeof(struct jr_code_load));
    if (rec->u.load.pid != r->header.pid)
        return bad(r, rec, "pid %" PRIu32 " differs from the header's pid %"
                   PRIu32 ": perf would attach this code to another process",
                   rec->u.load.pid, r->header.pid);
    rc = index_add(r, rec->u.load.code_index);
    if (rc < 0)
        return oom(r, rec->offset);
    if (rc == 0)
        return bad(r, rec, "code_index %" PRIu64 " was used by an earlier code "
                   "load (perf writes both to jitted-%" PRIu32 "-%" PRIu64
                   ".so; the later overwrites the earlier)",
                   rec->u.load.code_index, rec->u.load.pid,
                   rec->u.load.code_index);
    rec->u.load.name = (const char *)p + sizeof(struct jr_code_load);
    rec->u.load.name_len = name_len;
    rec->u.load.code = p + rec->total_size - rec->u.load.code_size;
    rec->u.load.unwinding_at = -1;
    rec->u.load.debug_at = -1;
    if (r->has_unwinding) {
        rc = check_unwinding(r, rec);
        if (rc < 0)
            return rc;
        rec->u.load.unwinding_at = (int64_t)r->unwinding.offset;
        r->has_unwinding = 0;
    }
    if (r->has_debug) {
        rc = check_debug(r, rec);
        if (rc < 0)
            return rc;
        rec->u.load.debug_at = (int64_t)r->debug.offset;
        r->has_debug = 0;
    }
    return 0;
}

/* The file ends with an unwinding or debug record whose code load never
 * came: the writer (one write per group) was killed inside it. */
static int at_end(pp_jd_reader *r)
{
    int rc = 0;

    if (r->has_unwinding)
        rc = fail(r, r->unwinding.offset, "JIT_CODE_UNWINDING_INFO record "
                  "at offset %" PRIu64 " belongs to no code load: the file "
                  "ends first", r->unwinding.offset);
    else if (r->has_debug)
        rc = fail(r, r->debug.offset, "JIT_CODE_DEBUG_INFO record at offset "
                  "%" PRIu64 " belongs to no code load: the file ends first",
                  r->debug.offset);
    if (rc < 0)
        r->error.cut = 1;
    return rc;
}

int pp_jd_next(pp_jd_reader *r, pp_jd_record *rec)
{
    const uint8_t *p;
    size_t left;
    int rc = 0;

    if (r->error.err)
        return r->error.err;
    if (!r->started)
        return fail(r, 0, "the reader was not opened");
    if (r->pos >= r->size)
        return at_end(r);
    left = r->size - r->pos;
    p = r->data + r->pos;
    if (left < sizeof(struct jr_prefix)) {
        rc = fail(r, r->pos, "truncated record at offset %zu: %zu bytes "
                  "left, a record prefix alone is %zu", r->pos, left,
                  sizeof(struct jr_prefix));
        r->error.cut = 1;
        return rc;
    }
    memset(rec, 0, sizeof(*rec));
    rec->id = rd32(r, p);
    rec->total_size = rd32(r, p + 4);
    rec->timestamp = rd64(r, p + 8);
    rec->offset = r->pos;
    rec->bytes = p;
    if (rec->total_size < sizeof(struct jr_prefix))
        return bad(r, rec, "total_size %" PRIu32 " is smaller than the "
                   "16-byte record prefix", rec->total_size);
    if (rec->total_size > left) {
        rc = bad(r, rec, "total_size %" PRIu32 " runs past the end of the "
                 "file (%zu bytes left): truncated", rec->total_size, left);
        r->error.cut = 1;
        return rc;
    }
    switch (rec->id) {
    case JIT_CODE_LOAD:
        rc = parse_load(r, rec);
        break;
    case JIT_CODE_MOVE:
        if (rec->total_size < sizeof(struct jr_code_move))
            return bad(r, rec, "total_size %" PRIu32 " is smaller than the "
                       "%zu-byte record", rec->total_size,
                       sizeof(struct jr_code_move));
        rec->u.move.pid = rd32(r, p + 16);
        rec->u.move.tid = rd32(r, p + 20);
        rec->u.move.vma = rd64(r, p + 24);
        rec->u.move.old_code_addr = rd64(r, p + 32);
        rec->u.move.new_code_addr = rd64(r, p + 40);
        rec->u.move.code_size = rd64(r, p + 48);
        rec->u.move.code_index = rd64(r, p + 56);
        break;
    case JIT_CODE_DEBUG_INFO:
        rc = parse_debug(r, rec);
        break;
    case JIT_CODE_UNWINDING_INFO:
        rc = parse_unwinding(r, rec);
        break;
    default:   /* JIT_CODE_CLOSE has no payload; unknown types are skipped */
        break;
    }
    if (rc < 0)
        return rc;
    r->pos += rec->total_size;
    return 1;
}

/* Reads to the end, growing the buffer when the file grew since fstat. */
static int read_all(int fd, uint8_t **buf, size_t *cap, size_t *n)
{
    for (;;) {
        ssize_t got;

        if (*n == *cap) {
            uint8_t *p = realloc(*buf, *cap * 2);
            if (!p)
                return -ENOMEM;
            *buf = p;
            *cap *= 2;
        }
        got = read(fd, *buf + *n, *cap - *n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return -errno;
        if (got == 0)
            return 0;
        *n += (size_t)got;
    }
}

int pp_jd_read_file(const char *path, uint8_t **data, size_t *size)
{
    struct stat st;
    uint8_t *buf = NULL;
    size_t cap = 0, n = 0;
    int rc = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    *data = NULL;
    *size = 0;
    if (fd < 0)
        return -errno;
    if (fstat(fd, &st) != 0)
        rc = -errno;
    else if (!S_ISREG(st.st_mode))
        rc = -EINVAL;
    cap = rc == 0 && st.st_size > 0 ? (size_t)st.st_size + 1 : 4096;
    if (rc == 0 && !(buf = malloc(cap)))
        rc = -ENOMEM;
    if (rc == 0)
        rc = read_all(fd, &buf, &cap, &n);
    close(fd);
    if (rc < 0) {
        free(buf);
        return rc;
    }
    *data = buf;
    *size = n;
    return 0;
}
