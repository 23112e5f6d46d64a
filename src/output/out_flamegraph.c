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
 * Big profiles must open fast (a server's: thousands of threads, millions
 * of samples), so the file holds only what a viewer draws, each thing once:
 *
 *   - a box narrower than 0.1% of the whole (1.2 px) is left out, as py-spy
 *     does (flamegraph.pl's --minwidth): its time stays in its parent's
 *     width and tooltip. At most a thousand boxes a level, whatever the
 *     recording; a 12-16 MB SVG of a server's 495 threads took Chromium
 *     more than 150 s, and a box under two pixels shows nothing anyway.
 *   - the boxes are drawn in samples: an inner <svg id="ppbox"> whose
 *     viewBox is the whole profile's samples wide (stretched to 1180 px),
 *     each box a <rect> at its first sample, as wide as its samples, its
 *     frame's number in data-f, 16 units a level (the height is CSS):
 *
 *       <rect data-f="7" x="120" y="48" width="33" fill="#4cb8a0"/>
 *
 *     Exact integers, no decimals, and a zoom is one new viewBox.
 *   - a box's label, where three characters fit, is a <text> in pixels
 *     beside the boxes (<g id="pplabels">), as much of it as fits.
 *   - the frames' names and files are in one table at the end, each once
 *     (F: [name, file, line, kind], P: [path, length of its directory
 *     part]), read by the embedded script: boxes show the file relative to
 *     its sys.path entry (paths.c), the tooltip (made when the pointer
 *     first rests on a box) and search the full path. Styles are shared
 *     CSS rules, not attributes.
 *
 * The script zooms (click a box: the viewBox becomes its samples, its
 * ancestors half-drawn across the width, the labels made again; "Reset
 * Zoom"), searches ("Search": a regular expression over the full labels;
 * matches turn magenta and their share is shown) and shows the hovered
 * box's tooltip at the bottom, with no external resource. The file is well-formed XML whatever the names
 * hold (out_util.c escapes them).
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
#define MIN_SHARE 0.001   /* boxes narrower than this share of the whole are left out */

static const char script[] =
    "var svg=document.getElementById('ppfg'),box=document.getElementById('ppbox');\n"
    "if(!svg||!box)return;\n"
    "var NS='http://www.w3.org/2000/svg';function A(e,k){return e.getAttribute(k);}\n"
    "var W=+A(box,'width'),X0=+A(box,'x'),Y0=+A(box,'y'),H=+A(box,'height'),T=+A(svg,'data-total')||1;\n"
    "var boxes=[].slice.call(box.querySelectorAll('rect')),labels=document.getElementById('pplabels');\n"
    "var details=document.getElementById('ppdetails'),matched=document.getElementById('ppmatched');\n"
    "var unzoom=document.getElementById('ppunzoom'),zoomed=boxes.length?boxes[0]:null,searchRe=null;\n"
    "function num(g,k){return +A(g,k);}\n"
    "function name(i,full){var f=F[i];if(f[3]||f[1]<0)return f[0];var p=P[f[1]];\n"
    " return f[0]+' ('+(full?p[0]:p[0].slice(p[1]))+(f[2]>0?':'+f[2]:'')+')';}\n"
    "function label(g,full){var i=A(g,'data-f');return i===null?'all':name(+i,full);}\n"
    "function tip(g){var n=num(g,'width'),t=A(g,'data-t');\n"
    " return label(g,1)+' ('+(t!==null?t:n+' sample'+(n==1?'':'s')+', '+(100*n/T).toFixed(2)+'%')+')';}\n"
    "function relabel(zs,zn,zy){var frag=document.createDocumentFragment();\n"
    " boxes.forEach(function(g){var s=num(g,'x'),n=num(g,'width'),y=num(g,'y'),x,w,c,l,t;\n"
    "  if(y<zy){if(s>zs||s+n<zs+zn)return;x=0;w=W;}\n"
    "  else{if(s<zs||s+n>zs+zn)return;x=(s-zs)/zn*W;w=n/zn*W;}\n"
    "  c=Math.floor((w-6)/7);if(c<3)return;l=label(g,0);\n"
    "  t=document.createElementNS(NS,'text');t.setAttribute('x',(X0+x+3).toFixed(1));\n"
    "  t.setAttribute('y',(Y0+y+11.5).toFixed(1));t.textContent=l.length<=c?l:l.slice(0,c-2)+'..';\n"
    "  frag.appendChild(t);});\n"
    " labels.textContent='';labels.appendChild(frag);}\n"
    "function zoom(z){zoomed=z;var zs=num(z,'x'),zn=num(z,'width'),zy=num(z,'y');\n"
    " box.setAttribute('viewBox',zs+' 0 '+zn+' '+H);\n"
    " boxes.forEach(function(g){var s=num(g,'x'),n=num(g,'width');\n"
    "  if(num(g,'y')<zy&&s<=zs&&s+n>=zs+zn)g.classList.add('pa');else g.classList.remove('pa');});\n"
    " relabel(zs,zn,zy);\n"
    " if(unzoom)unzoom.style.opacity=z===boxes[0]?'0':'1';\n"
    " if(searchRe)search(searchRe);}\n"
    "function search(re){searchRe=re;var ranges=[],zs=num(zoomed,'x'),zn=num(zoomed,'width');\n"
    " boxes.forEach(function(g){\n"
    "  if(!g.hasAttribute('data-fill'))g.setAttribute('data-fill',A(g,'fill'));\n"
    "  if(re&&re.test(label(g,1))){g.setAttribute('fill','#e600e6');ranges.push([num(g,'x'),num(g,'x')+num(g,'width')]);}\n"
    "  else g.setAttribute('fill',A(g,'data-fill'));});\n"
    " ranges.sort(function(a,b){return a[0]-b[0]||b[1]-a[1];});var cov=0,end=-1;\n"
    " ranges.forEach(function(q){var a=Math.max(q[0],zs,end),b=Math.min(q[1],zs+zn);if(b>a)cov+=b-a;if(q[1]>end)end=q[1];});\n"
    " if(matched)matched.textContent=re?'Matched: '+(100*cov/zn).toFixed(1)+'%':'';}\n"
    "function ask(){var q=window.prompt('Search (regular expression):','');\n"
    " if(q===null)return;if(q===''){search(null);return;}\n"
    " try{search(new RegExp(q));}catch(e){if(matched)matched.textContent='bad regular expression';}}\n"
    "function target(e){return e.target.tagName==='rect'&&e.target.parentNode===box?e.target:null;}\n"
    "svg.addEventListener('click',function(e){var g=target(e);\n"
    " if(g){zoom(g);return;}if(e.target.id==='ppunzoom')zoom(boxes[0]);\n"
    " if(e.target.id==='ppsearch')ask();});\n"
    "svg.addEventListener('mouseover',function(e){var g=target(e),t;if(!g)return;\n"
    " if(!g.firstElementChild){t=document.createElementNS(NS,'title');t.textContent=tip(g);g.appendChild(t);}\n"
    " if(details)details.textContent=tip(g);});\n"
    "svg.addEventListener('mouseout',function(){if(details)details.textContent=' ';});\n"
    "window.perfpyFlame={zoom:zoom,search:search,reset:function(){if(boxes.length)zoom(boxes[0]);},\n"
    " frames:F,paths:P,name:name,tip:tip};\n"
    "})();\n";

static void color(const pp_frame *f, char *out, size_t cap)
{
    uint64_t h = pp__hash(f->name, strlen(f->name), 5);
    unsigned a = (unsigned)(h & 0xff), b = (unsigned)((h >> 8) & 0xff), r, g, bl;

    switch (f->kind) {
    case PP_FRAME_PYTHON:      /* green-blue */
        r = 60 + a % 60, g = 170 + b % 60, bl = 150 + a % 80;
        break;
    case PP_FRAME_KERNEL:      /* orange-brown */
        r = 200 + a % 40, g = 120 + b % 50, bl = 40 + a % 30;
        break;
    case PP_FRAME_MARKER:
        r = g = bl = 170 + a % 20;
        break;
    default:                   /* warm, flamegraph.pl's "hot" */
        r = 225 + a % 30, g = 80 + b % 130, bl = 40 + a % 40;
        break;
    }
    snprintf(out, cap, "#%02x%02x%02x", r, g, bl);
}

/* As much of label as fits width (cut on a character, ".." after), or
 * nothing (0) when not three characters do. */
static int fit_text(FILE *out, const char *label, double width)
{
    long n = (long)((width - 6) / CHAR_W);
    size_t len = strlen(label), i = 0;
    char *cut;

    if (n < 3)
        return 0;
    if ((long)len <= n) {
        pp__xml_text(out, label);
        return 1;
    }
    while (i < len && (long)i < n - 2) {
        int c = pp__utf8_len(label + i);
        i += c > 0 ? (size_t)c : 1;
    }
    if ((cut = strndup(label, i))) {
        pp__xml_text(out, cut);
        free(cut);
    }
    fputs("..", out);
    return 1;
}

/* Where each box goes, which are drawn, and the frame table they use. */
typedef struct layout {
    pp_tree t;
    pp_labels l;
    uint64_t *start;               /* per node: its first sample */
    uint64_t total;
    uint32_t *fid;                 /* per frame: its index in F, PP_NONE: not in it */
    uint32_t *order;               /* F's frames, in F's order */
    uint32_t nf;
    int every_frame;               /* F: every frame, and native ones' files too */
} layout;

static void layout_free(layout *L)
{
    pp_tree_free(&L->t);
    pp_labels_free(&L->l);
    free(L->start);
    free(L->fid);
    free(L->order);
}

static int drawn(const layout *L, uint32_t i)
{
    return (double)L->t.nodes[i].total >= MIN_SHARE * (double)L->total;
}

/* every_frame: F holds every frame, in frame order (the HTML page's table
 * names frames by their ids); else the frames of drawn boxes. */
static int layout_make(const pp_profile *p, layout *L, int every_frame)
{
    uint64_t *next;
    int rc;

    memset(L, 0, sizeof(*L));
    L->every_frame = every_frame;
    if ((rc = pp_tree_build(p, &L->t)) < 0)
        return rc;
    L->start = calloc(L->t.n, sizeof(*L->start));
    next = calloc(L->t.n, sizeof(*next));
    L->fid = malloc((p->nframes ? p->nframes : 1) * sizeof(*L->fid));
    L->order = malloc((p->nframes ? p->nframes : 1) * sizeof(*L->order));
    if (!L->start || !next || !L->fid || !L->order || pp_labels_make(p, &L->l) < 0) {
        free(next);
        return -ENOMEM;
    }
    L->total = L->t.nodes[0].total ? L->t.nodes[0].total : 1;
    memset(L->fid, 0xff, (p->nframes ? p->nframes : 1) * sizeof(*L->fid));
    for (uint32_t i = 0; every_frame && i < p->nframes; i++)
        L->order[L->fid[i] = L->nf++] = i;
    /* nodes are in preorder (parents first): one pass places every box */
    for (uint32_t i = 0; i < L->t.n; i++) {
        const pp_tree_node *n = &L->t.nodes[i];
        if (n->parent != PP_NONE) {
            L->start[i] = next[n->parent];
            next[n->parent] += n->total;
        }
        next[i] = L->start[i];
        if (n->frame != PP_NONE && L->fid[n->frame] == PP_NONE && drawn(L, i))
            L->order[L->fid[n->frame] = L->nf++] = n->frame;
    }
    free(next);
    return 0;
}

/* JSON string for a script in XML or HTML: '<', '>' and '&' escaped too,
 * so neither "]]>" nor "</script" can appear. */
static void script_str(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        const char *end = strpbrk(s, "<>&");
        size_t n = end ? (size_t)(end - s) : strlen(s);
        char *part = strndup(s, n);
        if (part) {
            pp__json_text(out, part);
            free(part);
        }
        s += n;
        if (!*s)
            break;
        fprintf(out, "\\u%04x", (unsigned char)*s);
    }
    fputc('"', out);
}

