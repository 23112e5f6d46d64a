/*
 * `perfpy diff BASE NEW`: what changed between two profiles, each
 * normalised by its own total (diff.c: shares in percent of each
 * profile's samples, changes in percentage points):
 *
 *   flamegraph  the differential flame graph: NEW's call tree, each box
 *               as wide as its share of NEW, red where its share grew
 *               since BASE, blue where it shrank (the deeper the colour,
 *               the larger the change), its tooltip both shares
 *   html        that graph and the table of the functions whose share
 *               changed most
 *   table       the table as text: for a terminal, a pipe or a CI log
 *
 * A function's change is that of its own share (own time for a Python
 * function, self time for the others): doubling one function's work
 * raises its own share and lowers the others', while the total share of
 * its callers, which include it, may not move. Rows: by the size of that
 * change, then of the total share's. BASE is pp_write_opts.base.
 */
#include "output.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TEXT_ROWS 25
#define HTML_ROWS 200

static int cmp_change(const void *a, const void *b)
{
    const pp_diff_func *x = a, *y = b;
    double dx = fabs(x->new_own - x->base_own), dy = fabs(y->new_own - y->base_own);

    if (dx != dy)
        return dx > dy ? -1 : 1;
    dx = fabs(x->new_total - x->base_total);
    dy = fabs(y->new_total - y->base_total);
    if (dx != dy)
        return dx > dy ? -1 : 1;
    return strcmp(x->p->frames[x->frame].label, y->p->frames[y->frame].label);
}

/* "name (file)" for a Python function (its lines are not compared), its
 * file relative to its sys.path entry as it was matched; the label for the
 * others. l: the labels of the profile d names it from. */
static void func_name(char *buf, size_t cap, const pp_diff_func *d, const pp_labels *l)
{
    const pp_frame *f = &d->p->frames[d->frame];

    if (f->kind == PP_FRAME_PYTHON && *f->file)
        snprintf(buf, cap, "%s (%s)", f->name, l->rel[d->frame]);
    else
        snprintf(buf, cap, "%s", f->label);
}

/* The changes, sorted, and both profiles' labels (l[0] BASE's, l[1] NEW's). */
static int changes(const pp_write_opts *o, const pp_profile *nw, pp_diff_func **v, uint32_t *n,
                   pp_labels *l)
{
    if (!o || !o->base)
        return -EINVAL;
    if (pp_labels_make(o->base, &l[0]) < 0)
        return -ENOMEM;
    if (pp_labels_make(nw, &l[1]) < 0 || pp_diff_functions(o->base, nw, v, n) < 0) {
        pp_labels_free(&l[0]);
        pp_labels_free(&l[1]);
        return -ENOMEM;
    }
    qsort(*v, *n, sizeof(**v), cmp_change);
    return 0;
}

static void changes_free(pp_diff_func *v, pp_labels *l)
{
    free(v);
    pp_labels_free(&l[0]);
    pp_labels_free(&l[1]);
}

static const char how[] =
    "each profile's numbers are shares of its own samples, each process's of its own (the "
    "processes of one name together); a change is NEW's share minus BASE's, in percentage "
    "points; own = own time (Python) or self time (native)";

int pp_write_diff_table(const pp_profile *nw, FILE *out, const pp_write_opts *o)
{
    pp_diff_func *v;
    pp_labels l[2];
    uint32_t n, rows;
    char name[1024];

    if (changes(o, nw, &v, &n, l) < 0)
        return o && o->base ? -ENOMEM : -EINVAL;
    rows = o->rows > 0 ? (uint32_t)o->rows : TEXT_ROWS;
    fprintf(out, "perfpy diff: %llu samples in BASE, %llu in NEW (%s)\n"
            "  Δ own  base own   new own   Δ total  base tot   new tot  function\n",
            (unsigned long long)o->base->samples, (unsigned long long)nw->samples, how);
    for (uint32_t i = 0; i < n && i < rows; i++) {
        const pp_diff_func *d = &v[i];
        func_name(name, sizeof(name), d, &l[d->p == nw]);
        fprintf(out, "%+7.1f  %7.1f%%  %7.1f%%  %+8.1f  %7.1f%%  %7.1f%%  %s\n",
                d->new_own - d->base_own, d->base_own, d->new_own, d->new_total - d->base_total,
                d->base_total, d->new_total, name);
    }
    if (n > rows)
        fprintf(out, "  ... and %u more functions\n", n - rows);
    changes_free(v, l);
    return pp__stream_status(out);
}

/* ---- the differential flame graph ----------------------------------------- */

typedef struct paint_ctx {
    const pp_tree *t;
    const double *base, *now;      /* per node: BASE's share, NEW's */
    double all, scale;             /* NEW's total; the change drawn deepest */
} paint_ctx;

