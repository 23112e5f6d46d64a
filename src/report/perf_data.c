/*
 * Walks the records of a perf.data file (format: Linux
 * tools/perf/Documentation/perf.data-file-format.txt) without perf:
 *
 *     header "PERFILE2" | attrs | data: { u32 type; u16 misc; u16 size; body }...
 *
 * After the data, one section per feature bit set in the header ({u64
 * offset; u64 size} each, in bit order); HEADER_VERSION's holds the version
 * of the perf that wrote the file, which `perfpy report` names when an
 * older perf refuses the file.
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
 * are bounded by their record. The scan maps it read-only; the fix-ups
 * (fork-exec marks, finishing a recording whose perf was killed) change
 * perfpy record's own recordings in place.
 */
#include "perf_data.h"
#include "htab.h"
#include "perfpy/jitdump_format.h"
#include "perfpy/jitdump_read.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC2 0x32454c4946524550ull   /* "PERFILE2" little-endian */
#define HEADER_MIN 72                  /* magic..data section */
#define FEATURES_AT 72                 /* the header's 256 feature bits */
#define FEATURES_END 104
#define FEAT_VERSION 5                 /* HEADER_VERSION: { u32 len; char s[len] } */

enum {
    REC_MMAP = 1,
    REC_LOST = 2,
    REC_COMM = 3,
    REC_EXIT = 4,
    REC_FORK = 7,
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
}

/* The HEADER_VERSION string into out[cap] ("" when absent or damaged):
 * the feature sections follow the data section, one per bit set before it. */
