/*
 * A streaming parser for the text `perf script` prints with
 *
 *     perf script -F comm,pid,tid,time,period,event,ip,sym,dso --max-stack 4096
 *
 * one block per sample, a header line and one line per frame, LEAF FIRST:
 *
 *     python3.12  4609/4609    635.880467:    1001001 cpu-clock:ppp:
 *     \t          1cfe03 pymalloc_alloc (inlined)
 *     \t          1cfe03 _PyObject_Malloc (/usr/lib/libpython3.12.so.1.0)
 *     \t    7fddcbeb72f9 py::foo:/work/main/examples/example.py (/tmp/perf-4609.map)
 *     (blank line)
 *
 * The header is read from the right (a thread name may hold spaces and
 * digits); a frame is split on its LAST " (" (Python names hold brackets and
 * colons). Input is hostile: any byte sequence is parsed without reading
 * outside the buffer, bad lines are counted and skipped, never fatal.
 * No allocation per line: frames point into the parser's buffer or its
 * cache of frame lines, and are valid only during the callback.
 */
#ifndef PERFPY_PERF_SCRIPT_H
#define PERFPY_PERF_SCRIPT_H

#include "profile/raw.h"

#include <stddef.h>
#include <stdint.h>

/* The -F list the parser is written for (perf 6.1). */
#define PP_SCRIPT_FIELDS "comm,pid,tid,time,period,event,ip,sym,dso"

/* A sample is handed on as a pp_raw_sample (profile/raw.h), each frame
 * PP_RAW_NATIVE (kernel frames too: perf names them like any other); a
 * sample of more frames than this is cut at its root side
 * (frames_dropped). */
#define PP_SCRIPT_MAX_FRAMES 65536

/* Return 0 to go on, a negative errno to stop parsing with that error. */
typedef int (*pp_script_sample_fn)(void *ctx, const pp_raw_sample *s);

typedef struct pp_script_stats {
    uint64_t samples;
    uint64_t bad_lines;    /* headers not understood, frames outside a sample */
    uint64_t bytes;
} pp_script_stats;

typedef struct pp_script_parser pp_script_parser;

int pp_script_open(pp_script_parser **out, pp_script_sample_fn fn, void *ctx);
/* Any split of the input into feeds gives the same samples. */
int pp_script_feed(pp_script_parser *p, const char *data, size_t len);
/* End of input: the last sample is delivered even without a blank line. */
int pp_script_finish(pp_script_parser *p);
/* Reads fd to its end in large blocks (feed + finish). */
int pp_script_parse_fd(pp_script_parser *p, int fd);
const pp_script_stats *pp_script_stats_of(const pp_script_parser *p);
void pp_script_close(pp_script_parser *p);

/* The whole input in one buffer, parsed in place (no copy); for mapped
 * files and the fuzzer. */
int pp_script_parse_buffer(const char *data, size_t len, pp_script_sample_fn fn,
                           void *ctx, pp_script_stats *stats);

#endif
