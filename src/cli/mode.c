/*
 * The mode of a recording (mode.h), asked of the machine once: the words
 * of the modes, the hook the interpreter allows, whether sample mode can
 * sample here (perfpy-sample --check, only where the rules reach it: it
 * loads the BPF program) and whether the target's memory may be read;
 * then the rules (mode_rules.c) decide on those answers alone.
 */
#include "cli.h"
#include "mode.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int pp_mode_default(pp_mode *out, const char **name)
{
    const char *env = getenv("PERFPY_RECORD_MODE");

    *name = env && *env ? env : "auto";
    return pp_request_mode_of(*name, out);
}

/* Whether the rules reach sample mode's check for a: where auto is decided
 * by the ladder (a program, or doctor's process), for a process attached
 * to that runs no engine, for --idle and --gil in auto, and for perfpy top
 * unless read mode is asked.
 * (A rule that needs the answer where it was not asked fails with -EINVAL:
 * test_mode.c holds every rule.) */
static int need_check(const pp_mode_ask *a)
{
    int cpython = a->interp && a->interp->known && a->interp->cpython &&
                  a->interp->major == 3 && a->interp->minor >= 8;

    if (a->live)
        return a->asked != PP_MODE_READ;
    if (a->asked != PP_MODE_AUTO || a->sample_only)
        return 0;
    if (a->sample_or_read)
        return 1;
    if (a->pid && a->engine != PP_ENGINE_UNASKED)
        return a->engine == PP_ENGINE_NONE;
    return !a->perf_only && (!a->argv || cpython);
}

int pp_mode_resolve(const pp_mode_ask *a, pp_mode_choice *c)
{
    pp_mode_here h;
    int check = need_check(a);

    memset(&h, 0, sizeof(h));
    h.hook = a->interp ? pp_interp_auto_mode(a->interp) : PP_MODE_JIT;
    h.asked_name = pp_request_mode_name(a->asked);
    h.hook_name = pp_request_mode_name(h.hook);
    h.sample = check ? pp_sampler_check(a->libdir, h.sample_why, sizeof(h.sample_why))
                     : PP_MODE_UNASKED;
    h.read = pp_sampler_can_read(a->pid ? (pid_t)a->pid : getpid());
    return pp_mode_rules(a, &h, c);
}
