/*
 * Starting other programs: the one place perfpy forks and execs (perf
 * record, inject and script, the interpreter probe, perf's version). The
 * command layer uses it too; it lives here, in the lowest layer that runs
 * programs, so that the pipeline needs nothing from the commands.
 *
 * An exec that fails is reported as its errno, sent back by the child
 * through a close-on-exec pipe (libuv's way, src/unix/process.c): the pipe
 * closes unread when exec succeeds, and carries errno when it does not, so
 * no caller ever guesses from exit status 127 or from text on stderr.
 *
 *     parent                          child
 *     pipe2(p, O_CLOEXEC); fork() ──► dup2 the descriptors, execv[p](argv)
 *     read(p[0]) ◄─── 0 bytes ─────── exec succeeded (p[1] closed by it)
 *                ◄─── errno ───────── exec failed; _exit(127)
 */
#ifndef PERFPY_SPAWN_H
#define PERFPY_SPAWN_H

#include <stddef.h>
#include <sys/types.h>

#define PP_FD_NULL (-1)       /* /dev/null */
#define PP_FD_INHERIT (-2)    /* the descriptor perfpy has */

typedef struct pp_spawn_opts {
    int in_fd, out_fd, err_fd;   /* what becomes 0, 1, 2 in the child */
    int search_path;             /* argv[0] without '/' is looked up on PATH */
    int ignore_sigpipe;          /* SIGPIPE ignored (kept across exec) */
    int default_signals;         /* SIGINT and SIGTERM back to their default */
    int new_group;               /* a process group of its own: the terminal's
                                    Ctrl-C does not reach it */
    const char *const *unset;    /* variables removed from the child's
                                    environment, NULL-terminated; NULL: none */
} pp_spawn_opts;

/* Starts argv. 0 with *pid set, or a negative errno: fork's, or the exec's
 * own (-ENOENT, -EACCES...; the child is reaped then). */
int pp_spawn(char *const argv[], const pp_spawn_opts *o, pid_t *pid);

/* waitpid, EINTR retried: 0 with *status, or a negative errno. */
int pp_wait(pid_t pid, int *status);

/* Runs argv (found on PATH, stdin /dev/null) with its stdout, and its
 * stderr when with_stderr, captured into out (NUL-terminated, cut at cap),
 * and waits for it. 0 with its wait status in *status, or a negative errno
 * when it could not start (an exec that failed included). */
int pp_capture(char *const argv[], int with_stderr, const char *const *unset,
               char *out, size_t cap, int *status);

/* Where execvp would find name: name itself when it holds a '/', else the
 * first regular, executable PATH entry ($PATH unset or empty:
 * /usr/local/bin:/usr/bin:/bin; an empty entry is the current directory).
 * 0 with the path in buf, or -ENOENT. */
int pp_which(const char *name, char *buf, size_t cap);

#endif
