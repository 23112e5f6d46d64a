/*
 * The flame graph's boxes read back as its script reads them
 * (out_flamegraph.c): each <rect [data-f] [data-t] x y width fill> of the
 * <svg id="ppbox"> drawn in samples (x its first, width how many, y 16 a
 * level), in pixels as the viewBox stretches it, with the <text> of
 * <g id="pplabels"> at its place, its frame from the table at the end (F:
 * [name, file, line, kind], P: [path, length of its directory part]), its
 * full label as the tooltip gives it and its short one as the box shows it.
 */
#ifndef PERFPY_TEST_SVG_BOXES_H
#define PERFPY_TEST_SVG_BOXES_H

#include "test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct svg_box {
    long f;                        /* F's index, -1: the root */
    unsigned long long s, n;       /* its first sample, its samples */
    double x, width;               /* in pixels */
    unsigned y;                    /* in pixels */
    int r, g, b;                   /* its fill */
    char note[256];                /* data-t: a painter's tooltip, "" */
    char text[512];                /* what the box shows (XML as written) */
    char label[1024];              /* its full label: "foo (/app/x.py:3)", "all" */
    char shown[1024];              /* its label with the file relative */
    int kind;                      /* its frame's pp_frame_kind; -1: the root */
} svg_box;

/* A JSON string at *at (after its '"') into out; *at past its end quote. */
static inline void svg_json_str(const char **at, char *out, size_t cap)
{
    const char *s = *at;
    size_t n = 0;

    while (*s && *s != '"') {
        char c = *s++;
        if (c == '\\') {
            c = *s++;
            if (c == 'u') {
                unsigned v = 0;
                sscanf(s, "%4x", &v);
                s += 4;
                c = v < 0x80 ? (char)v : '?';
            }
        }
        if (n + 1 < cap)
            out[n++] = c;
    }
    out[n] = '\0';
    *at = *s ? s + 1 : s;
}

typedef struct svg_frame {
    char name[256];
    long path;
    int line, kind;
} svg_frame;

typedef struct svg_path {
    char path[512];
    size_t cut;
} svg_path;

static inline void svg_tables(const char *svg, svg_frame **F, size_t *nf, svg_path **P,
                              size_t *np)
{
    const char *at = strstr(svg, "var F=[");

    ASSERT_TRUE(at != NULL);
    *F = calloc(1 << 16, sizeof(**F));
    *P = calloc(1 << 16, sizeof(**P));
    *nf = *np = 0;
    for (at += 7; *at == '[' || *at == ',' || *at == '\n';) {
        svg_frame *f = &(*F)[*nf];
        if (*at != '[') {
            at++;
            continue;
        }
        ASSERT_EQ_INT(at[1], '"');
        at += 2;
        svg_json_str(&at, f->name, sizeof(f->name));
        ASSERT_EQ_INT(sscanf(at, ",%ld,%d,%d]", &f->path, &f->line, &f->kind), 3);
        at = strchr(at, ']') + 1;
        (*nf)++;
    }
    ASSERT_TRUE((at = strstr(at, "P=[")) != NULL);
    for (at += 3; *at == '[' || *at == ',' || *at == '\n';) {
        svg_path *p = &(*P)[*np];
        if (*at != '[') {
            at++;
            continue;
        }
        at += 2;
        svg_json_str(&at, p->path, sizeof(p->path));
        ASSERT_EQ_INT(sscanf(at, ",%zu]", &p->cut), 1);
        at = strchr(at, ']') + 1;
        (*np)++;
    }
}

static inline void svg_label(const svg_frame *f, const svg_path *P, int full, char *out,
                             size_t cap)
{
    const svg_path *p = f->path >= 0 ? &P[f->path] : NULL;

    if (f->kind || !p)
        snprintf(out, cap, "%s", f->name);
    else if (f->line > 0)
        snprintf(out, cap, "%s (%s:%d)", f->name, p->path + (full ? 0 : p->cut), f->line);
    else
        snprintf(out, cap, "%s (%s)", f->name, p->path + (full ? 0 : p->cut));
}

/* The text drawn at (x, y) pixels, as written, or "". */
static inline void svg_text_at(const char *svg, double x, unsigned y, char *out, size_t cap)
{
    const char *at = strstr(svg, "<g id=\"pplabels\">");

    out[0] = '\0';
    for (at = at ? strstr(at, "<text x=\"") : NULL; at; at = strstr(at + 1, "<text x=\"")) {
        double tx, ty;
        const char *q;
        if (sscanf(at, "<text x=\"%lf\" y=\"%lf\"", &tx, &ty) == 2 && fabs(tx - x - 3) < 0.06 &&
            fabs(ty - y - 11.5) < 0.01) {
            q = strchr(at, '>') + 1;
            snprintf(out, cap, "%.*s", (int)(strstr(q, "</text>") - q), q);
            return;
        }
    }
}

/* The boxes of svg, in order (malloc'ed), *n of them. */
static inline svg_box *svg_boxes(const char *svg, size_t *n)
{
    svg_frame *F;
    svg_path *P;
    size_t nf, np, cap = 16;
    svg_box *v = calloc(cap, sizeof(*v));
    const char *at = strstr(svg, "<svg id=\"ppbox\""), *end;
    double x0, width, total;
    unsigned y0;

    ASSERT_TRUE(at != NULL);
    ASSERT_EQ_INT(sscanf(at, "<svg id=\"ppbox\" x=\"%lf\" y=\"%u\" width=\"%lf\" height=\"%*u\" "
                         "viewBox=\"0 0 %lf", &x0, &y0, &width, &total), 4);
    end = strstr(at, "</svg>");
    svg_tables(svg, &F, &nf, &P, &np);
    *n = 0;
    for (at = strstr(at, "<rect"); at && at < end; at = strstr(at + 1, "<rect")) {
        svg_box *b;
        const char *close = strchr(at, '>'), *q;
        char fill[8];
        unsigned y;
        if (*n == cap)
            v = realloc(v, (cap *= 2) * sizeof(*v));
        b = &v[(*n)++];
        memset(b, 0, sizeof(*b));
        b->f = -1;
        b->kind = -1;
        if (strncmp(at, "<rect data-f=\"", 14) == 0)
            b->f = strtol(at + 14, NULL, 10);
        if ((q = strstr(at, "data-t=\"")) && q < close)
            snprintf(b->note, sizeof(b->note), "%.*s", (int)strcspn(q + 8, "\""), q + 8);
        ASSERT_EQ_INT(sscanf(strstr(at, " x=\""), " x=\"%llu\" y=\"%u\" width=\"%llu\"", &b->s, &y,
                             &b->n), 3);
        b->x = x0 + (double)b->s / total * width;
        b->width = (double)b->n / total * width;
        b->y = y0 + y;
        ASSERT_EQ_INT(sscanf(strstr(at, "fill=\"#") + 7, "%6[0-9a-f]", fill), 1);
        sscanf(fill, "%2x%2x%2x", (unsigned *)&b->r, (unsigned *)&b->g, (unsigned *)&b->b);
        svg_text_at(svg, b->x, b->y, b->text, sizeof(b->text));
        if (b->f < 0) {
            snprintf(b->label, sizeof(b->label), "all");
            snprintf(b->shown, sizeof(b->shown), "all");
        } else {
            ASSERT_TRUE((size_t)b->f < nf);
            svg_label(&F[b->f], P, 1, b->label, sizeof(b->label));
            svg_label(&F[b->f], P, 0, b->shown, sizeof(b->shown));
            b->kind = F[b->f].kind;
        }
    }
    free(F);
    free(P);
    return v;
}

#endif
