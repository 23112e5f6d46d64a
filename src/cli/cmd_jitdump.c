/*
 * perfpy jitdump [--list] FILE
 *
 * Checks a jitdump (perfpy's jit mode, CPython's -X perf_jit, any JIT) the
 * way perf inject will read it, and summarises it, or says precisely what
 * is wrong and at which byte. Useful when `perf inject --jit` names
 * nothing or stacks stop at a Python function:
 *
 *   $ perfpy jitdump /tmp/jit-4242.dump
 *   /tmp/jit-4242.dump: valid jitdump
 *     version 1, x86-64 (elf_mach 62), pid 4242, 93184 bytes
 *     records: 310 JIT_CODE_LOAD, 310 JIT_CODE_DEBUG_INFO, ...
 *     ...
 *
 * The file is read and walked the one way every dump is, by the engine's
 * reader (src/engine/jitdump_read.c: a copy of the file, then its record
 * and debug-entry iterators); this file only counts and prints.
 */
#include "cli.h"
#include "help.h"
#include "options.h"
#include "perfpy/jitdump_read.h"
#include "profile/htab.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const help[] = {
    "usage: perfpy jitdump [--list] FILE",
    "",
    "Check a jitdump file (jit-<pid>.dump, written by `perfpy run --mode",
    "jit`, CPython's -X perf_jit or another JIT) the way `perf inject --jit`",
    "reads it, and summarise it: pid, records by type, code loads, first and",
    "last timestamps, and whether every code load has unwinding and debug",
    "info. If the file is damaged, say what is wrong and at which byte. A",
    "file that only ends inside a record (its writer was killed while",
    "writing it) is valid up to there: a note says so.",
    "",
    "options:",
    "  -l, --list  also list every code load: code_index, address (hex),",
    "              size (bytes), name, and source file:line from its debug",
    "              record (default: the summary only)",
    "  -h, --help  this help",
    "",
    "exit status: 0 valid (a cut last record included), 1 damaged or",
    "unreadable, 2 usage error",
    "",
    "example:",
    "  PERFPY_JITDUMP_DIR=/tmp/d perfpy run --mode jit -- python app.py",
    "  perfpy jitdump --list /tmp/d/jit-*.dump",
    NULL,
};

static const char *machine_name(uint32_t m)
{
    switch (m) {
    case 3: return "i386";
    case 8: return "MIPS";
    case 20: return "PowerPC";
    case 21: return "PowerPC64";
    case 22: return "s390";
    case 40: return "ARM";
    case 62: return "x86-64";
    case 183: return "AArch64";
    case 243: return "RISC-V";
    default: return "unknown machine";
    }
}

struct summary {
    uint64_t by_type[JIT_CODE_MAX + 1];   /* last slot: unknown types */
    uint64_t loads, code_bytes, without_unwinding, without_debug;
    uint64_t first_ts, last_ts, records;
    const char **names;
    size_t nnames, names_cap;
    pp_jd_record last_debug;
    int have_debug;
};

static int keep_name(struct summary *s, const char *name)
{
    if (pp__grow((void **)&s->names, &s->names_cap, s->nnames + 1, sizeof(*s->names)) < 0)
        return -ENOMEM;
    s->names[s->nnames++] = name;
    return 0;
}

