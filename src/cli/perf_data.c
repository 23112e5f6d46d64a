/*
 * Walks the records of a perf.data file (format: Linux
 * tools/perf/Documentation/perf.data-file-format.txt) without perf:
 *
 *     header "PERFILE2" | attrs | data: { u32 type; u16 misc; u16 size; body }...
 *
 * Only three record types matter here: MMAP (1) and MMAP2 (10), whose file
 * name tells whether a jit-<pid>.dump was mapped (so the recording needs
 * `perf inject --jit`), LOST (2) and LOST_SAMPLES (13) for the events perf
 * dropped, and SAMPLE (9) to say "no samples" before running anything.
 *
 * Also here: the code loads of a jitdump (include/perfpy/jitdump_format.h),
 * which the folder needs after `perf inject --jit` to give Python frames
 * their def lines.
 *
 * The file is hostile input: every offset and size is checked against the
 * file's length, a record shorter than its header ends the walk, strings
 * are bounded by their record. The file is mapped read-only; it is never
 * written.
 */
#include "perf_data.h"
#include "perfpy/jitdump_format.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC2 0x32454c4946524550ull   /* "PERFILE2" little-endian */
#define HEADER_MIN 72                  /* magic..data section */

enum {
    REC_MMAP = 1,
    REC_LOST = 2,
    REC_SAMPLE = 9,
    REC_MMAP2 = 10,
    REC_LOST_SAMPLES = 13,
    REC_COMPRESSED = 81,
};

static uint64_t rd64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static uint32_t rd32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static uint16_t rd16(const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, 2);
    return v;
}

/* "…/jit-<digits>.dump" */
static int is_jitdump(const char *name, size_t len)
{
    const char *base = name;
    size_t i, bl;

    for (i = 0; i < len; i++)
        if (name[i] == '/')
            base = name + i + 1;
    bl = len - (size_t)(base - name);
    if (bl < 10 || memcmp(base, "jit-", 4) != 0 || memcmp(base + bl - 5, ".dump", 5) != 0)
        return 0;
    for (i = 4; i < bl - 5; i++)
        if (base[i] < '0' || base[i] > '9')
            return 0;
    return 1;
}

static void add_jitdump(pp_perf_data_info *info, const uint8_t *s, size_t max)
{
    size_t len = strnlen((const char *)s, max);

    if (!len || len >= PATH_MAX || !is_jitdump((const char *)s, len))
        return;
    for (size_t i = 0; i < info->njitdumps; i++)
        if (strlen(info->jitdumps[i]) == len && memcmp(info->jitdumps[i], s, len) == 0)
            return;
    if (info->njitdumps < PP_MAX_JITDUMPS) {
        memcpy(info->jitdumps[info->njitdumps], s, len);
        info->jitdumps[info->njitdumps++][len] = '\0';
    }
}

int pp_perf_data_scan_buffer(const uint8_t *d, size_t len, pp_perf_data_info *info)
{
    uint64_t hsize, off, size, end;

    memset(info, 0, sizeof(*info));
    if (len < 16 || memcmp(d, "PERFILE", 7) != 0)
        return -EINVAL;
    if (rd64(d) != MAGIC2)
        return 0;                       /* byte-swapped or version 1 */
    hsize = rd64(d + 8);
    if (hsize < HEADER_MIN || len < HEADER_MIN)
        return 0;                       /* pipe mode: header only */
    off = rd64(d + 40);
    size = rd64(d + 48);
    if (off > len || size > len - off)
        return -EINVAL;                 /* truncated or corrupt */
    end = off + size;
    while (off + 8 <= end) {
        uint32_t type = rd32(d + off);
        uint16_t rsize = rd16(d + off + 6);
        const uint8_t *r = d + off;

        if (rsize < 8 || rsize > end - off)
            break;                      /* corrupt: keep what was counted */
        switch (type) {
        case REC_SAMPLE:
            info->samples++;
            break;
        case REC_LOST:
            if (rsize >= 24)
                info->lost += rd64(r + 16);
            break;
        case REC_LOST_SAMPLES:
            if (rsize >= 16)
                info->lost += rd64(r + 8);
            break;
        case REC_MMAP:
            if (rsize > 40)
                add_jitdump(info, r + 40, rsize - 40);
            break;
        case REC_MMAP2:
            if (rsize > 72)
                add_jitdump(info, r + 72, rsize - 72);
            break;
        case REC_COMPRESSED:
            return 0;                   /* records we cannot see: unknown */
        default:
            break;
        }
        off += rsize;
    }
    info->scanned = 1;
    return 0;
}