static void read_version(const uint8_t *d, size_t len, char *out, size_t cap)
{
    uint64_t at = rd64(d + 40) + rd64(d + 48), off, size, slen;
    unsigned before = 0;

    out[0] = '\0';
    if (!(d[FEATURES_AT + FEAT_VERSION / 8] & (1u << FEAT_VERSION % 8)))
        return;
    for (unsigned bit = 0; bit < FEAT_VERSION; bit++)
        before += (d[FEATURES_AT + bit / 8] >> bit % 8) & 1;
    if (at < rd64(d + 40) || at > len || (len - at) / 16 <= before)
        return;
    off = rd64(d + at + 16 * before);
    size = rd64(d + at + 16 * before + 8);
    if (off > len || size > len - off || size < 4)
        return;
    slen = rd32(d + off);
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
    if (hsize >= FEATURES_END && len >= FEATURES_END)
        read_version(d, len, info->perf_version, sizeof(info->perf_version));
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
    size_t count = 0, cap = 0;
    uint64_t debug_addr = 0;
    int debug_line = 0, rc;
    pp_jd_reader r;
    pp_jd_record rec;

    *out = NULL;
    *n = 0;
    if (pp_jd_open(&r, d, len) < 0) {
        pp_jd_close(&r);
        return 0;                             /* not a dump: no codes */
    }
    /* The reader stops at the first bad record (a dump cut by SIGKILL ends
     * with one): the code loads before it are kept. */
    while ((rc = pp_jd_next(&r, &rec)) > 0) {
        if (rec.id == JIT_CODE_DEBUG_INFO && rec.u.debug.nr_entry > 0) {
            debug_addr = rec.u.debug.code_addr;
            debug_line = (int)rd32(rec.u.debug.entries + 8);
        } else if (rec.id == JIT_CODE_LOAD) {
            if (count == cap) {
                size_t c = cap ? cap * 2 : 256;
                pp_jit_code *nc = realloc(codes, c * sizeof(*nc));
                if (!nc) {
                    free(codes);
                    pp_jd_close(&r);
                    return -ENOMEM;
                }
                codes = nc;
                cap = c;
            }
            codes[count].addr = rec.u.load.code_addr;
            codes[count].index = rec.u.load.code_index;
            codes[count].line = rec.u.load.debug_at >= 0 && debug_addr == rec.u.load.code_addr &&
                                        debug_line > 0 ? debug_line : 0;
            count++;
            debug_addr = 0;
        }
    }
    pp_jd_close(&r);
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

/* ---- processes that exec: perf's stale maps ---------------------------------
 *
 * perf 6.x clones the parent's maps into a forked child and keeps them after
 * the child execs; its libunwind unwinder then takes the lowest mapping of a
 * library in the child (a stale one of the parent's, when ASLR put the
 * parent's copy lower) as the library's base, misreads .eh_frame_hdr, and
 * stops every stack at its first frame (seen on about half of the
 * `subprocess` children of a Python program). perf itself marks the forks
 * it synthesizes PERF_RECORD_MISC_FORK_EXEC ("do not clone the parent's
 * maps"); setting that bit on the FORK record of each child that execs
 * before it is sampled gives the same clean start.
 *
 * The same happens without a fork: perf keeps a process's own mappings
 * across its exec. `perfpy record` starts the program through `perfpy
 * __exec` (perfpy maps libc and libz, then execs python), `perfpy run` does
 * the same under a hand-made `perf record`, and pyenv's shims are bash
 * scripts that exec python: whenever ASLR put the old image's libc or libz
 * below the new one, every stack that reaches libc or libz stops there
 * (about half of all recordings; a zlib-heavy program lost 85-95% of its
 * stacks). So, in recordings with DWARF call graphs (the only ones perf
 * unwinds from maps), each image a process ran before its last exec gets a
 * pid of its own, pid + k * 2^22 for the k-th image (above any real pid):
 * the image's MMAP, COMM, FORK/EXIT and SAMPLE records move there, so its
 * own samples keep their maps and the last image starts clean.
 * Frame-pointer recordings are left alone: nothing there is unwound from
 * maps, and perf-map names are looked up by the real pid. */

#define MISC_FORK_EXEC (1u << 13)
#define MISC_COMM_EXEC (1u << 13)
#define ST_IP (1ull << 0)
#define ST_TID (1ull << 1)
#define ST_TIME (1ull << 2)
#define ST_ID (1ull << 6)
#define ST_CPU (1ull << 7)
#define ST_STREAM_ID (1ull << 9)
#define ST_STACK_USER (1ull << 13)
#define ST_IDENTIFIER (1ull << 16)
#define IMAGE_PID_STEP (1u << 22)      /* above PID_MAX_LIMIT: never a real pid */
#define MAX_IMAGES 511                 /* pid + 511 * 2^22 stays below 2^31 */

typedef struct child {
    uint32_t pid;
    size_t fork_off;            /* the FORK record in the file */
    uint64_t fork_time;
    uint64_t exec_time;         /* first COMM exec; UINT64_MAX: none */
    uint64_t before_exec;       /* samples of the child before its exec */
} child;

/* A child sampled this often between fork and exec ran code of its own
 * (a worker that execs later): its cloned maps are kept. The few samples a
 * subprocess's fork-to-exec window gets are not worth the risk of every
 * later stack of the child stopping at its first frame. */
#define MAX_SAMPLES_BEFORE_EXEC 3

typedef struct layout {
    uint64_t sample_type;
    int id_all;                 /* non-sample records carry a sample_id trailer */
} layout;

static int read_layout(const uint8_t *d, size_t len, layout *l)
{
    uint64_t attr_size = rd64(d + 16), attrs_off = rd64(d + 24), attrs_size = rd64(d + 32);

    if (attr_size < 48 || attrs_off > len || attrs_size < attr_size ||
        attrs_size > len - attrs_off)
        return -EINVAL;
    l->sample_type = rd64(d + attrs_off + 24);
    l->id_all = (rd64(d + attrs_off + 40) >> 18) & 1;
    return 0;
}

/* Offset of the pid of a SAMPLE record (tid follows, then time), 0 if the
 * layout lacks pid or time. */
static size_t sample_pid_at(uint16_t size, const layout *l)
{
    size_t at = 8;

    if (!(l->sample_type & ST_TID) || !(l->sample_type & ST_TIME))
        return 0;
    at += (l->sample_type & ST_IDENTIFIER) ? 8 : 0;
    at += (l->sample_type & ST_IP) ? 8 : 0;
    return at + 16 <= size ? at : 0;
}

/* pid and time of a SAMPLE record, 0 if the layout lacks them. */
static int sample_pid_time(const uint8_t *r, uint16_t size, const layout *l,
                           uint32_t *pid, uint64_t *time)
{
    size_t at = sample_pid_at(size, l);

    if (!at)
        return 0;
    *pid = rd32(r + at);
    *time = rd64(r + at + 8);
    return 1;
}

/* Time from a non-sample record's sample_id trailer. */
static int trailer_time(const uint8_t *r, uint16_t size, const layout *l, uint64_t *time)
{
    uint64_t st = l->sample_type;
    size_t n = 0;

    if (!l->id_all || !(st & ST_TIME))
        return 0;
    n += !!(st & ST_TID) + !!(st & ST_TIME) + !!(st & ST_ID) + !!(st & ST_STREAM_ID) +
         !!(st & ST_CPU) + !!(st & ST_IDENTIFIER);
    if (size < 8 + n * 8)
        return 0;
    *time = rd64(r + size - n * 8 + ((st & ST_TID) ? 8 : 0));
    return 1;
}

/* The execs of every process, sorted by pid then time. */
typedef struct exec_ev {
    uint32_t pid;
    uint64_t time;
} exec_ev;

typedef struct execs {
    exec_ev *v;
    size_t n, cap;
} execs;

static int add_exec(execs *x, uint32_t pid, uint64_t time)
{
    if (pid == 0 || pid >= IMAGE_PID_STEP)
        return 0;
    if (pp__grow((void **)&x->v, &x->cap, x->n + 1, sizeof(*x->v)) < 0)
        return -ENOMEM;
    x->v[x->n++] = (exec_ev){pid, time};
    return 0;
}

static int cmp_exec(const void *a, const void *b)
{
    const exec_ev *x = a, *y = b;

    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return x->time < y->time ? -1 : x->time > y->time;
}

/* The pid of the image that pid ran at time t: pid itself from its last
 * exec on, else pid + k * IMAGE_PID_STEP for its k-th image. */
static uint32_t image_pid(const execs *x, uint32_t pid, uint64_t t)
{
    size_t lo = 0, hi = x->n, k = 1;

    if (pid == 0 || pid >= IMAGE_PID_STEP)
        return pid;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (x->v[mid].pid < pid)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < x->n && x->v[lo].pid == pid; lo++, k++)
        if (x->v[lo].time > t)
            return k <= MAX_IMAGES ? pid + (uint32_t)k * IMAGE_PID_STEP : pid;
    return pid;
}

