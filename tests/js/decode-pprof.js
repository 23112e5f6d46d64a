#!/usr/bin/env node
// Decodes a gzipped pprof profile with the `pprof-format` npm package and
// prints what a consumer sees: sample count, value totals, function names.
//   node decode-pprof.js FILE [--expect-function NAME]
// Exit 0 when it decodes with non-zero samples (and a function NAME, when
// asked), 1 otherwise.
'use strict';
const fs = require('fs');
const zlib = require('zlib');

(async () => {
  const { Profile } = await import('pprof-format');
  const args = process.argv.slice(2);
  const expect = args.indexOf('--expect-function') >= 0 ? args[args.indexOf('--expect-function') + 1] : null;
  const raw = zlib.gunzipSync(fs.readFileSync(args[0]));
  const p = Profile.decode(raw);
  const str = i => p.stringTable.strings[Number(i)];
  const functions = p.function.map(f => ({ name: str(f.name), file: str(f.filename), line: Number(f.startLine) }));
  let count = 0, cpu = 0;
  for (const s of p.sample) { count += Number(s.value[0]); cpu += Number(s.value[1] || 0); }
  const out = {
    sampleTypes: p.sampleType.map(t => str(t.type) + '/' + str(t.unit)),
    samples: p.sample.length, count, cpu, locations: p.location.length,
    functions: functions.length, durationNanos: Number(p.durationNanos || 0),
  };
  if (expect) out.match = functions.filter(f => f.name === expect);
  console.log(JSON.stringify(out));
  if (!p.sample.length || !count) { console.error('no samples'); process.exit(1); }
  if (expect && !out.match.length) { console.error('no function named ' + expect); process.exit(1); }
})().catch(e => { console.error('cannot decode: ' + e.message); process.exit(1); });