/* F and P: each frame of the layout once, each file once. */
static int frame_table(FILE *out, const pp_profile *p, const layout *L)
{
    const char **paths = malloc((L->nf ? L->nf : 1) * sizeof(*paths));
    uint32_t *pid = malloc((L->nf ? L->nf : 1) * sizeof(*pid)), np = 0;
    pp_htab index;

    if (!paths || !pid || pp__htab_init(&index, 64) < 0) {
        free(paths);
        free(pid);
        return -ENOMEM;
    }
    for (uint32_t k = 0; k < L->nf; k++) {           /* the files, each once */
        const pp_frame *f = &p->frames[L->order[k]];
        /* a native frame's library is for the page's table only */
        const char *file = f->kind == PP_FRAME_PYTHON || L->every_frame ? f->file : "";
        uint64_t h = pp__hash(file, strlen(file), 3);
        pp_htab_iter it;
        const uint32_t *slot;
        for (slot = pp__htab_first(&index, h, &it); slot && strcmp(paths[*slot], file);
             slot = pp__htab_next(&index, h, &it))
            ;
        if (!*file)
            pid[k] = PP_NONE;
        else if (slot)
            pid[k] = *slot;
        else if (pp__htab_insert(&index, h, np) == 0)
            paths[pid[k] = np++] = file;
        else
            pid[k] = PP_NONE;
    }
    fputs("(function(){\nvar F=[", out);
    for (uint32_t k = 0; k < L->nf; k++) {
        const pp_frame *f = &p->frames[L->order[k]];
        fputs(k ? (k % 8 ? ",[" : ",\n[") : "[", out);
        script_str(out, f->kind == PP_FRAME_PYTHON ? f->name : f->label);
        fprintf(out, ",%ld,%d,%d]", pid[k] == PP_NONE ? -1L : (long)pid[k], f->line, (int)f->kind);
    }
    fputs("],\nP=[", out);
    for (uint32_t k = 0; k < np; k++) {
        fputs(k ? ",\n[" : "[", out);
        script_str(out, paths[k]);
        fprintf(out, ",%zu]", (size_t)(pp_path_rel(&L->l.roots, paths[k]) - paths[k]));
    }
    fputs("];\n", out);
    pp__htab_free(&index);
    free(paths);
    free(pid);
    return 0;
}

