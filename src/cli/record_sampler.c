/*
 * record --mode sample (and read): the checks cmd_record.c does not share
 * with the trampoline modes, then perfpy-sample (src/sampler/record.c, or
 * read.c) in this process's place: it records, writes the profile
 * and exits with the program's status. No perfpy module is needed:
 * perfpy-sample finds each process's structure layout itself
 * (src/cpython/pylayout.c), from its memory, so an attached process's
 * interpreter is never run here (a container's may not even run outside
 * its root).
 */
#include "cli.h"
#include "interp.h"
#include "options.h"
#include "record.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What record asks of perfpy-sample (sampler/request.h). */
static void request_of(const pp_record_opts *o, pp_mode mode, const char *output,
                       pp_request *rq)
{
    memset(rq, 0, sizeof(*rq));
    rq->what = PP_REQUEST_RECORD;
    rq->mode = mode;
    rq->target = o->host ? PP_TARGET_HOST : o->pid ? PP_TARGET_PID : PP_TARGET_PROGRAM;
    rq->pid = o->pid;
    rq->argv = o->argv;
    rq->rate = o->rate;
    rq->wall = o->wall;
    rq->gil = o->gil;
    rq->async = o->async;
    rq->event = o->event;
    rq->period = o->period;
    rq->duration = o->duration;
    rq->format = o->format->name;
    rq->output = output;
    rq->no_native = o->no_native;
    rq->processes = o->processes;
    rq->threads = o->threads_split ? PP_THREAD_ROOTS_SPLIT : o->threads;
    rq->every = o->every;
    rq->keep_files = o->keep_files;
    rq->keep_bytes = o->keep_bytes;
    rq->all_processes = o->all_processes;
    rq->verbose = o->verbose;
    for (int i = 0; i < o->nlabels; i++)
        rq->labels[rq->nlabels++] = o->labels[i];
}

/* Sample and read mode: perfpy-sample (src/sampler) records and writes the
 * profile; it replaces this process, and its status is the program's. */
int pp__record_sampler(const pp_record_opts *o, pp_mode mode, pp_interp *interp, char *libdir,
                       size_t libdir_cap, const char *output)
{
    char helper[PATH_MAX + 16], exe[PATH_MAX], said[1024], why[512];
    pp_request rq;

    if (o->pid) {
        /* attached: where perfpy-sample is, and whether the process can be
         * read (its interpreter is not asked: perfpy-sample reads its
         * version from its memory) */
        snprintf(exe, sizeof(exe), "/proc/%ld/exe", o->pid);
        if (pp_find_libdir(libdir, libdir_cap) < 0)
            return PP_EXIT_FAIL;
        if (readlink(exe, said, sizeof(said)) < 0 && (errno == EACCES || errno == EPERM))
            return pp_fail("cannot read the memory of the process %ld: not permitted (it "
                           "is another user's: run perfpy as that user, or as root)", o->pid);
    }
    /* a program that is no Python is recorded too: the CPython processes
     * it starts are read (check_program said so); an old one is not */
    if (!o->pid && interp->known && !pp_interp_supported(interp, said, sizeof(said))) {
        fprintf(stderr, "perfpy: %s\n", said);
        return PP_EXIT_USAGE;
    }
    if (pp_sampler_find(libdir, helper, sizeof(helper), why, sizeof(why)) != 0) {
        pp_sampler_absent(helper, why, said, sizeof(said));
        return pp_fail("%s", said);
    }
    request_of(o, mode, output, &rq);
    return pp_sampler_exec(helper, &rq);
}
