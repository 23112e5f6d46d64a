/*
 * `perfpy top`'s table (see top_view.h). Each interval's profile becomes
 * rows of functions: a function is a frame's (kind, name, file), its lines
 * merged; its own share the samples whose innermost Python frame it is
 * (the C it calls directly included: what py-spy calls own), or with the
 * `n` key the samples it is the leaf of (C and kernel functions then rank
 * too); its total share the samples it is anywhere in, once per sample.
 * The threads view (`h`) ranks the threads by their samples, each with the
 * function most of them were in. With --idle the reasons of the waits
 * ("[off-CPU: GIL]") rank first, by their total, whatever the key: a
 * reason is no Python function, so it owns no sample and by own share it
 * would fall below every function that does (a GIL wait of 37% of the
 * time ranked 58th, off the screen).
 */
#include "top_view.h"
#include "profile/htab.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define LINE_MAX_BYTES 1024

typedef struct func_row {
    const char *name, *file;        /* the profile's: copied into label */
    char label[LINE_MAX_BYTES / 2];
    pp_frame_kind kind;
    uint64_t own, self, total;
} func_row;

typedef struct thread_row {
    int32_t tid;
    char name[64];
    uint64_t value;
    char top[LINE_MAX_BYTES / 2];   /* its function with the most own samples */
} thread_row;

struct pp_top {
    int tty;
    struct termios saved;
    char title[256], how[192];
    int by_total, by_leaf, show_threads, paused;
    unsigned rows, cols;            /* of the last drawing */
    size_t plain_rows;              /* functions in a plain table (0: all) */
    /* the last interval, kept to redraw it when a key or a resize asks */
    func_row *funcs;
    size_t nfuncs;
    thread_row *threads;
    size_t nthreads;
    uint64_t value, samples;
    int have;
    pp_top_counts counts;
};

static pp_top *open_view;           /* for the exit handler */

/* ---- the model ------------------------------------------------------------ */

static int cmp_frame(const pp_profile *p, uint32_t a, uint32_t b)
{
    const pp_frame *x = &p->frames[a], *y = &p->frames[b];
    int c;

    if (x->kind != y->kind)
        return (int)x->kind - (int)y->kind;
    if ((c = strcmp(x->name, y->name)) != 0)
        return c;
    return strcmp(x->file, y->file);
}

static const pp_profile *sort_profile;   /* (qsort has no context argument) */

static int by_frame(const void *a, const void *b)
{
    return cmp_frame(sort_profile, *(const uint32_t *)a, *(const uint32_t *)b);
}

static void label_of(func_row *f)
{
    const char *file = f->file, *slash = strrchr(file, '/');

    if (f->kind == PP_FRAME_PYTHON)
        snprintf(f->label, sizeof(f->label), "%s (%s)", f->name, file);
    else if (f->kind == PP_FRAME_NATIVE && file[0])
        snprintf(f->label, sizeof(f->label), "%s (%s)", f->name, slash ? slash + 1 : file);
    else if (f->kind == PP_FRAME_KERNEL)
        snprintf(f->label, sizeof(f->label), "%s [kernel]", f->name);
    else
        snprintf(f->label, sizeof(f->label), "%s", f->name);
}

/* Functions of p: func[frame id] their row. The number of rows, or -1. */
static long functions(const pp_profile *p, uint32_t *func, func_row **out)
{
    uint32_t *order = malloc((p->nframes ? p->nframes : 1) * sizeof(*order));
    func_row *rows = calloc(p->nframes ? p->nframes : 1, sizeof(*rows));
    long n = 0;

    if (!order || !rows) {
        free(order);
        free(rows);
        return -1;
    }
    for (uint32_t i = 0; i < p->nframes; i++)
        order[i] = i;
    sort_profile = p;
    qsort(order, p->nframes, sizeof(*order), by_frame);
    for (uint32_t i = 0; i < p->nframes; i++) {
        if (i == 0 || cmp_frame(p, order[i - 1], order[i]) != 0) {
            func_row *f = &rows[n++];

            f->name = p->frames[order[i]].name;
            f->file = p->frames[order[i]].file;
            f->kind = p->frames[order[i]].kind;
            label_of(f);
        }
        func[order[i]] = (uint32_t)(n - 1);
    }
    free(order);
    *out = rows;
    return n;
}

