#!/usr/bin/env node
// Checks a Firefox Profiler file perfpy wrote against the processed profile
// format, version 61 (docs-developer/processed-profile-format.md of the
// profiler at commit 66e023ab, the version its loader takes as it is): every
// table with its columns, of equal lengths; every index in range (a stack's
// prefix before it, a frame's function, a function's name, resource and
// source); per thread, samples in time order with their stacks, weights and
// markers. Prints a summary of the threads for the tests.
//   node check-firefox.js FILE
// Exit 0 when the file holds to the format, 1 otherwise (with the reasons).
'use strict';
const fs = require('fs');

const data = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const bad = [];
const need = (cond, what) => { if (!cond) bad.push(what); };

function table(t, name, cols) {
  need(t && typeof t === 'object', name + ' missing');
  if (!t) return 0;
  need(Number.isInteger(t.length), name + '.length');
  for (const c of cols)
    need(Array.isArray(t[c]) && t[c].length === t.length, `${name}.${c}: ${t[c] && t[c].length} vs ${t.length}`);
  return t.length;
}
const inRange = (v, n, nullable) => (v === null ? nullable : Number.isInteger(v) && v >= 0 && v < n);

const m = data.meta || {};
need(m.preprocessedProfileVersion === 61, 'meta.preprocessedProfileVersion ' + m.preprocessedProfileVersion);
for (const k of ['interval', 'startTime', 'processType', 'stackwalk', 'version'])
  need(typeof m[k] === 'number', 'meta.' + k);
need(typeof m.product === 'string', 'meta.product');
need(Array.isArray(m.markerSchema), 'meta.markerSchema');
need(Array.isArray(m.categories) && m.categories.every(c => c.name && c.color && Array.isArray(c.subcategories)), 'meta.categories');
const ncat = (m.categories || []).length;
const sh = data.shared || {};
const strings = sh.stringArray || [];
need(Array.isArray(sh.stringArray) && strings.every(s => typeof s === 'string'), 'shared.stringArray');
const nstack = table(sh.stackTable, 'stackTable', ['frame', 'prefix']);
const nframe = table(sh.frameTable, 'frameTable', ['address', 'inlineDepth', 'category', 'subcategory', 'func',
                                                   'nativeSymbol', 'innerWindowID', 'line', 'column']);
const nfunc = table(sh.funcTable, 'funcTable', ['name', 'isJS', 'relevantForJS', 'resource', 'source', 'lineNumber',
                                                'columnNumber']);
const nres = table(sh.resourceTable, 'resourceTable', ['lib', 'name', 'host', 'type']);
const nsrc = table(sh.sources, 'sources', ['id', 'filename', 'startLine', 'startColumn', 'sourceMapURL']);
table(sh.nativeSymbols, 'nativeSymbols', ['libIndex', 'address', 'name', 'functionSize']);
if (!bad.length) {
  const st = sh.stackTable, fr = sh.frameTable, fn = sh.funcTable, rs = sh.resourceTable;
  for (let i = 0; i < nstack; i++) {
    need(inRange(st.frame[i], nframe, false), 'stack ' + i + ' frame');
    need(st.prefix[i] === null || (Number.isInteger(st.prefix[i]) && st.prefix[i] < i), 'stack ' + i + ' prefix (parents first)');
  }
  for (let i = 0; i < nframe; i++) {
    need(inRange(fr.func[i], nfunc, false), 'frame ' + i + ' func');
    need(inRange(fr.category[i], ncat, true), 'frame ' + i + ' category');
    need(fr.line[i] === null || Number.isInteger(fr.line[i]), 'frame ' + i + ' line');
  }
  for (let i = 0; i < nfunc; i++) {
    need(inRange(fn.name[i], strings.length, false), 'func ' + i + ' name');
    need(fn.resource[i] === -1 || inRange(fn.resource[i], nres, false), 'func ' + i + ' resource');
    need(inRange(fn.source[i], nsrc, true), 'func ' + i + ' source');
    need(typeof fn.isJS[i] === 'boolean' && typeof fn.relevantForJS[i] === 'boolean', 'func ' + i + ' isJS');
  }
  for (let i = 0; i < nres; i++) need(inRange(rs.name[i], strings.length, false), 'resource ' + i + ' name');
  for (let i = 0; i < nsrc; i++) need(inRange(sh.sources.filename[i], strings.length, false), 'source ' + i + ' filename');
}
const threads = [];
need(Array.isArray(data.threads) && data.threads.length > 0, 'threads');
for (const [k, t] of (data.threads || []).entries()) {
  const w = `thread ${k}`;
  need(typeof t.name === 'string' && typeof t.processName === 'string', w + ' name');
  need(typeof t.pid === 'string' && Number.isInteger(t.tid), w + ' pid/tid');
  need(typeof t.isMainThread === 'boolean' && t.processType === 'default', w + ' isMainThread/processType');
  for (const f of ['processStartupTime', 'registerTime'])
    need(typeof t[f] === 'number', w + ' ' + f);
  need(Array.isArray(t.pausedRanges), w + ' pausedRanges');
  const n = table(t.samples, w + ' samples', ['stack', 'time', 'weight']);
  need(t.samples && t.samples.weightType === 'samples', w + ' weightType');
  const nm = table(t.markers, w + ' markers', ['data', 'name', 'startTime', 'endTime', 'phase', 'category']);
  if (bad.length) continue;
  let last = -Infinity, weight = 0;
  for (let i = 0; i < n; i++) {
    need(inRange(t.samples.stack[i], nstack, true), `${w} sample ${i} stack`);
    need(t.samples.time[i] >= last, `${w} sample ${i} time before the one before it`);
    need(Number.isInteger(t.samples.weight[i]) && t.samples.weight[i] >= 0, `${w} sample ${i} weight`);
    last = t.samples.time[i];
    weight += t.samples.weight[i];
  }
  const markers = [];
  for (let i = 0; i < nm; i++) {
    const mk = t.markers;
    need(inRange(mk.name[i], strings.length, false), `${w} marker ${i} name`);
    need([0, 1].includes(mk.phase[i]) && inRange(mk.category[i], ncat, false), `${w} marker ${i} phase/category`);
    need(typeof mk.startTime[i] === 'number' && (mk.phase[i] === 0 ? mk.endTime[i] === null : mk.endTime[i] >= mk.startTime[i]),
         `${w} marker ${i} times`);
    markers.push(strings[mk.name[i]]);
  }
  need(typeof m.profilingEndTime !== 'number' ||
       (t.samples.time[n - 1] <= m.profilingEndTime &&
        t.markers.startTime.every(x => x <= m.profilingEndTime)), `${w} past meta.profilingEndTime`);
  threads.push({ name: t.name, processName: t.processName, pid: t.pid, tid: t.tid, samples: n, weight,
                 start: t.samples.time[0], end: t.samples.time[n - 1], markers });
}
if (bad.length) {
  console.error('invalid: ' + bad.slice(0, 20).join('; ') + (bad.length > 20 ? ` (and ${bad.length - 20} more)` : ''));
  process.exit(1);
}
console.log(JSON.stringify({ valid: true, version: m.preprocessedProfileVersion, stacks: nstack, frames: nframe,
                             funcs: nfunc, threads }));