/* Moves the pid/tid pair at p (and p + tid_off) to the image pid of time
 * t; 1 if it moves. */
static int move_pid(uint8_t *p, size_t tid_off, const execs *x, uint64_t t, int write)
{
    uint32_t pid = rd32(p), tid = rd32(p + tid_off), to = image_pid(x, pid, t);

    if (to == pid)
        return 0;
    if (write) {
        memcpy(p, &to, 4);
        if (tid != 0 && tid < IMAGE_PID_STEP) {
            tid += to - pid;
            memcpy(p + tid_off, &tid, 4);
        }
    }
    return 1;
}

/* One walk that gives every record of an image before a process's last
 * exec that image's pid (see above). *count: records that move. */
static void split_images(uint8_t *d, uint64_t off, uint64_t end, const layout *l,
                         const execs *x, int write, size_t *count)
{
    while (off + 8 <= end) {
        uint32_t type = rd32(d + off);
        uint16_t size = rd16(d + off + 6);
        uint8_t *r = d + off;
        uint64_t t;
        size_t at;
        int moved = 0;

        if (size < 8 || size > end - off)
            break;
        if ((type == REC_MMAP || type == REC_MMAP2 || type == REC_COMM) && size >= 16 &&
            trailer_time(r, size, l, &t)) {
            moved = move_pid(r + 8, 4, x, t, write);
        } else if ((type == REC_FORK || type == REC_EXIT) && size >= 32) {
            t = rd64(r + 24);
            moved = move_pid(r + 8, 8, x, t, write);     /* pid, tid */
            moved |= move_pid(r + 12, 8, x, t, write);   /* ppid, ptid */
        } else if (type == REC_SAMPLE && (at = sample_pid_at(size, l)) != 0) {
            moved = move_pid(r + at, 4, x, rd64(r + at + 8), write);
        }
        *count += (size_t)moved;
        off += size;
    }
}

static child *find_child(child *c, size_t n, uint32_t pid)
{
    for (size_t i = n; i-- > 0;)      /* the latest fork of that pid */
        if (c[i].pid == pid)
            return &c[i];
    return NULL;
}

/* One walk over the data section: forks and execs (samples = 0), or the
 * samples of those children taken between their fork and exec (samples = 1;
 * a second walk, because records of different CPUs are not in time order). */
static int walk_forks(const uint8_t *d, uint64_t off, uint64_t end, const layout *l,
                      int samples, child **kids, size_t *nkids, size_t *cap, execs *x)
{
    while (off + 8 <= end) {
        uint32_t type = rd32(d + off), pid = 0;
        uint16_t misc = rd16(d + off + 4), size = rd16(d + off + 6);
        const uint8_t *r = d + off;
        child *k;
        uint64_t t;

        if (size < 8 || size > end - off)
            break;
        if (samples) {
            if (type == REC_SAMPLE && sample_pid_time(r, size, l, &pid, &t)) {
                k = find_child(*kids, *nkids, pid);
                if (k && t >= k->fork_time && t < k->exec_time)
                    k->before_exec++;
            }
        } else if (type == REC_FORK && size >= 32) {
            uint32_t cpid = rd32(r + 8), ppid = rd32(r + 12), tid = rd32(r + 16);
            if (cpid != ppid && cpid == tid && !(misc & MISC_FORK_EXEC)) {
                if (*nkids == *cap) {
                    size_t c = *cap ? *cap * 2 : 32;
                    child *nk = realloc(*kids, c * sizeof(*nk));
                    if (!nk)
                        return -ENOMEM;
                    *kids = nk;
                    *cap = c;
                }
                (*kids)[(*nkids)++] = (child){cpid, (size_t)off, rd64(r + 24), UINT64_MAX, 0};
            }
        } else if (type == REC_COMM && (misc & MISC_COMM_EXEC) && size >= 16) {
            int timed = trailer_time(r, size, l, &t);
            k = find_child(*kids, *nkids, rd32(r + 8));
            if (k && k->exec_time == UINT64_MAX)
                k->exec_time = timed ? t : 0;
            if (x && timed && add_exec(x, rd32(r + 8), t) < 0)
                return -ENOMEM;
        }
        off += size;
    }
    return 0;
}

