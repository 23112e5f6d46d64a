/*
 * Shared by the perfpy command's files: the subcommand table's row type and
 * small helpers every subcommand uses (usage errors, the module directory,
 * the child environment, a checked close of stdout).
 *
 * Exit codes: 0 success, 1 failure, 2 usage error; `run` and `record` pass
 * the profiled program's own status on.
 */
#ifndef PERFPY_CLI_H
#define PERFPY_CLI_H

#include "perfpy/error.h"

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#define PP_EXIT_OK 0
#define PP_EXIT_FAIL 1
#define PP_EXIT_USAGE 2

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
/* What a Python command line runs, for names: "app" for `python app.py`
 * (options before it skipped), "pkg" for `python -m pkg`, else the
 * program's file name ("python3" for `python3 -c ...`). */
void pp_program_stem(char *const *argv, char *buf, size_t cap);
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
/* perfpy-sample --read ...: read mode's recorder (read_main.c). */
int pp__read_main(int argc, char **argv);
/* perfpy-sample --top INTERVAL ROWS --read ...: perfpy top in read mode
 * (read_main.c). */
int pp__read_top(double interval, size_t rows, int argc, char **argv);
/* perfpy-sample --dump (dump_main.c). */
int pp__dump_main(int argc, char **argv);
/* perfpy dump --async: the asyncio task tree of pid on out, as `python -m
 * asyncio pstree` draws it (dump_async.c). An exit status. */
int pp__dump_async(pid_t pid, FILE *out);
/* The sentence for a perfpy without it, from pp_sampler_find's path and why. */
void pp_sampler_absent(const char *path, const char *why, char *buf, size_t cap);

/* Sets up this process's environment for a Python child with the engine in
 * mode ("perf" or "jit"): PERFPY, PYTHONPATH (libdir first), and removes
 * CPython's own switches so that one engine runs, not two. */
int pp_prepare_child_env(const char *libdir, const char *mode);

/* Whether perf's words say it was refused permission; and what to do
 * about it, for this user on this system. */
int pp_perf_refused(const char *perf_said);
void pp_perf_refused_advice(char *buf, size_t cap);

/* fflush + ferror + fclose of stdout: a full disk is an error, not a
 * truncated report. Returns 0 or 1 (after saying why). */
int pp_close_stdout(void);

/* The lines every mode of `perfpy record` prints at the end of a recording
 * (record_run.c; perfpy-sample too): stopped after N s (by --duration or
 * Ctrl-C), or the program's end by a signal or a status other than 0 (a
 * wait status); and, when nothing was sampled, that no profile is written
 * (pid: the process attached to, 0 the program). */
void pp__record_say_end(int stopped, double seconds, int wait_status);
void pp__record_say_no_samples(long pid, double seconds);

#endif
