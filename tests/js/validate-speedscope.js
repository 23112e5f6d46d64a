#!/usr/bin/env node
// Validates a speedscope JSON file against the file-format schema shipped in
// the `speedscope` npm package, and prints a one-line summary.
//   node validate-speedscope.js FILE [--expect-frame NAME]
// Exit 0 when valid (and NAME is a frame, when asked), 1 otherwise.
'use strict';
const fs = require('fs');
const path = require('path');
const Ajv = require('ajv');

const args = process.argv.slice(2);
const file = args[0];
const expect = args.indexOf('--expect-frame') >= 0 ? args[args.indexOf('--expect-frame') + 1] : null;
const schemaPath = path.join(path.dirname(require.resolve('speedscope/package.json')),
                             'dist', 'release', 'file-format-schema.json');
const schema = JSON.parse(fs.readFileSync(schemaPath, 'utf8'));
const ajv = new Ajv({ allErrors: true, strict: false });
const validate = ajv.compile({ ...schema, $ref: '#/definitions/FileFormat.File' });
const data = JSON.parse(fs.readFileSync(file, 'utf8'));
if (!validate(data)) {
  console.error('invalid: ' + ajv.errorsText(validate.errors));
  process.exit(1);
}
const frames = data.shared.frames;
let samples = 0, bad = 0;
for (const p of data.profiles) {
  if (p.type === 'sampled') {
    if (p.samples.length !== p.weights.length) bad++;
    for (const s of p.samples) for (const i of s) if (i < 0 || i >= frames.length) bad++;
    samples += p.weights.reduce((a, b) => a + b, 0);
  }
}
if (bad) { console.error('invalid: ' + bad + ' bad frame indexes or lengths'); process.exit(1); }
if (expect && !frames.some(f => f.name === expect)) {
  console.error('no frame named ' + expect); process.exit(1);
}
console.log(JSON.stringify({ valid: true, frames: frames.length, samples }));
