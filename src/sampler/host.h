/*
 * `perfpy record -a`'s questions about the processes of the host
 * (host.c), for perfpy-sample (record.c): which run a CPython,
 * what each runs (its command line, and the service its samples are
 * labelled with), and every process there is now. Read from /proc and the
 * executable's ELF headers; nothing is written, no process is stopped.
 * Needs libelf: built into perfpy-sample only.
 */
#ifndef PERFPY_SAMPLER_HOST_H
#define PERFPY_SAMPLER_HOST_H

#include <stddef.h>
#include <sys/types.h>

/* Whether pid runs a CPython: 1, its program is named python* (python3.12,
 * python2.7: a Python perfpy may not read is still one); 2, it links
 * libpython (uwsgi, an embedding program: its ELF's DT_NEEDED, known at
 * exec before the library is mapped) or maps one (loaded with dlopen), so
 * it runs Python once its interpreter is made (perf links libpython and
 * never does); 0 not; -errno (-ENOENT: gone). The maps are read only
 * with maps 1 (a process that has run a while: at its exec nothing is
 * dlopen'd yet, and a host execs thousands of programs a minute). The
 * answer of each executable file is kept (by device, inode and mtime): a
 * host execs the same few programs. */
int pp_host_is_python(pid_t pid, int maps);

/* pid's command line in command (cap bytes; its arguments joined with
 * spaces, cut with "..."; "" when gone or a kernel thread), and the
 * service it is: the script or module (pp_fold_service_of) for a Python
 * program, else the program's file name. */
void pp_host_command(pid_t pid, char *command, size_t cap, char *service, size_t scap);

/* fn(pid, ctx) for each process of /proc but this one. 0 or -errno. */
int pp_host_each(void (*fn)(pid_t pid, void *ctx), void *ctx);

#endif