/* One box: its frame, its samples (from its first to its last), its level,
 * its colour. */
static void box(FILE *out, const pp_profile *p, const layout *L, uint32_t i,
                const pp__paint *paint)
{
    const pp_tree_node *n = &L->t.nodes[i];
    char fill[32], note[128] = "";

    if (paint)
        paint->box(paint->ctx, i, fill, sizeof(fill), note, sizeof(note));
    else if (n->frame == PP_NONE)
        snprintf(fill, sizeof(fill), "#c8c8be");
    else
        color(&p->frames[n->frame], fill, sizeof(fill));
    fputs("<rect", out);
    if (n->frame != PP_NONE)
        fprintf(out, " data-f=\"%u\"", L->fid[n->frame]);
    if (note[0]) {
        fputs(" data-t=\"", out);
        pp__xml_text(out, note);
        fputc('"', out);
    }
    fprintf(out, " x=\"%llu\" y=\"%u\" width=\"%llu\" fill=\"%s\"/>\n",
            (unsigned long long)L->start[i], n->depth * FRAME_H, (unsigned long long)n->total,
            fill);
}

/* Box i's label in pixels, as much of it as fits, where three characters do. */
static void box_label(FILE *out, const layout *L, uint32_t i)
{
    const pp_tree_node *n = &L->t.nodes[i];
    double usable = SVG_WIDTH - 2 * PAD_X;
    double x = PAD_X + (double)L->start[i] / (double)L->total * usable;
    double w = (double)n->total / (double)L->total * usable;

    if ((w - 6) / CHAR_W < 3)
        return;
    fprintf(out, "<text x=\"%.1f\" y=\"%u.5\">", x + 3, PAD_TOP + n->depth * FRAME_H + 11);
    fit_text(out, n->frame == PP_NONE ? "all" : L->l.label[n->frame], w);
    fputs("</text>\n", out);
}

