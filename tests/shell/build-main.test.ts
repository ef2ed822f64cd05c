// scripts/build-main.mjs: the bundle keeps native modules external, import.meta paths
// survive CommonJS bundling relative to the bundle, and the generated icons are valid PNGs.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { inflateSync } from 'node:zlib';

const root = path.resolve(import.meta.dirname, '../..');
const builder = (await import(path.join(root, 'scripts/build-main.mjs') as string)) as {
  bundleMain(o: { entry: string; outfile: string }): Promise<void>;
  writeIcons(dir: string): Promise<void>;
};
const icons = (await import(path.join(root, 'main/tools/icons.mjs') as string)) as {
  ICONS: Record<string, number>;
  crc32(b: Uint8Array): number;
};

function tmp(t: { after(fn: () => unknown): void }) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'shell-build-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('import.meta paths point at the source file, relative to wherever the bundle lives', async (t) => {
  const dir = tmp(t);
  const a = path.join(dir, 'app');
  mkdirSync(path.join(a, 'service/src/sub'), { recursive: true });
  writeFileSync(
    path.join(a, 'service/src/sub/where.ts'),
    "import { fileURLToPath } from 'node:url';\n" +
      'export const here = { dir: import.meta.dirname, file: import.meta.filename, url: fileURLToPath(import.meta.url) };\n',
  );
  writeFileSync(
    path.join(a, 'service/src/entry.ts'),
    "import { here } from './sub/where.ts';\n" +
      "export function unused() { return [require('chdb'), require('better-sqlite3'), require('electron')]; }\n" +
      'console.log(JSON.stringify(here));\n',
  );
  await builder.bundleMain({ entry: path.join(a, 'service/src/entry.ts'), outfile: path.join(a, 'main/dist/index.cjs') });
  const out = readFileSync(path.join(a, 'main/dist/index.cjs'), 'utf8');
  for (const m of ['chdb', 'better-sqlite3', 'electron']) assert.ok(out.includes(`require("${m}")`), `${m} stays external`);
  assert.ok(!out.includes('import.meta'));

  // "Install" the tree elsewhere: the paths must follow it (as inside an installed asar).
  const moved = path.join(dir, 'installed');
  cpSync(a, moved, { recursive: true });
  rmSync(path.join(a, 'service'), { recursive: true });
  const here = JSON.parse(execFileSync(process.execPath, [path.join(moved, 'main/dist/index.cjs')], { encoding: 'utf8' }));
  const file = path.join(moved, 'service/src/sub/where.ts');
  assert.deepEqual(here, { dir: path.dirname(file), file, url: file });
});

test('icons: valid PNGs of the promised sizes', async (t) => {
  const dir = tmp(t);
  await builder.writeIcons(dir);
  for (const [name, size] of Object.entries(icons.ICONS)) {
    const png = readFileSync(path.join(dir, name));
    assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], name);
    let off = 8;
    const idat: Buffer[] = [];
    let ihdr: Buffer | null = null;
    let ended = false;
    while (off < png.length) {
      const len = png.readUInt32BE(off);
      const type = png.toString('ascii', off + 4, off + 8);
      const data = png.subarray(off + 8, off + 8 + len);
      assert.equal(png.readUInt32BE(off + 8 + len), icons.crc32(png.subarray(off + 4, off + 8 + len)), `${name} ${type} crc`);
      if (type === 'IHDR') ihdr = data;
      if (type === 'IDAT') idat.push(data);
      if (type === 'IEND') ended = true;
      off += 12 + len;
    }
    assert.ok(ihdr && ended, name);
    assert.equal(ihdr.readUInt32BE(0), size);
    assert.equal(ihdr.readUInt32BE(4), size);
    const raw = inflateSync(Buffer.concat(idat));
    assert.equal(raw.length, size * (size * 4 + 1));
    const centreAlpha = raw[Math.floor(size / 2) * (size * 4 + 1) + 1 + Math.floor(size / 2) * 4 + 3];
    assert.equal(centreAlpha, 255, `${name} has an opaque middle`);
    assert.equal(raw[1 + 3], 0, `${name} has a transparent corner`);
  }
});

test('the real main process bundles, with native modules left external', async (t) => {
  const outfile = path.join(tmp(t), 'index.cjs');
  await builder.bundleMain({ entry: path.join(root, 'main/src/index.ts'), outfile });
  const out = readFileSync(outfile, 'utf8');
  assert.ok(out.includes('require("electron")'));
  assert.ok(!out.includes('loadNative'), "chdb's loader must not be bundled");
});