/* Per stack: its leaf's function and its innermost Python frame's
 * (PP_NONE: none); each function's own, self and total. */
static void shares(const pp_profile *p, const uint32_t *func, func_row *rows, size_t nrows,
                   uint32_t *own_of)
{
    uint32_t *seen = calloc(nrows ? nrows : 1, sizeof(*seen));

    for (uint32_t s = 0; s < p->nstacks; s++) {
        const pp_stack *st = &p->stacks[s];
        const uint32_t *ids = pp_stack_ids(p, st);
        uint64_t v = pp_stack_value(p, st);

        own_of[s] = PP_NONE;
        if (!st->depth)
            continue;
        rows[func[ids[st->depth - 1]]].self += v;
        for (uint32_t k = st->depth; k-- > 0;)
            if (p->frames[ids[k]].kind == PP_FRAME_PYTHON) {
                own_of[s] = func[ids[k]];
                rows[own_of[s]].own += v;
                break;
            }
        for (uint32_t k = 0; k < st->depth && seen; k++) {
            uint32_t f = func[ids[k]];

            if (seen[f] != s + 1) {
                seen[f] = s + 1;
                rows[f].total += v;
            }
        }
    }
    free(seen);
}

/* Rows of frames no stack of the interval holds (the fold interns some
 * it then leaves out) go; func[] and own_of[] follow. The rows left. */
static long drop_unsampled(func_row *rows, size_t n, uint32_t *func, uint32_t nframes,
                           uint32_t *own_of, uint32_t nstacks)
{
    uint32_t *to = malloc((n ? n : 1) * sizeof(*to));
    size_t k = 0;

    if (!to)
        return (long)n;
    for (size_t i = 0; i < n; i++) {
        to[i] = rows[i].total || rows[i].self || rows[i].own ? (uint32_t)k : PP_NONE;
        if (to[i] != PP_NONE)
            rows[k++] = rows[i];
    }
    for (uint32_t f = 0; f < nframes; f++)
        func[f] = to[func[f]];
    for (uint32_t st = 0; st < nstacks; st++)
        if (own_of[st] != PP_NONE)
            own_of[st] = to[own_of[st]];
    free(to);
    return (long)k;
}

/* Per thread of the interval: its samples and its most common own function. */
static thread_row *thread_rows(const pp_profile *p, const uint32_t *own_of,
                               const func_row *rows, size_t nrows)
{
    thread_row *t = calloc(p->nthreads ? p->nthreads : 1, sizeof(*t));
    uint64_t *per = nrows && p->nthreads && nrows * p->nthreads < (1u << 22)
                    ? calloc(nrows * p->nthreads, sizeof(*per)) : NULL;

    if (!t) {
        free(per);
        return NULL;
    }
    for (uint64_t i = 0; i < p->nlog; i++) {
        pp_logged r = pp_profile_rec(p, i);
        uint32_t th = r.thread;
        uint64_t v = pp_rec_value(p, &r);

        if (th >= p->nthreads)
            continue;
        t[th].value += v;
        if (per && r.stack < p->nstacks && own_of[r.stack] != PP_NONE)
            per[(size_t)th * nrows + own_of[r.stack]] += v;
    }
    for (uint32_t th = 0; th < p->nthreads; th++) {
        size_t best = nrows;

        t[th].tid = p->threads[th].tid;
        snprintf(t[th].name, sizeof(t[th].name), "%s", p->threads[th].name);
        for (size_t f = 0; per && f < nrows; f++)
            if (per[(size_t)th * nrows + f] &&
                (best == nrows || per[(size_t)th * nrows + f] > per[(size_t)th * nrows + best]))
                best = f;
        snprintf(t[th].top, sizeof(t[th].top), "%s", best < nrows ? rows[best].label : "");
    }
    free(per);
    return t;
}

static int want_total, want_leaf;   /* qsort has no context argument */

static int is_reason(const func_row *r)
{
    return strncmp(r->label, "[off-CPU: ", 10) == 0;
}

