/*
 * Kernel symbols from /proc/kallsyms, for the kernel frames of a sample
 * (the BPF program hands over bare addresses):
 *
 *   ffffffff81000000 T _stext
 *   ffffffff81001000 t do_one_initcall
 *   ffffffffc0a01000 t e1000_probe\t[e1000e]
 *
 * Loaded once, text symbols only (t/T, w/W), sorted by address; an address
 * is named by the last symbol at or below it, "[unknown]" below the first
 * one. The DSO is "[kernel.kallsyms]" as perf prints it, or "[module]" for
 * a module's symbol. Unprivileged readers see every address as 0
 * (kptr_restrict): such a table names nothing (pp_kallsyms_usable says 0).
 * The text is hostile input (a fuzz target replays it): lines not
 * understood are skipped, nothing is read outside the buffer.
 */
#ifndef PERFPY_NATIVE_KALLSYMS_H
#define PERFPY_NATIVE_KALLSYMS_H

#include "unwind.h"

#include <stddef.h>
#include <stdint.h>

typedef struct pp_ksym {
    uint64_t addr;
    const char *name;
    const char *dso;       /* "[kernel.kallsyms]" or "[module]" */
} pp_ksym;

typedef struct pp_kallsyms {
    pp_ksym *v;            /* sorted by address */
    size_t n;
    size_t bad_lines;
    char *strings;         /* names and module DSOs (owned) */
} pp_kallsyms;

/* Parses len bytes of kallsyms text; free with pp_kallsyms_free (also after
 * an error). 0 or -ENOMEM. */
int pp_kallsyms_parse(const char *text, size_t len, pp_kallsyms *out);
/* Reads /proc/kallsyms. 0 or -errno. */
int pp_kallsyms_load(pp_kallsyms *out);
/* A table of n addresses the kernel named itself (names[i] as its stack
 * traces print addr[i]: "name", "name [module]", or a number when no
 * symbol holds it: "[unknown]"), for the frames of stacks made of those
 * addresses only (perfpy dump: a few dozen, not the 5 MB of kallsyms).
 * Free with pp_kallsyms_free (also after an error). 0 or -ENOMEM. */
int pp_kallsyms_named(pp_kallsyms *out, const uint64_t *addr, const char *const *names,
                      size_t n);
/* 1 when the table holds real addresses (root, or kptr_restrict allows). */
int pp_kallsyms_usable(const pp_kallsyms *k);
/* The symbol naming addr, or NULL. */
const pp_ksym *pp_kallsyms_find(const pp_kallsyms *k, uint64_t addr);
/* A sample's kernel ips (leaf first) as frames for the splice: out[i]
 * names ips[i] ("[unknown]" in "[kernel.kallsyms]" when nothing does);
 * perf's context markers (PERF_CONTEXT_*, the top 4095 values) are
 * skipped. Returns the number of frames written (at most cap). The names
 * live as long as k. */
size_t pp_kallsyms_frames(const pp_kallsyms *k, const uint64_t *ips, size_t n,
                          pp_native_frame *out, size_t cap);
void pp_kallsyms_free(pp_kallsyms *k);

#endif
