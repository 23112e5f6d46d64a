/*
 * The line heatmap: one self-contained page of the program's source files,
 * each line with its own and total share of the samples, the hottest
 * functions listed first, each a link to its hottest line:
 *
 *     +----------------------+-------------------------------------------+
 *     | Hottest functions    | /app/x.py                                 |
 *     |  own  total          |   5  0.2%  12.0%  def work(n):            |
 *     |  87%  87%  work  ----+-> 7 87.0%  87.0%      total += sorted(d)  |
 *     |  ...                 |   ...                                     |
 *     | Files not shown      |                                           |
 *     |  <frozen ...>: not a file on disk                                |
 *     +----------------------+-------------------------------------------+
 *
 * A line's own share: the samples whose innermost Python frame was
 * executing it; its total: those with it anywhere on the stack (counted
 * once per frame). Lines are the executing lines sample and read modes
 * record; the trampoline modes know only each function's def line, so
 * there every sample of a function sits on its def line (the page says
 * so). Files are read when the page is written (regular files up to
 * MAX_FILE bytes); one that cannot be read is listed with the reason, never
 * an error. The numbers are also in a JSON block (id "heatdata") for tools.
 *
 * The program's own files come first (not a library's or the standard
 * library's: paths.c), each group by its lines' own samples, and the page
 * opens on the first file's hottest line: every thread's stack holds
 * threading.py's run(), which by total would come first. A file is named
 * by its path relative to its sys.path entry, its full path the tooltip.
 */
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_FILE (4u << 20)
#define MAX_FILES 60
#define TOP_FUNCS 40

typedef struct hline {
    uint32_t file;                 /* index into the files */
    int line;
    uint64_t own, total;
} hline;

typedef struct hfile {
    const char *path;
    int program;                   /* the program's own file (paths.c), not a library's */
    uint64_t own;                  /* its lines' own samples */
    uint64_t weight;               /* its hottest line's total */
    uint64_t hottest;              /* its hottest line's own samples */
    int hot_line;                  /* that line (by total when none has own samples) */
    const char *why;               /* why it is not shown; NULL: it is */
} hfile;

static int cmp_line(const void *a, const void *b)
{
    const hline *x = a, *y = b;

    if (x->file != y->file)
        return (x->file > y->file) - (x->file < y->file);
    return (x->line > y->line) - (x->line < y->line);
}

/* The lines of the Python frames with samples, merged by (file, line),
 * sorted; the files in *files (first-seen order). */
static hline *collect(const pp_profile *p, const pp_func_stat *st, size_t *n, hfile **files,
                      uint32_t *nfiles)
{
    hline *v = malloc((p->nframes ? p->nframes : 1) * sizeof(*v));
    hfile *f = calloc(p->nframes ? p->nframes : 1, sizeof(*f));
    size_t k = 0, m = 0;
    uint32_t nf = 0;

    if (!v || !f) {
        free(v);
        free(f);
        return NULL;
    }
    for (uint32_t i = 0; i < p->nframes; i++) {
        const pp_frame *fr = &p->frames[i];
        uint32_t j;
        if (fr->kind != PP_FRAME_PYTHON || !st[i].total || !*fr->file)
            continue;
        for (j = 0; j < nf && strcmp(f[j].path, fr->file) != 0; j++)
            ;
        if (j == nf) {
            size_t cut;
            f[nf].path = fr->file;
            f[nf++].program = pp_path_kind_of(fr->file, &cut) == PP_PATH_PROGRAM;
        }
        v[k++] = (hline){j, fr->line, st[i].own, st[i].total};
    }
    qsort(v, k, sizeof(*v), cmp_line);
    for (size_t i = 0; i < k; i++) {           /* merge equal (file, line) */
        if (m && v[m - 1].file == v[i].file && v[m - 1].line == v[i].line) {
            v[m - 1].own += v[i].own;
            v[m - 1].total += v[i].total;
        } else {
            v[m++] = v[i];
        }
    }
    for (size_t i = 0; i < m; i++) {
        hfile *h = &f[v[i].file];
        h->own += v[i].own;
        if (v[i].total > h->weight) {
            h->weight = v[i].total;
            if (!h->hottest)
                h->hot_line = v[i].line;
        }
        if (v[i].own > h->hottest) {
            h->hottest = v[i].own;
            h->hot_line = v[i].line;
        }
    }
    *n = m;
    *files = f;
    *nfiles = nf;
    return v;
}