static int cmp_code(const void *a, const void *b)
{
    const pp_jit_code *x = a, *y = b;
    return (x->index > y->index) - (x->index < y->index);
}

int pp_jitdump_codes_buffer(const uint8_t *d, size_t len, pp_jit_code **out, size_t *n)
{
    pp_jit_code *codes = NULL;
    size_t count = 0, cap = 0, off;
    uint64_t debug_addr = 0;
    int debug_line = 0;

    *out = NULL;
    *n = 0;
    if (len < sizeof(struct jitheader) || rd32(d) != JITHEADER_MAGIC)
        return 0;                             /* not ours, or byte-swapped */
    off = rd32(d + 8);                        /* header total_size */
    while (off >= sizeof(struct jitheader) && off <= len &&
           len - off >= sizeof(struct jr_prefix)) {
        uint32_t id = rd32(d + off), size = rd32(d + off + 4);
        const uint8_t *r = d + off;

        if (size < sizeof(struct jr_prefix) || size > len - off)
            break;
        if (id == JIT_CODE_DEBUG_INFO && size >= sizeof(struct jr_code_debug_info) +
                                                 sizeof(struct debug_entry)) {
            debug_addr = rd64(r + 16);
            debug_line = (int)rd32(r + sizeof(struct jr_code_debug_info) + 8);
        } else if (id == JIT_CODE_LOAD && size >= sizeof(struct jr_code_load)) {
            if (count == cap) {
                size_t c = cap ? cap * 2 : 256;
                pp_jit_code *nc = realloc(codes, c * sizeof(*nc));
                if (!nc) {
                    free(codes);
                    return -ENOMEM;
                }
                codes = nc;
                cap = c;
            }
            codes[count].addr = rd64(r + 32);
            codes[count].index = rd64(r + 48);
            codes[count].line = debug_addr == codes[count].addr && debug_line > 0 ? debug_line : 0;
            count++;
            debug_addr = 0;
        }
        off += size;
    }
    if (count)
        qsort(codes, count, sizeof(*codes), cmp_code);
    *out = codes;
    *n = count;
    return 0;
}

/* The whole file mapped read-only, handed to fn. */
static int with_map(const char *path, int (*fn)(const uint8_t *, size_t, void *), void *ctx)
{
    struct stat st;
    void *map;
    int fd, rc;

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    if (fstat(fd, &st) != 0) {
        rc = -errno;
        close(fd);
        return rc;
    }
    if (S_ISDIR(st.st_mode)) {
        close(fd);
        return -EISDIR;
    }
    if (!S_ISREG(st.st_mode) || st.st_size < 16) {
        close(fd);
        return -EINVAL;
    }
    map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        return -errno;
    rc = fn(map, (size_t)st.st_size, ctx);
    munmap(map, (size_t)st.st_size);
    return rc;
}

typedef struct codes_ctx {
    pp_jit_code **out;
    size_t *n;
} codes_ctx;

static int codes_fn(const uint8_t *d, size_t len, void *ctx)
{
    codes_ctx *c = ctx;
    return pp_jitdump_codes_buffer(d, len, c->out, c->n);
}

int pp_jitdump_codes(const char *path, pp_jit_code **out, size_t *n)
{
    codes_ctx c = {out, n};
    int rc;

    *out = NULL;
    *n = 0;
    rc = with_map(path, codes_fn, &c);
    return rc == -EINVAL ? 0 : rc;
}

static int scan_fn(const uint8_t *d, size_t len, void *ctx)
{
    return pp_perf_data_scan_buffer(d, len, ctx);
}

int pp_perf_data_scan(const char *path, pp_perf_data_info *info)
{
    memset(info, 0, sizeof(*info));
    return with_map(path, scan_fn, info);
}
