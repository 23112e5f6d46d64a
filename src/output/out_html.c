/*
 * The HTML report: one self-contained page (no network, no external file:
 * styles, script and data are inline) that a Python developer opens in a
 * browser:
 *
 *     +------------------------------------------------------------+
 *     | title, samples, lost events, truncated share               |
 *     | [search box] [reset zoom]                                  |
 *     | flame graph (the SVG of out_flamegraph.c, inline)          |
 *     | Functions: name | file | self | own | total   (sortable)   |
 *     +------------------------------------------------------------+
 *
 * Table columns: self = samples where the function is the leaf; own (Python
 * functions only) = samples where it is the innermost Python frame, that
 * is its own time including the interpreter and C code it runs directly;
 * total = samples where it is anywhere on the stack. Clicking a header
 * sorts by it; the search box filters the table and highlights the graph.
 */
#include "output.h"

#include <errno.h>
#include <stdlib.h>

static const char style[] =
    "body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:16px;color:#222;background:#fff}\n"
    "h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:20px 0 6px}\n"
    ".meta{color:#555;font-size:13px;margin-bottom:8px}\n"
    ".controls{margin:8px 0;display:flex;gap:8px;align-items:center}\n"
    ".controls input{width:320px;padding:4px}\n"
    "table{border-collapse:collapse;font-size:13px;width:100%}\n"
    "th,td{padding:3px 8px;border-bottom:1px solid #eee;text-align:left}\n"
    "th{cursor:pointer;background:#f4f4f0;position:sticky;top:0;user-select:none}\n"
    "th.num,td.num{text-align:right;font-variant-numeric:tabular-nums}\n"
    "td.file{color:#666;max-width:420px;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}\n"
    ".k-py{color:#0a6b4f}.k-native{color:#8a3b00}.k-kernel{color:#7a5200}.k-marker{color:#777}\n"
    "#graph{border:1px solid #ddd}\n";

static const char table_script[] =
    "(function(){\n"
    "var D=JSON.parse(document.getElementById('ppdata').textContent),G=window.perfpyFlame;\n"
    "var body=document.querySelector('#funcs tbody'),q=document.getElementById('q');\n"
    "var K=['py','native','kernel','marker'],key='total',desc=true,re=null,T=D.total||1;\n"
    "var rows=D.rows.map(function(r){var f=G.frames[r[0]];\n"
    " return [G.name(r[0],0),K[f[3]]||'native',f[1]<0?'':G.paths[f[1]][0],r[1],r[2],r[3],G.name(r[0],1)];});\n"
    "function pct(v){return v?(100*v/T).toFixed(1)+'%':'';}\n"
    "function num(v){return v?v+' ('+pct(v)+')':'\\u2013';}\n"
    "function render(){var shown=rows.filter(function(r){return !re||re.test(r[6]);});\n"
    " var i={name:0,file:2,self:3,own:4,total:5}[key];\n"
    " shown.sort(function(a,b){var x=a[i],y=b[i],c=typeof x==='number'?x-y:(x<y?-1:x>y?1:0);return desc?-c:c;});\n"
    " var frag=document.createDocumentFragment();\n"
    " shown.slice(0,3000).forEach(function(r){var tr=document.createElement('tr');\n"
    "  var cells=[[r[0],'k-'+r[1]],[r[2],'file'],[num(r[3]),'num'],[r[1]==='py'?num(r[4]):'','num'],[num(r[5]),'num']];\n"
    "  cells.forEach(function(c){var td=document.createElement('td');td.textContent=c[0];td.className=c[1];if(c[1]==='file')td.title=c[0];tr.appendChild(td);});\n"
    "  tr.title=r[6];frag.appendChild(tr);});\n"
    " body.textContent='';body.appendChild(frag);\n"
    " document.querySelectorAll('#funcs th').forEach(function(th){var k=th.getAttribute('data-k');\n"
    "  th.textContent=th.getAttribute('data-t')+(k===key?(desc?' \\u25bc':' \\u25b2'):'');});}\n"
    "document.querySelectorAll('#funcs th').forEach(function(th){th.addEventListener('click',function(){\n"
    " var k=th.getAttribute('data-k');if(k===key)desc=!desc;else{key=k;desc=k!=='name'&&k!=='file';}render();});});\n"
    "q.addEventListener('input',function(){var v=q.value;try{re=v?new RegExp(v):null;q.style.background='';}\n"
    " catch(e){q.style.background='#fdd';return;}render();G.search(re);});\n"
    "document.getElementById('reset').addEventListener('click',function(){G.reset();});\n"
    "render();\n"
    "})();\n";

int pp_write_html(const pp_profile *p, FILE *out, const pp_write_opts *o)
{
    pp_func_stat *st = pp_profile_func_stats(p);
    char counted[192];
    int rc;

    if (!st)
        return -ENOMEM;
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<title>perfpy: ", out);
    pp__xml_text(out, pp__title(p, o));
    fprintf(out, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1>", style);
    pp__xml_text(out, pp__title(p, o));
    fputs("</h1>\n<div class=\"meta\">", out);
    pp__xml_text(out, pp__counted(p, counted, sizeof(counted)));
    if (p->event[0] && p->value != PP_VALUE_EVENTS) {
        fputs(" of ", out);
        pp__xml_text(out, p->event);
    }
    if (p->time_last_ns > p->time_first_ns)
        fprintf(out, " over %.2f s", (double)(p->time_last_ns - p->time_first_ns) / 1e9);
    fprintf(out, " &middot; %llu lost events &middot; %.1f%% of stacks truncated"
            " &middot; made by perfpy</div>\n",
            (unsigned long long)p->lost,
            p->samples ? 100.0 * (double)p->truncated / (double)p->samples : 0.0);
    fputs("<div class=\"controls\"><input id=\"q\" type=\"search\" "
          "placeholder=\"Search functions (regular expression)\" aria-label=\"search\">"
          "<button id=\"reset\" type=\"button\">Reset zoom</button></div>\n"
          "<div id=\"graph\">\n", out);
    rc = pp__svg(p, out, o, 0, NULL);
    if (rc < 0)
        goto out;
    fputs("</div>\n<h2>Functions</h2>\n<table id=\"funcs\"><thead><tr>"
          "<th data-k=\"name\" data-t=\"Function\">Function</th>"
          "<th data-k=\"file\" data-t=\"File\">File</th>"
          "<th class=\"num\" data-k=\"self\" data-t=\"Self\">Self</th>"
          "<th class=\"num\" data-k=\"own\" data-t=\"Own (Python)\">Own (Python)</th>"
          "<th class=\"num\" data-k=\"total\" data-t=\"Total\">Total</th>"
          "</tr></thead><tbody></tbody></table>\n"
          "<script type=\"application/json\" id=\"ppdata\">", out);
    fprintf(out, "{\"total\":%llu,\"rows\":[", (unsigned long long)pp_profile_value_total(p));
    /* each function with samples: its frame (the graph's table names it,
     * F[frame]), self, own, total */
    for (uint32_t i = 0, k = 0; i < p->nframes; i++)
        if (st[i].total)
            fprintf(out, "%s[%u,%llu,%llu,%llu]", k++ % 8 ? "," : k > 1 ? ",\n" : "\n", i,
                    (unsigned long long)st[i].self, (unsigned long long)st[i].own,
                    (unsigned long long)st[i].total);
    fprintf(out, "]}</script>\n<script>\n%s</script>\n</body>\n</html>\n", table_script);
    rc = pp__stream_status(out);
out:
    free(st);
    return rc;
}
