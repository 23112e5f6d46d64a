// One way for the page checkers to open a self-contained perfpy page the way
// a person does: headless Chromium at 1400x900 (as the flame graph is
// judged), every console error, page error and network request (a page
// perfpy writes must reach nothing) collected in `errors`.
//   const { withPage } = require('./local-page');
//   withPage(file, async (page, errors, ms) => { ... }, { timeout });  // closes, cleans up
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { chromium } = require('playwright-core');

async function withPage(file, fn, opts = {}) {
  const userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'perfpy-chromium-'));
  const errors = [];
  let browser;
  try {
    browser = await chromium.launchPersistentContext(userDir, {
      executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
      viewport: { width: 1400, height: 900 },
      args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-sync'],
    });
    const page = browser.pages()[0] || await browser.newPage();
    page.on('console', m => { if (m.type() === 'error') errors.push('console: ' + m.text()); });
    page.on('pageerror', e => errors.push('page error: ' + e.message));
    page.on('request', r => { if (!/^(file|data):/.test(r.url())) errors.push('network request: ' + r.url()); });
    const t0 = Date.now();
    await page.goto('file://' + path.resolve(file), { waitUntil: 'load', timeout: opts.timeout || 60000 });
    // the first frame painted after the load event: ms is how long opening took
    await page.evaluate(() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r))));
    return await fn(page, errors, Date.now() - t0);
  } finally {
    if (browser) await browser.close();
    fs.rmSync(userDir, { recursive: true, force: true });
  }
}

module.exports = { withPage };
