/*
 * perfpy engine: executable trampolines and the files that name them for perf.
 *
 * Why: perf samples native stacks. For a Python program every Python call is
 * the same C function, so perf cannot tell one Python function from another:
 *
 *     before                          after (one trampoline per code object)
 *     _PyEval_EvalFrameDefault        _PyEval_EvalFrameDefault
 *     _PyEval_EvalFrameDefault        py::foo:app.py      <- trampoline copy #2
 *     _PyEval_EvalFrameDefault        _PyEval_EvalFrameDefault
 *     main                            py::bar:app.py      <- trampoline copy #1
 *                                     main
 *
 * The interpreter calls each Python function through its own copy of a tiny
 * piece of machine code (the trampoline), and a backend tells perf which
 * Python function each copy stands for: a line in /tmp/perf-<pid>.map, or
 * records in a jitdump file (which also carries DWARF unwinding data, so perf
 * can unwind through the copy without frame pointers).
 *
 * This header is the whole engine API. It knows nothing about Python: the
 * binding (src/python) turns code objects into pp_symbol values.
 *
 * Errors are values: every function returns 0 or a negative errno.
 */
#ifndef PERFPY_ENGINE_H
#define PERFPY_ENGINE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PERFPY_VERSION "0.1.0"

/*
 * A trampoline, as the binding calls it. Arguments a, b and c reach target
 * unchanged in the same registers, and target's return value comes back: the
 * trampoline only adds a native frame with its own address in it.
 */
typedef void *(*pp_trampoline_fn)(void *a, void *b, void *c, void *target);

/* ------------------------------------------------------------------------ */
/* The template (src/engine/trampoline_<arch>.S) and per-architecture facts  */

/* Bytes of machine code in one trampoline (the template's length). */
size_t pp_template_size(void);
/* The template's bytes, pp_template_size() of them. */
const uint8_t *pp_template_code(void);

/* ------------------------------------------------------------------------ */
/* Code arenas: executable memory, never writable and executable at once     */

typedef struct pp_arena_chunk pp_arena_chunk;

typedef struct pp_arena {
    size_t slot_size;          /* bytes between two trampolines */
    size_t chunk_size;         /* bytes mapped at a time */
    pp_arena_chunk *chunks;    /* every chunk ever mapped; never unmapped */
    uint8_t *next;             /* next free slot in the newest chunk */
    uint8_t *end;              /* end of the newest chunk's slots */
    size_t slots_used;
    size_t bytes_mapped;
} pp_arena;

/* slot_size: at least pp_template_size(), a multiple of 16. */
int pp_arena_init(pp_arena *a, size_t slot_size);
/* A fresh trampoline. Slots are never reused: frames may still run in them. */
int pp_arena_take(pp_arena *a, pp_trampoline_fn *out);
/* In a forked child: the next trampoline goes into a chunk the child maps
 * itself (see arena.c). */
void pp_arena_fork_child(pp_arena *a);
/* Mapped bytes per trampoline handed out so far (0 when none). */
double pp_arena_bytes_per_trampoline(const pp_arena *a);
/* Forgets the arena but keeps its memory mapped for frames still inside
 * it (the chunks stay reachable, so leak checkers stay quiet). */
void pp_arena_retire(pp_arena *a);
/* Unmaps everything. Only for tests and for a process that runs no code
 * from the arena any more. */
void pp_arena_release(pp_arena *a);

/* ------------------------------------------------------------------------ */
/* Backends: one seam, {open, write_entry, close}, several formats           */

/* What a backend records for one trampoline. Strings are UTF-8; backends
 * make them safe for their format (no newline can break a map line). */
typedef struct pp_symbol {
    const void *code;          /* first byte of the trampoline */
    size_t code_size;          /* bytes of machine code */
    const char *qualname;      /* "Shape.area", "<module>" */
    const char *filename;      /* co_filename */
    int firstlineno;           /* co_firstlineno (0 when unknown) */
} pp_symbol;

typedef struct pp_backend pp_backend;

