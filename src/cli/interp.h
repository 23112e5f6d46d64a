/*
 * The target interpreter, asked once and answered once: `perfpy record`
 * (which mode to pick, whether the module exists) and `perfpy doctor` (what
 * record would pick) call the same probe, the same parser and the same
 * decision, so they cannot disagree.
 *
 *   python -S -c PROBE   (PYTHONPATH and PYTHONSTARTUP removed)
 *   └► "perfpy-probe cpython 3.13.5 3 13 .cpython-313-x86_64-linux-gnu.so 0 /usr/bin/python3.13"
 *       marker       impl    version  major minor EXT_SUFFIX  frame pointers  sys.executable
 *
 * Frame pointers: '-fno-omit-frame-pointer' in the interpreter's CFLAGS.
 * With them record uses perf-map mode and frame-pointer call graphs; without,
 * jit mode and DWARF call graphs.
 */
#ifndef PERFPY_INTERP_H
#define PERFPY_INTERP_H

#include "sampler/request.h"

#include <limits.h>
#include <stddef.h>

typedef struct pp_interp {
    int known;                   /* the probe ran and said what it is */
    int cpython;
    int major, minor;
    int frame_pointers;
    char impl[32];               /* sys.implementation.name */
    char version[32];            /* "3.13.5" */
    char ext_suffix[64];         /* EXT_SUFFIX: the module's file name ends so */
    char executable[PATH_MAX];   /* sys.executable, "" when it has none */
    char path[PATH_MAX];         /* what was run */
    int by_shebang;              /* the program is a script; this is its #! Python */
} pp_interp;

/* Parses the probe's output (other lines, e.g. warnings, are skipped).
 * 0 with info->known set, or -EPROTO. */
int pp_interp_parse(const char *text, pp_interp *info);

/* Runs the probe with exe (looked up on PATH without a '/'). 0 with info
 * filled; -EPROTO when it ran and did not answer as a Python; another
 * negative errno when it could not run or failed. said gets its output (the
 * error a failing interpreter printed), NUL-terminated. */
int pp_interp_probe(const char *exe, pp_interp *info, char *said, size_t cap);

/* For a program to record (argv[0]): the probe of argv[0] (found on PATH),
 * else of the Python its "#!" line names. 0 (info->known may be 0: not a
 * Python), or -ENOENT when argv[0] is not found. */
int pp_interp_of_program(const char *argv0, pp_interp *info);

/* Whether perfpy can profile it (CPython 3.8 or newer): 1, or 0 with the
 * sentence that says why not in why ("CPython 2.7 is not supported: perfpy
 * needs CPython 3.8 or newer (...)"). record, its sample mode and doctor
 * ask this one question. */
int pp_interp_supported(const pp_interp *info, char *why, size_t cap);

/* The hook mode it gets (--mode hook, and auto where a hook is the
 * answer): perf map when it keeps frame pointers, else jitdump. */
pp_mode pp_interp_auto_mode(const pp_interp *info);

/* Whether an ELF file keeps its full symbol table (.symtab): 1, or 0 when
 * it is stripped to its dynamic symbols (perf then names only exported
 * functions: the interpreter's internals read as unnamed); -errno when it
 * cannot be read, -ENOEXEC when it is no 64-bit ELF. build_id (cap bytes,
 * may be NULL) gets its GNU build id in hex, "" without one: where its
 * detached debug symbols would be (/usr/lib/debug/.build-id/xx/rest.debug).
 * Reads section headers and notes only. */
int pp_elf_symbols(const char *path, char *build_id, size_t cap);

/* <libdir>/perfpy<EXT_SUFFIX>, the module built for it, into buf. 0 when
 * it is readable, else a negative errno (buf still names it). */
int pp_interp_module(const pp_interp *info, const char *libdir, char *buf, size_t cap);

#endif
