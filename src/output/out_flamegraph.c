/*
 * The flame graph: a self-contained interactive SVG, in the manner of
 * Brendan Gregg's flamegraph.pl (written anew here): one box per call-tree
 * node, width proportional to samples, children sorted by name so the same
 * profile draws the same picture. The root ("all") is at the TOP, as py-spy
 * and speedscope draw it: the widest boxes, where a Python developer starts
 * reading, are on screen first however deep the stacks go.
 *
 *     | all                                      |   <- depth 0
 *     | <module> (x.py:1)                        |
 *     | bar (x.py:7)            | qux (x.py:20)  |
 *     | foo (x.py:1) |PyLong_Fro|                    <- depth 3
 *
 * Every box is a <g class="f"> holding a <title> (the tooltip: name,
 * samples, share), a <rect> and a <text>; its data-s/data-n/data-d
 * attributes give its first sample, its sample count and its depth, so the
 * embedded script can zoom (click a box; "Reset Zoom"), search ("Search":
 * a regular expression; matches turn magenta and their share is shown) and
 * show details on hover, without any external resource. The file is
 * well-formed XML whatever the names hold (out_util.c escapes them).
 * Boxes narrower than 0.1 px are left out, as flamegraph.pl does.
 *
 * Colours: Python frames green-blue, native frames warm, kernel frames
 * orange-brown, markers ([truncated], [unknown]) grey; the shade comes from
 * a hash of the name, so a function keeps its colour across profiles.
 */
#include "profile/htab.h"
#include "output.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define SVG_WIDTH 1200
#define FRAME_H 16
#define PAD_X 10
#define PAD_TOP 52
#define PAD_BOTTOM 30
#define CHAR_W 7.0        /* px per character of 12px Verdana, roughly */

static const char script[] =
    "(function(){\n"
    "var svg=document.getElementById('ppfg');\n"
    "if(!svg)return;\n"
    "var W=+svg.getAttribute('data-w'),X0=+svg.getAttribute('data-x0');\n"
    "var frames=[].slice.call(svg.querySelectorAll('g.f'));\n"
    "var details=document.getElementById('ppdetails'),matched=document.getElementById('ppmatched');\n"
    "var unzoom=document.getElementById('ppunzoom'),zoomed=frames.length?frames[0]:null,searchRe=null;\n"
    "function num(g,k){return +g.getAttribute('data-'+k);}\n"
    "function fit(g){var r=g.firstElementChild.nextElementSibling,t=r.nextElementSibling;\n"
    " var w=+r.getAttribute('width'),l=g.getAttribute('data-l'),n=Math.floor((w-6)/7);\n"
    " t.setAttribute('x',(+r.getAttribute('x')+3).toFixed(1));\n"
    " t.textContent=n<3?'':(l.length<=n?l:l.slice(0,n-2)+'..');}\n"
    "function zoom(z){zoomed=z;var zs=num(z,'s'),zn=num(z,'n'),zd=num(z,'d');\n"
    " frames.forEach(function(g){var s=num(g,'s'),n=num(g,'n'),d=num(g,'d'),r=g.firstElementChild.nextElementSibling,x,w;\n"
    "  if(d<zd){if(s<=zs&&s+n>=zs+zn){x=0;w=W;g.classList.add('pa');}else{g.style.display='none';return;}}\n"
    "  else if(s>=zs&&s+n<=zs+zn){x=(s-zs)/zn*W;w=n/zn*W;g.classList.remove('pa');}\n"
    "  else{g.style.display='none';return;}\n"
    "  if(w<0.1){g.style.display='none';return;}\n"
    "  g.style.display='';r.setAttribute('x',(X0+x).toFixed(2));r.setAttribute('width',w.toFixed(2));fit(g);});\n"
    " if(unzoom)unzoom.style.opacity=z===frames[0]?'0':'1';\n"
    " if(searchRe)search(searchRe);}\n"
    "function search(re){searchRe=re;var ranges=[],zs=num(zoomed,'s'),zn=num(zoomed,'n');\n"
    " frames.forEach(function(g){var r=g.firstElementChild.nextElementSibling;\n"
    "  if(!r.hasAttribute('data-fill'))r.setAttribute('data-fill',r.getAttribute('fill'));\n"
    "  if(re&&re.test(g.getAttribute('data-l'))){r.setAttribute('fill','rgb(230,0,230)');ranges.push([num(g,'s'),num(g,'s')+num(g,'n')]);}\n"
    "  else r.setAttribute('fill',r.getAttribute('data-fill'));});\n"
    " ranges.sort(function(a,b){return a[0]-b[0]||b[1]-a[1];});var cov=0,end=-1;\n"
    " ranges.forEach(function(q){var a=Math.max(q[0],zs,end),b=Math.min(q[1],zs+zn);if(b>a)cov+=b-a;if(q[1]>end)end=q[1];});\n"
    " if(matched)matched.textContent=re?'Matched: '+(100*cov/zn).toFixed(1)+'%':'';}\n"
    "function ask(){var q=window.prompt('Search (regular expression):','');\n"
    " if(q===null)return;if(q===''){search(null);return;}\n"
    " try{search(new RegExp(q));}catch(e){if(matched)matched.textContent='bad regular expression';}}\n"
    "svg.addEventListener('click',function(e){var g=e.target.closest?e.target.closest('g.f'):null;\n"
    " if(g){zoom(g);return;}if(e.target.id==='ppunzoom')zoom(frames[0]);\n"
    " if(e.target.id==='ppsearch')ask();});\n"
    "svg.addEventListener('mouseover',function(e){var g=e.target.closest?e.target.closest('g.f'):null;\n"
    " if(g&&details)details.textContent=g.firstElementChild.textContent;});\n"
    "svg.addEventListener('mouseout',function(){if(details)details.textContent=' ';});\n"
    "window.perfpyFlame={zoom:zoom,search:search,reset:function(){if(frames.length)zoom(frames[0]);}};\n"
    "})();\n";

