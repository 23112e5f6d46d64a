/*
 * The jitdump backend: <dir>/jit-<pid>.dump, for `perf inject --jit`.
 *
 * Why: the perf map names a trampoline but says nothing about how to
 * unwind through it, and none of the interpreters users run keeps frame
 * pointers: with `--call-graph dwarf` the stack ends at the first Python
 * function. A jitdump also carries DWARF CFI (ehframe.c) and a source
 * line per trampoline; `perf inject --jit` turns each code-load record
 * into a small ELF mapped over the trampoline, and whole stacks come back:
 *
 *   perf map only                     jitdump + perf inject --jit
 *   py::foo:example.py                py::foo:example.py
 *   _PyEval_EvalFrameDefault          _PyEval_EvalFrameDefault
 *   [unknown]      <- unwind stops    py::bar:example.py
 *                                     _PyEval_EvalFrameDefault
 *                                     py::baz:example.py ... main, _start
 *
 * The file, and what one pp_symbol becomes (one write(2), before the
 * trampoline is returned, so a SIGKILLed process leaves a dump that is
 * whole up to its last function - but for the entry it may have been
 * writing: Linux checks for a fatal signal between the pages of a write,
 * so an entry that crosses a page boundary can be cut; readers stop there,
 * as perf inject does; a full disk's cut is taken back, pp__append_whole):
 *
 *   jitheader (40)    magic, version 1, elf_mach, pid, CLOCK_MONOTONIC
 *   per trampoline:
 *     JIT_CODE_UNWINDING_INFO  40 + 76 bytes .eh_frame/.eh_frame_hdr + pad
 *                              mapped_size = 80 (the 76, 8-aligned)
 *     JIT_CODE_DEBUG_INFO      code_addr, 2 entries: {start, line, file},
 *                              {end, line, file} (one entry is an empty
 *                              range and perf's srcline finds nothing)
 *     JIT_CODE_LOAD            pid, tid, vma = code_addr = the slot,
 *                              code_size = template + 8 salt bytes,
 *                              code_index, "py::<qualname>:<file>\0", code
 *
 * The salt: perf inject names each ELF by a build-id derived from the
 * code bytes, and merges ELFs whose build-ids match, so every trampoline
 * would carry one name. The 8 bytes after the template are, in the dump
 * only, a value made of the pid and code_index; the live slot has trap
 * bytes there (int3, udf #0 on aarch64) and never runs them. The arena
 * slot is wide enough for perf's view of the trampoline,
 * [code, code + align8(code_size) + mapped_size):
 *
 *   slot (112 bytes on x86-64 with endbr64)
 *   +0   template (12)   +12 salt/int3 (8)   +24 eh_frame + hdr (76, +4)
 *   +104 int3 ... +112 next slot
 *
 *   slot (128 bytes on aarch64 with bti c and paciasp/autiasp)
 *   +0   template (32)   +32 salt/udf (8)    +40 eh_frame + hdr (84, +4)
 *   +128 next slot
 *
 * The dump is mapped PROT_READ|PROT_EXEC (one page, kept mapped): the
 * mmap event is how perf finds the file. A forked child starts its own
 * jit-<childpid>.dump and re-emits every record its parent had written
 * (read back from the parent's file with the reader, with the child's
 * pid, tid, salt and a fresh timestamp); it never writes the parent's
 * file. Errors are sticky: after the first failure every write returns
 * it and close reports it.
 */
#include "internal.h"
#include "arch.h"
#include "ehframe.h"
#include "perfpy/jitdump_format.h"
#include "perfpy/jitdump_read.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define SALT_SIZE 8u
#define FORK_BATCH (64u * 1024u)

typedef struct jitdump {
    struct pp_backend base;
    int fd;                   /* read-write: mmap needs read access */
    int err;                  /* sticky */
    void *marker;             /* the PROT_EXEC mapping perf records */
    size_t marker_len;
    pid_t pid;                /* whose file this is (set by start_file) */
    uint64_t written;         /* bytes of this process's file */
    uint64_t next_index;      /* code_index of the next trampoline */
    uint8_t unwind[128];      /* eh_frame + hdr: the same for every slot */
    size_t unwind_size;
    uint64_t salted_size;     /* code_size the records report */
    uint8_t *buf;             /* one entry, assembled */
    size_t cap;
    char dir[PATH_MAX];
} jitdump;

