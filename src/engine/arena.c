/*
 * Code arenas: where trampolines live.
 *
 * A chunk is mapped read-write, filled with copies of the template, and only
 * then switched to read-execute; no page is ever writable and executable at
 * once. Slots are handed out in order and never reused or unmapped, because
 * a Python frame may still be running inside a trampoline long after its
 * code object is gone (CPython 3.12 freed arenas under running frames).
 *
 *   chunk (chunk_size bytes, read-execute once filled)
 *   +------------------+------------------+------------------+-- ...
 *   | template | trap  | template | trap  | template | trap  |
 *   +------------------+------------------+------------------+-- ...
 *   ^ slot 0            ^ slot 1            ^ slot 2
 *   |<-- slot_size --->|
 *
 * The trap bytes (PP_TRAP_BYTE: int3, or udf #0 on aarch64) after each
 * copy are never executed; the jitdump backend asks for wide slots so that
 * perf's view of a trampoline (code plus its unwinding data) never overlaps
 * the next one.
 *
 * Once filled, a chunk's instruction cache is made coherent with what was
 * written (__builtin___clear_cache: nothing on x86-64, DC CVAU + IC IVAU on
 * aarch64) before any slot of it is handed out. On aarch64 with branch
 * protection the template starts with bti c and the chunk is mapped
 * PROT_BTI where the kernel offers it, so an indirect branch into the
 * middle of a trampoline traps as it would in the program's own code.
 */
#include "perfpy/engine.h"
#include "arch.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PP_MIN_CHUNK (64u * 1024u)

/* PROT_BTI: <sys/mman.h> on aarch64 (0x10), absent elsewhere. */
#if PP_TEMPLATE_BTI && defined(PROT_BTI)
#define PP_PROT_GUARD PROT_BTI
#else
#define PP_PROT_GUARD 0
#endif

struct pp_arena_chunk {
    pp_arena_chunk *older;
    uint8_t *base;
    size_t size;
};

size_t pp_template_size(void)
{
    return (size_t)(pp_template_end - pp_template_start);
}

const uint8_t *pp_template_code(void)
{
    return pp_template_start;
}

int pp_arena_init(pp_arena *a, size_t slot_size)
{
    long page = sysconf(_SC_PAGESIZE);

    memset(a, 0, sizeof(*a));
    if (slot_size < pp_template_size() || slot_size % 16 != 0)
        return -EINVAL;
    if (page <= 0)
        page = 4096;
    a->slot_size = slot_size;
    a->chunk_size = PP_MIN_CHUNK;
    if (a->chunk_size < (size_t)page)
        a->chunk_size = (size_t)page;
    return 0;
}

static void fill(uint8_t *base, size_t size, size_t slot_size)
{
    size_t code = pp_template_size();

    memset(base, PP_TRAP_BYTE, size);
    for (size_t off = 0; off + slot_size <= size; off += slot_size)
        memcpy(base + off, pp_template_start, code);
}

static int grow(pp_arena *a)
{
    pp_arena_chunk *c = malloc(sizeof(*c));
    uint8_t *base;

    if (!c)
        return -ENOMEM;
    base = mmap(NULL, a->chunk_size, PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) {
        int err = -errno;
        free(c);
        return err;
    }
    fill(base, a->chunk_size, a->slot_size);
    if (mprotect(base, a->chunk_size, PROT_READ | PROT_EXEC | PP_PROT_GUARD) != 0 &&
        (PP_PROT_GUARD == 0 || errno != EINVAL ||   /* a kernel without BTI */
         mprotect(base, a->chunk_size, PROT_READ | PROT_EXEC) != 0)) {
        int err = -errno;
        munmap(base, a->chunk_size);
        free(c);
        return err;
    }
    __builtin___clear_cache((char *)base, (char *)base + a->chunk_size);
    c->base = base;
    c->size = a->chunk_size;
    c->older = a->chunks;
    a->chunks = c;
    a->next = base;
    a->end = base + (a->chunk_size / a->slot_size) * a->slot_size;
    a->bytes_mapped += a->chunk_size;
    return 0;
}

int pp_arena_take(pp_arena *a, pp_trampoline_fn *out)
{
    if (a->slot_size == 0)
        return -EINVAL;
    if (a->next == NULL || a->next + a->slot_size > a->end) {
        int rc = grow(a);
        if (rc < 0)
            return rc;
    }
    /* An object pointer to a function pointer: POSIX (dlsym) guarantees it. */
    *out = (pp_trampoline_fn)(uintptr_t)a->next;
    a->next += a->slot_size;
    a->slots_used++;
    return 0;
}

/* perf names an address in anonymous memory from the map of the process
 * that mapped it: a chunk a forked child inherited is named from the
 * parent's /tmp/perf-<parent>.map, which never holds the child's new
 * trampolines, and whose later entries (the parent goes on using the same
 * free slots) would give the child's ones the parent's names. So a child's
 * trampolines start in a chunk the child maps itself; the inherited free
 * slots stay unused in the child. */
void pp_arena_fork_child(pp_arena *a)
{
    a->next = a->end;
}

double pp_arena_bytes_per_trampoline(const pp_arena *a)
{
    if (a->slots_used == 0)
        return 0.0;
    return (double)a->bytes_mapped / (double)a->slots_used;
}

/* Chunks of arenas whose engine is gone: still mapped, still reachable. */
static pp_arena_chunk *retired;

void pp_arena_retire(pp_arena *a)
{
    pp_arena_chunk *c = a->chunks;

    while (c) {
        pp_arena_chunk *older = c->older;
        c->older = retired;
        retired = c;
        c = older;
    }
    memset(a, 0, sizeof(*a));
}

void pp_arena_release(pp_arena *a)
{
    pp_arena_chunk *c = a->chunks;

    while (c) {
        pp_arena_chunk *older = c->older;
        munmap(c->base, c->size);
        free(c);
        c = older;
    }
    memset(a, 0, sizeof(*a));
}
