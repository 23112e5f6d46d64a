/*
 * Wall-clock mode's reasons and open captures (see wall.h).
 */
#include "wall.h"
#include "profile/raw.h"
#include "profile/htab.h"
#include "profile/profile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* x86_64 system call numbers (arch/x86/entry/syscalls/syscall_64.tbl). */
enum {
    NR_READ = 0, NR_WRITE = 1, NR_OPEN = 2, NR_CLOSE = 3, NR_STAT = 4, NR_FSTAT = 5,
    NR_LSTAT = 6, NR_POLL = 7, NR_PREAD64 = 17, NR_PWRITE64 = 18, NR_READV = 19,
    NR_WRITEV = 20, NR_SELECT = 23, NR_MSYNC = 26, NR_PAUSE = 34, NR_NANOSLEEP = 35,
    NR_SENDFILE = 40, NR_CONNECT = 42, NR_ACCEPT = 43, NR_SENDTO = 44, NR_RECVFROM = 45,
    NR_SENDMSG = 46, NR_RECVMSG = 47, NR_SEMOP = 65, NR_FCNTL = 72, NR_FLOCK = 73,
    NR_FSYNC = 74, NR_FDATASYNC = 75, NR_TRUNCATE = 76, NR_FTRUNCATE = 77,
    NR_GETDENTS = 78, NR_RENAME = 82, NR_MKDIR = 83, NR_RMDIR = 84, NR_UNLINK = 87,
    NR_SYNC = 162, NR_FUTEX = 202, NR_IO_GETEVENTS = 208, NR_GETDENTS64 = 217,
    NR_SEMTIMEDOP = 220, NR_CLOCK_NANOSLEEP = 230, NR_EPOLL_WAIT = 232,
    NR_OPENAT = 257, NR_NEWFSTATAT = 262, NR_UNLINKAT = 263, NR_RENAMEAT = 264,
    NR_PSELECT6 = 270, NR_PPOLL = 271, NR_SPLICE = 275, NR_TEE = 276,
    NR_SYNC_FILE_RANGE = 277, NR_EPOLL_PWAIT = 281, NR_ACCEPT4 = 288, NR_PREADV = 295,
    NR_PWRITEV = 296, NR_RECVMMSG = 299, NR_SYNCFS = 306, NR_SENDMMSG = 307,
    NR_PREADV2 = 327, NR_PWRITEV2 = 328, NR_STATX = 332, NR_IO_PGETEVENTS = 333,
    NR_IO_URING_ENTER = 426, NR_OPENAT2 = 437, NR_EPOLL_PWAIT2 = 441, NR_FUTEX_WAITV = 449,
    NR_WAIT4 = 61, NR_WAITID = 247, NR_CLONE = 56, NR_VFORK = 58, NR_CLONE3 = 435,
};

#define F_SETLKW_ 7
#define F_OFD_SETLKW_ 38

static int io_call(int64_t nr)
{
    static const int16_t io[] = {
        NR_READ, NR_WRITE, NR_OPEN, NR_CLOSE, NR_STAT, NR_FSTAT, NR_LSTAT, NR_PREAD64,
        NR_PWRITE64, NR_READV, NR_WRITEV, NR_MSYNC, NR_SENDFILE, NR_CONNECT, NR_ACCEPT,
        NR_SENDTO, NR_RECVFROM, NR_SENDMSG, NR_RECVMSG, NR_FSYNC, NR_FDATASYNC,
        NR_TRUNCATE, NR_FTRUNCATE, NR_GETDENTS, NR_RENAME, NR_MKDIR, NR_RMDIR, NR_UNLINK,
        NR_SYNC, NR_IO_GETEVENTS, NR_GETDENTS64, NR_EPOLL_WAIT, NR_OPENAT, NR_NEWFSTATAT,
        NR_UNLINKAT, NR_RENAMEAT, NR_SPLICE, NR_TEE, NR_SYNC_FILE_RANGE, NR_EPOLL_PWAIT,
        NR_ACCEPT4, NR_PREADV, NR_PWRITEV, NR_RECVMMSG, NR_SYNCFS, NR_SENDMMSG, NR_PREADV2,
        NR_PWRITEV2, NR_STATX, NR_IO_PGETEVENTS, NR_IO_URING_ENTER, NR_OPENAT2,
        NR_EPOLL_PWAIT2,
    };

    for (size_t i = 0; i < sizeof(io) / sizeof(io[0]); i++)
        if (io[i] == nr)
            return 1;
    return 0;
}

#define CLONE_VFORK_ 0x4000        /* clone's flag: the parent waits for the child's exec */