static void head(FILE *out, const pp_profile *p, const pp_write_opts *o, int standalone,
                 const pp__paint *paint, const layout *L)
{
    unsigned height = PAD_TOP + (L->t.max_depth + 1) * FRAME_H + PAD_BOTTOM;
    char height_attr[32];

    /* A standalone SVG states its height too: with a width alone a browser
     * fits the viewBox into the window, and a deep graph's text shrinks to
     * a few pixels; with both it keeps 12 px text and scrolls. Inside the
     * HTML report (width 100%) the height follows the viewBox's ratio. */
    snprintf(height_attr, sizeof(height_attr), " height=\"%u\"", height);
    if (standalone)
        fputs("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n", out);
    fprintf(out,
            "<svg version=\"1.1\" id=\"ppfg\" xmlns=\"http://www.w3.org/2000/svg\" "
            "width=\"%s\"%s viewBox=\"0 0 %d %u\" data-total=\"%llu\">\n",
            standalone ? "1200" : "100%", standalone ? height_attr : "", SVG_WIDTH, height,
            (unsigned long long)L->total);
    fputs("<style>\n"
          "#ppfg text{font-family:Verdana,sans-serif;font-size:12px;fill:#000}\n"
          "#pplabels text{pointer-events:none}\n"
          "#ppbox rect{height:15px;cursor:pointer}\n"
          "#ppbox rect:hover{stroke:#000;stroke-width:1px;vector-effect:non-scaling-stroke}\n"
          "#ppbox rect.pa{opacity:0.5}\n"
          "#ppfg .ctl{cursor:pointer;fill:#046}\n"
          "#ppfg .title{font-size:17px;text-anchor:middle}\n"
          "</style>\n", out);
    fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%u\" fill=\"#f8f8f4\"/>\n",
            SVG_WIDTH, height);
    fprintf(out, "<text class=\"title\" x=\"%d\" y=\"24\">", SVG_WIDTH / 2);
    pp__xml_text(out, pp__title(p, o));
    fputs(" — ", out);
    if (paint && paint->subtitle)
        pp__xml_text(out, paint->subtitle);
    else {
        char counted[192];

        pp__xml_text(out, pp__counted(p, counted, sizeof(counted)));
    }
    fprintf(out, "</text>\n<text id=\"ppunzoom\" class=\"ctl\" x=\"%d\" y=\"24\" "
            "style=\"opacity:0\">Reset Zoom</text>\n", PAD_X);
    fprintf(out, "<text id=\"ppsearch\" class=\"ctl\" x=\"%d\" y=\"24\" text-anchor=\"end\">"
            "Search</text>\n", SVG_WIDTH - PAD_X);
    fprintf(out, "<text id=\"ppmatched\" x=\"%d\" y=\"%u\" text-anchor=\"end\"> </text>\n",
            SVG_WIDTH - PAD_X, height - 10);
    fprintf(out, "<text id=\"ppdetails\" x=\"%d\" y=\"%u\"> </text>\n", PAD_X, height - 10);
}