static int by_string(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static size_t distinct_names(struct summary *s)
{
    size_t n = 0;

    if (s->nnames == 0)
        return 0;                /* names is NULL: qsort must not see it */
    qsort(s->names, s->nnames, sizeof(*s->names), by_string);
    for (size_t i = 0; i < s->nnames; i++)
        if (i == 0 || strcmp(s->names[i], s->names[i - 1]) != 0)
            n++;
    return n;
}

static void list_load(const pp_jd_reader *r, struct summary *s,
                      const pp_jd_record *rec)
{
    pp_jd_debug_entry e;
    size_t pos = 0;

    printf("  %6" PRIu64 "  0x%" PRIx64 "  %4" PRIu64 "  %s",
           rec->u.load.code_index, rec->u.load.code_addr,
           rec->u.load.code_size, rec->u.load.name);
    if (s->have_debug && rec->u.load.debug_at == (int64_t)s->last_debug.offset &&
        pp_jd_debug_next(r, &s->last_debug, &pos, &e))
        printf("  %s:%" PRId32, e.name, e.lineno);
    putchar('\n');
}

static int count(pp_jd_reader *r, struct summary *s, const pp_jd_record *rec,
                 int list)
{
    s->by_type[rec->id < JIT_CODE_MAX ? rec->id : JIT_CODE_MAX]++;
    if (s->records++ == 0)
        s->first_ts = rec->timestamp;
    s->last_ts = rec->timestamp;
    if (rec->id == JIT_CODE_DEBUG_INFO) {
        s->last_debug = *rec;
        s->have_debug = 1;
    }
    if (rec->id != JIT_CODE_LOAD)
        return 0;
    s->loads++;
    s->code_bytes += rec->u.load.code_size;
    s->without_unwinding += rec->u.load.unwinding_at < 0;
    s->without_debug += rec->u.load.debug_at < 0;
    if (list)
        list_load(r, s, rec);
    return keep_name(s, rec->u.load.name);
}

static void print_ts(const char *label, uint64_t ns)
{
    printf("%s %" PRIu64 ".%09" PRIu64 " s", label, ns / 1000000000u,
           ns % 1000000000u);
}

static void coverage(const char *what, uint64_t missing, uint64_t loads,
                     const char *consequence)
{
    if (loads == 0)
        printf("  %s: no code loads\n", what);
    else if (missing == 0)
        printf("  %s: every code load has one\n", what);
    else
        printf("  %s: %" PRIu64 " of %" PRIu64 " code loads have none (%s)\n",
               what, missing, loads, consequence);
}

static void report(const char *path, const pp_jd_reader *r,
                   struct summary *s, size_t size)
{
    const pp_jd_header *h = &r->header;

    if (r->error.cut)
        printf("%s: valid jitdump up to its last record, which is cut\n", path);
    else
        printf("%s: valid jitdump\n", path);
    printf("  version %" PRIu32 ", %s (elf_mach %" PRIu32 "), pid %" PRIu32
           ", %zu bytes%s%s\n", h->version, machine_name(h->elf_mach),
           h->elf_mach, h->pid, size,
           h->swapped ? ", written with the other byte order" : "",
           (h->flags & JITDUMP_FLAGS_ARCH_TIMESTAMP) ?
           ", arch timestamps (TSC)" : "");
    printf("  records: %" PRIu64 " (%" PRIu64 " JIT_CODE_LOAD, %" PRIu64
           " JIT_CODE_DEBUG_INFO, %" PRIu64 " JIT_CODE_UNWINDING_INFO, %"
           PRIu64 " JIT_CODE_MOVE, %" PRIu64 " JIT_CODE_CLOSE, %" PRIu64
           " unknown, skipped)\n", s->records, s->by_type[JIT_CODE_LOAD],
           s->by_type[JIT_CODE_DEBUG_INFO], s->by_type[JIT_CODE_UNWINDING_INFO],
           s->by_type[JIT_CODE_MOVE], s->by_type[JIT_CODE_CLOSE],
           s->by_type[JIT_CODE_MAX]);
    printf("  functions: %" PRIu64 " code loads, %zu distinct names, %" PRIu64
           " bytes of code\n", s->loads, distinct_names(s), s->code_bytes);
    printf("  ");
    print_ts("header timestamp", h->timestamp);
    if (s->records) {
        print_ts(", first record", s->first_ts);
        print_ts(", last record", s->last_ts);
    }
    printf("%s\n", (h->flags & JITDUMP_FLAGS_ARCH_TIMESTAMP) ? "" :
           " (CLOCK_MONOTONIC: record with perf record -k 1)");
    coverage("unwinding info", s->without_unwinding, s->loads,
             "perf cannot unwind past them without frame pointers");
    coverage("debug info", s->without_debug, s->loads,
             "no source lines for them");
}

static int jitdump_option(int c, void *opts, pp_usage *u)
{
    pp_jitdump_opts *o = opts;

    (void)u;
    o->list |= c == 'l';
    return PP_PARSED_RUN;
}

int pp_jitdump_parse(int argc, char **argv, pp_jitdump_opts *o, pp_usage *u)
{
    static const struct option opts[] = {
        {"list", no_argument, NULL, 'l'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int rc;

    o->list = 0;
    o->path = NULL;
    if ((rc = pp_getopt_each(argc, argv, ":lh", opts, jitdump_option, o, u)) != PP_PARSED_RUN)
        return rc;
    return pp_operand_one(argc, argv, "file", "perfpy jitdump /tmp/jit-<pid>.dump", &o->path, u);
}

int pp_cmd_jitdump(int argc, char **argv)
{
    pp_jitdump_opts o;
    pp_usage u;
    struct summary s;
    pp_jd_reader r;
    pp_jd_record rec;
    uint8_t *data = NULL;
    size_t size = 0;
    const char *path;
    int rc, list, status;

    if ((rc = pp_parsed("jitdump", pp_jitdump_parse(argc, argv, &o, &u), &u, help)) >= 0)
        return rc;
    path = o.path;
    list = o.list;
    rc = pp_jd_read_file(path, &data, &size);   /* a copy: see there why */
    if (rc < 0)
        return pp_fail("cannot read %s: %s", path, rc == -EINVAL ?
                       "not a regular file" : strerror(-rc));
    memset(&s, 0, sizeof(s));
    if (list)
        printf("%s: code loads (code_index, address, bytes, name, "
               "source file:line)\n", path);
    rc = pp_jd_open(&r, data, size);
    while (rc == 0 && (rc = pp_jd_next(&r, &rec)) > 0)
        rc = count(&r, &s, &rec, list) < 0 ? -ENOMEM : 0;
    if (rc < 0 && r.error.cut) {
        /* What a SIGKILL during a write leaves: the records before are
         * the dump, as perf inject reads it. Said, not failed. */
        report(path, &r, &s, size);
        fflush(stdout);
        fprintf(stderr, "perfpy: note: %s ends inside the record at byte offset %" PRIu64
                " (%s), after %" PRIu64 " whole records: the process was killed while "
                "writing it; perf inject uses the whole records\n", path, r.error.offset,
                r.error.message, s.records);
        status = PP_EXIT_OK;
    } else if (rc < 0) {
        fflush(stdout);
        status = pp_fail("%s: not a valid jitdump: at byte offset %" PRIu64
                         ": %s (%" PRIu64 " records read before it)", path,
                         r.error.offset, r.error.err ? r.error.message :
                         strerror(-rc), s.records);
    } else {
        report(path, &r, &s, size);
        status = PP_EXIT_OK;
    }
    pp_jd_close(&r);
    free(s.names);
    free(data);
    if (pp_close_stdout() != PP_EXIT_OK)
        return PP_EXIT_FAIL;
    return status;
}