static void diff_box(void *arg, uint32_t i, char *fill, size_t fcap, char *note, size_t ncap)
{
    const paint_ctx *c = arg;
    double share = c->now[i];
    double d = share - c->base[i], k = fabs(d) / c->scale;
    int deep = (int)(180 * (k > 1 ? 1 : k));

    if (fabs(d) < 0.05)
        snprintf(fill, fcap, "#e1ded4");
    else if (d > 0)
        snprintf(fill, fcap, "#ff%02x%02x", 225 - deep, 215 - deep);
    else
        snprintf(fill, fcap, "#%02x%02xff", 215 - deep, 225 - deep / 2);
    snprintf(note, ncap, "%.2f%% now, %.2f%% before: %+.2f points", share, c->base[i], d);
}

static int diff_svg(const pp_profile *nw, FILE *out, const pp_write_opts *o, int standalone)
{
    pp_tree t;
    double *base = NULL, *now = NULL;
    paint_ctx c;
    pp__paint paint;
    char subtitle[160];
    int rc;

    if (!o || !o->base)
        return -EINVAL;
    if ((rc = pp_tree_build(nw, &t)) < 0)
        return rc;
    if ((rc = pp_diff_tree(o->base, nw, &t, &base, &now)) < 0) {
        pp_tree_free(&t);
        return rc;
    }
    c = (paint_ctx){&t, base, now, t.nodes[0].total ? (double)t.nodes[0].total : 1.0, 1.0};
    for (uint32_t i = 1; i < t.n; i++) {     /* the deepest colour: the largest change */
        double d = fabs(now[i] - base[i]);
        if (d > c.scale)
            c.scale = d;
    }
    snprintf(subtitle, sizeof(subtitle), "red grew, blue shrank since BASE (%llu samples; "
             "NEW %llu)", (unsigned long long)o->base->samples, (unsigned long long)nw->samples);
    paint = (pp__paint){diff_box, &c, subtitle};
    rc = pp__svg(nw, out, o, standalone, &paint);
    free(base);
    free(now);
    pp_tree_free(&t);
    return rc;
}

int pp_write_diff_flamegraph(const pp_profile *nw, FILE *out, const pp_write_opts *o)
{
    return diff_svg(nw, out, o, 1);
}

static const char style[] =
    "body{font-family:system-ui,sans-serif;margin:16px;color:#222;background:#fff}\n"
    "h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:20px 0 6px}\n"
    ".meta{color:#555;font-size:13px;margin-bottom:8px}#graph{border:1px solid #ddd}\n"
    "table{border-collapse:collapse;font-size:13px}td,th{padding:3px 8px;border-bottom:1px solid #eee}\n"
    "th{background:#f4f4f0;text-align:right}th.l,td.l{text-align:left}\n"
    "td{text-align:right;font-variant-numeric:tabular-nums}td.up{color:#b00}td.down{color:#00b}\n";

int pp_write_diff_html(const pp_profile *nw, FILE *out, const pp_write_opts *o)
{
    pp_diff_func *v;
    pp_labels l[2];
    uint32_t n;
    char name[1024];
    int rc;

    if (changes(o, nw, &v, &n, l) < 0)
        return o && o->base ? -ENOMEM : -EINVAL;
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<title>perfpy diff: ", out);
    pp__xml_text(out, pp__title(nw, o));
    fprintf(out, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1>", style);
    pp__xml_text(out, pp__title(nw, o));
    fprintf(out, " &middot; what changed</h1>\n<div class=\"meta\">BASE %llu samples, NEW %llu "
            "samples &middot; %s &middot; made by perfpy</div>\n<div id=\"graph\">\n",
            (unsigned long long)o->base->samples, (unsigned long long)nw->samples, how);
    if ((rc = diff_svg(nw, out, o, 0)) < 0)
        goto out;
    fputs("</div>\n<h2>The functions whose share changed most</h2>\n<table id=\"changes\">"
          "<thead><tr><th>&Delta; own</th><th>base own</th><th>new own</th><th>&Delta; total</th>"
          "<th>base total</th><th>new total</th><th class=\"l\">function</th></tr></thead>"
          "<tbody>\n", out);
    for (uint32_t i = 0; i < n && i < (o->rows > 0 ? (uint32_t)o->rows : HTML_ROWS); i++) {
        const pp_diff_func *d = &v[i];
        double dd = d->new_own - d->base_own, dt = d->new_total - d->base_total;
        func_name(name, sizeof(name), d, &l[d->p == nw]);
        fprintf(out, "<tr><td class=\"%s\">%+.1f</td><td>%.1f%%</td><td>%.1f%%</td>"
                "<td class=\"%s\">%+.1f</td><td>%.1f%%</td><td>%.1f%%</td><td class=\"l\">",
                dd > 0 ? "up" : dd < 0 ? "down" : "", dd, d->base_own, d->new_own,
                dt > 0 ? "up" : dt < 0 ? "down" : "", dt, d->base_total, d->new_total);
        pp__xml_text(out, name);
        fputs("</td></tr>\n", out);
    }
    fputs("</tbody></table>\n</body>\n</html>\n", out);
    rc = pp__stream_status(out);
out:
    changes_free(v, l);
    return rc;
}