static uint64_t align8(uint64_t n)
{
    return (n + 7) & ~(uint64_t)7;
}

static uint64_t mapped_size(size_t unwind_size)
{
    return align8(unwind_size);
}

/* Room for perf's view of a trampoline: the salted code, 8-aligned, then
 * the unwinding data it maps after it; 16-aligned for the arena. */
static size_t jit_slot_size(size_t code_size)
{
    size_t span = (size_t)align8(code_size + SALT_SIZE) +
                  (size_t)mapped_size(pp__ehframe_size(&pp__arch, &pp_template_layout));

    return (span + 15) & ~(size_t)15;
}

static uint64_t salt_of(pid_t pid, uint64_t index)
{
    return ((uint64_t)(uint32_t)pid << 32) ^ index ^ 0x7079707900000000ull;
}

/* ---- assembling one entry ------------------------------------------------- */

struct out {
    uint8_t *p;
    size_t n;
};

static void put(struct out *o, const void *src, size_t len)
{
    memcpy(o->p + o->n, src, len);
    o->n += len;
}

static int reserve(jitdump *j, size_t need)
{
    uint8_t *p;
    size_t cap = j->cap ? j->cap : 1024;

    if (need <= j->cap)
        return 0;
    while (cap < need)
        cap *= 2;
    p = realloc(j->buf, cap);
    if (!p)
        return -ENOMEM;
    j->buf = p;
    j->cap = cap;
    return 0;
}

static void prefix(struct jr_prefix *p, uint32_t id, size_t size, uint64_t ts)
{
    p->id = id;
    p->total_size = (uint32_t)size;
    p->timestamp = ts;
}

static void put_unwinding(jitdump *j, struct out *o, uint64_t ts)
{
    struct jr_code_unwinding_info u;
    size_t size = (size_t)align8(sizeof(u) + j->unwind_size);
    static const uint8_t zeros[8];

    prefix(&u.p, JIT_CODE_UNWINDING_INFO, size, ts);
    u.unwinding_size = j->unwind_size;
    u.eh_frame_hdr_size = PP_EH_FRAME_HDR_SIZE;
    u.mapped_size = mapped_size(j->unwind_size);
    put(o, &u, sizeof(u));
    put(o, j->unwind, j->unwind_size);
    put(o, zeros, size - sizeof(u) - j->unwind_size);
}

static void put_debug(jitdump *j, struct out *o, const pp_symbol *sym,
                      const char *file, size_t flen, uint64_t ts)
{
    struct jr_code_debug_info d;
    struct debug_entry e;
    uint64_t start = (uint64_t)(uintptr_t)sym->code;

    prefix(&d.p, JIT_CODE_DEBUG_INFO,
           sizeof(d) + 2 * (sizeof(e) + flen + 1), ts);
    d.code_addr = start;
    d.nr_entry = 2;
    put(o, &d, sizeof(d));
    for (int i = 0; i < 2; i++) {
        e.addr = i == 0 ? start : start + j->salted_size;
        e.lineno = sym->firstlineno;
        e.discrim = 0;
        put(o, &e, sizeof(e));
        put(o, file, flen + 1);
    }
}

/* The calling thread's id, read once per thread and process (pid is the
 * process's, known without a system call): a registration makes no system
 * call but its write. A forked child's thread sees a new pid and reads its
 * own id again; a new thread starts with tid_pid 0. */
static pid_t this_tid(pid_t pid)
{
    static __thread pid_t tid, tid_pid;

    if (tid_pid != pid) {
        tid = pp__gettid();
        tid_pid = pid;
    }
    return tid;
}

static void put_load(jitdump *j, struct out *o, const pp_symbol *sym,
                     size_t nlen, uint64_t ts)
{
    struct jr_code_load l;
    uint64_t salt = salt_of(j->pid, j->next_index);

    prefix(&l.p, JIT_CODE_LOAD, sizeof(l) + nlen + 1 + j->salted_size, ts);
    l.pid = (uint32_t)j->pid;
    l.tid = (uint32_t)this_tid(j->pid);
    l.vma = (uint64_t)(uintptr_t)sym->code;
    l.code_addr = l.vma;
    l.code_size = j->salted_size;
    l.code_index = j->next_index;
    put(o, &l, sizeof(l));
    pp_symbol_name((char *)o->p + o->n, nlen + 1, sym);
    o->n += nlen + 1;
    put(o, sym->code, sym->code_size);
    put(o, &salt, SALT_SIZE);
}

