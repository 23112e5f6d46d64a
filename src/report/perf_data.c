/*
 * A look inside a perf.data file without perf (format:
 * perf_data_format.h), and the finishing of one whose perf was killed.
 *
 * The scan reads three kinds of record: MMAP (1) and MMAP2 (10), whose file
 * name tells whether a jit-<pid>.dump was mapped (so the recording needs
 * `perf inject --jit`, and the folder later finds the dump's code loads:
 * jitdump_codes.c), LOST (2) and LOST_SAMPLES (13) for the events perf
 * dropped, and SAMPLE (9) to say "no samples" before running anything.
 * After the data, one section per feature bit set in the header ({u64
 * offset; u64 size} each, in bit order); HEADER_VERSION's holds the version
 * of the perf that wrote the file, which `perfpy report` names when an
 * older perf refuses the file.
 *
 * The file is hostile input: every offset and size is checked against the
 * file's length, a record shorter than its header ends the walk, strings
 * are bounded by their record. The scan maps it read-only; finishing a
 * recording whose perf was killed changes perfpy record's own recording in
 * place. The exec fix-ups are in perf_data_fix.c.
 */
#include "perf_data.h"
#include "perf_data_format.h"
#include "profile/htab.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define FEAT_VERSION 5                 /* HEADER_VERSION: { u32 len; char s[len] } */

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
    if (pp__grow((void **)&info->jitdumps, &info->jitdumps_cap, info->njitdumps + 1,
                 sizeof(char *)) < 0 ||
        !(info->jitdumps[info->njitdumps] = strndup((const char *)s, len))) {
        info->jitdumps_dropped++;
        return;
    }
    info->njitdumps++;
}

void pp_perf_data_info_free(pp_perf_data_info *info)
{
    for (size_t i = 0; i < info->njitdumps; i++)
        free(info->jitdumps[i]);
    free(info->jitdumps);
    info->jitdumps = NULL;
    info->njitdumps = info->jitdumps_cap = 0;
    free(info->tasks);
    info->tasks = NULL;
    info->ntasks = info->tasks_cap = 0;
}

/* The HEADER_VERSION string into out[cap] ("" when absent or damaged):
 * the feature sections follow the data section, one per bit set before it. */
static void read_version(const uint8_t *d, size_t len, char *out, size_t cap)
{
    uint64_t at = pp__pd_u64(d + 40) + pp__pd_u64(d + 48), off, size, slen;
    unsigned before = 0;

    out[0] = '\0';
    if (!(d[PP_PD_FEATURES_AT + FEAT_VERSION / 8] & (1u << FEAT_VERSION % 8)))
        return;
    for (unsigned bit = 0; bit < FEAT_VERSION; bit++)
        before += (d[PP_PD_FEATURES_AT + bit / 8] >> bit % 8) & 1;
    if (at < pp__pd_u64(d + 40) || at > len || (len - at) / 16 <= before)
        return;
    off = pp__pd_u64(d + at + 16 * before);
    size = pp__pd_u64(d + at + 16 * before + 8);
    if (off > len || size > len - off || size < 4)
        return;
    slen = pp__pd_u32(d + off);
    if (slen > size - 4)
        return;
    slen = strnlen((const char *)d + off + 4, slen);
    if (slen == 0 || slen >= cap)
        return;
    for (uint64_t i = 0; i < slen; i++)   /* a version is printable ASCII */
        if (d[off + 4 + i] < 0x20 || d[off + 4 + i] > 0x7e)
            return;
    memcpy(out, d + off + 4, slen);
    out[slen] = '\0';
}

/* A FORK or EXIT record: { header, u32 pid, ppid, tid, ptid, u64 time }.
 * Best effort: one that cannot be kept (out of memory) is not said. */
static void add_task(pp_perf_data_info *info, uint32_t kind, const uint8_t *r)
{
    struct pp_task_event *t;

    if (pp__grow((void **)&info->tasks, &info->tasks_cap, info->ntasks + 1, sizeof(*t)) < 0)
        return;
    t = &info->tasks[info->ntasks++];
    t->kind = kind;
    t->pid = pp__pd_u32(r + 8);
    t->ppid = pp__pd_u32(r + 12);
    t->tid = pp__pd_u32(r + 16);
    t->time = pp__pd_u64(r + 24);
}