int pp_wall_reason(uint32_t state, int64_t nr, uint64_t arg0, uint64_t arg1, uint64_t gil,
                   uint64_t gil_size)
{
    if (state == 0)
        return PP_WAIT_CPU;
    if (nr < 0)
        return PP_WAIT_OTHER;
    switch (nr) {
    case NR_NANOSLEEP:
    case NR_CLOCK_NANOSLEEP:
    case NR_PAUSE:
        return PP_WAIT_SLEEP;
    case NR_SELECT:
    case NR_PSELECT6:
        return arg0 == 0 ? PP_WAIT_SLEEP : PP_WAIT_IO;      /* nfds */
    case NR_POLL:
    case NR_PPOLL:
        return arg1 == 0 ? PP_WAIT_SLEEP : PP_WAIT_IO;      /* nfds */
    case NR_FUTEX:
        return gil && arg0 >= gil && arg0 - gil < gil_size ? PP_WAIT_GIL : PP_WAIT_LOCK;
    case NR_FUTEX_WAITV:
    case NR_FLOCK:
    case NR_SEMOP:
    case NR_SEMTIMEDOP:
        return PP_WAIT_LOCK;
    case NR_FCNTL:
        return arg1 == F_SETLKW_ || arg1 == F_OFD_SETLKW_ ? PP_WAIT_LOCK : PP_WAIT_IO;
    case NR_WAIT4:
    case NR_WAITID:
    case NR_VFORK:
    case NR_CLONE3:             /* posix_spawn's: blocks only for a vfork child */
        return PP_WAIT_CHILD;
    case NR_CLONE:
        return arg0 & CLONE_VFORK_ ? PP_WAIT_CHILD : PP_WAIT_OTHER;     /* flags */
    }
    return io_call(nr) ? PP_WAIT_IO : PP_WAIT_OTHER;
}

int pp_wall_reason_of(const struct pp_bpf_sample *s, uint64_t gil_size)
{
    /* the system call's first two arguments: rdi and rsi (DWARF 5 and 4) */
    return pp_wall_reason(s->state, s->syscall, s->regs[5], s->regs[4], s->gil, gil_size);
}

static int ends_with(const char *s, uint32_t len, const char *tail)
{
    size_t n = strlen(tail);

    return len >= n && memcmp(s + len - n, tail, n) == 0 &&
           (len == n || s[len - n - 1] == '/');
}

int pp_wall_reason_python(int reason, const pp_raw_sample *s)
{
    if (reason != PP_WAIT_SLEEP && reason != PP_WAIT_IO)
        return reason;
    for (size_t i = 0; i < s->nframes; i++) {
        const pp_raw_frame *f = &s->frames[i];

        if (f->kind != PP_RAW_PYTHON || !f->file || ends_with(f->file, f->file_len,
                                                              "selectors.py"))
            continue;
        return ends_with(f->file, f->file_len, "subprocess.py") ? PP_WAIT_CHILD : reason;
    }
    return reason;
}

/* ---- captures waiting for their end ------------------------------------- */

/* Each capture is a record of ~90 KB; a server's threads make hundreds a
 * second. Their buffers are used again (those given back, up to
 * SPARE_MAX of them) rather than allocated per capture: a block of that
 * size allocated and freed between the profile's own growing arrays is
 * how a heap ends up in holes. */
#define SPARE_MAX 64

struct pp_wall_open {
    struct pp_bpf_sample **v;
    size_t n, cap;
    struct pp_bpf_sample *spare[SPARE_MAX];
    size_t nspare;
    uint64_t dropped, made;
};

int pp_wall_open_new(pp_wall_open **out)
{
    *out = calloc(1, sizeof(**out));
    return *out ? 0 : -ENOMEM;
}

static size_t find(const pp_wall_open *w, uint32_t pid, uint32_t tid)
{
    for (size_t i = 0; i < w->n; i++)
        if (w->v[i]->pid == pid && w->v[i]->tid == tid)
            return i;
    return w->n;
}

/* s's bytes up to the end of the stack read into copy: the rest is never
 * looked at. */
static void copy_used(struct pp_bpf_sample *copy, const struct pp_bpf_sample *s)
{
    size_t used = offsetof(struct pp_bpf_sample, stack) +
                  (s->stack_len < sizeof(s->stack) ? s->stack_len : sizeof(s->stack));

    memcpy(copy, s, used);
}

int pp_wall_open_keep(pp_wall_open *w, const struct pp_bpf_sample *s)
{
    size_t i = find(w, s->pid, s->tid);
    struct pp_bpf_sample *copy;

    if (i < w->n) {                 /* its end never came: replaced, counted */
        copy_used(w->v[i], s);
        w->dropped++;
        return 0;
    }
    if (pp__grow((void **)&w->v, &w->cap, w->n + 1, sizeof(*w->v)) < 0)
        return -ENOMEM;
    if (w->nspare)
        copy = w->spare[--w->nspare];
    else if ((copy = malloc(sizeof(*copy))))
        w->made++;
    else
        return -ENOMEM;
    copy_used(copy, s);
    w->v[w->n++] = copy;
    return 0;
}

