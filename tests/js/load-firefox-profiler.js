#!/usr/bin/env node
// Loads a profile in the real Firefox Profiler (built from its source: it is
// not on npm) in headless Chromium, the way profiler.firefox.com does for
// /from-url/, and reports what a person sees: the tracks (their names), the
// errors shown, the selected thread's samples drawn; optionally a screenshot.
// Not part of the suite (the profiler cannot be fetched in CI); the suite
// checks the file's structure (check-firefox.js).
//   node load-firefox-profiler.js PROFILER_DIST FILE [--screenshot OUT.png]
//     [--tab stack-chart] [--expect-track NAME]... [--marker NAME]
'use strict';
const fs = require('fs');
const http = require('http');
const os = require('os');
const path = require('path');
const { chromium } = require('playwright-core');

const args = process.argv.slice(2);
const dist = path.resolve(args[0]);
const file = path.resolve(args[1]);
const opt = k => (args.indexOf(k) >= 0 ? args[args.indexOf(k) + 1] : null);
const all = k => args.flatMap((a, i) => (a === k ? [args[i + 1]] : []));
const types = { '.js': 'text/javascript', '.css': 'text/css', '.html': 'text/html',
                '.json': 'application/json', '.svg': 'image/svg+xml', '.wasm': 'application/wasm',
                '.png': 'image/png', '.woff2': 'font/woff2' };

// the profiler's static files, any other path its index.html (a one-page
// app), and the profile at /profile.json
const server = http.createServer((req, res) => {
  const url = decodeURIComponent(req.url.split('?')[0]);
  let p = url === '/profile.json' ? file : path.join(dist, path.normalize(url));
  if (!p.startsWith(dist) && p !== file) { res.writeHead(403); return res.end(); }
  if (!fs.existsSync(p) || fs.statSync(p).isDirectory()) p = path.join(dist, 'index.html');
  res.writeHead(200, { 'Content-Type': types[path.extname(p)] || 'application/octet-stream',
                       'Access-Control-Allow-Origin': '*' });
  fs.createReadStream(p).pipe(res);
});

(async () => {
  await new Promise(r => server.listen(0, '127.0.0.1', r));
  const base = 'http://127.0.0.1:' + server.address().port;
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
    // the profiler's service worker is not built (yarn build-sw): its
    // registration failing is this server's, not the profile's
    const ours = t => !/ServiceWorker|sw\.js|unsupported MIME type/.test(t);
    page.on('pageerror', e => { if (ours(e.message)) errors.push('page error: ' + e.message); });
    page.on('console', m => { if (m.type() === 'error' && ours(m.text())) errors.push('console: ' + m.text()); });
    await page.goto(base + '/from-url/' + encodeURIComponent(base + '/profile.json') + '/');
    await page.waitForSelector('.timelineTrackThreadRow, .appErrorBoundary, .profileViewerErrorMessage, .homeSpecialMessage',
                               { timeout: 60000 }).catch(() => {});
    await page.waitForTimeout(3000);
    const tracks = await page.$$eval('.timelineTrackGlobalRow .timelineTrackNameButton, .timelineTrackLocalRow .timelineTrackNameButton',
                                     els => els.map(e => e.textContent.trim()));
    const shown = await page.evaluate(() => document.body.innerText.slice(0, 400));
    const marker = opt('--marker');
    let markerRows = null;
    if (marker) {
      // the marker table, its rows for every track's markers: each global
      // track selected in turn (a process's tracks show its threads')
      markerRows = 0;
      const globals = await page.$$('.timelineTrackGlobalRow');
      for (const g of globals) {
        await g.click({ position: { x: 40, y: 10 } }).catch(() => {});
        await page.click('.tabBarTab[data-name="marker-table"]').catch(() => {});
        await page.waitForTimeout(1500);
        const rows = await page.$$eval('.treeViewRow', els => els.map(e => e.textContent));
        markerRows += rows.filter(t => t.includes(marker)).length;
      }
      await page.click('.tabBarTab[data-name="calltree"]').catch(() => {});
      await page.waitForTimeout(1000);
    }
    const callTree = await page.$$eval('.treeViewRow', els => els.slice(0, 12).map(e => e.textContent));
    if (opt('--tab')) {   // the panel the screenshot shows: stack-chart, flame-graph, ...
      await page.click('.timelineTrackGlobalRow', { position: { x: 40, y: 10 } }).catch(() => {});
      await page.click(`.tabBarTab[data-name="${opt('--tab')}"]`).catch(() => {});
      await page.waitForTimeout(2000);
    }
    if (opt('--screenshot')) await page.screenshot({ path: opt('--screenshot') });
    const missing = all('--expect-track').filter(n => !tracks.some(t => t.includes(n)));
    const result = { tracks, missing, markerRows, callTree, errors, shown: tracks.length ? undefined : shown };
    console.log(JSON.stringify(result, null, 1));
    process.exitCode = !errors.length && tracks.length && !missing.length && (marker ? markerRows > 0 : true) ? 0 : 1;
  } finally {
    if (browser) await browser.close();
    fs.rmSync(userDir, { recursive: true, force: true });
    server.close();
  }
})().catch(e => { console.error('load failed: ' + e.message); process.exit(1); });
