/*
 * The exec fix-ups of a perf.data file (perf_data.h), on the report's own
 * copy, before `perf script` reads it. Records are walked as in the scan
 * (perf_data_format.h), with the same distrust: every size checked against
 * what remains, a record shorter than its header ends the walk.
 *
 * Processes that exec: perf's stale maps.
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
 * maps, and perf-map names are looked up by the real pid.
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
    uint64_t attr_size = pp__pd_u64(d + 16), attrs_off = pp__pd_u64(d + 24), attrs_size = pp__pd_u64(d + 32);

    if (attr_size < 48 || attrs_off > len || attrs_size < attr_size ||
        attrs_size > len - attrs_off)
        return -EINVAL;
    l->sample_type = pp__pd_u64(d + attrs_off + 24);
    l->id_all = (pp__pd_u64(d + attrs_off + 40) >> 18) & 1;
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
    *pid = pp__pd_u32(r + at);
    *time = pp__pd_u64(r + at + 8);
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
    *time = pp__pd_u64(r + size - n * 8 + ((st & ST_TID) ? 8 : 0));
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
    uint32_t pid = pp__pd_u32(p), tid = pp__pd_u32(p + tid_off), to = image_pid(x, pid, t);

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
        uint32_t type = pp__pd_u32(d + off);
        uint16_t size = pp__pd_u16(d + off + 6);
        uint8_t *r = d + off;
        uint64_t t;
        size_t at;
        int moved = 0;

        if (size < 8 || size > end - off)
            break;
        if ((type == PP_REC_MMAP || type == PP_REC_MMAP2 || type == PP_REC_COMM) && size >= 16 &&
            trailer_time(r, size, l, &t)) {
            moved = move_pid(r + 8, 4, x, t, write);
        } else if ((type == PP_REC_FORK || type == PP_REC_EXIT) && size >= 32) {
            t = pp__pd_u64(r + 24);
            moved = move_pid(r + 8, 8, x, t, write);     /* pid, tid */
            moved |= move_pid(r + 12, 8, x, t, write);   /* ppid, ptid */
        } else if (type == PP_REC_SAMPLE && (at = sample_pid_at(size, l)) != 0) {
            moved = move_pid(r + at, 4, x, pp__pd_u64(r + at + 8), write);
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
        uint32_t type = pp__pd_u32(d + off), pid = 0;
        uint16_t misc = pp__pd_u16(d + off + 4), size = pp__pd_u16(d + off + 6);
        const uint8_t *r = d + off;
        child *k;
        uint64_t t;

        if (size < 8 || size > end - off)
            break;
        if (samples) {
            if (type == PP_REC_SAMPLE && sample_pid_time(r, size, l, &pid, &t)) {
                k = find_child(*kids, *nkids, pid);
                if (k && t >= k->fork_time && t < k->exec_time)
                    k->before_exec++;
            }
        } else if (type == PP_REC_FORK && size >= 32) {
            uint32_t cpid = pp__pd_u32(r + 8), ppid = pp__pd_u32(r + 12), tid = pp__pd_u32(r + 16);
            if (cpid != ppid && cpid == tid && !(misc & MISC_FORK_EXEC)) {
                if (pp__grow((void **)kids, cap, *nkids + 1, sizeof(**kids)) < 0)
                    return -ENOMEM;
                (*kids)[(*nkids)++] = (child){cpid, (size_t)off, pp__pd_u64(r + 24), UINT64_MAX, 0};
            }
        } else if (type == PP_REC_COMM && (misc & MISC_COMM_EXEC) && size >= 16) {
            int timed = trailer_time(r, size, l, &t);
            k = find_child(*kids, *nkids, pp__pd_u32(r + 8));
            if (k && k->exec_time == UINT64_MAX)
                k->exec_time = timed ? t : 0;
            if (x && timed && add_exec(x, pp__pd_u32(r + 8), t) < 0)
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
    if (len < PP_PD_HEADER_MIN || pp__pd_u64(d) != PP_PD_MAGIC2 || pp__pd_u64(d + 8) < PP_PD_HEADER_MIN ||
        read_layout(d, len, &l) < 0)
        return 0;                       /* not a file this walks: leave it */
    off = pp__pd_u64(d + 40);
    end = pp__pd_u64(d + 48);
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
            uint16_t misc = (uint16_t)(pp__pd_u16(d + k->fork_off + 4) | MISC_FORK_EXEC);
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


int pp_perf_data_fix_exec_forks(const char *path, int write, size_t *count)
{
    struct stat st;
    void *map;
    int fd, rc;

    *count = 0;
    fd = open(path, (write ? O_RDWR : O_RDONLY) | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < PP_PD_HEADER_MIN) {
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

