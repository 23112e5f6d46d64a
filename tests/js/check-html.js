#!/usr/bin/env node
// Opens perfpy's HTML report in headless Chromium (playwright-core driving
// the system's /usr/bin/chromium; no browser download) and checks what a
// person would: no console error or page error, the text TEXT visible, the
// function table filled, zoom and search working. Optionally saves a
// screenshot. The tooltip of the box zoomed on is printed (its full path).
//   node check-html.js FILE.html [--expect TEXT] [--screenshot OUT.png]
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { chromium } = require('playwright-core');

(async () => {
  const args = process.argv.slice(2);
  const opt = k => (args.indexOf(k) >= 0 ? args[args.indexOf(k) + 1] : null);
  const file = path.resolve(args[0]);
  const expect = opt('--expect') || 'foo';
  const shot = opt('--screenshot');
  const userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'perfpy-chromium-'));
  const errors = [];
  let browser;
  try {
    // a persistent context is how playwright takes a fresh --user-data-dir
    browser = await chromium.launchPersistentContext(userDir, {
      executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
      headless: true,
      viewport: { width: 1280, height: 900 },
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking',
             '--no-first-run', '--disable-component-update', '--disable-sync'],
    });
    const page = browser.pages()[0] || await browser.newPage();
    page.on('console', m => { if (m.type() === 'error') errors.push('console: ' + m.text()); });
    page.on('pageerror', e => errors.push('page error: ' + e.message));
    page.on('request', r => { if (!r.url().startsWith('file:') && !r.url().startsWith('data:')) errors.push('network request: ' + r.url()); });
    await page.goto('file://' + file);
    await page.waitForLoadState('load');
    const rows = await page.locator('#funcs tbody tr').count();
    const re = new RegExp('^' + expect + ' \\(');
    const visible = await page.locator('#funcs td', { hasText: re }).first().isVisible() &&
                    await page.locator('#pplabels text', { hasText: re }).first().isVisible();
    // zoom on the first box labelled TEXT (a click where its label is: the
    // label lets the pointer through to the box), then search for it
    const text = page.locator('#pplabels text', { hasText: re }).first();
    let zoomed = false, tip = null;
    if (await text.count()) {
      const at = await text.boundingBox();
      await page.mouse.move(at.x + 2, at.y + at.height / 2);
      tip = await page.evaluate(() => (document.querySelector('#ppbox rect title') || {}).textContent || null);
      await page.mouse.click(at.x + 2, at.y + at.height / 2);
      // the box clicked now spans the graph: the viewBox is its samples
      zoomed = await page.evaluate(() => {
        const box = document.getElementById('ppbox'), vb = box.getAttribute('viewBox').split(' ');
        const r = [].slice.call(box.querySelectorAll('rect')).find(x =>
          x.getAttribute('x') === vb[0] && x.getAttribute('width') === vb[2]);
        if (!r) return false;
        // the graph's width in the page: the boxes' viewport, scaled as the page scales it
        const svg = document.getElementById('ppfg'), scale = svg.getBoundingClientRect().width / 1200;
        const w = box.width.baseVal.value * scale;
        return Math.abs(r.getBoundingClientRect().width - w) < 1 && r.hasAttribute('data-f');
      });
      await page.locator('#reset').click();
    }
    await page.fill('#q', '^' + expect + ' ');
    const matched = await page.locator('#ppmatched').textContent();
    const tableAfterSearch = await page.locator('#funcs tbody tr').count();
    await page.fill('#q', '');
    if (shot) await page.screenshot({ path: shot, fullPage: false });
    const result = { rows, visible, zoomed, tip, matched, tableAfterSearch, errors };
    console.log(JSON.stringify(result));
    const ok = !errors.length && visible && rows > 0 && zoomed && re.test(tip || '') && /Matched: [1-9]/.test(matched || '') && tableAfterSearch >= 1;
    process.exitCode = ok ? 0 : 1;
  } finally {
    if (browser) await browser.close();
    fs.rmSync(userDir, { recursive: true, force: true });
  }
})().catch(e => { console.error('check failed: ' + e.message); process.exit(1); });