struct pp_bpf_sample *pp_wall_open_take(pp_wall_open *w, uint32_t pid, uint32_t tid)
{
    size_t i = find(w, pid, tid);
    struct pp_bpf_sample *s;

    if (i == w->n)
        return NULL;
    s = w->v[i];
    w->v[i] = w->v[--w->n];
    return s;
}

void pp_wall_open_done(pp_wall_open *w, struct pp_bpf_sample *s)
{
    if (w->nspare < SPARE_MAX)
        w->spare[w->nspare++] = s;
    else
        free(s);
}

uint64_t pp_wall_open_made(const pp_wall_open *w)
{
    return w->made;
}

uint64_t pp_wall_open_unended(const pp_wall_open *w)
{
    return w->dropped + w->n;
}

void pp_wall_open_free(pp_wall_open *w)
{
    if (!w)
        return;
    for (size_t i = 0; i < w->n; i++)
        free(w->v[i]);
    for (size_t i = 0; i < w->nspare; i++)
        free(w->spare[i]);
    free(w->v);
    free(w);
}

/* ---- what was lost ------------------------------------------------------- */

uint64_t pp_wall_lost_events(const pp_wall_counts *c)
{
    return c->lost_samples + c->lost_captures + c->lost_ends + c->lost_threads + c->unended;
}

/* The time off the CPU with no stack, and its share of what the profile
 * would hold with it. */
static double missing_share(const pp_wall_counts *c, uint64_t *ns)
{
    *ns = c->missed_ns + c->uncaptured_ns + c->lost_ns;
    return pp_note_pct(*ns, c->recorded_ns + *ns);
}

void pp_wall_notes(FILE *out, const pp_wall_counts *c, int verbose)
{
    uint64_t missing_ns;
    double pct = missing_share(c, &missing_ns);

    if (!verbose) {
        if (pp_note_said(0, pct))
            fprintf(out, "perfpy: wall clock: %.1f ms off the CPU, %.1f%% of the profile's "
                    "time, have no stack and are missing (-v says why)\n",
                    (double)missing_ns / 1e6, pct);
        if (c->lost_threads)
            fprintf(out, "perfpy: wall clock: %llu threads not followed (no memory for their "
                    "state): their time off the CPU is missing\n",
                    (unsigned long long)c->lost_threads);
        return;
    }
    fprintf(out, "perfpy: wall clock: the program's threads stopped running %llu times; "
            "%llu stacks off the CPU captured\n", (unsigned long long)c->switches,
            (unsigned long long)c->captured);
    if (c->missed)
        fprintf(out, "perfpy: wall clock: the kernel did not report %llu of the switches "
                "(found from the threads' CPU time); %.1f ms off the CPU around them have "
                "no stack and are missing\n", (unsigned long long)c->missed,
                (double)c->missed_ns / 1e6);
    if (c->uncaptured)
        fprintf(out, "perfpy: wall clock: %llu stacks off the CPU were not captured as "
                "their threads ran again (the switch's end unseen, or the thread exiting); "
                "%.1f ms off the CPU (as sampled) have no stack and are missing\n",
                (unsigned long long)c->uncaptured, (double)c->uncaptured_ns / 1e6);
    if (pp_wall_lost_events(c) > c->lost_samples)
        fprintf(out, "perfpy: wall clock: lost %llu stacks off the CPU and %llu ends of "
                "one (the ring buffer was full), %llu stacks whose end never came, %llu "
                "threads not followed (no memory for their state): that time is missing\n",
                (unsigned long long)c->lost_captures, (unsigned long long)c->lost_ends,
                (unsigned long long)c->unended, (unsigned long long)c->lost_threads);
    /* what the ring's losses do to the figures: the profile's time off the
     * CPU is short by what they stood for (their share of the whole) */
    if (c->lost_captures || c->lost_ends)
        fprintf(out, "perfpy: wall clock: the stacks and ends the ring buffer lost stood for "
                "%.1f ms off the CPU, %.2f%% of the %.2f s the profile would hold with them: "
                "its time off the CPU is short by that much\n", (double)c->lost_ns / 1e6,
                c->recorded_ns + c->lost_ns
                ? 100.0 * (double)c->lost_ns / (double)(c->recorded_ns + c->lost_ns) : 0.0,
                (double)(c->recorded_ns + c->lost_ns) / 1e9);
}