static int by_share(const void *a, const void *b)
{
    const func_row *x = a, *y = b;
    uint64_t ox = want_leaf ? x->self : x->own, oy = want_leaf ? y->self : y->own;
    uint64_t kx = want_total ? x->total : ox, ky = want_total ? y->total : oy;
    uint64_t lx = want_total ? ox : x->total, ly = want_total ? oy : y->total;

    if (is_reason(x) != is_reason(y))
        return is_reason(x) ? -1 : 1;
    if (is_reason(x) && x->total != y->total)
        return x->total < y->total ? 1 : -1;

    if (kx != ky)
        return kx < ky ? 1 : -1;
    if (lx != ly)
        return lx < ly ? 1 : -1;
    return strcmp(x->label, y->label);
}

static int by_value(const void *a, const void *b)
{
    const thread_row *x = a, *y = b;

    if (x->value != y->value)
        return x->value < y->value ? 1 : -1;
    return x->tid - y->tid;
}

/* ---- drawing ---------------------------------------------------------------- */

typedef struct screen {
    char *buf;
    size_t len, cap;
    unsigned line, rows, cols;
} screen;

static void put(screen *s, const char *b, size_t n)
{
    if (pp__grow((void **)&s->buf, &s->cap, s->len + n + 1, 1) < 0)
        return;
    memcpy(s->buf + s->len, b, n);
    s->len += n;
    s->buf[s->len] = '\0';
}

/* One line, cut to the width (counted in characters of UTF-8), control
 * bytes shown as '?'. On a terminal, only the lines that fit. */
static void line(screen *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void line(screen *s, const char *fmt, ...)
{
    char text[LINE_MAX_BYTES];
    unsigned chars = 0;
    size_t n = 0;
    va_list ap;

    if (s->rows && s->line >= s->rows)
        return;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    for (n = 0; text[n]; n++) {
        unsigned char c = (unsigned char)text[n];

        if ((c & 0xc0) != 0x80 && s->cols && chars++ == s->cols)
            break;
        if (c < 0x20 || c == 0x7f)
            text[n] = '?';
    }
    if (s->rows && s->line)
        put(s, "\r\n", 2);
    put(s, text, n);
    if (s->rows)
        put(s, "\x1b[K", 3);
    else
        put(s, "\n", 1);
    s->line++;
}

static double pct(uint64_t v, uint64_t total)
{
    return total ? 100.0 * (double)v / (double)total : 0;
}

static void draw_functions(const pp_top *t, screen *s, size_t max)
{
    line(s, "%7s %7s %8s %8s  %s", t->by_total ? "own%" : "OWN%", t->by_total ? "TOTAL%" : "total%",
         t->by_leaf ? "leaf" : "own", "total", "function");
    for (size_t i = 0; i < t->nfuncs && i < max; i++) {
        const func_row *f = &t->funcs[i];
        uint64_t own = t->by_leaf ? f->self : f->own;

        line(s, "%6.1f%% %6.1f%% %8llu %8llu  %s", pct(own, t->value), pct(f->total, t->value),
             (unsigned long long)own, (unsigned long long)f->total, f->label);
    }
}

static void draw_threads(const pp_top *t, screen *s, size_t max)
{
    line(s, "%8s %7s %8s  %-20s %s", "tid", "share", "samples", "thread", "most in");
    for (size_t i = 0; i < t->nthreads && i < max; i++) {
        const thread_row *r = &t->threads[i];

        line(s, "%8d %6.1f%% %8llu  %-20s %s", (int)r->tid, pct(r->value, t->value),
             (unsigned long long)r->value, r->name, r->top);
    }
}

static void counts_line(const pp_top *t, screen *s)
{
    const pp_top_counts *c = &t->counts;

    line(s, "%.1f s: %llu samples (%.0f/s), %llu lost; %u process%s, %u thread%s (%zu sampled)",
         c->seconds, (unsigned long long)t->samples,
         c->seconds > 0 ? (double)t->samples / c->seconds : 0, (unsigned long long)c->lost,
         c->processes, c->processes == 1 ? "" : "es", c->threads, c->threads == 1 ? "" : "s",
         t->nthreads);
}

static void write_all(const char *b, size_t n)
{
    while (n) {
        ssize_t w = write(STDOUT_FILENO, b, n);

        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        b += w;
        n -= (size_t)w;
    }
}

static void size_of(unsigned *rows, unsigned *cols)
{
    struct winsize ws;

    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row && ws.ws_col) {
        *rows = ws.ws_row;
        *cols = ws.ws_col;
    } else {
        *rows = 24;
        *cols = 80;
    }
}

