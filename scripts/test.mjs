#!/usr/bin/env node
// Runs every test file in its own process (node:test does that per file): the embedded
// ClickHouse engine binds one data directory per process, so files must not share one.
// Usage: npm test [-- path-filter ...]
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
function walk(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) out.push(...walk(p));
    else if (/\.test\.ts$/.test(name)) out.push(p);
  }
  return out;
}
const filters = process.argv.slice(2);
const files = walk(path.join(root, 'tests'))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}
// The UI the browser tests load is built here, once, before any test runs: test files run two at a
// time, and two of them building renderer/dist at once empty each other's output (a sign-in page
// that never appears).
const ui = spawnSync(process.execPath, ['scripts/ensure-ui.mjs'], { stdio: 'inherit', cwd: root });
if (ui.status !== 0) process.exit(ui.status ?? 1);
const concurrency = process.env.TEST_CONCURRENCY ?? '2';
const r = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, '--test-reporter=spec', ...files],
  { stdio: 'inherit', cwd: root },
);
process.exit(r.status ?? 1);