/* The whole file at path (NUL-terminated, malloc'ed), or NULL with why. */
static char *read_source(const char *path, const char **why)
{
    struct stat sb;
    char *buf;
    size_t got = 0;
    int fd;

    if (path[0] == '<') {
        *why = "not a file on disk";
        return NULL;
    }
    if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)) < 0) {
        *why = errno == ENOENT ? "no such file" : errno == EACCES ? "permission denied"
               : "cannot be opened";
        return NULL;
    }
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        *why = "not a regular file";
        return NULL;
    }
    if ((uint64_t)sb.st_size > MAX_FILE) {
        close(fd);
        *why = "larger than 4 MiB";
        return NULL;
    }
    if (!(buf = malloc((size_t)sb.st_size + 1))) {
        close(fd);
        *why = "out of memory";
        return NULL;
    }
    while (got < (size_t)sb.st_size) {
        ssize_t r = read(fd, buf + got, (size_t)sb.st_size - got);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    buf[got] = '\0';
    return buf;
}

static const char style[] =
    "body{font-family:system-ui,sans-serif;margin:0;color:#222;background:#fff}\n"
    "header{padding:10px 16px;border-bottom:1px solid #ddd}h1{font-size:19px;margin:0}\n"
    ".meta{color:#555;font-size:13px;margin-top:3px}\n"
    "#wrap{display:flex;height:calc(100vh - 62px)}\n"
    "#side{width:360px;overflow:auto;border-right:1px solid #ddd;padding:8px;font-size:13px}\n"
    "#main{flex:1;overflow:auto;padding:0 12px 40px}\n"
    "h2{font-size:14px;margin:16px 0 4px;position:sticky;top:0;background:#fff;padding:4px 0}\n"
    "table{border-collapse:collapse}td,th{padding:1px 6px;text-align:left}\n"
    "#side td.n,#side th.n{text-align:right;font-variant-numeric:tabular-nums}\n"
    "#side a{color:#0a4f8a;text-decoration:none}#side a:hover{text-decoration:underline}\n"
    "table.src{font:12px/1.45 ui-monospace,SFMono-Regular,Menlo,monospace;width:100%}\n"
    "table.src td.ln{color:#999;text-align:right;user-select:none;width:4em;white-space:pre}\n"
    "table.src td{vertical-align:top}\n"
    "table.src td.p{text-align:right;width:4.5em;color:#444;font-variant-numeric:tabular-nums}\n"
    "table.src td.c{white-space:pre}table.src tr:target{outline:2px solid #d33}\n"
    "table.src tr{scroll-margin-top:30vh}\n"
    "ul.gone{padding-left:18px;color:#666}\n";

static double share(uint64_t v, uint64_t all)
{
    return all ? 100.0 * (double)v / (double)all : 0.0;
}

/* The rows of a run of lines without samples, first..last: one row, its
 * numbers and its text each one cell of lines (a page of 36,000 rows, one
 * per line of sixty files, took Chromium 8 s to open; the same text in a
 * row per run of cold lines, under a second). */
static void cold_rows(FILE *out, uint32_t fi, int first, int last, const char *text, size_t len)
{
    char *copy;

    if (first > last)
        return;
    fprintf(out, "<tr id=\"f%u-L%d\"><td class=\"ln\">", fi, first);
    for (int line = first; line <= last; line++)
        fprintf(out, line < last ? "%d\n" : "%d", line);
    fputs("</td><td class=\"p\"></td><td class=\"p\"></td><td class=\"c\">", out);
    for (const char *end = text + len, *nl; text <= end; text = nl + 1) {
        nl = memchr(text, '\n', (size_t)(end - text));
        if (!nl)
            nl = end;
        if ((copy = strndup(text, (size_t)(nl - text)))) {
            pp__xml_text(out, copy);          /* each line escaped, the newlines kept */
            free(copy);
        }
        if (nl < end)
            fputc('\n', out);
    }
    fputs("</td></tr>\n", out);
}

/* The line rows of file fi: each source line with samples, its shares and
 * its heat; the lines between in runs. */
