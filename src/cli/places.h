/*
 * Where perfpy's files go, and what the directories there allow: the
 * checks `perfpy record` makes before it picks a directory and `perfpy
 * doctor` reports (one check, so the two agree), and the clean-up of the
 * files a recording's processes left in shared directories.
 *
 *   $TMPDIR/perfpy-record-XXXXXX/   perf.data, perfpy-<pid>.lines (which
 *                                   processes were this recording's)
 *   jit dumps                       that directory; or /dev/shm/perfpy-jit-XXXXXX
 *                                   (memory, faster: pp_places_memory_dir);
 *                                   or /tmp itself (perf with libdw)
 *   /tmp/perf-<pid>.map             perf-map mode (perf's fixed place)
 */
#ifndef PERFPY_PLACES_H
#define PERFPY_PLACES_H

#include <stddef.h>

/* Which of the engines (perfpy's, or CPython's own -X perf / -X perf_jit)
 * a running process has active, from the outside: the files only an active
 * engine makes. JIT: a jit-<pid>.dump mapped in it (the writer maps its
 * dump for perf to see); MAP: /tmp/perf-<pid>.map written since the process
 * started (one left by an earlier process with the same pid is not its);
 * NONE: neither, or the process cannot be read. */
typedef enum pp_engine_seen {
    PP_ENGINE_NONE = 0,
    PP_ENGINE_MAP,
    PP_ENGINE_JIT,
} pp_engine_seen;
pp_engine_seen pp_places_engine_of(long pid);

/* What a directory allows the engine: create files, write them, and (exec)
 * map them PROT_EXEC, which is how a jitdump tells perf where it is. */
typedef enum pp_dir_verdict {
    PP_DIR_OK = 0,
    PP_DIR_NO_CREATE,       /* cannot create a file there (errno in *err) */
    PP_DIR_NO_WRITE,        /* cannot write one (disk full?) */
    PP_DIR_NO_EXEC,         /* cannot map one PROT_EXEC (mounted noexec) */
} pp_dir_verdict;

/* Tries it with a file of its own (O_EXCL, removed after). */
pp_dir_verdict pp_places_check(const char *dir, int exec, int *err);

/* Whether files in /tmp itself map PROT_EXEC (checked in a private
 * directory of its own there: never a fixed name in a shared one). */
int pp_places_tmp_exec_ok(void);

/* A private directory in /dev/shm for jit dumps when that is faster (see
 * places.c). 0 with its path in buf, or -1: keep the dumps in recording_dir. */
int pp_places_memory_dir(const char *recording_dir, char *buf, size_t cap);

/* For each process that wrote <dir>/perfpy-<pid>.lines, the path fmt gives
 * for its pid (one %d) if it exists, to fn. */
void pp_places_per_process(const char *dir, const char *fmt, void (*fn)(const char *path));
/* The same, removing each. */
void pp_places_remove_per_process(const char *dir, const char *fmt);

/* Copies, for each process that wrote <dir>/perfpy-<pid>.lines, that file
 * and the file fmt gives for its pid (if fmt and it exists) into to_dir:
 * format perf keeps them in FILE.jit/, where `perfpy report` finds the def
 * lines (the sidecars in perf-map mode; the dumps in jit mode when they were
 * made in /tmp, which record cleans). 0, or -1 if one could not be copied. */
int pp_places_keep_per_process(const char *dir, const char *fmt, const char *to_dir);

/* Removes a directory tree (no symlink followed). */
void pp_places_remove_tree(const char *dir);

#endif
