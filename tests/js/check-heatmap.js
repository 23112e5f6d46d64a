#!/usr/bin/env node
// Opens perfpy's line heatmap (or a diff page) in headless Chromium at
// 1400x900 and checks what a person would: no console or page error, no
// network request, source lines shown, and the first of the hottest
// functions a link that brings its hot line into view. Optionally saves
// a screenshot.
//   node check-heatmap.js FILE.html [--screenshot OUT.png] [--expect TEXT]
'use strict';
const { withPage } = require('./local-page');

(async () => {
  const args = process.argv.slice(2);
  const opt = k => (args.indexOf(k) >= 0 ? args[args.indexOf(k) + 1] : null);
  await withPage(args[0], async (page, errors) => {
    const rows = await page.locator('table.src tr').count();
    const links = page.locator('#side a');
    let jumped = null, hot = null;
    if (await links.count()) {
      hot = await links.first().textContent();
      const target = (await links.first().getAttribute('href')).slice(1);
      await links.first().click();
      await page.waitForTimeout(300);
      jumped = await page.evaluate(id => {
        const el = document.getElementById(id);
        if (!el) return false;
        const r = el.getBoundingClientRect();
        return location.hash === '#' + id && r.top >= 0 && r.bottom <= window.innerHeight;
      }, target);
    }
    const expect = opt('--expect');
    const text = await page.evaluate(() => document.body.innerText);
    if (opt('--screenshot')) await page.screenshot({ path: opt('--screenshot') });
    const ok = !errors.length && rows > 0 && jumped === true && (!expect || text.includes(expect));
    console.log(JSON.stringify({ ok, rows, hot, jumped, errors }));
    process.exitCode = ok ? 0 : 1;
  });
})().catch(e => { console.error('check failed: ' + e.message); process.exit(1); });
