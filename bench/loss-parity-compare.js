#!/usr/bin/env node
// Compares two bench/loss-parity.sh outputs (before/after a refactor that must not change
// training): prints the max |Δ| of the per-step losses for every backend in both files and
// exits 1 when one is over its tolerance (cpu and wasm 1e-6: the same float32 ops in the same
// order; tensorflow 1e-4: its thread pool's summation order is not fixed) or a backend's
// step count differs.
//   node bench/loss-parity-compare.js BEFORE.json AFTER.json [BACKEND=TOL ...]
'use strict';
const fs = require('fs');

const [beforeFile, afterFile, ...overrides] = process.argv.slice(2);
if (!beforeFile || !afterFile) {
  process.stderr.write('usage: node bench/loss-parity-compare.js BEFORE.json AFTER.json [BACKEND=TOL ...]\n');
  process.exit(2);
}
const tolerance = { cpu: 1e-6, wasm: 1e-6, tensorflow: 1e-4, 'tensorflow-gpu': 1e-4 };
for (const o of overrides) {
  const [b, t] = o.split('=');
  tolerance[b] = Number(t);
}
const before = JSON.parse(fs.readFileSync(beforeFile, 'utf8'));
const after = JSON.parse(fs.readFileSync(afterFile, 'utf8'));
let failed = false;
for (const backend of Object.keys(after).filter((b) => b in before)) {
  const [a, b] = [before[backend], after[backend]];
  const maxDiff = a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i])), 0);
  const tol = tolerance[backend] ?? 1e-6;
  const ok = a.length === b.length && maxDiff <= tol;
  failed = failed || !ok;
  process.stdout.write(`${backend}: ${b.length} steps (before ${a.length}), max |Δ| ${maxDiff.toExponential(2)} (tolerance ${tol}) ${ok ? 'ok' : 'FAIL'}\n`);
}
process.exit(failed ? 1 : 0);