int pp__svg(const pp_profile *p, FILE *out, const pp_write_opts *o, int standalone,
            const pp__paint *paint)
{
    layout L;
    int rc = layout_make(p, &L, !standalone);

    if (rc < 0) {
        layout_free(&L);
        return rc;
    }
    head(out, p, o, standalone, paint, &L);
    /* the boxes in samples, stretched to the width: 16 units a level */
    fprintf(out, "<svg id=\"ppbox\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%u\" "
            "viewBox=\"0 0 %llu %u\" preserveAspectRatio=\"none\">\n", PAD_X, PAD_TOP,
            SVG_WIDTH - 2 * PAD_X, (L.t.max_depth + 1) * FRAME_H, (unsigned long long)L.total,
            (L.t.max_depth + 1) * FRAME_H);
    for (uint32_t i = 0; i < L.t.n && !ferror(out); i++)
        if (drawn(&L, i))
            box(out, p, &L, i, paint);
    fputs("</svg>\n<g id=\"pplabels\">\n", out);
    for (uint32_t i = 0; i < L.t.n && !ferror(out); i++)
        if (drawn(&L, i))
            box_label(out, &L, i);
    fputs("</g>\n", out);
    /* last: the script looks the boxes up as it runs */
    fputs("<script type=\"text/ecmascript\"><![CDATA[\n", out);
    if ((rc = frame_table(out, p, &L)) == 0) {
        fprintf(out, "%s]]></script>\n</svg>\n", script);
        rc = pp__stream_status(out);
    }
    layout_free(&L);
    return rc;
}

int pp_write_flamegraph(const pp_profile *p, FILE *out, const pp_write_opts *o)
{
    return pp__svg(p, out, o, 1, NULL);
}