int pp_perf_data_scan_buffer(const uint8_t *d, size_t len, pp_perf_data_info *info)
{
    uint64_t hsize, off, size, end;

    memset(info, 0, sizeof(*info));
    if (len < 16 || memcmp(d, "PERFILE", 7) != 0)
        return -EINVAL;
    if (pp__pd_u64(d) != PP_PD_MAGIC2)
        return 0;                       /* byte-swapped or version 1 */
    hsize = pp__pd_u64(d + 8);
    if (hsize < PP_PD_HEADER_MIN || len < PP_PD_HEADER_MIN)
        return 0;                       /* pipe mode: header only */
    off = pp__pd_u64(d + 40);
    size = pp__pd_u64(d + 48);
    if (off > len || size > len - off)
        return -EINVAL;                 /* truncated or corrupt */
    if (hsize >= PP_PD_FEATURES_END && len >= PP_PD_FEATURES_END)
        read_version(d, len, info->perf_version, sizeof(info->perf_version));
    end = off + size;
    while (off + 8 <= end) {
        uint32_t type = pp__pd_u32(d + off);
        uint16_t rsize = pp__pd_u16(d + off + 6);
        const uint8_t *r = d + off;

        if (rsize < 8 || rsize > end - off)
            break;                      /* corrupt: keep what was counted */
        switch (type) {
        case PP_REC_SAMPLE:
            info->samples++;
            break;
        case PP_REC_LOST:
            if (rsize >= 24)
                info->lost += pp__pd_u64(r + 16);
            break;
        case PP_REC_LOST_SAMPLES:
            if (rsize >= 16)
                info->lost += pp__pd_u64(r + 8);
            break;
        case PP_REC_MMAP:
            if (rsize > 40)
                add_jitdump(info, r + 40, rsize - 40);
            break;
        case PP_REC_MMAP2:
            if (rsize > 72)
                add_jitdump(info, r + 72, rsize - 72);
            break;
        case PP_REC_FORK:
        case PP_REC_EXIT:
            if (rsize >= 32)
                add_task(info, type == PP_REC_FORK ? PP_TASK_FORK : PP_TASK_EXIT, r);
            break;
        case PP_REC_COMPRESSED:
            return 0;                   /* records we cannot see: unknown */
        default:
            break;
        }
        off += rsize;
    }
    info->scanned = 1;
    return 0;
}


/* The whole file mapped read-only, handed to fn. A mapping, where a
 * jitdump is copied (pp_jd_read_file): a perf.data is read once its perf
 * has stopped (perf writes the header's data size last; record finishes a
 * killed one first), perf never cuts one in place (it renames an old one to
 * perf.data.old), and it can be gigabytes. */
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

static int scan_fn(const uint8_t *d, size_t len, void *ctx)
{
    return pp_perf_data_scan_buffer(d, len, ctx);
}

int pp_perf_data_scan(const char *path, pp_perf_data_info *info)
{
    memset(info, 0, sizeof(*info));
    return with_map(path, scan_fn, info);
}


int pp_perf_data_finish_buffer(uint8_t *d, size_t len, uint64_t *bytes)
{
    uint64_t off, end;

    *bytes = 0;
    if (len < PP_PD_FEATURES_END || pp__pd_u64(d) != PP_PD_MAGIC2 || pp__pd_u64(d + 8) < PP_PD_FEATURES_END ||
        pp__pd_u64(d + 48) != 0)
        return 0;                       /* finished, or not a file this walks */
    off = pp__pd_u64(d + 40);
    if (off < PP_PD_FEATURES_END || off >= len)
        return 0;
    for (end = off; len - end >= 8; end += pp__pd_u16(d + end + 6))
        if (pp__pd_u16(d + end + 6) < 8 || pp__pd_u16(d + end + 6) > len - end)
            break;                      /* the record perf was writing */
    if (end == off)
        return 0;
    *bytes = end - off;
    memcpy(d + 48, bytes, 8);
    memset(d + PP_PD_FEATURES_AT, 0, PP_PD_FEATURES_END - PP_PD_FEATURES_AT);
    return 0;
}

int pp_perf_data_finish(const char *path, uint64_t *bytes)
{
    struct stat st;
    uint64_t cut = 0;
    void *map;
    int fd, rc;

    *bytes = 0;
    fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -errno;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < PP_PD_FEATURES_END) {
        close(fd);
        return 0;
    }
    map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) {
        rc = -errno;
        close(fd);
        return rc;
    }
    rc = pp_perf_data_finish_buffer(map, (size_t)st.st_size, bytes);
    if (rc == 0 && *bytes) {
        cut = pp__pd_u64((const uint8_t *)map + 40) + *bytes;
        if (msync(map, (size_t)st.st_size, MS_SYNC) != 0)
            rc = -errno;
    }
    munmap(map, (size_t)st.st_size);
    if (rc == 0 && *bytes && ftruncate(fd, (off_t)cut) != 0)
        rc = -errno;
    close(fd);
    return rc;
}

