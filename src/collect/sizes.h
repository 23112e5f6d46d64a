#ifndef PERFPY_COLLECT_SIZES_H
#define PERFPY_COLLECT_SIZES_H
/*
 * The sizes of what collect.c loads (sizes.c).
 */
struct pp_sample_bpf;

/* A ring's size from the environment variable name (a power of two of at
 * least a page, at most max), else 0. */
unsigned long pp__ring_bytes(const char *name, unsigned long max);
/* Wall-clock mode's ring for freq samples a second on ncpu CPUs. */
unsigned long pp__wall_ring(int freq, int ncpu);
/* perfpy dump's heap, grown once in huge pages and kept (see sizes.c). */
void pp__dump_heap(void);
/* perfpy dump's rings and maps at a snapshot's sizes: *bytes and *code
 * (0: the dump's own), the LRU and works maps shrunk. 0 or -EINVAL. */
int pp__dump_small(struct pp_sample_bpf *k, unsigned long *bytes, unsigned long *code);

#endif
