#!/usr/bin/env node
// Loads a speedscope file perfpy wrote in speedscope itself (the npm
// package's release build, the way its own command line opens a file) in
// headless Chromium, and checks each profile's time-order view against the
// file: for each profile (one per thread), its name in the toolbar, and
// its widest runs at the root row where the file puts them: hovering the
// middle of each shows speedscope's tooltip with the run's root frame and
// its duration (within 2%), and the middle of the widest gap shows none.
//   node check-speedscope.js FILE [--screenshot OUT.png] [--open-only]
// Prints one JSON line, with open_ms: from the navigation to the first
// profile shown and painted; exit 0 when every profile matched.
// --open-only: the opening alone (a file of hundreds of threads), exit 0
// when it opened without an error.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { chromium } = require('playwright-core');

const W = 1400, H = 900;
const args = process.argv.slice(2);
const file = path.resolve(args[0]);
const shot = args.indexOf('--screenshot') >= 0 ? args[args.indexOf('--screenshot') + 1] : null;
const openOnly = args.indexOf('--open-only') >= 0;
const data = JSON.parse(fs.readFileSync(file, 'utf8'));
const frames = data.shared.frames;

// The root row's blocks of a profile, as speedscope merges them: consecutive
// samples with the same root frame; and the gaps (empty samples). In ns,
// whatever the profile's unit.
const UNIT_NS = { nanoseconds: 1, microseconds: 1e3, milliseconds: 1e6, seconds: 1e9 };
function blocks(p) {
  const out = [];
  const k = UNIT_NS[p.unit] || 1;
  let at = 0;
  for (let i = 0; i < p.samples.length; i++) {
    const s = p.samples[i], w = p.weights[i] * k;
    const root = s.length ? s[0] : -1;
    const last = out[out.length - 1];
    if (last && last.root === root) last.end += w;
    else out.push({ root, start: at, end: at + w });
    at += w;
  }
  return { blocks: out, total: at };
}

// "5.03ms", "1.20s", "800.00µs" -> ns
function ns(text) {
  const m = /([0-9.]+)\s*(ns|µs|us|ms|s|min)\b/.exec(text);
  if (!m) return null;
  return parseFloat(m[1]) * { ns: 1, 'µs': 1e3, us: 1e3, ms: 1e6, s: 1e9, min: 6e10 }[m[2]];
}

(async () => {
  const js = path.join(os.tmpdir(), `perfpy-speedscope-${process.pid}.js`);
  fs.writeFileSync(js, `speedscope.loadFileFromBase64(${JSON.stringify(path.basename(file))}, ` +
                       `${JSON.stringify(fs.readFileSync(file).toString('base64'))})`);
  const userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'perfpy-chromium-'));
  const release = path.join(path.dirname(require.resolve('speedscope/package.json')), 'dist', 'release');
  const errors = [], profiles = [];
  let browser, openMs = null;
  try {
    browser = await chromium.launchPersistentContext(userDir, {
      executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
      viewport: { width: W, height: H },
      args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-sync'],
    });
    const page = browser.pages()[0] || await browser.newPage();
    page.on('pageerror', e => errors.push('page error: ' + e.message));
    page.on('console', m => { if (m.type() === 'error') errors.push('console: ' + m.text()); });
    const t0 = Date.now();
    await page.goto('file://' + path.join(release, 'index.html') + '#localProfilePath=' + js);
    await page.waitForFunction(() => /\(1\/\d+\)|Time Order/.test(document.body.innerText), null, { timeout: 30000 });
    await page.evaluate(() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r))));
    openMs = Date.now() - t0;
    await page.waitForTimeout(1000);
    // the tooltip under (x, y): speedscope redraws it as the mouse moves,
    // which on a loaded machine takes longer than the 60 ms waited (a gap
    // in the middle of a 1 s wait once read the tooltip of the run hovered
    // before it, at a load of 11); with `want`, read again until it says
    // what the check expects there (a run's name, or none over a gap), for
    // up to 2 s: a tooltip that stays that long is what speedscope shows
    const tip = async (x, y, want) => {
      let t = null;
      await page.mouse.move(x, y);
      for (let waited = 0; waited === 0 || (want && !want(t) && waited < 2000); waited += 60) {
        await page.waitForTimeout(60);
        t = await page.evaluate(() => {
          const d = [...document.querySelectorAll('div')].filter(e => getComputedStyle(e).position === 'absolute' &&
            /[0-9.]+\s*(ns|µs|ms|s|min)\b/.test(e.innerText || '') && (e.innerText || '').length < 600);
          return d.length ? d[d.length - 1].innerText : null;
        });
      }
      return t;
    };
    const canvas = (await page.$$('canvas')).pop();
    const box = await canvas.boundingBox();
    let row = null;       // the root row's y: found once, the same in every profile
    for (let i = 0; i < data.profiles.length && !openOnly; i++) {
      if (i) { await page.keyboard.press('n'); await page.waitForTimeout(400); }
      const p = data.profiles[i];
      const title = await page.evaluate(() => document.body.innerText);
      const { blocks: bl, total } = blocks(p);
      const px = v => box.x + (v / total) * box.width;
      const widest = bl.filter(b => b.root >= 0).sort((a, b) => (b.end - b.start) - (a.end - a.start));
      const runs = widest.filter(b => px(b.end) - px(b.start) >= 8).slice(0, 3);
      const gaps = bl.filter(b => b.root < 0 && px(b.end) - px(b.start) >= 8)
                     .sort((a, b) => (b.end - b.start) - (a.end - a.start)).slice(0, 1);
      // the root row: the first y below the axis where the widest run shows
      // a tooltip (found on the first profile with a run 2 px wide)
      if (row === null && widest.length && px(widest[0].end) - px(widest[0].start) >= 2)
        for (let y = box.y + 10; y < box.y + 60 && row === null; y += 1)
          if (await tip(px((widest[0].start + widest[0].end) / 2), y)) row = y + 4;
      const checked = [];
      for (const r of runs) {
        const name = frames[r.root].name;
        const t = row === null ? null : await tip(px((r.start + r.end) / 2), row,
                                                  t => !!t && t.includes(name));
        const got = t ? ns(t) : null;
        checked.push({ name, ms: (r.end - r.start) / 1e6, tooltip: t && t.split('\n')[0],
                       ok: !!t && t.includes(name) && got !== null && Math.abs(got - (r.end - r.start)) <= 0.02 * (r.end - r.start) + 20000 });
      }
      for (const g of gaps)
        checked.push({ gap: true, ms: (g.end - g.start) / 1e6,
                       ok: row !== null && (await tip(px((g.start + g.end) / 2), row,
                                                      t => t === null)) === null });
      profiles.push({ name: p.name, titled: title.includes(p.name), runs: checked.length,
                      ok: title.includes(p.name) && checked.every(c => c.ok), checked });
    }
    if (shot) {
      for (let i = 1; i < data.profiles.length; i++) await page.keyboard.press('p');
      await page.mouse.move(0, 0);
      await page.waitForTimeout(400);
      await page.screenshot({ path: shot });
    }
  } finally {
    if (browser) await browser.close();
    fs.rmSync(userDir, { recursive: true, force: true });
    fs.rmSync(js, { force: true });
  }
  const ok = !errors.length && openMs !== null &&
             (openOnly || (profiles.length === data.profiles.length && profiles.every(p => p.ok)));
  console.log(JSON.stringify({ ok, open_ms: openMs, errors, profiles }));
  process.exitCode = ok ? 0 : 1;
})().catch(e => { console.error('check failed: ' + e.message); process.exit(1); });