static int jit_write(pp_backend *b, const pp_symbol *sym)
{
    jitdump *j = (jitdump *)b;
    const char *file = sym->filename ? sym->filename : "?";
    size_t flen = strlen(file);
    size_t nlen = pp_symbol_name(NULL, 0, sym);
    size_t need;
    uint64_t ts;
    struct out o;
    int rc;

    if (j->err)
        return j->err;
    if (sym->code_size + SALT_SIZE != j->salted_size)
        return j->err = -EINVAL;   /* not the template this dump describes */
    if (flen > UINT32_MAX / 4 || nlen > UINT32_MAX / 4)
        return j->err = -ENAMETOOLONG;
    need = (size_t)align8(sizeof(struct jr_code_unwinding_info) + j->unwind_size) +
           sizeof(struct jr_code_debug_info) +
           2 * (sizeof(struct debug_entry) + flen + 1) +
           sizeof(struct jr_code_load) + nlen + 1 + j->salted_size;
    rc = reserve(j, need);
    if (rc < 0)
        return j->err = rc;
    o.p = j->buf;
    o.n = 0;
    ts = pp_monotonic_ns();
    put_unwinding(j, &o, ts);
    put_debug(j, &o, sym, file, flen, ts);
    put_load(j, &o, sym, nlen, ts);
    rc = pp__append_whole(j->fd, o.p, o.n);
    if (rc < 0)
        return j->err = rc;
    j->written += o.n;
    j->next_index++;
    return 0;
}

/* ---- the file --------------------------------------------------------------- */

/* Creates <dir>/jit-<pid>.dump with its header and the PROT_EXEC mapping
 * perf looks for; on failure nothing of the new file is kept open. */
static int start_file(jitdump *j)
{
    struct jitheader h;
    long page = sysconf(_SC_PAGESIZE);
    void *m;
    int fd, rc;

    j->pid = getpid();
    if (snprintf(j->base.path, sizeof(j->base.path), "%s/jit-%d.dump", j->dir,
                 (int)j->pid) >= (int)sizeof(j->base.path))
        return -ENAMETOOLONG;
    /* Truncating a dump another writer of this process still has open
     * (CPython's -X perf_jit) would corrupt both: its buffered records
     * land over ours when it flushes. */
    if (pp__open_in_this_process(j->base.path))
        return -EBUSY;
    fd = pp__open_private(j->base.path, O_RDWR | O_TRUNC);
    if (fd < 0)
        return fd;
    memset(&h, 0, sizeof(h));
    h.magic = JITHEADER_MAGIC;
    h.version = JITHEADER_VERSION;
    h.total_size = sizeof(h);
    h.elf_mach = pp__arch.elf_machine;
    h.pid = (uint32_t)j->pid;
    h.timestamp = pp_monotonic_ns();
    h.flags = 0;
    rc = pp__write_all(fd, &h, sizeof(h));
    if (rc < 0)
        goto fail;
    if (page <= 0)
        page = 4096;
    m = mmap(NULL, (size_t)page, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) {
        rc = -errno;
        goto fail;
    }
    j->fd = fd;
    j->marker = m;
    j->marker_len = (size_t)page;
    j->written = sizeof(h);
    return 0;
fail:
    close(fd);
    return rc;
}

static int jit_open(pp_backend **out, const char *dir)
{
    jitdump *j = calloc(1, sizeof(*j));
    ssize_t n;
    int rc;

    if (!j)
        return -ENOMEM;
    j->base.ops = &pp_jitdump_ops;
    j->fd = -1;
    if (snprintf(j->dir, sizeof(j->dir), "%s", dir ? dir : "/tmp") >=
        (int)sizeof(j->dir)) {
        rc = -ENAMETOOLONG;
        goto fail;
    }
    j->salted_size = pp_template_size() + SALT_SIZE;
    n = pp__ehframe_build(&pp__arch, j->unwind, sizeof(j->unwind), &pp_template_layout,
                          j->salted_size);
    if (n < 0) {
        rc = (int)n;
        goto fail;
    }
    j->unwind_size = (size_t)n;
    rc = start_file(j);
    if (rc < 0)
        goto fail;
    *out = &j->base;
    return 0;
fail:
    free(j);
    return rc;
}

