/*
 * `perfpy record --every SECONDS`: one profile per interval, each written
 * to a directory under the time its interval began (every.c). The
 * recorder (record.c) folds each sample into the profile of its
 * interval and hands each finished one over; this side names, writes and
 * keeps the directory within its bound, and holds an interval that cannot
 * be written (a full disk) until it can be.
 */
#ifndef PERFPY_SAMPLER_EVERY_H
#define PERFPY_SAMPLER_EVERY_H

#include "output/output.h"
#include "perfpy/error.h"
#include "profile/profile.h"

#include <stddef.h>
#include <stdint.h>

#define PP_EVERY_PENDING 16         /* intervals held while they cannot be written */

typedef struct pp_every_opts {
    const char *dir;                /* where the files go (made when missing) */
    const pp_format *format;
    long keep_files;                /* at most this many of perfpy's files there; 0: all */
    uint64_t keep_bytes;            /* at most this many bytes of them; 0: no bound */
    size_t pending_max;             /* 0: PP_EVERY_PENDING */
    int threads;                    /* --threads (pp_write_opts.threads) */
} pp_every_opts;

typedef struct pp_every pp_every;

typedef struct pp_every_stats {
    uint64_t written;               /* files written */
    uint64_t samples;               /* the samples in them */
    uint64_t removed;               /* files removed to keep the bound */
    uint64_t dropped;               /* intervals never written (held too long) */
    uint64_t dropped_samples;       /* their samples */
    uint64_t waiting;               /* intervals held now */
} pp_every_stats;

/* Checks that the directory is there (made if not) and writable. 0 or
 * -errno with e's sentence. */
int pp_every_open(pp_every **out, const pp_every_opts *o, pp_error *e);

/* Hands over one interval (p, its time_unix_ns and duration_ns set; taken:
 * freed here, or held). It is written as DIR/perfpy-YYYYMMDDTHHMMSSZ.EXT
 * (UTC, the interval's start), after those held before it; an interval
 * without a sample makes no file. One that cannot be written is held (said
 * once on stderr, with why) and written at the next call; past pending_max
 * held, the oldest is dropped and counted. 0 when everything is written,
 * else the number held. */
int pp_every_put(pp_every *e, pp_profile *p);

/* The names' pattern: DIR/perfpy-STAMP.EXT for the interval beginning at
 * unix_ns, in buf (cap bytes). */
void pp_every_name(const pp_every *e, uint64_t unix_ns, char *buf, size_t cap);

pp_every_stats pp_every_stats_of(const pp_every *e);

/* Writes what is held, once more; frees everything. The stats after it. */
pp_every_stats pp_every_close(pp_every *e);

#endif
