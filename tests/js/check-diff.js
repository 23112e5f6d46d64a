#!/usr/bin/env node
// Opens a `perfpy diff` page in headless Chromium at 1400x900 and checks what
// a person would: no console or page error, no network request, the
// differential flame graph drawn (red and blue boxes for what grew and
// shrank), a click on a box zooms to it, and the table of changes filled.
// Prints the first rows of the table; optionally saves a screenshot.
//   node check-diff.js FILE.html [--screenshot OUT.png]
'use strict';
const { withPage } = require('./local-page');

(async () => {
  const args = process.argv.slice(2);
  const shot = args.indexOf('--screenshot') >= 0 ? args[args.indexOf('--screenshot') + 1] : null;
  await withPage(args[0], async (page, errors) => {
    const fills = await page.$$eval('#ppbox rect', rs => rs.map(r => r.getAttribute('fill')));
    // deep enough to see: a change of a tenth of the largest or more
    const rgb = f => (/^#(..)(..)(..)$/.exec(f) || []).slice(1).map(x => parseInt(x, 16));
    const red = fills.filter(f => { const c = rgb(f); return c[0] === 255 && c[1] < 210; }).length;
    const blue = fills.filter(f => { const c = rgb(f); return c[2] === 255 && c[0] < 200; }).length;
    const rows = await page.$$eval('#changes tbody tr', trs => trs.slice(0, 5).map(t => t.innerText.replace(/\t/g, ' | ')));
    const box = page.locator('#ppbox rect').nth(1);
    let zoomed = false;
    if (await box.count()) {
      await box.click({ force: true });
      zoomed = await page.evaluate(() => {
        const b = document.getElementById('ppbox'), r = b.querySelectorAll('rect')[1];
        const scale = document.getElementById('ppfg').getBoundingClientRect().width / 1200;
        return b.getAttribute('viewBox').split(' ')[2] === r.getAttribute('width') &&
               Math.abs(r.getBoundingClientRect().width - b.width.baseVal.value * scale) < 1;
      });
      await page.evaluate(() => window.perfpyFlame && window.perfpyFlame.reset());
    }
    if (shot) await page.screenshot({ path: shot });
    const ok = !errors.length && fills.length > 0 && rows.length > 0 && zoomed;
    console.log(JSON.stringify({ ok, boxes: fills.length, red, blue, zoomed, rows, errors }));
    process.exitCode = ok ? 0 : 1;
  });
})().catch(e => { console.error('check failed: ' + e.message); process.exit(1); });