/* The whole screen in one write: home, each line cleared to its end, the
 * rest of the screen cleared. */
static void redraw(pp_top *t)
{
    screen s = {NULL, 0, 0, 0, 0, 0};

    size_of(&t->rows, &t->cols);
    s.rows = t->rows;
    s.cols = t->cols;
    put(&s, "\x1b[H", 3);
    line(&s, "perfpy top: %s", t->title);
    line(&s, "%s", t->how);
    if (t->have)
        counts_line(t, &s);
    else
        line(&s, "(the first interval is under way)");
    line(&s, "keys: o own, t total, n own by %s, h %s, p %s, q quit%s",
         t->by_leaf ? "Python function" : "leaf frame", t->show_threads ? "functions" : "threads",
         t->paused ? "go on" : "pause", t->paused ? "   [paused]" : "");
    line(&s, "%s", "");
    if (t->have && t->show_threads)
        draw_threads(t, &s, t->nthreads);
    else if (t->have)
        draw_functions(t, &s, t->nfuncs);
    put(&s, "\x1b[J", 3);
    if (s.buf)
        write_all(s.buf, s.len);
    free(s.buf);
}

/* Not a terminal: the interval as one plain table. */
static void plain(pp_top *t)
{
    screen s = {NULL, 0, 0, 0, 0, 0};
    char stamp[32];
    time_t now = time(NULL);
    struct tm tm;

    strftime(stamp, sizeof(stamp), "%H:%M:%S", localtime_r(&now, &tm));
    line(&s, "perfpy top: %s, %s (%s)", t->title, stamp, t->how);
    counts_line(t, &s);
    draw_functions(t, &s, t->plain_rows ? t->plain_rows : t->nfuncs);
    /* A row cut here is not a frame missing from the stacks: said, since
     * the functions that own nothing (an awaiting coroutine, a caller)
     * rank last by own share however large their total */
    if (t->plain_rows && t->nfuncs > t->plain_rows)
        line(&s, "(%zu more function%s not shown: --rows 0 shows all)",
             t->nfuncs - t->plain_rows, t->nfuncs - t->plain_rows == 1 ? "" : "s");
    line(&s, "%s", "");
    if (s.buf) {
        fputs(s.buf, stdout);
        fflush(stdout);
    }
    free(s.buf);
}

static void sort_rows(pp_top *t)
{
    want_total = t->by_total;
    want_leaf = t->by_leaf;
    qsort(t->funcs, t->nfuncs, sizeof(*t->funcs), by_share);
}

void pp_top_show(pp_top *t, const pp_profile *p, const pp_top_counts *c)
{
    uint32_t *func = NULL, *own_of = NULL;
    func_row *rows = NULL;
    thread_row *threads = NULL;
    long n;

    if (t->paused)
        return;
    if (!(func = malloc((p->nframes ? p->nframes : 1) * sizeof(*func))) ||
        !(own_of = malloc((p->nstacks ? p->nstacks : 1) * sizeof(*own_of))) ||
        (n = functions(p, func, &rows)) < 0)
        goto out;
    shares(p, func, rows, (size_t)n, own_of);
    n = drop_unsampled(rows, (size_t)n, func, p->nframes, own_of, p->nstacks);
    if (!(threads = thread_rows(p, own_of, rows, (size_t)n)))
        goto out;
    free(t->funcs);
    free(t->threads);
    t->funcs = rows;
    t->nfuncs = (size_t)n;
    t->threads = threads;
    t->nthreads = p->nthreads;
    rows = NULL;
    t->value = pp_profile_value_total(p);
    t->samples = p->samples;
    t->counts = *c;
    t->have = 1;
    qsort(t->threads, t->nthreads, sizeof(*t->threads), by_value);
    sort_rows(t);
    if (t->tty)
        redraw(t);
    else
        plain(t);
out:
    free(rows);
    free(func);
    free(own_of);
}

