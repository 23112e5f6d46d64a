/*
 * perf.data without perf, in three files:
 *  - perf_data.c: a quick look before running perf on it (does the
 *    recording name any jitdump, then `perf inject --jit` must run first;
 *    how many samples does it hold; how many events did perf lose), and
 *    finishing a recording whose perf was killed;
 *  - perf_data_fix.c: the exec fix-ups made on the report's copy;
 *  - jitdump_codes.c: the code loads of the jitdumps the recording names.
 */
#ifndef PERFPY_PERF_DATA_H
#define PERFPY_PERF_DATA_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

typedef struct pp_perf_data_info {
    char perf_version[64];  /* the perf that wrote it ("7.2.13", from the
                               HEADER_VERSION feature section); "" unknown */
    int scanned;            /* 0: a format this reader does not walk (pipe mode,
                               compressed records, other endianness); the
                               fields below are then unknown */
    uint64_t samples;       /* PERF_RECORD_SAMPLE records */
    uint64_t lost;          /* events in PERF_RECORD_LOST + LOST_SAMPLES */
    size_t njitdumps;       /* distinct jit-<pid>.dump files mapped, any number */
    char **jitdumps;        /* their paths (malloc'ed: pp_perf_data_info_free) */
    size_t jitdumps_cap;
    size_t jitdumps_dropped; /* named but not kept: out of memory */
    struct pp_task_event {   /* the processes' and threads' starts and ends, */
        uint32_t kind;       /* PP_TASK_FORK or PP_TASK_EXIT */
        uint32_t pid, tid;   /* the child (fork), the one that ended (exit) */
        uint32_t ppid;       /* the parent's pid (fork): pid == ppid for a new thread */
        uint64_t time;       /* perf clock */
    } *tasks;                /* in the file's order (malloc'ed) */
    size_t ntasks, tasks_cap;
} pp_perf_data_info;

enum { PP_TASK_FORK = 1, PP_TASK_EXIT = 2 };

/* Frees what a scan allocated; the info reads as empty after it. */
void pp_perf_data_info_free(pp_perf_data_info *info);

/* One trampoline of a jitdump: perf inject turns each into its own
 * jitted-<pid>-<index>.so, and `perf script` then prints addresses relative
 * to that file, so the report finds a frame's real address (and def line)
 * through its index. */
typedef struct pp_jit_code {
    uint64_t index;         /* code_index */
    uint64_t addr;          /* code_addr: where it ran */
    int line;               /* line of its debug record (co_firstlineno); 0 none */
} pp_jit_code;

/* The code loads of a jitdump file, sorted by index (malloc'ed; *n may be
 * 0). Hostile input: stops at the first bad record, keeps what it read.
 * 0, or a negative errno when the file cannot be read. */
int pp_jitdump_codes(const char *path, pp_jit_code **out, size_t *n);
int pp_jitdump_codes_buffer(const uint8_t *data, size_t len, pp_jit_code **out, size_t *n);

/* Processes that exec, whose old maps perf 6.x keeps and which then break
 * its DWARF unwinding of the new image (see perf_data_fix.c):
 *  - forked children that exec before they are sampled (subprocess,
 *    multiprocessing's spawn): their FORK records get
 *    PERF_RECORD_MISC_FORK_EXEC so perf does not give them the parent's maps;
 *  - in DWARF recordings, every image a process ran before its last exec
 *    (perfpy's own __exec shim, `perfpy run`, pyenv's shim scripts) gets a
 *    pid of its own (pid + k * 2^22), its records with it.
 * *count gets how many records need it (write=0) or were changed (write=1,
 * the file is changed in place). 0 or a negative errno; a file this walker
 * does not read is left alone. */
int pp_perf_data_fix_exec_forks(const char *path, int write, size_t *count);
int pp_perf_data_fix_exec_forks_buffer(uint8_t *data, size_t len, int write, size_t *count);

/* A recording whose `perf record` was killed: perf writes the data size
 * and the feature sections only when it stops, so the header says 0 bytes
 * of data and perf reads nothing. The records up to the last whole one
 * become the data section, and the feature bits (their sections were never
 * written) are cleared; the file is cut after the last whole record.
 * *bytes gets the data size made (0: the file was finished, or is not one
 * this walks, and is left alone). 0 or a negative errno. */
int pp_perf_data_finish(const char *path, uint64_t *bytes);
int pp_perf_data_finish_buffer(uint8_t *data, size_t len, uint64_t *bytes);

/* 0; -ENOENT/-EACCES/... from open; -EINVAL if it is not a perf.data file. */
int pp_perf_data_scan(const char *path, pp_perf_data_info *info);
/* The same on bytes in memory (tests, fuzzing). */
int pp_perf_data_scan_buffer(const uint8_t *data, size_t len, pp_perf_data_info *info);

#endif
