/*
 * `perfpy top`'s view: one interval's profile as a table of functions
 * ranked by their own or total share, redrawn each interval, with the
 * keys that change it. A recorder (src/sampler/record.c) folds samples into a
 * profile as for `record`, and each interval hands it here:
 *
 *   recorder loop (every <= 50 ms) ── pp_top_keys ──► q, o, t, n, h, p
 *        │ an interval is over
 *        └──────────────────────── pp_top_show(profile, counts) ──► screen
 *
 * On a terminal (stdin and stdout both are one): the alternate screen,
 * keys read without echo or line editing, the whole screen redrawn in one
 * write, as much as fits (a terminal too small gets what fits);
 * pp_top_close puts the terminal back as it was (its termios, the normal
 * screen, the cursor). Otherwise one plain table per interval on stdout.
 * The escape sequences are the few every terminal since the VT100 (and
 * xterm's alternate screen) knows: no terminal library is needed for a
 * full redraw.
 */
#ifndef PERFPY_SAMPLER_TOP_VIEW_H
#define PERFPY_SAMPLER_TOP_VIEW_H

#include "profile/profile.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>


enum { PP_TOP_GO = 0, PP_TOP_QUIT = 1 };

typedef struct pp_top pp_top;

/* What the recorder knows of an interval beside its profile. */
typedef struct pp_top_counts {
    double seconds;                 /* the interval's length */
    uint64_t lost;                  /* samples lost in it */
    unsigned processes, threads;    /* followed now (threads: all of theirs) */
} pp_top_counts;

/* title: what is watched ("process 4242: python3 app.py"); how: the mode
 * ("sample mode (BPF, 99 Hz per busy thread)"); plain_rows: the functions
 * in each plain table (0: all of them). A terminal is taken over now. 0,
 * or -errno. */
int pp_top_open(pp_top **out, const char *title, const char *how, size_t plain_rows);

/* The keys typed since the last call (never waits); a resize redraws.
 * PP_TOP_QUIT after q. */
int pp_top_keys(pp_top *t);

/* The interval's table (p is only read). */
void pp_top_show(pp_top *t, const pp_profile *p, const pp_top_counts *c);

/* Whether it draws on a terminal. */
int pp_top_tty(const pp_top *t);

/* The terminal as it was; frees t. NULL is a no-op. */
void pp_top_close(pp_top *t);

/* What top watches, for its first line: "process PID: its command line"
 * (pid not 0), or the command line of the program argv. */
void pp_top_title(char *buf, size_t cap, long pid, char *const *argv);

/* The threads of pid now (/proc/PID/task), 0 when gone. */
unsigned pp_top_threads_of(pid_t pid);

#endif