static void color(const pp_frame *f, char *out, size_t cap)
{
    uint64_t h = pp__hash(f->name, strlen(f->name), 5);
    unsigned a = (unsigned)(h & 0xff), b = (unsigned)((h >> 8) & 0xff);

    switch (f->kind) {
    case PP_FRAME_PYTHON:      /* green-blue */
        snprintf(out, cap, "rgb(%u,%u,%u)", 60 + a % 60, 170 + b % 60, 150 + a % 80);
        break;
    case PP_FRAME_KERNEL:      /* orange-brown */
        snprintf(out, cap, "rgb(%u,%u,%u)", 200 + a % 40, 120 + b % 50, 40 + a % 30);
        break;
    case PP_FRAME_MARKER:
        snprintf(out, cap, "rgb(%u,%u,%u)", 170 + a % 20, 170 + a % 20, 170 + a % 20);
        break;
    default:                   /* warm, flamegraph.pl's "hot" */
        snprintf(out, cap, "rgb(%u,%u,%u)", 225 + a % 30, 80 + b % 130, 40 + a % 40);
        break;
    }
}

static void fit_text(FILE *out, const char *label, double width)
{
    long n = (long)((width - 6) / CHAR_W);
    size_t len = strlen(label), i = 0;

    if (n < 3)
        return;
    if ((long)len <= n) {
        pp__xml_text(out, label);
        return;
    }
    /* cut on a character boundary, then ".." */
    while (i < len && (long)i < n - 2) {
        int c = pp__utf8_len(label + i);
        i += c > 0 ? (size_t)c : 1;
    }
    {
        char *cut = strndup(label, i);
        if (cut) {
            pp__xml_text(out, cut);
            free(cut);
        }
    }
    fputs("..", out);
}