/* ---- fork --------------------------------------------------------------------- */

/* The parent's first `len` bytes, read through the inherited descriptor
 * (no path lookup: the parent's file may have been renamed or replaced). */
static int read_parent(int fd, uint64_t len, uint8_t **out)
{
    uint8_t *buf = malloc(len ? (size_t)len : 1);
    uint64_t got = 0;

    if (!buf)
        return -ENOMEM;
    while (got < len) {
        ssize_t n = pread(fd, buf + got, (size_t)(len - got), (off_t)got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            int err = n < 0 ? -errno : -EIO;   /* shorter than it wrote */
            free(buf);
            return err;
        }
        got += (uint64_t)n;
    }
    *out = buf;
    return 0;
}

/* One of the parent's records, as the child's: fresh timestamp, and for
 * a code load the child's pid, tid and salt. */
static void adopt(jitdump *j, const pp_jd_record *rec, uint8_t *dst,
                  uint64_t ts, pid_t pid, pid_t tid)
{
    memcpy(dst, rec->bytes, rec->total_size);
    memcpy(dst + offsetof(struct jr_prefix, timestamp), &ts, sizeof(ts));
    if (rec->id == JIT_CODE_LOAD) {
        uint32_t p = (uint32_t)pid, t = (uint32_t)tid;
        uint64_t salt = salt_of(pid, rec->u.load.code_index);
        memcpy(dst + offsetof(struct jr_code_load, pid), &p, 4);
        memcpy(dst + offsetof(struct jr_code_load, tid), &t, 4);
        if (rec->u.load.code_size == j->salted_size)
            memcpy(dst + rec->total_size - SALT_SIZE, &salt, SALT_SIZE);
    }
}

static int replay(jitdump *j, const uint8_t *data, uint64_t len)
{
    pp_jd_reader r;
    pp_jd_record rec;
    pid_t pid = getpid(), tid = pp__gettid();
    size_t fill = 0;
    int rc;

    rc = pp_jd_open(&r, data, (size_t)len);
    while (rc == 0 && (rc = pp_jd_next(&r, &rec)) > 0) {
        rc = 0;
        if (fill > 0 && fill + rec.total_size > FORK_BATCH) {
            rc = pp__write_all(j->fd, j->buf, fill);
            j->written += fill;
            fill = 0;
        }
        if (rc == 0)
            rc = reserve(j, fill + rec.total_size);
        if (rc < 0)
            break;
        adopt(j, &rec, j->buf + fill, pp_monotonic_ns(), pid, tid);
        fill += rec.total_size;
        if (rec.id == JIT_CODE_LOAD && rec.u.load.code_index >= j->next_index)
            j->next_index = rec.u.load.code_index + 1;
    }
    if (rc == 0 && fill > 0) {
        rc = pp__write_all(j->fd, j->buf, fill);
        j->written += fill;
    }
    pp_jd_close(&r);
    return rc;
}

static int jit_fork_child(pp_backend *b, int inherit)
{
    (void)inherit;   /* perfpy's own dump: the child's holds every load */
    jitdump *j = (jitdump *)b;
    int parent_fd = j->fd;
    uint64_t parent_len = j->written;
    uint8_t *parent = NULL;
    int rc;

    if (j->err)
        return j->err;
    rc = read_parent(parent_fd, parent_len, &parent);
    if (rc < 0)
        return j->err = rc;
    /* The parent's descriptor and mapping are the parent's: let go. */
    if (j->marker)
        munmap(j->marker, j->marker_len);
    j->marker = NULL;
    close(parent_fd);
    j->fd = -1;
    j->next_index = 0;
    rc = start_file(j);
    if (rc == 0)
        rc = replay(j, parent, parent_len);
    free(parent);
    if (rc < 0)
        return j->err = rc;
    return 0;
}

static int jit_close(pp_backend *b)
{
    jitdump *j = (jitdump *)b;
    int rc = j->err;

    if (j->marker)
        munmap(j->marker, j->marker_len);
    if (j->fd >= 0 && close(j->fd) != 0 && rc == 0)
        rc = -errno;
    free(j->buf);
    free(j);
    return rc;
}

const pp_backend_ops pp_jitdump_ops = {
    .name = "perf_jit", .slot_size = jit_slot_size, .open = jit_open,
    .write_entry = jit_write, .fork_child = jit_fork_child, .close = jit_close,
};
