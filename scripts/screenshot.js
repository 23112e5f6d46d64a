#!/usr/bin/env node
// Renders a page perfpy wrote (an SVG flame graph or the HTML report) to PNG
// with headless Chromium, for the pictures in docs/ (make docs-images).
// playwright-core drives the system's /usr/bin/chromium (no browser
// download); it lives in tests/js/node_modules (scripts/deps.sh installs it).
//   node scripts/screenshot.js IN.svg|IN.html OUT.png WIDTH HEIGHT
// With PERFPY_MEASURE=1 the window is WIDTH x HEIGHT as a user's would be
// (no full-height page) and it prints {"text_px": N, "labels": M}: the
// median rendered height of the flame graph's frame labels (the test of
// readable text, tests/integration/test_report.py).
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { chromium } = require(path.join(__dirname, '..', 'tests', 'js', 'node_modules', 'playwright-core'));

(async () => {
  const [input, out, w, h] = process.argv.slice(2);
  if (!input || !out) throw new Error('usage: screenshot.js IN OUT.png [WIDTH HEIGHT]');
  const width = parseInt(w || '1200', 10), height = parseInt(h || '600', 10);
  // a standalone SVG is scaled to fit the window: give it its whole height,
  // then keep the top HEIGHT pixels
  const box = /viewBox="0 0 [\d.]+ ([\d.]+)"/.exec(fs.readFileSync(input, 'utf8').slice(0, 4096));
  const measure = process.env.PERFPY_MEASURE === '1';
  const full = measure ? height : Math.max(height, box ? Math.ceil(parseFloat(box[1])) : 0);
  const userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'perfpy-chromium-'));
  let browser;
  try {
    browser = await chromium.launchPersistentContext(userDir, {
      executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
      headless: true,
      viewport: { width, height: full },
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking',
             '--no-first-run', '--disable-component-update', '--disable-sync'],
    });
    const page = browser.pages()[0] || await browser.newPage();
    const errors = [];
    page.on('pageerror', e => errors.push(e.message));
    await page.goto('file://' + path.resolve(input));
    await page.waitForLoadState('load');
    if (errors.length) throw new Error('page error: ' + errors.join('; '));
    await page.screenshot({ path: out, clip: { x: 0, y: 0, width, height } });
    if (measure) {
      const m = await page.evaluate(() => {
        const hs = Array.from(document.querySelectorAll('#pplabels text'))
          .filter(t => t.textContent.trim())
          .map(t => t.getBoundingClientRect().height).filter(x => x > 0).sort((a, b) => a - b);
        return { text_px: hs.length ? hs[Math.floor(hs.length / 2)] : 0, labels: hs.length };
      });
      console.log(JSON.stringify(m));
    }
  } finally {
    if (browser) await browser.close();
    fs.rmSync(userDir, { recursive: true, force: true });
  }
})().catch(e => { console.error('screenshot: ' + e.message); process.exit(1); });
