/*
 * How big the collector's rings and maps are, and perfpy dump's heap
 * (sizes.c): the sizing decisions of collect.c's load, apart from it.
 */
#include "collect.h"
#include "sample.skel.h"
#include "sizes.h"

#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* A ring's size from the environment (a power of two of at least a page,
 * at most max), else 0: the tests that make a ring overflow, so that what
 * is said of its losses is checked against real losses. */
unsigned long pp__ring_bytes(const char *name, unsigned long max)
{
    const char *env = getenv(name);
    unsigned long bytes = env ? strtoul(env, NULL, 10) : 0;

    return bytes >= 4096 && !(bytes & (bytes - 1)) && bytes <= max ? bytes : 0;
}

/* Wall-clock mode's ring, sized to the rate: a quarter of a second of
 * every CPU's samples and as many stacks off the CPU, at a record's usual
 * length (32 KiB: its header and a thread's stack, sample.bpf.c's slots);
 * a power of two from PP_BPF_WALL_RING_BYTES (the default rate on a few
 * CPUs) to PP_BPF_WALL_RING_MAX. */
unsigned long pp__wall_ring(int freq, int ncpu)
{
    uint64_t want = (uint64_t)(freq > 0 ? freq : 1) * (uint64_t)(ncpu > 0 ? ncpu : 1) * 2 *
                    (32u << 10) / 4;
    unsigned long bytes = PP_BPF_WALL_RING_BYTES;

    while (bytes < want && bytes < PP_BPF_WALL_RING_MAX)
        bytes <<= 1;
    return bytes;
}

/* perfpy dump's largest allocations are libbpf's: the kernel's BTF read
 * from sysfs (5.5 MB on 6.18), a copy of it and its index, for CO-RE and
 * the task iterator's attach point, parsed again by every dump. Faulted in
 * 4 KiB pages they were a tenth of its time, and as much again given back
 * (munmap) before the process ended. So a dump's heap grows once, by
 * HEAP_PAD, in pages of 2 MiB (transparent huge pages, where the kernel
 * allows them on request), and nothing is given back before the exit. A
 * process that does this once and ends; a recording never does. */
#define HEAP_PAD (32u << 20)
#define HUGE_PAGE (2u << 20)

void pp__dump_heap(void)
{
    uintptr_t lo, hi;
    void *grow;

    if (!mallopt(M_MMAP_THRESHOLD, (int)HEAP_PAD) || !mallopt(M_TOP_PAD, (int)HEAP_PAD) ||
        !mallopt(M_TRIM_THRESHOLD, (int)(4 * HEAP_PAD)) || !(grow = malloc(HUGE_PAGE)))
        return;
    lo = ((uintptr_t)grow + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
    hi = (uintptr_t)sbrk(0) & ~(uintptr_t)(HUGE_PAGE - 1);
    if (hi > lo)
        madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
    free(grow);
}

/* perfpy dump (a snapshot, no wall-clock mode) answers in tens of ms, and
 * what a recording keeps costs it at load: a 4 MiB ring, not 32 (a record
 * per thread: the iterator's later passes take those that did not fit),
 * the ring of code objects' names (read by no dump: it names them from the
 * process) at 64 KiB and their LRU at 64 entries, wall-clock mode's map of
 * task works at one. The rings' sizes asked of the environment win. */
int pp__dump_small(struct pp_sample_bpf *k, unsigned long *bytes, unsigned long *code)
{
    if (!*bytes)
        *bytes = PP_BPF_DUMP_RING_BYTES;
    if (!*code)
        *code = 64u << 10;
    return bpf_map__set_max_entries(k->maps.known, 64) != 0 ||
           bpf_map__set_max_entries(k->maps.works, 1) != 0 ? -EINVAL : 0;
}
