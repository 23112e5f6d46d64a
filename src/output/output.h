/*
 * The output formats, one table: name (what -f takes), file extension, and
 * the writer. Writers read a finished pp_profile and write to a FILE; they
 * return 0 or a negative errno (ferror of the stream included). Opening,
 * flushing and closing the file, and so a full disk, is write.c's job
 * (pp_output_write: a temporary file renamed on success).
 *
 * This layer reads the profile model (report/profile.h, and its hash index
 * report/htab.h) and nothing else of the pipeline, and nothing of the
 * commands.
 *
 *     name        ext                what it is
 *     flamegraph  .svg               interactive SVG (zoom, search, tooltips)
 *     html        .html              flame graph + sortable function table
 *     speedscope  .speedscope.json   https://www.speedscope.app file format, a profile per thread
 *     firefox     .firefox.json      the Firefox Profiler's processed format (version 61)
 *     pprof       .pb.gz             gzipped profile.proto (go tool pprof, Pyroscope...)
 *     collapsed   .txt               flamegraph.pl's "a;b;c 12" lines
 *     table       .table.txt         functions by own and total time, in text
 *     heatmap     .heatmap.html      the source files, each line's share of the samples
 *     perfpy      .perfpy.gz         perfpy's own, the whole profile: any format later
 *     perf        .data              the (injected) perf.data, for perf report/Hotspot
 */
#ifndef PERFPY_OUTPUT_H
#define PERFPY_OUTPUT_H

#include "perfpy/error.h"
#include "profile/htab.h"
#include "profile/profile.h"

#include <stdio.h>

typedef struct pp_write_opts {
    const char *title;       /* shown by the graphical formats; NULL: program name */
    const pp_profile *base;  /* the diff writers: the profile NEW is compared with */
    int rows;                /* the diff writers' table: rows (0: 25 in text, 200 in html) */
    int threads;             /* --threads, PP_THREAD_ROOTS_*: speedscope's tracks are one
                                per thread with SPLIT, else one per name pattern */
} pp_write_opts;

typedef int (*pp_writer_fn)(const pp_profile *p, FILE *out, const pp_write_opts *o);

typedef struct pp_format {
    const char *name;
    const char *ext;         /* with the dot */
    pp_writer_fn write;      /* NULL when recording is set */
    const char *summary;
    int recording;           /* the output is the (injected) perf.data itself,
                                copied, not a profile: perf report reads it with
                                the jitted ELFs and perf maps kept beside it */
} pp_format;

extern const pp_format pp_formats[];
extern const size_t pp_nformats;

/* The format named name, or NULL. */
const pp_format *pp_format_find(const char *name);
/* "flamegraph, html, ..." (the table's names) for messages and --help. */
const char *pp_format_names(void);

/* Writes p in format f to path, whole or not at all (write.c): through a
 * temporary file renamed at the end when path is (or would be) a regular
 * file, directly otherwise (/dev/full, a pipe, "-" for stdout). 0 or a
 * negative errno with e's message ("cannot write PATH: ..."). */
int pp_output_write(const pp_profile *p, const pp_format *f, const char *path,
                    const pp_write_opts *wo, pp_error *e);
/* Copies the file from to path the same way (format perf). */
int pp_output_copy(const char *from, const char *path, pp_error *e);
/* fflush + ferror + fclose of stdout, for a command that wrote its answer
 * there: a full disk is an error, not a truncated report. 0, or -errno
 * with e's sentence. */
int pp_output_close_stdout(pp_error *e);

int pp_write_collapsed(const pp_profile *p, FILE *out, const pp_write_opts *o);
int pp_write_flamegraph(const pp_profile *p, FILE *out, const pp_write_opts *o);
int pp_write_html(const pp_profile *p, FILE *out, const pp_write_opts *o);
int pp_write_speedscope(const pp_profile *p, FILE *out, const pp_write_opts *o);
int pp_write_firefox(const pp_profile *p, FILE *out, const pp_write_opts *o);
int pp_write_table(const pp_profile *p, FILE *out, const pp_write_opts *o);
int pp_write_heatmap(const pp_profile *p, FILE *out, const pp_write_opts *o);
/* perfpy diff (out_diff.c): p is NEW, o->base BASE; -EINVAL without it. */
int pp_write_diff_html(const pp_profile *p, FILE *out, const pp_write_opts *o);
int pp_write_diff_flamegraph(const pp_profile *p, FILE *out, const pp_write_opts *o);
int pp_write_diff_table(const pp_profile *p, FILE *out, const pp_write_opts *o);
int pp_write_pprof(const pp_profile *p, FILE *out, const pp_write_opts *o);
/* perfpy's own, lossless (out_perfpy.c; include/perfpy/profile_format.h). */
int pp_write_perfpy(const pp_profile *p, FILE *out, const pp_write_opts *o);

