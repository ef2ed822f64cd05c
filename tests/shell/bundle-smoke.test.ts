// The real bundle (main/src/index.ts + the real service) run by plain node with a scripted
// stand-in for the `electron` module: proves the CommonJS bundle loads the service and its
// native modules, serves the UI address it opens, keeps data in userData, and stops the
// service on quit before exiting 0.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

const root = path.resolve(import.meta.dirname, '../..');
const builder = (await import(path.join(root, 'scripts/build-main.mjs') as string)) as {
  bundleMain(o: { entry: string; outfile: string }): Promise<void>;
};

// Each call prints one JSON line the test reads back; app.quit() is triggered by the fake
// once the window has loaded, the way the tray's Quit would.
const FAKE_ELECTRON = String.raw`
const { EventEmitter } = require('node:events');
const say = (o) => process.stdout.write('@@' + JSON.stringify(o) + '\n');
const app = new EventEmitter();
app.requestSingleInstanceLock = () => true;
app.whenReady = () => Promise.resolve();
app.getPath = (name) => { if (name !== 'userData') throw new Error(name); return process.env.FAKE_USER_DATA; };
app.quit = () => { say({ ev: 'quit' }); const e = { p: false, preventDefault() { this.p = true; } }; app.emit('before-quit', e); if (!e.p) process.exit(0); };
app.exit = (code) => { say({ ev: 'exit', code }); process.exit(code); };
class BrowserWindow extends EventEmitter {
  constructor(opts) {
    super();
    const handlers = {};
    const session = {
      setPermissionRequestHandler(h) { handlers.request = h; },
      setPermissionCheckHandler(h) { handlers.check = h; },
      setDevicePermissionHandler(h) { handlers.device = h; },
    };
    this.handlers = handlers;
    this.webContents = Object.assign(new EventEmitter(), { setWindowOpenHandler() {}, session });
    say({ ev: 'window', show: opts.show });
  }
  async loadURL(url) {
    const res = await fetch(url);
    say({ ev: 'loaded', url, status: res.status });
    // What the window's pages would be granted once loaded: the installed policy asked for real.
    const asked = (p) => { let g = null; this.handlers.request?.({}, p, (x) => (g = x), { requestingUrl: url + '/' }); return g; };
    say({ ev: 'permissions', clipboard: asked('clipboard-sanitized-write'), media: asked('media'), geolocation: asked('geolocation'), device: this.handlers.device?.() ?? null });
    setTimeout(() => app.quit(), 50);
  }
  show() {} hide() {} focus() {} restore() {} isMinimized() { return false; } isDestroyed() { return false; }
}
class Tray extends EventEmitter { setToolTip(t) { say({ ev: 'tooltip', t }); } setContextMenu(m) { say({ ev: 'menu', labels: m.map((i) => i.label ?? i.type) }); } destroy() {} }
module.exports = {
  app, BrowserWindow, Tray,
  Menu: { buildFromTemplate: (t) => t },
  nativeImage: { createFromPath: (p) => { say({ ev: 'icon', exists: require('node:fs').existsSync(p) }); return {}; } },
  clipboard: { writeText() {} },
  dialog: { showErrorBox: (title, message) => say({ ev: 'error', message }), showMessageBox: async (o) => say({ ev: 'info', detail: o.detail }) },
  shell: { openExternal() {} },
};
`;

test('the built main process starts the real service, opens it, and stops it on quit', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'shell-smoke-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const outfile = path.join(dir, 'dist', 'index.cjs');
  await builder.bundleMain({ entry: path.join(root, 'main/src/index.ts'), outfile });
  // The icons index.ts asks for live next to the bundle.
  for (const f of ['tray.png', 'icon.png']) writeFileSync(path.join(dir, 'dist', f), '');
  mkdirSync(path.join(dir, 'dist', 'node_modules', 'electron'), { recursive: true });
  writeFileSync(path.join(dir, 'dist', 'node_modules', 'electron', 'index.js'), FAKE_ELECTRON);
  const userData = path.join(dir, 'user-data');

  const child = spawn(process.execPath, [outfile], {
    cwd: dir,
    env: {
      PATH: process.env.PATH,
      HOME: dir,
      NODE_PATH: path.join(root, 'node_modules'), // chdb, better-sqlite3 are external
      FAKE_USER_DATA: userData,
      SVC_HOST: '127.0.0.1',
      SVC_PORT: '0',
      SVC_LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), 300_000); // only a hung start; a busy machine takes minutes
  const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
  clearTimeout(timer);

  const events = stdout
    .split('\n')
    .filter((l) => l.startsWith('@@'))
    .map((l) => JSON.parse(l.slice(2)) as { ev: string } & Record<string, unknown>);
  const diag = `stdout:\n${stdout}\nstderr:\n${stderr}`;
  assert.equal(code, 0, diag);
  assert.deepEqual(events.filter((e) => e.ev === 'error'), [], diag);
  const loaded = events.find((e) => e.ev === 'loaded');
  assert.ok(loaded, diag);
  assert.match(String(loaded.url), /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.notEqual(loaded.status, 404, 'the window URL serves something');
  assert.deepEqual(events.find((e) => e.ev === 'permissions'), { ev: 'permissions', clipboard: true, media: false, geolocation: false, device: false }, diag);
  assert.deepEqual(events.find((e) => e.ev === 'menu')?.labels, ['Open Log Appliance', 'Copy ingest address', 'separator', 'Quit']);
  assert.match(String(events.find((e) => e.ev === 'tooltip')?.t), /http:\/\/127\.0\.0\.1:\d+\/api\/v1\/ingest/);
  assert.match(String(events.find((e) => e.ev === 'info')?.detail), /Sign in as "admin"/, 'fresh data dir: first-start notice');
  assert.deepEqual(events.filter((e) => e.ev === 'exit'), [{ ev: 'exit', code: 0 }]);
  assert.ok(existsSync(userData) && readdirSync(userData).length > 0, 'data kept in the userData folder');
});
