// main/tools/electron-native.mjs with a stand-in for @electron/rebuild (which downloads).
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

const root = path.resolve(import.meta.dirname, '../..');
type RebuildOpts = { buildPath: string; electronVersion: string; onlyModules: string[]; force: boolean };
const native = (await import(path.join(root, 'main/tools/electron-native.mjs') as string)) as {
  prepareElectronNative(o: {
    root: string;
    outDir: string;
    electronVersion: string;
    rebuild: (o: RebuildOpts) => Promise<void>;
  }): Promise<boolean>;
};

/** A project whose node_modules/better-sqlite3 looks like an installed Node build. */
function fakeProject(t: { after(fn: () => unknown): void }) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'shell-native-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const pkg = path.join(dir, 'node_modules', 'better-sqlite3');
  for (const d of ['lib', 'src', 'deps', 'build/Release/obj.target']) mkdirSync(path.join(pkg, d), { recursive: true });
  writeFileSync(path.join(pkg, 'package.json'), '{"name":"better-sqlite3","version":"12.0.0"}');
  writeFileSync(path.join(pkg, 'lib', 'index.js'), '');
  writeFileSync(path.join(pkg, 'binding.gyp'), '{}');
  writeFileSync(path.join(pkg, 'build', 'Release', 'better_sqlite3.node'), 'NODE-ABI');
  return { root: dir, outDir: path.join(dir, 'main', 'dist') };
}

/** Stands in for @electron/rebuild: "compiles" into build/Release like node-gyp does. */
function fakeRebuild(calls: RebuildOpts[], produce = true) {
  return async (o: RebuildOpts) => {
    calls.push(o);
    const release = path.join(o.buildPath, 'node_modules', 'better-sqlite3', 'build', 'Release');
    assert.ok(!existsSync(path.join(release, 'better_sqlite3.node')), 'the Node build must not be copied');
    if (!produce) return;
    mkdirSync(path.join(release, 'obj.target'), { recursive: true });
    writeFileSync(path.join(release, 'better_sqlite3.node'), `ELECTRON-${o.electronVersion}`);
    writeFileSync(path.join(release, 'test_extension.node'), '');
  };
}

test('builds an Electron copy next to the bundle, leaves the project copy alone, and prunes it', async (t) => {
  const p = fakeProject(t);
  const calls: RebuildOpts[] = [];
  assert.equal(await native.prepareElectronNative({ ...p, electronVersion: '38.8.6', rebuild: fakeRebuild(calls) }), true);
  assert.equal(calls.length, 1);
  assert.equal(calls[0].buildPath, p.outDir);
  assert.deepEqual(calls[0].onlyModules, ['better-sqlite3']);
  assert.equal(calls[0].electronVersion, '38.8.6');
  assert.deepEqual(JSON.parse(readFileSync(path.join(p.outDir, 'package.json'), 'utf8')).dependencies, { 'better-sqlite3': '12.0.0' });

  const copy = path.join(p.outDir, 'node_modules', 'better-sqlite3');
  assert.equal(readFileSync(path.join(copy, 'build/Release/better_sqlite3.node'), 'utf8'), 'ELECTRON-38.8.6');
  assert.deepEqual(readdirSync(path.join(copy, 'build/Release')), ['better_sqlite3.node']);
  assert.deepEqual(readdirSync(copy).sort(), ['build', 'lib', 'package.json']);
  const original = path.join(p.root, 'node_modules/better-sqlite3/build/Release/better_sqlite3.node');
  assert.equal(readFileSync(original, 'utf8'), 'NODE-ABI');
});

test('skips when already built for this Electron, rebuilds for another', async (t) => {
  const p = fakeProject(t);
  const calls: RebuildOpts[] = [];
  await native.prepareElectronNative({ ...p, electronVersion: '38.8.6', rebuild: fakeRebuild(calls) });
  assert.equal(await native.prepareElectronNative({ ...p, electronVersion: '38.8.6', rebuild: fakeRebuild(calls) }), false);
  assert.equal(calls.length, 1);
  assert.equal(await native.prepareElectronNative({ ...p, electronVersion: '38.9.0', rebuild: fakeRebuild(calls) }), true);
  assert.equal(calls.length, 2);
});

test('a rebuild that produces no binary is an error and is not remembered', async (t) => {
  const p = fakeProject(t);
  const calls: RebuildOpts[] = [];
  await assert.rejects(
    native.prepareElectronNative({ ...p, electronVersion: '38.8.6', rebuild: fakeRebuild(calls, false) }),
    /better-sqlite3 for Electron 38.8.6 produced no binary/,
  );
  await native.prepareElectronNative({ ...p, electronVersion: '38.8.6', rebuild: fakeRebuild(calls) });
  assert.equal(calls.length, 2, 'the failed attempt left no stamp');
});
