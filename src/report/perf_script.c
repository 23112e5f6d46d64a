/*
 * The `perf script` reader (see perf_script.h for the text it reads).
 *
 * Why a parser of our own: the usual pipeline (`perf script | stackcollapse`)
 * runs a Python or Perl script over every line; perfpy folds while reading,
 * at memory speed. The parser never allocates per line: the input sits in
 * one buffer, a sample's frames are (pointer, length) views into it, and the
 * frame array is reused from sample to sample.
 *
 * Frame lines repeat: a recording holds a few thousand distinct ones among
 * millions (the same functions at the same return addresses). The parser
 * keeps each distinct line with its parsed frame and a small key (the line
 * cache, bounded): a line seen before costs a hash and a compare instead of
 * a parse, and the folder keys its own per-frame work on the key.
 *
 * Streaming: feed() appends to the buffer and scans complete samples; the
 * unfinished tail (at most one sample) moves to the buffer's front and is
 * scanned again when more input arrives. A sample that never ends (hostile
 * input: endless frame lines) is delivered once it passes MAX_PENDING bytes
 * and the rest of its frames are skipped, so memory stays bounded.
 *
 * Line kinds (after removing a trailing CR and blanks):
 *   ""                    ends the current sample
 *   "\t<hex> sym (dso)"   a frame of the current sample
 *   anything else         a header: "comm pid[/tid] [time:] [period] event:"
 *                         read from the right; a header that does not end in
 *                         ':' carries its only frame after the event (perf
 *                         prints samples without call chains on one line).
 *                         A header that does not parse but starts with blanks
 *                         is tried as a frame line.
 */
#include "perf_script.h"
#include "profile/hex.h"
#include "profile/htab.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define READ_BLOCK (1u << 20)
#define MAX_PENDING (64u << 20)
/* The line cache's bounds: past them new lines are parsed every time. */
#define CACHE_MAX_LINES (1u << 20)
#define CACHE_MAX_BYTES (64u << 20)
#define CACHE_BLOCK (256u << 10)
#define CACHE_MAX_PROBES 8       /* equal hashes compared before giving up */

typedef struct cached_line {
    const char *text;      /* in a cache block */
    uint32_t len;
    pp_raw_frame f;     /* sym, dso point into text (or at constants) */
} cached_line;

typedef struct line_cache {
    pp_htab index;         /* hash of the line -> lines[] */
    cached_line *lines;
    size_t n, cap;
    char **blocks;         /* text blocks, never moved: frames point into them */
    size_t nblocks, blocks_cap, used, bytes;
} line_cache;

typedef struct scan_state {
    pp_script_sample_fn fn;
    void *ctx;
    pp_raw_frame *frames;
    size_t cap;
    pp_raw_sample cur;
    int in_sample;
    int skipping;          /* the current sample was delivered early */
    uint64_t pending_bad;  /* bad lines inside the current sample */
    pp_script_stats stats;
    line_cache cache;
} scan_state;

struct pp_script_parser {
    scan_state st;
    char *buf;
    size_t len, cap;
    int err;
};