typedef struct pp_backend_ops {
    const char *name;          /* "perf", "perf_jit", "lines" */
    /* Arena slot size this format needs for a template of code_size bytes
     * (the jitdump reserves room for the unwinding data after the code). */
    size_t (*slot_size)(size_t code_size);
    /* Create this process's file. dir may be NULL (format's default). */
    int (*open)(pp_backend **out, const char *dir);
    /* Record one trampoline: the entry is in the file, whole, on return. */
    int (*write_entry)(pp_backend *b, const pp_symbol *sym);
    /* In a forked child: start the child's own file, holding every entry the
     * parent had written before the fork (inherit = 1), or, for a perf map
     * with inherit = 0, only what the child writes (CPython's rule; what
     * another writer of the child put there is kept); never write to the
     * parent's file. The jitdump and the lines sidecar always inherit. */
    int (*fork_child)(pp_backend *b, int inherit);
    /* Flush and free; returns the first error the backend ever met. */
    int (*close)(pp_backend *b);
} pp_backend_ops;

extern const pp_backend_ops pp_perfmap_ops;   /* /tmp/perf-<pid>.map */
extern const pp_backend_ops pp_jitdump_ops;   /* <dir>/jit-<pid>.dump */
extern const pp_backend_ops pp_lines_ops;     /* <dir>/perfpy-<pid>.lines */

/* Writes "py::<qualname>:<filename>" into buf (NUL-terminated), replacing
 * control characters so the name is one line. Returns the length it needs
 * (excluding the NUL), like snprintf. */
size_t pp_symbol_name(char *buf, size_t cap, const pp_symbol *sym);

/* CLOCK_MONOTONIC in nanoseconds: the clock `perf record -k 1` uses. */
uint64_t pp_monotonic_ns(void);

/* ------------------------------------------------------------------------ */
/* The engine: an arena plus the backends that name its trampolines         */

typedef struct pp_engine pp_engine;

typedef struct pp_engine_config {
    const pp_backend_ops *backend;   /* the format perf reads */
    const char *dir;                 /* backend's directory, NULL = default */
    const char *lines_dir;           /* NULL, or also write perfpy-<pid>.lines */
} pp_engine_config;

int pp_engine_open(pp_engine **out, const pp_engine_config *cfg);
/* A new trampoline for sym (sym->code and code_size are filled in by the
 * engine), registered with every backend before it is returned. Safe to call
 * from many threads at once. On error nothing is returned and the engine
 * keeps the error (later calls fail fast with it). */
int pp_engine_register(pp_engine *e, pp_symbol *sym, pp_trampoline_fn *out);
/* Call in a forked child before it runs trampolines it did not register:
 * moves every backend to the child's own files. Idempotent per pid. */
int pp_engine_fork_child(pp_engine *e);
/* From now on a forked child's perf map starts without the parent's entries
 * (inherit = 0), as the map of CPython's own trampoline does, whose
 * PyUnstable_PerfTrampoline_SetPersistAfterFork copy is then kept; or with
 * them (1, the default). perf names inherited code from the parent's map. */
void pp_engine_set_fork_inherit_map(pp_engine *e, int inherit);
/* Points every descriptor of this process open on path at /dev/null
 * instead (dup2): a writer that no longer writes (CPython's own jitdump
 * writer once its trampoline is deactivated) keeps a valid descriptor, and
 * whatever it still had buffered goes nowhere, while the path is free for
 * the engine. 0 or -errno. */
int pp_file_detach_writers(const char *path);
const char *pp_engine_backend_name(const pp_engine *e);
/* After an error: the file that could not be written (a backend's map,
 * dump or sidecar), or NULL when the error was not a file's (memory). */
const char *pp_engine_failed_file(const pp_engine *e);
size_t pp_engine_trampolines(const pp_engine *e);
double pp_engine_bytes_per_trampoline(const pp_engine *e);
/* Closes the backends; the arena stays mapped (frames may still run in it).
 * Returns the first error any backend met. */
int pp_engine_close(pp_engine *e);

#ifdef __cplusplus
}
#endif
#endif /* PERFPY_ENGINE_H */