int pp__svg(const pp_profile *p, FILE *out, const pp_write_opts *o, int standalone,
            const pp__paint *paint)
{
    pp_tree t;
    uint64_t *start = NULL, *next = NULL;
    double usable = SVG_WIDTH - 2 * PAD_X, min_n;
    uint64_t total;
    unsigned height;
    int rc = pp_tree_build(p, &t);
    char fill[32], height_attr[32], note[128];

    if (rc < 0)
        return rc;
    start = calloc(t.n, sizeof(*start));
    next = calloc(t.n, sizeof(*next));
    if (!start || !next) {
        rc = -ENOMEM;
        goto out;
    }
    total = t.nodes[0].total ? t.nodes[0].total : 1;
    min_n = 0.1 * (double)total / usable;
    height = PAD_TOP + (t.max_depth + 1) * FRAME_H + PAD_BOTTOM;
    /* A standalone SVG states its height too: with a width alone a browser
     * fits the viewBox into the window, and a deep graph's text shrinks to
     * a few pixels; with both it keeps 12 px text and scrolls. Inside the
     * HTML report (width 100%) the height follows the viewBox's ratio. */
    snprintf(height_attr, sizeof(height_attr), " height=\"%u\"", height);
    if (standalone)
        fputs("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n", out);
    fprintf(out,
            "<svg version=\"1.1\" id=\"ppfg\" xmlns=\"http://www.w3.org/2000/svg\" "
            "width=\"%s\"%s viewBox=\"0 0 %d %u\" data-w=\"%.2f\" data-x0=\"%d\">\n",
            standalone ? "1200" : "100%", standalone ? height_attr : "", SVG_WIDTH, height,
            usable, PAD_X);
    fputs("<style>\n"
          "#ppfg text{font-family:Verdana,sans-serif;font-size:12px;fill:#000}\n"
          "#ppfg g.f text{pointer-events:none}\n"
          "#ppfg g.f:hover rect{stroke:#000;stroke-width:0.5}\n"
          "#ppfg g.f{cursor:pointer}\n"
          "#ppfg g.pa rect{opacity:0.5}\n"
          "#ppfg .ctl{cursor:pointer;fill:#046}\n"
          "#ppfg .title{font-size:17px;text-anchor:middle}\n"
          "</style>\n", out);
    fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%u\" fill=\"#f8f8f4\"/>\n",
            SVG_WIDTH, height);
    fprintf(out, "<text class=\"title\" x=\"%d\" y=\"24\">", SVG_WIDTH / 2);
    pp__xml_text(out, pp__title(p, o));
    if (paint && paint->subtitle) {
        fputs(" — ", out);
        pp__xml_text(out, paint->subtitle);
        fputs("</text>\n", out);
    } else {
        fprintf(out, " — %llu samples</text>\n", (unsigned long long)p->samples);
    }
    fprintf(out, "<text id=\"ppunzoom\" class=\"ctl\" x=\"%d\" y=\"24\" style=\"opacity:0\">Reset Zoom</text>\n",
            PAD_X);
    fprintf(out, "<text id=\"ppsearch\" class=\"ctl\" x=\"%d\" y=\"24\" text-anchor=\"end\">Search</text>\n",
            SVG_WIDTH - PAD_X);
    fprintf(out, "<text id=\"ppmatched\" x=\"%d\" y=\"%u\" text-anchor=\"end\"> </text>\n",
            SVG_WIDTH - PAD_X, height - 10);
    fprintf(out, "<text id=\"ppdetails\" x=\"%d\" y=\"%u\"> </text>\n", PAD_X, height - 10);
    /* Nodes are in preorder (parents first): one pass places every box. */
    for (uint32_t i = 0; i < t.n && !ferror(out); i++) {
        const pp_tree_node *n = &t.nodes[i];
        const char *label = n->frame == PP_NONE ? "all" : p->frames[n->frame].label;
        double x, w, y;

        if (n->parent != PP_NONE) {
            start[i] = next[n->parent];
            next[n->parent] += n->total;
        }
        next[i] = start[i];
        if ((double)n->total < min_n)
            continue;
        x = PAD_X + (double)start[i] / (double)total * usable;
        w = (double)n->total / (double)total * usable;
        y = PAD_TOP + (double)n->depth * FRAME_H;
        note[0] = '\0';
        if (paint)
            paint->box(paint->ctx, i, fill, sizeof(fill), note, sizeof(note));
        else if (n->frame == PP_NONE)
            snprintf(fill, sizeof(fill), "rgb(200,200,190)");
        else
            color(&p->frames[n->frame], fill, sizeof(fill));
        fprintf(out, "<g class=\"f\" data-s=\"%llu\" data-n=\"%llu\" data-d=\"%u\" data-l=\"",
                (unsigned long long)start[i], (unsigned long long)n->total, n->depth);
        pp__xml_text(out, label);
        fputs("\"><title>", out);
        pp__xml_text(out, label);
        if (note[0]) {
            fputs(" (", out);
            pp__xml_text(out, note);
            fputs(")</title>", out);
        } else {
            fprintf(out, " (%llu sample%s, %.2f%%)</title>", (unsigned long long)n->total,
                    n->total == 1 ? "" : "s", 100.0 * (double)n->total / (double)total);
        }
        fprintf(out, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" fill=\"%s\" rx=\"2\"/>",
                x, y, w, FRAME_H - 1, fill);
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\">", x + 3, y + 11.5);
        fit_text(out, label, w);
        fputs("</text></g>\n", out);
    }
    /* last: the script looks the boxes up as it runs */
    fprintf(out, "<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n</svg>\n", script);
    rc = pp__stream_status(out);
out:
    free(start);
    free(next);
    pp_tree_free(&t);
    return rc;
}

int pp_write_flamegraph(const pp_profile *p, FILE *out, const pp_write_opts *o)
{
    return pp__svg(p, out, o, 1, NULL);
}
