/*
 * perfpy-sample's parts, as its main (main.c) hands each perfpy's request
 * (request.h): sample mode's recorder (record.c), read mode's (read.c),
 * both for record and top, and the dump (dump_print.c) with its asyncio
 * tree (dump_async.c). Each returns the program's exit status.
 */
#ifndef PERFPY_SAMPLER_H
#define PERFPY_SAMPLER_H

#include "request.h"

#include <stdio.h>
#include <sys/types.h>

/* record or top in sample mode (record.c). */
int pp__record_main(const pp_request *rq);
/* record or top in read mode (read.c). */
int pp__read_main(const pp_request *rq);
/* perfpy dump (dump_print.c). */
int pp__dump_main(const pp_request *rq);
/* perfpy dump --async: the asyncio task tree of pid on out, as `python -m
 * asyncio pstree` draws it (dump_async.c). An exit status. */
int pp__dump_async(pid_t pid, FILE *out);

#endif
