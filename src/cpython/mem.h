/*
 * Where the readers of a running CPython read its memory. A root profiler
 * reads another process, whose memory changes under it and may be made to
 * hold anything: every reader of this folder takes its bytes through one
 * read function, so that they can be given a simulated address space
 * (tests/fuzz/fuzz_cpython.c: random and adversarial bytes) as well as a
 * live process (pp_mem_of_pid: process_vm_readv).
 *
 *   reader (pyread.c, pystack.c, pycode.c, pylayout.c, pyobj.c, pyasync.c)
 *     └─ pp_mem_read(m, addr, buf, len) ─► m->read: 0 whole, or -errno
 *
 * The process's id goes with its memory: the caches of code objects are
 * kept per process, and the few questions that are not about memory
 * (its /proc files, the ELF files it maps: pysyms.c) ask of it.
 */
#ifndef PERFPY_CPYTHON_MEM_H
#define PERFPY_CPYTHON_MEM_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct pp_mem pp_mem;

/* len bytes at addr into buf: 0, or -errno (-EFAULT: not all of them
 * readable, -EPERM: not ours to read, -ESRCH: the process is gone). */
typedef int (*pp_mem_read_fn)(const pp_mem *m, uint64_t addr, void *buf, size_t len);

struct pp_mem {
    pid_t pid;                   /* the process (a fuzz target's: any number) */
    pp_mem_read_fn read;
    void *ctx;                   /* the read function's own */
};

/* The memory of process pid, read with process_vm_readv (address 0 is
 * never read: -EFAULT). */
pp_mem pp_mem_of_pid(pid_t pid);

static inline int pp_mem_read(const pp_mem *m, uint64_t addr, void *buf, size_t len)
{
    return m->read(m, addr, buf, len);
}

/* The 8 bytes at addr + off: 0, or -EFAULT for a negative offset (a field
 * the version lacks) or a null address, or the read's error. */
static inline int pp_mem_u64(const pp_mem *m, uint64_t addr, int32_t off, uint64_t *v)
{
    if (off < 0 || !addr)
        return -EFAULT;
    return m->read(m, addr + (uint64_t)off, v, sizeof(*v));
}

#endif