int pp_perf_data_fix_exec_forks_buffer(uint8_t *d, size_t len, int write, size_t *count)
{
    child *kids = NULL, *k;
    size_t nkids = 0, cap = 0;
    execs x = {NULL, 0, 0};
    uint64_t off, end;
    layout l;
    int rc, dwarf;

    *count = 0;
    if (len < HEADER_MIN || rd64(d) != MAGIC2 || rd64(d + 8) < HEADER_MIN ||
        read_layout(d, len, &l) < 0)
        return 0;                       /* not a file this walks: leave it */
    off = rd64(d + 40);
    end = rd64(d + 48);
    if (off > len || end > len - off)
        return -EINVAL;
    end += off;
    dwarf = (l.sample_type & ST_STACK_USER) && l.id_all;
    rc = walk_forks(d, off, end, &l, 0, &kids, &nkids, &cap, dwarf ? &x : NULL);
    if (rc == 0 && nkids)
        rc = walk_forks(d, off, end, &l, 1, &kids, &nkids, &cap, NULL);
    for (size_t i = 0; rc == 0 && i < nkids; i++) {
        k = &kids[i];
        /* exec'd, and (nearly) not sampled before it: nothing of the
         * parent's worth keeping */
        if (k->exec_time == UINT64_MAX || k->exec_time == 0 ||
            k->before_exec > MAX_SAMPLES_BEFORE_EXEC)
            continue;
        if (write) {
            uint16_t misc = (uint16_t)(rd16(d + k->fork_off + 4) | MISC_FORK_EXEC);
            memcpy(d + k->fork_off + 4, &misc, 2);
        }
        (*count)++;
    }
    if (rc == 0 && x.n) {
        qsort(x.v, x.n, sizeof(*x.v), cmp_exec);
        split_images(d, off, end, &l, &x, write, count);
    }
    free(kids);
    free(x.v);
    return rc;
}

int pp_perf_data_finish_buffer(uint8_t *d, size_t len, uint64_t *bytes)
{
    uint64_t off, end;

    *bytes = 0;
    if (len < FEATURES_END || rd64(d) != MAGIC2 || rd64(d + 8) < FEATURES_END ||
        rd64(d + 48) != 0)
        return 0;                       /* finished, or not a file this walks */
    off = rd64(d + 40);
    if (off < FEATURES_END || off >= len)
        return 0;
    for (end = off; len - end >= 8; end += rd16(d + end + 6))
        if (rd16(d + end + 6) < 8 || rd16(d + end + 6) > len - end)
            break;                      /* the record perf was writing */
    if (end == off)
        return 0;
    *bytes = end - off;
    memcpy(d + 48, bytes, 8);
    memset(d + FEATURES_AT, 0, FEATURES_END - FEATURES_AT);
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
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < FEATURES_END) {
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
        cut = rd64((const uint8_t *)map + 40) + *bytes;
        if (msync(map, (size_t)st.st_size, MS_SYNC) != 0)
            rc = -errno;
    }
    munmap(map, (size_t)st.st_size);
    if (rc == 0 && *bytes && ftruncate(fd, (off_t)cut) != 0)
        rc = -errno;
    close(fd);
    return rc;
}

int pp_perf_data_fix_exec_forks(const char *path, int write, size_t *count)
{
    struct stat st;
    void *map;
    int fd, rc;

    *count = 0;
    fd = open(path, (write ? O_RDWR : O_RDONLY) | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < HEADER_MIN) {
        close(fd);
        return 0;
    }
    map = mmap(NULL, (size_t)st.st_size, write ? PROT_READ | PROT_WRITE : PROT_READ,
               MAP_SHARED, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        return -errno;
    rc = pp_perf_data_fix_exec_forks_buffer(map, (size_t)st.st_size, write, count);
    if (write && rc == 0 && *count && msync(map, (size_t)st.st_size, MS_SYNC) != 0)
        rc = -errno;
    munmap(map, (size_t)st.st_size);
    return rc;
}
