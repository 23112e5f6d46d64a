/*
 * record --mode sample (and read): the checks cmd_record.c does not share
 * with the trampoline modes, then perfpy-sample (sample_main.c, or
 * read_main.c) in this process's place: it records, writes the profile
 * and exits with the program's status. No perfpy module is needed:
 * perfpy-sample finds each process's structure layout itself
 * (src/sample/pylayout.c), from its memory, so an attached process's
 * interpreter is never run here (a container's may not even run outside
 * its root).
 */
#include "cli.h"
#include "interp.h"
#include "options.h"
#include "record.h"
#include "report/spawn.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PP_KERNEL_BTF "/sys/kernel/btf/vmlinux"

int pp__record_sample_check(const char *libdir, char *why, size_t cap)
{
    char helper[PATH_MAX + 16], lacked[512];
    char *argv[] = {helper, "--check", NULL};
    struct stat sb;
    int st;

    why[0] = '\0';
    if (pp_sampler_find(libdir, helper, sizeof(helper), lacked, sizeof(lacked)) != 0) {
        pp_sampler_absent(helper, lacked, why, cap);
        return -ENOENT;
    }
    if (stat(PP_KERNEL_BTF, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size == 0) {
        snprintf(why, cap, "the kernel has no BTF (%s), which sample mode's BPF program "
                 "needs", PP_KERNEL_BTF);
        return -EPERM;
    }
    if (pp_capture(argv, 1, NULL, why, cap, &st) < 0 || st != 0) {
        why[strcspn(why, "\n")] = '\0';
        if (!why[0])
            snprintf(why, cap, "perfpy-sample failed");
        return -EPERM;
    }
    why[strcspn(why, "\n")] = '\0';
    return 0;
}

/* Sample mode: perfpy-sample (sample_main.c) records and writes the
 * profile; it replaces this process, and its status is the program's. */
/* perfpy-sample's CLOCK: "cpu" or "wall", with ",gil" and ",async" as
 * asked. */
static char *clock_arg(const pp_record_opts *o, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s%s%s", o->wall ? "wall" : "cpu", o->gil ? ",gil" : "",
             o->async ? ",async" : "");
    return buf;
}

int pp__record_sample(const pp_record_opts *o, pp_interp *interp, char *libdir,
                      size_t libdir_cap, const char *self, const char *output)
{
    char helper[PATH_MAX + 16], rate[32], dur[32], pid[32], procs[16], threads[16];
    char every[32], files[32], bytes[32], clock[32];
    char exe[PATH_MAX], said[1024], why[512];
    char **argv;
    int n = 0, k = 0;

    (void)self;
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
    snprintf(rate, sizeof(rate), "%ld", o->rate);
    snprintf(dur, sizeof(dur), "%g", o->duration);
    snprintf(pid, sizeof(pid), "%ld", o->pid);
    snprintf(procs, sizeof(procs), "%d", o->processes);
    snprintf(threads, sizeof(threads), "%d", o->threads);
    while (o->argv && o->argv[n])
        n++;
    if (!(argv = calloc((size_t)n + o->nlabels + 17, sizeof(*argv))))   /* 16 at most */
        return pp_fail("out of memory");
    argv[k++] = helper;
    if (strcmp(o->mode, "read") == 0)
        argv[k++] = "--read";
    argv[k++] = (char *)o->format->name;
    argv[k++] = (char *)output;
    argv[k++] = rate;
    argv[k++] = o->no_native ? "1" : "0";
    argv[k++] = dur;
    argv[k++] = procs;
    argv[k++] = threads;
    if (strcmp(o->mode, "read") != 0)          /* read mode: CPU time only */
        argv[k++] = clock_arg(o, clock, sizeof(clock));
    argv[k++] = o->host ? "-a" : o->pid ? "-p" : "--";
    if (o->pid)
        argv[k++] = pid;
    if (o->host) {
        snprintf(every, sizeof(every), "%g", o->every);
        snprintf(files, sizeof(files), "%ld", o->keep_files);
        snprintf(bytes, sizeof(bytes), "%llu", o->keep_bytes);
        argv[k++] = every;
        argv[k++] = files;
        argv[k++] = bytes;
        argv[k++] = o->all_processes ? "1" : "0";
        for (int i = 0; i < o->nlabels; i++)
            argv[k++] = (char *)o->labels[i];
    }
    for (int i = 0; i < n; i++)
        argv[k++] = o->argv[i];
    fflush(stderr);
    execv(helper, argv);
    free(argv);
    return pp_fail("cannot run %s: %s", helper, strerror(errno));
}
