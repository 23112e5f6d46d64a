/*
 * The processes of a tree, from /proc: a program's descendants, for the
 * recorders that follow more than the process they were given (read mode
 * at each scan; sample mode when it attaches to a pool whose workers
 * already run, whose later children its fork tracepoint follows).
 */
#ifndef PERFPY_NATIVE_PROCS_H
#define PERFPY_NATIVE_PROCS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct pp_proc_info {
    pid_t pid;
    unsigned long long start;      /* its start time (clock ticks since boot):
                                      a pid reused is another process */
} pp_proc_info;

/* root and every live (not zombie) process descending from it, root first,
 * parents before their children; up to cap into out. How many, or
 * -errno (-ENOMEM; -ESRCH: root is not there). */
long pp_procs_tree(pid_t root, pp_proc_info *out, size_t cap);

/* A small file of /proc (stat, comm, wchan, ...) into buf (len bytes),
 * NUL-terminated, its last newline cut. Its length, or -errno (-ENOENT
 * too for a task that ended between the file's open and its read). */
long pp_procs_small_file(const char *path, char *buf, size_t len);

/* One process's state letter (R, S, D, Z...), parent and start time, from
 * /proc/PID/stat, or of its thread tid (0: the process) from
 * /proc/PID/task/TID/stat. ppid and start may be NULL. 0 or -errno. */
int pp_procs_stat(pid_t pid, pid_t tid, char *state, pid_t *ppid, unsigned long long *start);

/* The CPU time thread tid of pid has run, in ns (the first field of
 * /proc/PID/task/TID/schedstat: the scheduler's own account, brought up to
 * date at each scheduler tick and switch). 0, or -errno (-ENOENT without
 * CONFIG_SCHED_INFO, or the thread ended). */
int pp_procs_run_ns(pid_t pid, pid_t tid, uint64_t *ns);

#endif