int pp_top_keys(pp_top *t)
{
    unsigned char k[64];
    unsigned rows, cols;
    ssize_t n;
    int changed = 0;

    if (!t->tty)
        return PP_TOP_GO;
    while ((n = read(STDIN_FILENO, k, sizeof(k))) > 0)
        for (ssize_t i = 0; i < n; i++) {
            switch (k[i]) {
            case 'q':
            case 'Q':
                return PP_TOP_QUIT;
            case 'o':
                t->by_total = 0;
                break;
            case 't':
                t->by_total = 1;
                break;
            case 'n':
                t->by_leaf = !t->by_leaf;
                break;
            case 'h':
                t->show_threads = !t->show_threads;
                break;
            case 'p':
            case ' ':
                t->paused = !t->paused;
                break;
            default:
                continue;
            }
            changed = 1;
        }
    size_of(&rows, &cols);
    if (changed && t->have)
        sort_rows(t);
    if (changed || rows != t->rows || cols != t->cols)
        redraw(t);
    return PP_TOP_GO;
}

int pp_top_tty(const pp_top *t)
{
    return t->tty;
}

static void restore(pp_top *t)
{
    static const char back[] = "\x1b[?25h\x1b[?1049l";

    if (!t->tty)
        return;
    write_all(back, sizeof(back) - 1);
    tcsetattr(STDIN_FILENO, TCSANOW, &t->saved);
    t->tty = 0;
}

static void at_exit(void)
{
    if (open_view)
        restore(open_view);
}

int pp_top_open(pp_top **out, const char *title, const char *how, size_t plain_rows)
{
    static int registered;
    static const char take[] = "\x1b[?1049h\x1b[?25l\x1b[H\x1b[2J";
    pp_top *t = calloc(1, sizeof(*t));
    struct termios raw;

    if (!t)
        return -ENOMEM;
    snprintf(t->title, sizeof(t->title), "%s", title);
    snprintf(t->how, sizeof(t->how), "%s", how);
    t->plain_rows = plain_rows;
    if (isatty(STDIN_FILENO) && isatty(STDOUT_FILENO) &&
        tcgetattr(STDIN_FILENO, &t->saved) == 0) {
        raw = t->saved;
        /* keys one at a time, not echoed; Ctrl-C still a signal (perfpy
         * and a program it started both get it, as with record), Ctrl-Z
         * off (a stopped perfpy would leave the terminal taken) */
        raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
        raw.c_cc[VMIN] = 0;
        raw.c_cc[VTIME] = 0;
        raw.c_cc[VSUSP] = _POSIX_VDISABLE;
        if (tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0) {
            t->tty = 1;
            open_view = t;
            if (!registered++)
                atexit(at_exit);
            write_all(take, sizeof(take) - 1);
            redraw(t);
        }
    }
    *out = t;
    return 0;
}

void pp_top_close(pp_top *t)
{
    if (!t)
        return;
    restore(t);
    if (open_view == t)
        open_view = NULL;
    free(t->funcs);
    free(t->threads);
    free(t);
}

unsigned pp_top_threads_of(pid_t pid)
{
    char path[64];
    DIR *d;
    struct dirent *de;
    unsigned n = 0;

    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    if (!(d = opendir(path)))
        return 0;
    while ((de = readdir(d)))
        n += de->d_name[0] != '.';
    closedir(d);
    return n;
}

void pp_top_title(char *buf, size_t cap, long pid, char *const *argv)
{
    char cmd[200] = "", path[64];
    size_t len = 0;
    ssize_t n = 0;
    int fd;

    if (pid) {
        snprintf(path, sizeof(path), "/proc/%ld/cmdline", pid);
        if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
            n = read(fd, cmd, sizeof(cmd) - 1);
            close(fd);
        }
        for (ssize_t i = 0; i < n - 1; i++)
            if (!cmd[i])
                cmd[i] = ' ';
        cmd[n > 0 ? n : 0] = '\0';
        snprintf(buf, cap, "process %ld: %s", pid, cmd);
        return;
    }
    buf[0] = '\0';
    for (int i = 0; argv && argv[i] && len + 1 < cap; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? " " : "", argv[i]);
}