static void file_rows(FILE *out, const char *src, uint32_t fi, const hline *v, size_t n,
                      uint64_t all, uint64_t hottest)
{
    size_t at = 0;
    const char *s = src, *cold = src, *end = src;
    int cold_from = 1, last = 0;

    while (at < n && v[at].file != fi)
        at++;
    for (int line = 1; *s || line == 1; line++) {
        const char *nl = strchr(s, '\n');
        size_t len = nl ? (size_t)(nl - s) : strlen(s);
        last = line;
        end = s + len;
        while (at < n && v[at].file == fi && v[at].line < line)
            at++;
        if (at < n && v[at].file == fi && v[at].line == line) {
            /* own time is the heat (orange to red); a line only on the
             * stack (a call) is pale */
            double heat = hottest ? (double)v[at].own / (double)hottest : 0;
            char *text = strndup(s, len);
            cold_rows(out, fi, cold_from, line - 1, cold, s > cold ? (size_t)(s - 1 - cold) : 0);
            fprintf(out, "<tr id=\"f%u-L%d\" style=\"background:rgba(255,%d,0,%.2f)\">"
                    "<td class=\"ln\">%d</td><td class=\"p\">%.1f%%</td><td class=\"p\">%.1f%%"
                    "</td><td class=\"c\">", fi, line, (int)(210 - 150 * heat),
                    v[at].own ? 0.18 + 0.6 * heat : 0.08, line, share(v[at].own, all),
                    share(v[at].total, all));
            pp__xml_text(out, text ? text : "");
            free(text);
            fputs("</td></tr>\n", out);
            cold_from = line + 1;
            cold = nl ? nl + 1 : end;
        }
        if (!nl)
            break;
        s = nl + 1;
    }
    cold_rows(out, fi, cold_from, last, cold, end > cold ? (size_t)(end - cold) : 0);
}

/* The file and line where function f (of frames sharing its name and
 * file) is hottest by own samples. */
static int hot_line(const pp_profile *p, const pp_func_stat *st, uint32_t frame)
{
    const pp_frame *f = &p->frames[frame];
    uint64_t best = 0;
    int line = f->line;

    for (uint32_t i = 0; i < p->nframes; i++) {
        const pp_frame *g = &p->frames[i];
        if (g->kind == PP_FRAME_PYTHON && st[i].own > best && !strcmp(g->name, f->name) &&
            !strcmp(g->file, f->file)) {
            best = st[i].own;
            line = g->line;
        }
    }
    return line;
}

static int cmp_own(const void *a, const void *b)
{
    const pp_func *x = a, *y = b;

    if (x->own != y->own)
        return x->own > y->own ? -1 : 1;
    return (x->frame > y->frame) - (x->frame < y->frame);
}

/* The files in the order the page shows them: the program's own first
 * (the page opens on its hottest, not on threading.py, whose run() every
 * thread's stack holds), each kind by the own samples of its lines, then
 * by its hottest line's total. */
static int cmp_file(const void *a, const void *b, void *ctx)
{
    const hfile *f = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

    if (f[x].program != f[y].program)
        return f[x].program ? -1 : 1;
    if (f[x].own != f[y].own)
        return f[x].own > f[y].own ? -1 : 1;
    if (f[x].weight != f[y].weight)
        return f[x].weight > f[y].weight ? -1 : 1;
    return (x > y) - (x < y);
}

static uint32_t file_index(const hfile *f, uint32_t nf, const char *path)
{
    for (uint32_t i = 0; i < nf; i++)
        if (strcmp(f[i].path, path) == 0)
            return i;
    return PP_NONE;
}

static void side(FILE *out, const pp_profile *p, const pp_func_stat *st, const hfile *files,
                 uint32_t nf, uint64_t all)
{
    pp_func *v;
    uint32_t n, shown = 0;

    fputs("<div id=\"side\"><b>Hottest functions</b> (own, total)<table>", out);
    if (pp_profile_functions(p, !p->exec_lines, &v, &n) == 0) {
        qsort(v, n, sizeof(*v), cmp_own);
        for (uint32_t i = 0; i < n && shown < TOP_FUNCS; i++) {
            const pp_frame *f = &p->frames[v[i].frame];
            uint32_t fi = file_index(files, nf, f->file);
            if (f->kind != PP_FRAME_PYTHON || !v[i].own || fi == PP_NONE)
                continue;
            fprintf(out, "<tr><td class=\"n\">%.1f%%</td><td class=\"n\">%.1f%%</td><td>",
                    share(v[i].own, all), share(v[i].total, all));
            if (!files[fi].why)             /* a link to its hottest line */
                fprintf(out, "<a href=\"#f%u-L%d\" ", fi, hot_line(p, st, v[i].frame));
            else
                fputs("<span ", out);
            fputs("title=\"", out);
            pp__xml_text(out, f->file);
            fputs("\">", out);
            pp__xml_text(out, f->name);
            fputs(files[fi].why ? "</span></td></tr>\n" : "</a></td></tr>\n", out);
            shown++;
        }
        free(v);
    }
    fputs("</table>\n", out);
}

