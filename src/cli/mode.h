/*
 * The mode of a recording, decided once: what the options ask (--mode,
 * PERFPY_RECORD_MODE, and the options only one mode honours), what this
 * machine allows (BPF, reading another process's memory) and what the
 * target is (a program and its interpreter, or a running process and the
 * engine in it) give one mode, and the sentence `perfpy record` says
 * first when it chose. mode.c asks the machine what the rules need, once;
 * mode_rules.c applies the rules to the answers, asking nothing (so the
 * tests hold every rule without a machine to match). Everything after
 * reads the enum (sampler/request.h).
 */
#ifndef PERFPY_CLI_MODE_H
#define PERFPY_CLI_MODE_H

#include "interp.h"
#include "places.h"
#include "sampler/request.h"

#include <sys/types.h>

/* The engine of a process whose engine was not asked of (doctor's "record
 * -p PID", which stands for any process of this user). */
#define PP_ENGINE_UNASKED ((pp_engine_seen)-1)

typedef struct pp_mode_ask {
    pp_mode asked;               /* --mode (or PERFPY_RECORD_MODE); auto when neither */
    int live;                    /* perfpy top: sample or read mode, never a hook */
    /* what the options leave open, each a sentence or an option's name, or NULL */
    const char *sample_only;     /* an option only sample mode honours: "--async", "-a" */
    const char *sample_or_read;  /* one sample and read mode honour, no hook mode:
                                    "--idle", "--gil" */
    const char *perf_only;       /* an option only perf's recording honours */
    const char *sample_refused;  /* why sample mode cannot do what the options ask */
    const char *read_refused;    /* the same of read mode */
    /* the target: a program (argv, its interpreter probed), or a process */
    char *const *argv;
    const pp_interp *interp;
    long pid;
    pp_engine_seen engine;       /* the engine running in pid */
    const char *libdir;          /* the module directory, or NULL */
} pp_mode_ask;

typedef struct pp_mode_choice {
    pp_mode mode;                /* sample, read, perf or jit */
    int chosen;                  /* picked here (auto), not fixed by the options */
    char why[1536];              /* the sentence said first ("" when nothing is said);
                                    when pp_mode_resolve fails, why it did */
} pp_mode_choice;

/* What the machine and the interpreter answered, as the rules read it. */
typedef struct pp_mode_here {
    pp_mode hook;                /* the hook mode the interpreter allows */
    const char *hook_name, *asked_name;   /* the words of that mode and of the one asked */
    int sample;                  /* pp_sampler_check's answer; PP_MODE_UNASKED: not asked */
    char sample_why[1024];       /* its sentence */
    int read;                    /* pp_sampler_can_read of the target (a program:
                                    of this process's children) */
} pp_mode_here;

#define PP_MODE_UNASKED 1

/* The mode for a: 0, or an exit status (PP_EXIT_FAIL) with the reason in
 * c->why. A program in auto mode gets the best this machine allows
 * (sample, else read, else a hook mode, each with its sentence); a
 * process attached to the mode of the engine it runs, else sample or read
 * mode, said; hook mode, and auto where a hook is the answer, perf map or
 * jitdump as the interpreter allows (pp_interp_auto_mode). */
int pp_mode_resolve(const pp_mode_ask *a, pp_mode_choice *c);

/* The rules alone (mode_rules.c), over the answers in h: as
 * pp_mode_resolve; -EINVAL when a rule needs an answer h does not hold. */
int pp_mode_rules(const pp_mode_ask *a, const pp_mode_here *h, pp_mode_choice *c);

/* --mode's default for a program perfpy starts: $PERFPY_RECORD_MODE, else
 * auto. 0, or -EINVAL (*name is then the value that is no mode). */
int pp_mode_default(pp_mode *out, const char **name);

#endif
