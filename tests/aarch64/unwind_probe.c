/*
 * A C function for Python code to call (through ctypes) that unwinds its
 * own native stack with libgcc's unwinder and names every frame: the proof
 * that the CFI the engine builds for a trampoline (ehframe.c, the bytes
 * the jitdump carries) lets an unwinder walk through it, on the
 * architecture the probe is built for (tests/aarch64/run runs it on arm64
 * under qemu-user).
 *
 *   native stack at the probe            what makes the unwind go on
 *   pp_probe_backtrace                   its own .eh_frame
 *   ffi_call / ctypes                    theirs
 *   _PyEval_EvalFrameDefault             python3.11's .eh_frame
 *   py::inner  (trampoline, anonymous)   the engine's CFI, registered here
 *   pp_eval (the module's hook)          the module's .eh_frame
 *   _PyEval_EvalFrameDefault
 *   py::outer  (trampoline)              the engine's CFI
 *   ... Py_BytesMain, __libc_start_main  the caller's frames
 *
 * With register_cfi = 0 nothing is registered, and libgcc stops at the
 * first trampoline: the negative half of the pair.
 *
 * The CFI is registered as a debugger would: for each trampoline named in
 * /tmp/perf-<pid>.map, the .eh_frame (CIE + FDE) that pp__ehframe_build
 * writes for perf inject's ELF, copied to memory next to a zero
 * terminator, its pc_begin (pcrel sdata4) re-aimed from inject's layout at
 * the live trampoline, and handed to __register_frame.
 */
#include "arch.h"
#include "ehframe.h"
#include "perfpy/engine.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <unwind.h>

void __register_frame(void *begin);
int pp_probe_backtrace(int register_cfi, char *out, size_t cap);

#define MAX_TRAMPS 256
#define MAX_FRAMES 96
#define EH_ROOM 128

static struct tramp {
    uintptr_t start, size;
    char name[160];
} tramps[MAX_TRAMPS];
static int ntramps;

static int read_map(void)
{
    char path[64], line[512];
    FILE *f;

    snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
    f = fopen(path, "r");
    if (!f)
        return -1;
    ntramps = 0;
    while (ntramps < MAX_TRAMPS && fgets(line, sizeof(line), f)) {
        struct tramp *t = &tramps[ntramps];
        int at = 0;

        if (sscanf(line, "%lx %lx %n", &t->start, &t->size, &at) != 2 || !at)
            continue;
        line[strcspn(line, "\n")] = 0;
        snprintf(t->name, sizeof(t->name), "%s", line + at);
        ntramps++;
    }
    fclose(f);
    return ntramps;
}

/* One trampoline's CIE + FDE at buf (EH_ROOM bytes), aimed at start.
 * 0, or -1 with the reason in why. */
static int place_cfi(uint8_t *buf, const struct tramp *t, char *why, size_t n)
{
    uint8_t eh[EH_ROOM];
    uint64_t code = pp_template_size();
    int64_t a = (int64_t)((code + 7) & ~(uint64_t)7);
    size_t table = pp__ehframe_table_size(&pp__arch, &pp_template_layout);
    ssize_t got = pp__ehframe_build(&pp__arch, eh, sizeof(eh),
                                    &pp_template_layout, code);
    uint32_t cie_len;
    size_t field;
    int32_t pc_begin;
    int64_t rel;

    if (got < 0 || table + 4 > EH_ROOM) {
        snprintf(why, n, "pp__ehframe_build: %zd", got);
        return -1;
    }
    memcpy(&cie_len, eh, 4);
    field = 4 + cie_len + 8;                 /* the FDE's pc_begin */
    memcpy(&pc_begin, eh + field, 4);
    if (pc_begin != (int32_t)-(a + (int64_t)field)) {
        snprintf(why, n, "pc_begin %d does not point at the code in inject's "
                 "layout (%lld)", pc_begin, (long long)-(a + (int64_t)field));
        return -1;
    }
    rel = (int64_t)t->start - (int64_t)(uintptr_t)(buf + field);
    if (rel != (int32_t)rel) {
        snprintf(why, n, "the CFI copy is %lld bytes from the code", (long long)rel);
        return -1;
    }
    pc_begin = (int32_t)rel;
    memcpy(eh + field, &pc_begin, 4);
    memcpy(buf, eh, table);
    memset(buf + table, 0, 4);               /* the terminator */
    return 0;
}

static int register_all(char *why, size_t n)
{
    static uint8_t *area;
    size_t len = (size_t)MAX_TRAMPS * EH_ROOM;

    if (read_map() <= 0) {
        snprintf(why, n, "no /tmp/perf-%d.map entries", (int)getpid());
        return -1;
    }
    /* near the trampolines: pcrel sdata4 reaches 2 GiB */
    area = mmap((void *)((tramps[0].start & ~(uintptr_t)0xffff) + (1u << 20)),
                len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (area == MAP_FAILED) {
        snprintf(why, n, "mmap failed");
        return -1;
    }
    for (int i = 0; i < ntramps; i++) {
        if (place_cfi(area + (size_t)i * EH_ROOM, &tramps[i], why, n) != 0)
            return -1;
        __register_frame(area + (size_t)i * EH_ROOM);
    }
    return 0;
}

struct walk {
    uintptr_t pc[MAX_FRAMES];
    int n;
};

static _Unwind_Reason_Code one_frame(struct _Unwind_Context *ctx, void *arg)
{
    struct walk *w = arg;

    if (w->n == MAX_FRAMES)
        return _URC_END_OF_STACK;
    w->pc[w->n++] = (uintptr_t)_Unwind_GetIP(ctx);
    return _URC_NO_REASON;
}

static void name_of(uintptr_t pc, char *out, size_t n)
{
    Dl_info info;

    for (int i = 0; i < ntramps; i++)
        if (pc - 1 >= tramps[i].start && pc - 1 < tramps[i].start + tramps[i].size) {
            snprintf(out, n, "%s", tramps[i].name);
            return;
        }
    if (dladdr((void *)(pc - 1), &info) && info.dli_sname)
        snprintf(out, n, "%s", info.dli_sname);
    else if (info.dli_fname)
        snprintf(out, n, "? (%s)", strrchr(info.dli_fname, '/') ?
                 strrchr(info.dli_fname, '/') + 1 : info.dli_fname);
    else
        snprintf(out, n, "?");
}

/* Writes one line per frame, innermost first ("0x<pc> <name>"); returns
 * the number of frames, or -1 with the reason in out. */
__attribute__((visibility("default"), noinline))
int pp_probe_backtrace(int register_cfi, char *out, size_t cap)
{
    struct walk w = {.n = 0};
    size_t used = 0;

    if (register_cfi ? register_all(out, cap) != 0 : read_map() < 0) {
        if (!register_cfi)
            snprintf(out, cap, "no /tmp/perf-%d.map", (int)getpid());
        return -1;
    }
    _Unwind_Backtrace(one_frame, &w);
    out[0] = 0;
    for (int i = 0; i < w.n && used + 200 < cap; i++) {
        char name[160];

        name_of(w.pc[i], name, sizeof(name));
        used += (size_t)snprintf(out + used, cap - used, "%#lx %s\n",
                                 (unsigned long)w.pc[i], name);
    }
    return w.n;
}