static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* Decimal digits [s, e) into *out (saturating); 0 if not all digits. */
static int parse_dec(const char *s, const char *e, uint64_t *out)
{
    uint64_t v = 0;

    if (s >= e)
        return 0;
    for (; s < e; s++) {
        if (*s < '0' || *s > '9')
            return 0;
        v = v > (UINT64_MAX - 9) / 10 ? UINT64_MAX : v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return 1;
}

/* "123.456789:" (the colon already cut) into nanoseconds. */
static int parse_time(const char *s, const char *e, uint64_t *ns)
{
    const char *dot = memchr(s, '.', (size_t)(e - s));
    uint64_t sec, frac = 0;
    int digits = 0;

    if (!dot || !parse_dec(s, dot, &sec))
        return 0;
    for (const char *q = dot + 1; q < e; q++) {
        if (*q < '0' || *q > '9')
            return 0;
        if (digits < 9) {
            frac = frac * 10 + (uint64_t)(*q - '0');
            digits++;
        }
    }
    if (dot + 1 == e)
        return 0;
    while (digits++ < 9)
        frac *= 10;
    *ns = sec > UINT64_MAX / 1000000000u ? UINT64_MAX : sec * 1000000000u + frac;
    return 1;
}

/* "pid" or "pid/tid". */
static int parse_pid(const char *s, const char *e, int32_t *pid, int32_t *tid)
{
    const char *slash = memchr(s, '/', (size_t)(e - s));
    uint64_t a, b;

    if (slash) {
        if (!parse_dec(s, slash, &a) || !parse_dec(slash + 1, e, &b))
            return 0;
    } else {
        if (!parse_dec(s, e, &a))
            return 0;
        b = a;
    }
    if (a > INT32_MAX || b > INT32_MAX)
        return 0;
    *pid = (int32_t)a;
    *tid = slash ? (int32_t)b : -1;
    return 1;
}

/* The token ending at or before *e (blanks skipped): [*ts, *te). */
static int prev_token(const char *s, const char **e, const char **ts, const char **te)
{
    const char *q = *e;

    while (q > s && is_blank(q[-1]))
        q--;
    if (q == s)
        return 0;
    *te = q;
    while (q > s && !is_blank(q[-1]))
        q--;
    *ts = q;
    *e = q;
    return 1;
}

/* A frame line's text after the leading blanks: "<hex> sym (dso)". */
static int parse_frame(const char *s, const char *e, pp_raw_frame *f)
{
    uint64_t ip = 0;
    int nd = 0, v;
    const char *q;

    while (s < e && is_blank(*s))
        s++;
    while (s < e && (v = pp__hexval(*s)) >= 0) {
        if (nd < 16)
            ip = ip << 4 | (uint64_t)v;
        nd++;
        s++;
    }
    if (nd == 0 || (s < e && !is_blank(*s)))
        return 0;
    while (s < e && is_blank(*s))
        s++;
    memset(f, 0, sizeof(*f));             /* PP_RAW_NATIVE, no line of its own */
    f->ip = ip;
    f->dso = "";
    if (e - s >= 3 && e[-1] == ')') {
        for (q = e - 2; q > s; q--) {
            if (q[0] == '(' && q[-1] == ' ') {
                f->dso = q + 1;
                f->dso_len = (uint32_t)(e - 1 - (q + 1));
                e = q - 1;
                break;
            }
        }
        if (!f->dso_len && q == s && s[0] == '(') {   /* no symbol at all */
            f->dso = s + 1;
            f->dso_len = (uint32_t)(e - 1 - (s + 1));
            e = s;
        }
    }
    while (e > s && is_blank(e[-1]))
        e--;
    if (e > s) {
        f->sym = s;
        f->sym_len = (uint32_t)((size_t)(e - s) > UINT32_MAX ? UINT32_MAX : (size_t)(e - s));
    } else {
        f->sym = "[unknown]";
        f->sym_len = 9;
    }
    f->inlined = f->dso_len == 7 && memcmp(f->dso, "inlined", 7) == 0;
    return 1;
}

static void cache_free(line_cache *c)
{
    for (size_t i = 0; i < c->nblocks; i++)
        free(c->blocks[i]);
    free(c->blocks);
    free(c->lines);
    pp__htab_free(&c->index);
    memset(c, 0, sizeof(*c));
}

/* A copy of [s, s+len) in the current block (a new one when full), or NULL. */
static char *cache_text(line_cache *c, const char *s, size_t len)
{
    char *t;

    if (c->nblocks == 0 || c->used + len > CACHE_BLOCK) {
        size_t size = len > CACHE_BLOCK ? len : CACHE_BLOCK;
        if (pp__grow((void **)&c->blocks, &c->blocks_cap, c->nblocks + 1, sizeof(char *)) < 0 ||
            !(c->blocks[c->nblocks] = malloc(size)))
            return NULL;
        c->nblocks++;
        c->used = 0;
        c->bytes += size;
    }
    t = c->blocks[c->nblocks - 1] + c->used;
    memcpy(t, s, len);
    c->used += len;
    return t;
}

/* Points a view into [s, ...) at the same place in the copy t. */
static const char *moved(const char *p, const char *s, size_t len, const char *t)
{
    uintptr_t x = (uintptr_t)p, b = (uintptr_t)s;
    return x >= b && x <= b + len ? t + (x - b) : p;
}

/* The frame line [s, e): from the cache, or parsed (and cached while the
 * cache has room). 1 with *f filled, 0 if it is no frame line. */
static int frame_line(line_cache *c, const char *s, const char *e, pp_raw_frame *f)
{
    size_t len = (size_t)(e - s);
    uint64_t h = pp__hash(s, len, 0x5eed);
    pp_htab_iter it;
    uint32_t *slot;
    int probes = 0;
    char *t;

    for (slot = pp__htab_first(&c->index, h, &it); slot;
         slot = pp__htab_next(&c->index, h, &it)) {
        const cached_line *l = &c->lines[*slot];
        if (l->len == len && memcmp(l->text, s, len) == 0) {
            *f = l->f;
            return 1;
        }
        probes++;
    }
    if (!parse_frame(s, e, f))
        return 0;
    f->key = 0;
    if (probes >= CACHE_MAX_PROBES || c->n >= CACHE_MAX_LINES || len > UINT32_MAX ||
        c->bytes + len > CACHE_MAX_BYTES ||
        pp__grow((void **)&c->lines, &c->cap, c->n + 1, sizeof(*c->lines)) < 0 ||
        (c->index.cap == 0 && pp__htab_init(&c->index, 4096) < 0) ||
        !(t = cache_text(c, s, len)))
        return 1;                          /* parsed, not cached: still a frame */
    if (pp__htab_insert(&c->index, h, (uint32_t)c->n) < 0)
        return 1;
    f->sym = moved(f->sym, s, len, t);
    f->dso = moved(f->dso, s, len, t);
    f->key = (uint32_t)c->n + 1;
    c->lines[c->n++] = (cached_line){t, (uint32_t)len, *f};
    return 1;
}

static int push_frame(scan_state *st, const pp_raw_frame *f)
{
    if (st->cur.nframes >= PP_SCRIPT_MAX_FRAMES) {
        st->cur.frames_dropped = 1;
        return 0;
    }
    if (pp__grow((void **)&st->frames, &st->cap, st->cur.nframes + 1, sizeof(*st->frames)) < 0)
        return -ENOMEM;
    st->frames[st->cur.nframes++] = *f;
    return 0;
}

/* A header line (trimmed) into *c; a one-line sample's frame into *f
 * (*has_frame set). Returns 1 if the line is a header, 0 if not. */
static int parse_header(const char *s, const char *e, pp_raw_sample *c,
                        pp_raw_frame *f, int *has_frame)
{
    const char *q = e, *ts, *te, *frame_s = NULL;
    uint64_t v;

    memset(c, 0, sizeof(*c));
    c->pid = c->tid = -1;
    c->period = 1;
    *has_frame = 0;
    if (e > s && e[-1] != ':') {
        /* One-line sample: "... <sec>.<frac>: [period] event:  <hex> sym (dso)":
         * the event is the first token ending in ':' after the time token. */
        const char *t = s;
        while (t < e && !frame_s) {
            const char *a = t, *b;
            while (a < e && is_blank(*a))
                a++;
            b = a;
            while (b < e && !is_blank(*b))
                b++;
            t = b;
            if (b - a < 4 || b[-1] != ':' || !parse_time(a, b - 1, &v))
                continue;
            for (int k = 0; k < 2 && b < e; k++) {
                const char *x = b;
                while (x < e && is_blank(*x))
                    x++;
                b = x;
                while (b < e && !is_blank(*b))
                    b++;
                if (b > x && b[-1] == ':') {
                    frame_s = q = b;
                    break;
                }
            }
            break;
        }
        if (!frame_s)
            return 0;
    }
    if (!prev_token(s, &q, &ts, &te))
        return 0;
    c->event = ts;                         /* its trailing ':' removed */
    c->event_len = (size_t)(te - ts);
    if (c->event_len && te[-1] == ':')
        c->event_len--;
    if (!prev_token(s, &q, &ts, &te))
        return 0;
    if (parse_dec(ts, te, &v)) {
        c->period = v;
        if (!prev_token(s, &q, &ts, &te))
            return 0;
    }
    if (te - ts >= 2 && te[-1] == ':' && parse_time(ts, te - 1, &v)) {
        c->time_ns = v;
        if (!prev_token(s, &q, &ts, &te))
            return 0;
    }
    if (!parse_pid(ts, te, &c->pid, &c->tid))
        return 0;
    while (q > s && is_blank(q[-1]))
        q--;
    while (s < q && is_blank(*s))
        s++;
    c->comm = s;
    c->comm_len = (size_t)(q - s);
    if (frame_s && parse_frame(frame_s, e, f))
        *has_frame = 1;
    return 1;
}

static int emit(scan_state *st)
{
    st->in_sample = 0;
    st->cur.frames = st->frames;
    st->stats.samples++;
    st->stats.bad_lines += st->pending_bad;
    st->pending_bad = 0;
    return st->fn ? st->fn(st->ctx, &st->cur) : 0;
}

/* One trimmed, non-empty line. */
static int on_line(scan_state *st, const char *s, const char *e, size_t pos,
                   size_t *sample_start)
{
    pp_raw_sample hdr;
    pp_raw_frame f;
    int has_frame, rc;

    if (*s != '\t' && parse_header(s, e, &hdr, &f, &has_frame)) {
        if (st->in_sample && (rc = emit(st)) < 0)
            return rc;
        st->skipping = 0;
        st->cur = hdr;
        st->in_sample = 1;
        *sample_start = pos;
        if (has_frame && (rc = push_frame(st, &f)) < 0)
            return rc;
        return 0;
    }
    if (st->skipping)
        return 0;              /* the rest of a sample delivered early */
    if (!st->in_sample) {
        st->stats.bad_lines++;
        return 0;
    }
    if ((*s == '\t' || *s == ' ') && frame_line(&st->cache, s, e, &f))
        return push_frame(st, &f);
    st->pending_bad++;         /* counted when the sample is delivered */
    return 0;
}

/* Scans buf[0..len). *consumed: the bytes that need no rescan. */
static int scan(scan_state *st, const char *buf, size_t len, int eof, size_t *consumed)
{
    size_t pos = 0, sample_start = 0;
    int rc;

    *consumed = 0;
    while (pos < len) {
        const char *s = buf + pos;
        const char *nl = memchr(s, '\n', len - pos);
        const char *e;
        size_t next;

        if (!nl) {
            if (!eof)
                break;
            e = buf + len;
            next = len;
        } else {
            e = nl;
            next = (size_t)(nl - buf) + 1;
        }
        while (e > s && is_blank(e[-1]))
            e--;
        if (e == s) {                               /* blank: sample ends */
            if (st->in_sample && (rc = emit(st)) < 0)
                return rc;
            st->skipping = 0;
        } else if ((rc = on_line(st, s, e, pos, &sample_start)) < 0) {
            return rc;
        }
        pos = next;
        if (!st->in_sample)
            *consumed = pos;
    }
    if (st->in_sample) {
        if (eof || pos - sample_start > MAX_PENDING) {
            if ((rc = emit(st)) < 0)
                return rc;
            st->skipping = !eof;
            *consumed = pos;
        } else {
            *consumed = sample_start;   /* rescanned from its header next time */
            st->in_sample = 0;
            st->pending_bad = 0;
        }
    }
    return 0;
}

int pp_script_parse_buffer(const char *data, size_t len, pp_script_sample_fn fn,
                           void *ctx, pp_script_stats *stats)
{
    scan_state st;
    size_t consumed;
    int rc;

    memset(&st, 0, sizeof(st));
    st.fn = fn;
    st.ctx = ctx;
    rc = scan(&st, data, len, 1, &consumed);
    st.stats.bytes = len;
    if (stats)
        *stats = st.stats;
    free(st.frames);
    cache_free(&st.cache);
    return rc;
}

int pp_script_open(pp_script_parser **out, pp_script_sample_fn fn, void *ctx)
{
    pp_script_parser *p = calloc(1, sizeof(*p));

    if (!p)
        return -ENOMEM;
    p->st.fn = fn;
    p->st.ctx = ctx;
    *out = p;
    return 0;
}

static int run_scan(pp_script_parser *p, int eof)
{
    size_t consumed = 0;
    int rc;

    if (p->len == 0)
        return 0;
    rc = scan(&p->st, p->buf, p->len, eof, &consumed);

    if (rc < 0)
        return p->err = rc;
    if (consumed > p->len)
        consumed = p->len;
    memmove(p->buf, p->buf + consumed, p->len - consumed);
    p->len -= consumed;
    return 0;
}

/* Room for `more` bytes after the pending tail. */
static int reserve(pp_script_parser *p, size_t more)
{
    size_t cap = p->cap ? p->cap : READ_BLOCK;
    char *n;

    if (p->len + more <= p->cap)
        return 0;
    while (cap < p->len + more)
        cap *= 2;
    n = realloc(p->buf, cap);
    if (!n)
        return p->err = -ENOMEM;
    p->buf = n;
    p->cap = cap;
    return 0;
}

int pp_script_feed(pp_script_parser *p, const char *data, size_t len)
{
    if (p->err)
        return p->err;
    if (len == 0)
        return 0;
    if (reserve(p, len) < 0)
        return p->err;
    memcpy(p->buf + p->len, data, len);
    p->len += len;
    p->st.stats.bytes += len;
    /* Scan once a block has gathered: small feeds are not rescanned each time. */
    if (p->len < READ_BLOCK / 2)
        return 0;
    return run_scan(p, 0);
}

int pp_script_finish(pp_script_parser *p)
{
    if (p->err)
        return p->err;
    return run_scan(p, 1);
}

int pp_script_parse_fd(pp_script_parser *p, int fd)
{
    for (;;) {
        ssize_t n;

        if (p->err)
            return p->err;
        if (reserve(p, READ_BLOCK) < 0)
            return p->err;
        n = read(fd, p->buf + p->len, p->cap - p->len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return p->err = -errno;
        }
        if (n == 0)
            break;
        p->len += (size_t)n;
        p->st.stats.bytes += (size_t)n;
        if (p->len >= READ_BLOCK / 2 && run_scan(p, 0) < 0)
            return p->err;
    }
    return pp_script_finish(p);
}

const pp_script_stats *pp_script_stats_of(const pp_script_parser *p)
{
    return &p->st.stats;
}

void pp_script_close(pp_script_parser *p)
{
    if (!p)
        return;
    free(p->st.frames);
    cache_free(&p->st.cache);
    free(p->buf);
    free(p);
}
