#!/usr/bin/env node
// How long a perfpy flame graph (SVG or HTML page) takes to open in headless
// Chromium, the way a person opens it: from the navigation to the first
// frame painted after the load event (the browser started beforehand). Also
// checks what opening it should give: no console or page error, no network
// request, its boxes there, and the tooltip of the widest Python box (made
// when the pointer rests on it) naming its full path while the box shows
// the short one.
//   node check-render.js FILE [--timeout MS] [--no-flame]
// (--no-flame: a page without a flame graph, the heatmap: its time and
// errors only, no box required)
// prints {"ms":..., "boxes":..., "labels":..., "tip":"...", "shown":"...", "errors":[...]}
'use strict';
const { withPage } = require('./local-page');

(async () => {
  const args = process.argv.slice(2);
  const opt = k => (args.indexOf(k) >= 0 ? args[args.indexOf(k) + 1] : null);
  await withPage(args[0], async (page, errors, ms) => {
    const info = await page.evaluate(() => {
      const G = window.perfpyFlame, box = document.getElementById('ppbox');
      const rects = box ? [].slice.call(box.querySelectorAll('rect')) : [];
      let best = null;
      for (const r of rects) {
        const i = r.getAttribute('data-f');
        if (i === null || !G || G.frames[+i][3] !== 0 || G.frames[+i][1] < 0) continue;
        if (!best || +r.getAttribute('width') > +best.getAttribute('width')) best = r;
      }
      if (best) best.setAttribute('id', 'pp-widest');
      return { boxes: rects.length, labels: document.querySelectorAll('#pplabels text').length,
               shown: best && G ? G.name(+best.getAttribute('data-f'), 0) : null };
    });
    let tip = null;
    if (info.shown) {
      await page.hover('#pp-widest', { force: true });
      tip = await page.evaluate(() => {
        const t = document.querySelector('#pp-widest title');
        return t ? t.textContent : null;
      });
    }
    console.log(JSON.stringify(Object.assign({ ms, tip, errors }, info)));
    process.exitCode = errors.length || (!info.boxes && args.indexOf('--no-flame') < 0) ? 1 : 0;
  }, { timeout: +(opt('--timeout') || 60000) });
})().catch(e => { console.error('check failed: ' + e.message); process.exit(1); });