/* The uncompressed protobuf of a pprof Profile (tests decode it); malloc'ed. */
int pp_pprof_encode(const pp_profile *p, uint8_t **buf, size_t *len);

/* ---- helpers the writers share (out_util.c) ---------------------------- */

/* s as the body of a JSON string (no quotes): escapes, invalid UTF-8 -> U+FFFD. */
void pp__json_text(FILE *out, const char *s);
/* s as XML/HTML text or attribute value: &<>"' escaped, control characters
 * and invalid UTF-8 -> U+FFFD (XML 1.0 forbids them). */
void pp__xml_text(FILE *out, const char *s);
/* The length of the valid UTF-8 sequence at s (1..4), or 0 if invalid. */
int pp__utf8_len(const char *s);
/* The title to show: o->title, the program, or "perfpy". */
const char *pp__title(const pp_profile *p, const pp_write_opts *o);
/* What the samples count, into buf: "1234 samples", or for an event's
 * (PP_VALUE_EVENTS) "1234 samples of 10 faults (page-faults)". buf. */
const char *pp__counted(const pp_profile *p, char *buf, size_t cap);
/* The profile's call tree as compact JSON for the embedded viewers:
 * {"f":[[label,kind],...],"n":[[frame,parent,total,self],...]} */
int pp__tree_json(const pp_profile *p, const pp_tree *t, FILE *out);
/* What a box of the flame graph shows beyond its frame: its fill colour and
 * its tooltip's end, for node i of pp_tree_build(p) (NULL: the frame's
 * colour, its samples and share). */
typedef struct pp__paint {
    void (*box)(void *ctx, uint32_t node, char *fill, size_t fill_cap, char *note,
                size_t note_cap);
    void *ctx;
    const char *subtitle;          /* after the title; NULL: "N samples" */
} pp__paint;

/* The flame graph's <svg> element; standalone adds the XML declaration and a
 * fixed width (the HTML page embeds it at 100% width); paint may be NULL.
 * out_flamegraph.c. */
int pp__svg(const pp_profile *p, FILE *out, const pp_write_opts *o, int standalone,
            const pp__paint *paint);
/* A growing byte buffer with a sticky error (-ENOMEM), for the binary
 * formats (pprof, perfpy's own): bytes, and unsigned LEB128 varints. */
typedef struct pp__buf {
    uint8_t *d;
    size_t len, cap;
    int err;
} pp__buf;
void pp__put(pp__buf *b, const void *data, size_t n);
void pp__varint(pp__buf *b, uint64_t v);
/* gzip (RFC 1952) of data[0..len) to out: 0, -ENOMEM or -EIO. */
int pp__gzip_to(FILE *out, const uint8_t *data, size_t len);
/* An interning table of strings, the string tables of the writers that
 * have one (Firefox's, pprof's): each distinct string an index, in order
 * of first sight. With own set, the strings are copied (and freed with
 * the table); else they must outlive it. */
typedef struct pp__strtab {
    const char **v;
    size_t n, cap;
    pp_htab index;
    int own;
} pp__strtab;
/* 0, or -ENOMEM. */
int pp__strtab_init(pp__strtab *t, size_t cap, int own);
/* s's index, *added set when it is new (added may be NULL); -ENOMEM. */
int64_t pp__strtab_id(pp__strtab *t, const char *s, int *added);
void pp__strtab_free(pp__strtab *t);
/* A thread's track name: "worker-1 (tid 4612)", and its process's,
 * "worker-1 (tid 4612), python3 (pid 4609)", when there are several. */
void pp__thread_label(const pp_profile *p, const pp_thread *t, char *buf, size_t cap);
/* ", python3 (pid 4612)" after buf's first n bytes when p has several
 * processes (pp__thread_label's suffix). */
void pp__process_suffix(const pp_profile *p, int32_t pid, char *buf, int n, size_t cap);
/* 0, or -EIO (errno's value when set) if the stream has an error. */
int pp__stream_status(FILE *out);

#endif
