/*
 * What the writers share: the format table, escaping for JSON and XML
 * (profiles hold names from hostile input: any byte may appear, and both
 * formats must stay well-formed), and the call tree as JSON for the two
 * embedded viewers (HTML page, and nothing else needs it yet).
 */
#include "output.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

const pp_format pp_formats[] = {
    {.name = "flamegraph", .ext = ".svg", .write = pp_write_flamegraph,
     .summary = "interactive SVG flame graph (default)"},
    {.name = "html", .ext = ".html", .write = pp_write_html,
     .summary = "page: flame graph + sortable function table"},
    {.name = "speedscope", .ext = ".speedscope.json", .write = pp_write_speedscope,
     .summary = "speedscope JSON: a profile per thread, in time order"},
    {.name = "firefox", .ext = ".firefox.json", .write = pp_write_firefox,
     .summary = "Firefox Profiler: a track per thread, samples in time, markers"},
    {.name = "pprof", .ext = ".pb.gz", .write = pp_write_pprof,
     .summary = "gzipped pprof protobuf"},
    {.name = "collapsed", .ext = ".txt", .write = pp_write_collapsed,
     .summary = "flamegraph.pl's collapsed stacks"},
    {.name = "heatmap", .ext = ".heatmap.html", .write = pp_write_heatmap,
     .summary = "page: the source lines with their share of the samples"},
    {.name = "table", .ext = ".table.txt", .write = pp_write_table,
     .summary = "text: functions by own and total time, for terminals and logs"},
    {.name = "perfpy", .ext = ".perfpy.gz", .write = pp_write_perfpy,
     .summary = "perfpy's own, the whole profile: perfpy report FILE -f FORMAT writes any "
                "format later"},
    {.name = "perf", .ext = ".data", .recording = 1,
     .summary = "the (injected) perf.data, for perf report/Hotspot"},
};
const size_t pp_nformats = sizeof(pp_formats) / sizeof(pp_formats[0]);

const pp_format *pp_format_find(const char *name)
{
    for (size_t i = 0; name && i < pp_nformats; i++)
        if (strcmp(pp_formats[i].name, name) == 0)
            return &pp_formats[i];
    return NULL;
}

const char *pp_format_names(void)
{
    static char names[256];
    size_t n = 0;

    if (names[0])
        return names;
    for (size_t i = 0; i < pp_nformats && n < sizeof(names); i++)
        n += (size_t)snprintf(names + n, sizeof(names) - n, "%s%s", i ? ", " : "",
                              pp_formats[i].name);
    return names;
}

int pp__utf8_len(const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    int n;
    unsigned cp;

    if (s[0] < 0x80)
        return 1;
    if (s[0] >= 0xc2 && s[0] <= 0xdf)
        n = 2, cp = s[0] & 0x1f;
    else if (s[0] >= 0xe0 && s[0] <= 0xef)
        n = 3, cp = s[0] & 0x0f;
    else if (s[0] >= 0xf0 && s[0] <= 0xf4)
        n = 4, cp = s[0] & 0x07;
    else
        return 0;
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)     /* also stops at the NUL */
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
        (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
        return 0;
    if (cp == 0xfffe || cp == 0xffff)   /* not characters in XML */
        return 0;
    return n;
}

void pp__json_text(FILE *out, const char *s)
{
    while (*s) {
        unsigned char c = (unsigned char)*s;
        int n;

        if (c == '"' || c == '\\') {
            fputc('\\', out);
            fputc(c, out);
            s++;
        } else if (c < 0x20 || c == 0x7f) {
            fprintf(out, "\\u%04x", c);
            s++;
        } else if (c == '<') {           /* safe inside a <script> element */
            fputs("\\u003c", out);
            s++;
        } else if ((n = pp__utf8_len(s)) > 0) {
            fwrite(s, 1, (size_t)n, out);
            s += n;
        } else {
            fputs("\\ufffd", out);
            s++;
        }
    }
}

void pp__xml_text(FILE *out, const char *s)
{
    while (*s) {
        unsigned char c = (unsigned char)*s;
        int n;

        switch (c) {
        case '&': fputs("&amp;", out); s++; continue;
        case '<': fputs("&lt;", out); s++; continue;
        case '>': fputs("&gt;", out); s++; continue;
        case '"': fputs("&quot;", out); s++; continue;
        case '\'': fputs("&#39;", out); s++; continue;
        default: break;
        }
        if ((c < 0x20 && c != '\t') || c == 0x7f) {
            fputs("\xef\xbf\xbd", out);
            s++;
        } else if ((n = pp__utf8_len(s)) > 0) {
            fwrite(s, 1, (size_t)n, out);
            s += n;
        } else {
            fputs("\xef\xbf\xbd", out);
            s++;
        }
    }
}

const char *pp__title(const pp_profile *p, const pp_write_opts *o)
{
    if (o && o->title && *o->title)
        return o->title;
    return p->program[0] ? p->program : "perfpy";
}