static void json_lines(FILE *out, const hfile *files, uint32_t nf, const hline *v, size_t n,
                       uint64_t all)
{
    fprintf(out, "<script type=\"application/json\" id=\"heatdata\">{\"total\":%llu,\"files\":[",
            (unsigned long long)all);
    for (uint32_t fi = 0; fi < nf; fi++) {
        int first = 1;
        fputs(fi ? ",\n{\"path\":\"" : "{\"path\":\"", out);
        pp__json_text(out, files[fi].path);
        fputs("\",\"lines\":{", out);
        for (size_t i = 0; i < n; i++)
            if (v[i].file == fi) {
                fprintf(out, "%s\"%d\":[%llu,%llu]", first ? "" : ",", v[i].line,
                        (unsigned long long)v[i].own, (unsigned long long)v[i].total);
                first = 0;
            }
        fputs("}}", out);
    }
    fputs("]}</script>\n", out);
}

int pp_write_heatmap(const pp_profile *p, FILE *out, const pp_write_opts *o)
{
    pp_func_stat *st = pp_profile_func_stats(p);
    uint64_t all = pp_profile_value_total(p);
    hline *v = NULL;
    hfile *files = NULL;
    uint32_t nf = 0, *order = NULL, opened = PP_NONE;
    pp_path_roots roots;
    uint64_t hottest = 0;          /* the hottest line's own samples: the heat's scale */
    size_t n = 0;
    int rc = -ENOMEM, gone = 0;

    if (pp_path_roots_find(p, &roots) < 0) {
        free(st);
        return -ENOMEM;
    }
    if (!st || !(v = collect(p, st, &n, &files, &nf)) ||
        !(order = malloc((nf ? nf : 1) * sizeof(*order))))
        goto out;
    for (uint32_t i = 0; i < nf; i++) {
        order[i] = i;
        if (files[i].hottest > hottest)
            hottest = files[i].hottest;
    }
    qsort_r(order, nf, sizeof(*order), cmp_file, files);
    fprintf(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<title>perfpy heatmap: ");
    pp__xml_text(out, pp__title(p, o));
    fprintf(out, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<header><h1>", style);
    pp__xml_text(out, pp__title(p, o));
    fprintf(out, " &middot; line heatmap</h1><div class=\"meta\">%llu samples",
            (unsigned long long)p->samples);
    if (p->time_last_ns > p->time_first_ns)
        fprintf(out, " over %.2f s", (double)(p->time_last_ns - p->time_first_ns) / 1e9);
    fputs(p->exec_lines ? " &middot; each line's own share (innermost Python frame executing it)"
                          " and total share (on the stack)"
                        : " &middot; these samples carry each function's def line, not the line "
                          "it was executing: every sample of a function is on its def line "
                          "(record with --mode sample or read for lines)", out);
    fputs(" &middot; made by perfpy</div></header>\n<div id=\"wrap\">\n", out);
    for (uint32_t k = 0; k < nf; k++) {               /* which files can be shown */
        hfile *f = &files[order[k]];
        char *src = k < MAX_FILES ? read_source(f->path, &f->why) : NULL;
        if (k >= MAX_FILES)
            f->why = "past the 60 hottest files";
        free(src);
    }
    side(out, p, st, files, nf, all);
    for (uint32_t k = 0; k < nf; k++) {               /* the files not shown, listed */
        const hfile *f = &files[order[k]];
        if (!f->why)
            continue;
        fputs(gone++ ? "<li>" : "<p><b>Files not shown</b></p><ul class=\"gone\"><li>", out);
        pp__xml_text(out, f->path);
        fputs(": ", out);
        pp__xml_text(out, f->why);
        fputs("</li>\n", out);
    }
    fputs(gone ? "</ul></div>\n<div id=\"main\">\n" : "</div>\n<div id=\"main\">\n", out);
    for (uint32_t k = 0; k < nf && k < MAX_FILES; k++) {
        uint32_t fi = order[k];
        const char *why;
        char *src = files[fi].why ? NULL : read_source(files[fi].path, &why);
        if (!src)
            continue;
        fprintf(out, "<h2 id=\"f%u\" title=\"", fi);
        pp__xml_text(out, files[fi].path);
        fputs("\">", out);
        pp__xml_text(out, pp_path_rel(&roots, files[fi].path));
        fputs("</h2>\n<table class=\"src\">\n", out);
        if (opened == PP_NONE)
            opened = fi;
        file_rows(out, src, fi, v, n, all, hottest);
        fputs("</table>\n", out);
        free(src);
    }
    fputs("</div></div>\n", out);
    json_lines(out, files, nf, v, n, all);
    if (opened != PP_NONE)         /* it opens on the first file's hottest line */
        fprintf(out, "<script>if(!location.hash){var e=document.getElementById('f%u-L%d');"
                "if(e)e.scrollIntoView({block:'center'});}</script>\n", opened,
                files[opened].hot_line);
    fputs("</body>\n</html>\n", out);
    rc = pp__stream_status(out);
out:
    pp_path_roots_free(&roots);
    free(st);
    free(v);
    free(files);
    free(order);
    return rc;
}
