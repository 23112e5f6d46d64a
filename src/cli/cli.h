/*
 * Shared by the perfpy command's files: the subcommand table's row type and
 * small helpers every subcommand uses (usage errors, the module directory,
 * the child environment, a checked close of stdout).
 *
 * Exit codes (PP_EXIT_*, sampler/request.h: perfpy-sample gives the same):
 * 0 success, 1 failure, 2 usage error; `run` and `record` pass the
 * profiled program's own status on.
 */
#ifndef PERFPY_CLI_H
#define PERFPY_CLI_H

#include "perfpy/error.h"
#include "sampler/request.h"

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

typedef int (*pp_cmd_fn)(int argc, char **argv);

typedef struct pp_command {
    const char *name;
    pp_cmd_fn run;
    const char *summary;    /* one line for `perfpy --help` */
} pp_command;

/* Subcommands, one file each. */
int pp_cmd_run(int argc, char **argv);
int pp_cmd_record(int argc, char **argv);
int pp_cmd_report(int argc, char **argv);
int pp_cmd_diff(int argc, char **argv);
int pp_cmd_jitdump(int argc, char **argv);
int pp_cmd_doctor(int argc, char **argv);
int pp_cmd_dump(int argc, char **argv);
int pp_cmd_top(int argc, char **argv);
int pp_cmd_exec(int argc, char **argv);    /* internal: record's program shim */

/* "perfpy CMD: MESSAGE\nTry 'perfpy CMD --help'." on stderr; returns 2. */
int pp_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* "perfpy: MESSAGE" on stderr; returns 1. */
int pp_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "perfpy: MESSAGE" of a library's error (include/perfpy/error.h); returns 1. */
int pp_fail_error(const pp_error *e);
/* execvp(argv); if that returns, says why on stderr (pp_fail's way) and
 * returns PP_EXIT_FAIL. */
int pp_exec(char **argv);

/* Saves what perf changes in the environment of the program it starts
 * (PATH first), for `perfpy __exec` to put back (cmd_exec.c). 0 or -errno. */
int pp_exec_env_save(void);
/* Notes the signal dispositions and mask perfpy was started with, before
 * it changes any; pp_exec_env_save passes them on to the program. */
void pp_exec_signals_capture(void);

/* The directory holding sitecustomize.py and the module builds:
 * $PERFPY_LIBDIR, <exe dir>/lib (build tree), <exe dir>/../lib/perfpy
 * (installed). 0, or -1 after printing what was searched. */
int pp_find_libdir(char *buf, size_t cap);
/* The same, printing nothing: 0 or -1. */
int pp_find_libdir_quiet(char *buf, size_t cap);

/* Sample mode's recorder (sampler.c): beside perfpy, or in the perfpy
 * package of the site-packages beside it (pip). 0 and path, else -ENOENT
 * with path the place beside perfpy and why what the build lacked ("" when
 * it did not say; libdir may be NULL). */
int pp_sampler_find(const char *libdir, char *path, size_t cap, char *why, size_t why_cap);
/* What a build without sample mode said of itself (why, and what to
 * install), as one line; "" when it said nothing (libdir may be NULL). */
void pp_sampler_lacks(const char *libdir, char *why, size_t cap);
/* The sentence for a perfpy without it, from pp_sampler_find's path and why. */
void pp_sampler_absent(const char *path, const char *why, char *buf, size_t cap);
/* Whether sample mode can sample here (`perfpy-sample --check`, the one
 * pp_sampler_find finds: its BPF program loads and attaches): 0; -ENOENT
 * not in this perfpy, why saying what its build lacked and what to
 * install; -ENOTSUP perfpy-sample built without it (it reads: read mode
 * is there), why the same; -EPERM not here, with perfpy-sample's reason
 * (privileges, BPF, BTF) in why. libdir may be NULL. */
int pp_sampler_check(const char *libdir, char *why, size_t cap);
/* Whether this process may read pid's memory (read mode): 0, or -errno
 * (-EPERM: not permitted, -ENOSYS: the call is forbidden here). */
int pp_sampler_can_read(pid_t pid);
/* perfpy-sample at path in this process's place, asked rq (sampler/request.h):
 * returns only when it could not run, with PP_EXIT_FAIL (said why). */
int pp_sampler_exec(const char *path, const pp_request *rq);

/* Sets up this process's environment for a Python child with the engine in
 * mode (perf or jit): PERFPY, PYTHONPATH (libdir first), and removes
 * CPython's own switches so that one engine runs, not two. */
int pp_prepare_child_env(const char *libdir, pp_mode mode);

/* Whether perf's words say it was refused permission; and what to do
 * about it, for this user on this system. */
int pp_perf_refused(const char *perf_said);
void pp_perf_refused_advice(char *buf, size_t cap);

/* fflush + ferror + fclose of stdout: a full disk is an error, not a
 * truncated report. Returns 0 or 1 (after saying why). */
int pp_close_stdout(void);

#endif
