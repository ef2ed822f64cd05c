// scripts/app.mjs: finding Electron, and the one-line message when it is not installed.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

const root = path.resolve(import.meta.dirname, '../..');
type Located = { ok: true; binary: string } | { ok: false; reason: string };
const launcher = (await import(path.join(root, 'scripts/app.mjs') as string)) as {
  locateElectron(projectRoot: string): Located;
  NOT_INSTALLED: string;
};

function project(t: { after(fn: () => unknown): void }, electronIndex?: string) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'shell-launcher-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(path.join(dir, 'package.json'), '{"name":"p","private":true}');
  if (electronIndex !== undefined) {
    const pkg = path.join(dir, 'node_modules', 'electron');
    mkdirSync(pkg, { recursive: true });
    writeFileSync(path.join(pkg, 'package.json'), '{"name":"electron","main":"index.js"}');
    writeFileSync(path.join(pkg, 'index.js'), electronIndex);
  }
  return dir;
}

test('no electron package: not installed', (t) => {
  const r = launcher.locateElectron(project(t));
  assert.equal(r.ok, false);
});

test('electron package without its binary: not installed', (t) => {
  // what electron's index.js does when the download never happened
  const broken = project(t, "throw new Error('Electron failed to install correctly, please delete node_modules/electron');");
  assert.equal(launcher.locateElectron(broken).ok, false);
  const missing = project(t, "module.exports = '/nonexistent/electron-binary';");
  assert.equal(launcher.locateElectron(missing).ok, false);
});

test('electron package with its binary: found', (t) => {
  const dir = project(t, "module.exports = require('path').join(__dirname, 'dist', 'electron');");
  mkdirSync(path.join(dir, 'node_modules/electron/dist'));
  writeFileSync(path.join(dir, 'node_modules/electron/dist/electron'), '');
  const r = launcher.locateElectron(dir);
  assert.deepEqual(r, { ok: true, binary: path.join(dir, 'node_modules/electron/dist/electron') });
});

test('`npm run app` without Electron prints one clear line and exits non-zero', (t) => {
  // A copy of the launcher in a project without Electron, so the result does not depend on
  // whether this machine has it installed.
  const dir = project(t);
  mkdirSync(path.join(dir, 'scripts'), { recursive: true });
  writeFileSync(path.join(dir, 'scripts/app.mjs'), readFileSync(path.join(root, 'scripts/app.mjs')));
  assert.equal(launcher.locateElectron(dir).ok, false);
  const r = spawnSync(process.execPath, [path.join(dir, 'scripts/app.mjs')], { encoding: 'utf8', timeout: 120_000 });
  assert.notEqual(r.status, 0);
  assert.equal(r.stdout, '');
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, r.stderr);
  assert.equal(lines[0], launcher.NOT_INSTALLED);
  assert.match(lines[0], /Electron is not installed/);
  assert.match(lines[0], /npm install electron/);
});