const char *pp__counted(const pp_profile *p, char *buf, size_t cap)
{
    int n = snprintf(buf, cap, "%llu samples", (unsigned long long)p->samples);

    uint64_t every = pp_profile_every(p);

    if (p->value == PP_VALUE_EVENTS && n >= 0 && (size_t)n < cap)
        snprintf(buf + n, cap - (size_t)n, " of %llu %s (%s)", (unsigned long long)every,
                 pp_profile_unit_n(p, every), p->event);
    return buf;
}

int pp__tree_json(const pp_profile *p, const pp_tree *t, FILE *out)
{
    static const char *kinds[] = {"py", "native", "kernel", "marker"};

    fputs("{\"f\":[", out);
    for (uint32_t i = 0; i < p->nframes; i++) {
        const pp_frame *f = &p->frames[i];
        fputs(i ? ",[\"" : "[\"", out);
        pp__json_text(out, f->label);
        fprintf(out, "\",\"%s\",\"", kinds[f->kind & 3]);
        pp__json_text(out, f->file);
        fprintf(out, "\",%d]", f->line);
    }
    fputs("],\"n\":[", out);
    for (uint32_t i = 0; i < t->n; i++) {
        const pp_tree_node *n = &t->nodes[i];
        fprintf(out, "%s[%ld,%ld,%llu,%llu]", i ? "," : "",
                n->frame == PP_NONE ? -1L : (long)n->frame,
                n->parent == PP_NONE ? -1L : (long)n->parent,
                (unsigned long long)n->total, (unsigned long long)n->self);
        if (i % 16 == 15)
            fputc('\n', out);
    }
    fputs("]}", out);
    return pp__stream_status(out);
}

void pp__process_suffix(const pp_profile *p, int32_t pid, char *buf, int n, size_t cap)
{
    const pp_process *proc = p->nprocs > 1 ? pp_profile_process(p, pid) : NULL;

    if (proc && n >= 0 && (size_t)n < cap)
        snprintf(buf + n, cap - (size_t)n, ", %s (pid %d)", proc->comm[0] ? proc->comm : "[unknown]",
                 proc->pid);
}

void pp__thread_label(const pp_profile *p, const pp_thread *t, char *buf, size_t cap)
{
    pp__process_suffix(p, t->pid, buf, pp_thread_label(t, buf, cap), cap);
}

int pp__stream_status(FILE *out)
{
    if (ferror(out))
        return errno ? -errno : -EIO;
    return 0;
}

void pp__put(pp__buf *b, const void *data, size_t n)
{
    if (b->err)
        return;
    if (pp__grow((void **)&b->d, &b->cap, b->len + n, 1) < 0) {
        b->err = -ENOMEM;
        return;
    }
    if (n)
        memcpy(b->d + b->len, data, n);
    b->len += n;
}

void pp__varint(pp__buf *b, uint64_t v)
{
    uint8_t tmp[10];
    size_t n = 0;

    do {
        tmp[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    pp__put(b, tmp, n);
}

/* gzip (RFC 1952) of data[0..len) to out. */
int pp__gzip_to(FILE *out, const uint8_t *data, size_t len)
{
    z_stream z;
    uint8_t chunk[65536];
    int zr;

    memset(&z, 0, sizeof(z));
    if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return -ENOMEM;
    z.next_in = (Bytef *)data;
    do {
        size_t in = len > (1u << 30) ? (1u << 30) : len;
        z.avail_in = (uInt)in;
        len -= in;
        do {
            z.next_out = chunk;
            z.avail_out = sizeof(chunk);
            zr = deflate(&z, len ? Z_NO_FLUSH : Z_FINISH);
            if (zr == Z_STREAM_ERROR) {
                deflateEnd(&z);
                return -EIO;
            }
            fwrite(chunk, 1, sizeof(chunk) - z.avail_out, out);
        } while (z.avail_out == 0);
    } while (len);
    deflateEnd(&z);
    return zr == Z_STREAM_END ? 0 : -EIO;
}


int pp__strtab_init(pp__strtab *t, size_t cap, int own)
{
    memset(t, 0, sizeof(*t));
    t->own = own;
    return pp__htab_init(&t->index, cap);
}

int64_t pp__strtab_id(pp__strtab *t, const char *s, int *added)
{
    uint64_t h = pp__hash(s, strlen(s), 13);
    pp_htab_iter it;
    uint32_t *slot;
    const char *kept;

    if (added)
        *added = 0;
    for (slot = pp__htab_first(&t->index, h, &it); slot; slot = pp__htab_next(&t->index, h, &it))
        if (strcmp(t->v[*slot], s) == 0)
            return *slot;
    if (t->n >= UINT32_MAX ||
        pp__grow((void **)&t->v, &t->cap, t->n + 1, sizeof(*t->v)) < 0 ||
        !(kept = t->own ? strdup(s) : s))
        return -ENOMEM;
    if (pp__htab_insert(&t->index, h, (uint32_t)t->n) < 0) {
        if (t->own)
            free((char *)kept);
        return -ENOMEM;
    }
    t->v[t->n] = kept;
    if (added)
        *added = 1;
    return (int64_t)t->n++;
}

void pp__strtab_free(pp__strtab *t)
{
    for (size_t i = 0; t->own && i < t->n; i++)
        free((char *)t->v[i]);
    free(t->v);
    pp__htab_free(&t->index);
    memset(t, 0, sizeof(*t));
}
