/*
 * What `perfpy record`'s files share (cmd_record.c: the plan and its
 * steps; record_options.c: --help and the parser; record_run.c: perf and
 * the program while they run).
 */
#ifndef PERFPY_RECORD_H
#define PERFPY_RECORD_H

#include "interp.h"
#include "options.h"
#include "report/perf_probe.h"
#include "report/max_stack.h"
#include "profile/profile.h"

#include <signal.h>
#include <stdio.h>
#include <stddef.h>
#include <sys/types.h>

/* perfpy record --help (record_options.c), its lines (help.h). */
extern const char *const pp__record_help[];

/* perf while it records, and the program under it. */
typedef struct run_state {
    pid_t perf;
    int err_fd;                  /* perf's stderr, read end */
    char err[16384];             /* the last bytes perf wrote on stderr */
    size_t err_len;
    int status;                  /* perf's wait status, then the program's */
    int stopped;                 /* perfpy stopped perf (duration, Ctrl-C) */
    int by_duration;             /* ...because --duration ran out */
    int perf_died;               /* perf ended before the program */
    pid_t program;               /* its pid, as `perfpy __exec` told; 0 unknown */
    double seconds;
} run_state;

/* Set by the SIGINT/SIGTERM handler while record runs; _sig: which came
 * first. */
extern volatile sig_atomic_t pp__record_stop, pp__record_stop_sig;
void pp__record_on_stop(int sig, siginfo_t *info, void *ctx);

/* Starts perf (argv) with its stderr on a pipe; 0 or a negative errno (an
 * exec that failed: its errno). */
int pp__record_start_perf(char **argv, run_state *st);
/* Waits for perf, reading its stderr and the program's pid (pid_fd),
 * drawing the status line on a terminal. On Ctrl-C or when the duration
 * runs out the program gets SIGINT (unless the terminal sent it already)
 * and `grace` seconds to end; then perf is stopped, which sends it SIGTERM;
 * `grace` seconds later the program's whole process tree gets SIGKILL. */
void pp__record_supervise(run_state *st, double duration, double grace, int pid_fd);
/* After a stopped recording: what is left of the program's process tree
 * (orphans perfpy, a child subreaper, inherited) gets SIGTERM, then
 * SIGKILL after `grace` seconds, and is reaped. */
void pp__record_end_tree(double grace);
/* Why perf could not record, in words that say what to do. */
void pp__record_explain_failure(const run_state *st);
/* The program's pid comes back from `perfpy __exec` on a pipe; perfpy is a
 * child subreaper so the program is its to wait for if perf dies. */
int pp__record_watch_program(int *r, int *w);
void pp__record_wait_program(run_state *st, int pid_fd);
int pp__record_program_status(const run_state *st);
void pp__record_describe_end(const run_state *st, int status);


/* kernel.perf_event_max_stack raised for frame-pointer recordings, put back
 * after; and what to say when many stacks were cut. */
/* record in sample or read mode (record_sampler.c): perfpy-sample in this
 * process's place; returns only on failure (an exit status). */
int pp__record_sampler(const pp_record_opts *o, pp_mode mode, pp_interp *interp, char *libdir,
                       size_t libdir_cap, const char *output);

/* The options sample and read mode (mode) cannot honour (-f perf,
 * --inline, --stack-size, --keep): PP_EXIT_USAGE with the sentence in u,
 * else PP_PARSED_RUN. The parser asks it for --mode sample or read, record
 * for an attach that may turn to either. */
int pp__record_sample_refusal(const pp_record_opts *o, pp_mode mode, pp_usage *u);
/* perfpy record -e list (record_events.c): the events -e takes here, to
 * out; the exit status. */
int pp__record_list_events(FILE *out);
/* The option of o that only perf's recording honours (-f perf, --inline,
 * --stack-size, --keep), in words, or NULL. */
const char *pp__record_perf_only(const pp_record_opts *o);


void pp__record_raise_max_stack(pp_max_stack *m);
void pp__record_restore_max_stack(pp_max_stack *m);
void pp__record_explain_truncation(const pp_profile *p, int fp, long stack_size,
                                   const pp_max_stack *m);

#endif
