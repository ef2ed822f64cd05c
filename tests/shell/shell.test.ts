// runShell driven with fake Electron objects, the real loadConfig, the real health wait
// and a real loopback HTTP listener standing in for the service.
import assert from 'node:assert/strict';
import type { NetworkInterfaceInfo } from 'node:os';
import os from 'node:os';
import path from 'node:path';
import { before, test } from 'node:test';
import { runShell, type ShellDeps } from '../../main/src/shell.ts';
import { LABEL_COPY, LABEL_OPEN, LABEL_QUIT } from '../../main/src/tray-menu.ts';
import type { ApplianceActivity, FirstStartInfo } from '../../service/src/appliance.ts';
import { loadConfig, type Config } from '../../service/src/config.ts';
import { waitFor } from '../support/wait.ts';
import { clickMenu, FakeApp, FakeTray, FakeWindow, fakeAppliance } from './fakes.ts';

const USER_DATA = path.join(os.tmpdir(), 'log-appliance-shell-test-user-data'); // never written to

function nic(address: string, family: 'IPv4' | 'IPv6', internal: boolean): NetworkInterfaceInfo {
  return { address, family, internal, netmask: '', mac: '00:00:00:00:00:00', cidr: null } as NetworkInterfaceInfo;
}
const LAN = {
  lo: [nic('127.0.0.1', 'IPv4', true), nic('::1', 'IPv6', true)],
  eth0: [nic('fe80::1', 'IPv6', false), nic('192.168.1.20', 'IPv4', false)],
};

const until = (cond: () => boolean, what: string) => waitFor(what, cond);

// The first fetch of a process loads its HTTP client, which on a busy machine takes longer than the
// short health deadline of the test that waits one out: load it before any test.
before(() => fetch('http://127.0.0.1:1/').catch(() => undefined));

type Svc = Awaited<ReturnType<typeof fakeAppliance>>;

function harness(
  t: { after(fn: () => unknown): void },
  o: {
    env?: Record<string, string>;
    healthy?: () => boolean;
    firstStart?: FirstStartInfo | null;
    stopError?: Error;
    activity?: () => ApplianceActivity;
    deps?: Partial<ShellDeps>;
  } = {},
) {
  const events: string[] = [];
  const app = new FakeApp(USER_DATA, events);
  const windows: FakeWindow[] = [];
  const trays: FakeTray[] = [];
  const clipboard = { text: null as string | null, writeText(text: string) { this.text = text; } };
  const errors: Array<{ title: string; message: string }> = [];
  const infos: Array<{ title: string; message: string; detail: string }> = [];
  const started: Config[] = [];
  const services: Svc[] = [];
  t.after(async () => {
    for (const s of services) if (s.stopCalls === 0) await s.close();
  });
  const deps: ShellDeps = {
    app,
    env: o.env ?? {},
    loadConfig,
    startAppliance: async (config) => {
      started.push(config);
      const s = await fakeAppliance(events, o);
      services.push(s);
      return s.appliance;
    },
    createWindow: () => {
      const w = new FakeWindow();
      windows.push(w);
      events.push('window');
      return w;
    },
    createTray: (menu, tooltip) => {
      const tray = new FakeTray(menu, tooltip);
      trays.push(tray);
      return tray;
    },
    clipboard,
    dialog: {
      showError: (title, message) => errors.push({ title, message }),
      showInfo: (title, message, detail) => infos.push({ title, message, detail }),
    },
    networkInterfaces: () => LAN,
    health: { timeoutMs: 60_000, intervalMs: 10 },
    stopTimeoutMs: 60_000,
    log: () => {},
    ...o.deps,
  };
  return { app, deps, events, windows, trays, clipboard, errors, infos, started, services };
}

test('starts the service with the user-data folder, then opens a window and a tray on it', async (t) => {
  const h = harness(t);
  const r = await runShell(h.deps);
  assert.equal(r.status, 'running');
  assert.equal(h.started.length, 1);
  assert.equal(h.started[0].dataDir, path.resolve(USER_DATA));
  assert.equal(h.windows.length, 1);
  assert.deepEqual(h.windows[0].loaded, [h.services[0].appliance.url]);
  assert.equal(h.trays.length, 1);
  const port = h.services[0].appliance.port;
  assert.equal(r.status === 'running' && r.ingestAddress, `http://192.168.1.20:${port}/api/v1/ingest`);
  assert.match(h.trays[0].tooltip, new RegExp(`192\\.168\\.1\\.20:${port}`));
  assert.deepEqual(h.errors, []);
  assert.deepEqual(h.app.exitCodes, []);
});

test('SVC_DATA_DIR overrides the user-data folder', async (t) => {
  const dir = path.join(os.tmpdir(), 'elsewhere');
  const h = harness(t, { env: { SVC_DATA_DIR: dir } });
  await runShell(h.deps);
  assert.equal(h.started[0].dataDir, path.resolve(dir));
});

test('the window opens only after the service reports healthy', async (t) => {
  let healthy = false;
  const h = harness(t, { healthy: () => healthy });
  const running = runShell(h.deps);
  await until(() => (h.services[0]?.healthRequests ?? 0) >= 3, 'three health polls');
  assert.equal(h.windows.length, 0, 'window must wait for health');
  healthy = true;
  const r = await running;
  assert.equal(r.status, 'running');
  assert.equal(h.windows.length, 1);
});

test('a service that never gets healthy is reported, stopped, and the app exits 1', async (t) => {
  const h = harness(t, { healthy: () => false, deps: { health: { timeoutMs: 2000, intervalMs: 10 } } });
  const r = await runShell(h.deps);
  assert.equal(r.status, 'failed');
  assert.equal(h.errors.length, 1);
  assert.match(h.errors[0].message, /did not become healthy.*HTTP 503/);
  assert.equal(h.services[0].stopCalls, 1);
  assert.deepEqual(h.app.exitCodes, [1]);
  assert.equal(h.windows.length, 0);
});

test('"Copy ingest address" puts the LAN ingest address on the clipboard', async (t) => {
  const h = harness(t);
  const r = await runShell(h.deps);
  assert.equal(r.status, 'running');
  clickMenu(h.trays[0].menu, LABEL_COPY);
  assert.equal(h.clipboard.text, `http://192.168.1.20:${h.services[0].appliance.port}/api/v1/ingest`);
});

test('"Open Log Appliance" and a second instance both bring the window back', async (t) => {
  const h = harness(t);
  await runShell(h.deps);
  const w = h.windows[0];
  assert.equal(w.userClose(), true, 'closing the window is turned into hiding');
  assert.equal(w.hidden, 1);
  clickMenu(h.trays[0].menu, LABEL_OPEN);
  assert.equal(w.shown, 1);
  assert.equal(w.focused, 1);
  w.minimized = true;
  h.app.emit('second-instance');
  assert.equal(w.restored, 1);
  assert.equal(w.shown, 2);
  assert.equal(w.focused, 2);
  assert.equal(h.services[0].stopCalls, 0, 'hiding must not stop the service');
  assert.deepEqual(h.app.exitCodes, []);
});

test('Quit stops the service before exiting, exactly once when requested twice', async (t) => {
  const h = harness(t);
  await runShell(h.deps);
  clickMenu(h.trays[0].menu, LABEL_QUIT);
  clickMenu(h.trays[0].menu, LABEL_QUIT);
  await until(() => h.app.exitCodes.length > 0, 'exit');
  h.app.quit(); // e.g. Cmd+Q after the exit call: still nothing more
  await new Promise((r) => setTimeout(r, 60)); // a second, late stop would be visible by now
  assert.equal(h.services[0].stopCalls, 1);
  assert.deepEqual(h.app.exitCodes, [0]);
  const order = h.events.filter((e) => e !== 'window' && e !== 'quit-requested');
  assert.deepEqual(order, ['stop-begin', 'stop-end', 'exit:0']);
  assert.ok(!h.events.includes('quit-went-ahead'), 'Electron must not quit before the stop finished');
  assert.equal(h.trays[0].destroyed, true);
  assert.equal(h.windows[0].userClose(), false, 'while quitting, closing the window is not blocked');
});

test('a quit during start-up waits for the service, stops it and opens no window', async (t) => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const h = harness(t);
  const realStart = h.deps.startAppliance;
  let entered = false;
  h.deps.startAppliance = async (c, o) => {
    entered = true;
    await gate;
    return realStart(c, o);
  };
  const running = runShell(h.deps);
  await until(() => entered, 'start-up in progress');
  h.app.quit();
  release();
  const r = await running;
  assert.equal(r.status, 'quit');
  await until(() => h.app.exitCodes.length > 0, 'exit');
  assert.equal(h.services[0].stopCalls, 1);
  assert.deepEqual(h.app.exitCodes, [0]);
  assert.equal(h.windows.length, 0);
  assert.deepEqual(h.errors, []);
});

test('a quit before Electron is ready starts nothing and exits', async (t) => {
  let ready!: () => void;
  const h = harness(t);
  h.app.ready = new Promise<void>((r) => (ready = r));
  const running = runShell(h.deps);
  h.app.quit();
  ready();
  assert.equal((await running).status, 'quit');
  assert.equal(h.started.length, 0);
  assert.deepEqual(h.app.exitCodes, [0]);
});

test('a service that fails to stop still lets the app exit, with code 1', async (t) => {
  const h = harness(t, { stopError: new Error('disk gone') });
  await runShell(h.deps);
  h.app.quit();
  await until(() => h.app.exitCodes.length > 0, 'exit');
  assert.deepEqual(h.app.exitCodes, [1]);
});

test('when another instance holds the lock, this one quits without starting anything', async (t) => {
  const h = harness(t);
  h.app.lock = false;
  const r = await runShell(h.deps);
  assert.equal(r.status, 'refused');
  assert.equal(h.app.quitCalls, 1);
  assert.equal(h.started.length, 0);
  assert.equal(h.windows.length + h.trays.length, 0);
});

test('a config error is shown in one line and the app exits 1 without starting the service', async (t) => {
  const h = harness(t, { env: { SVC_PORT: 'eighty' } });
  const r = await runShell(h.deps);
  assert.equal(r.status, 'failed');
  assert.equal(h.errors.length, 1);
  assert.match(h.errors[0].message, /^SVC_PORT must be a whole number/);
  assert.ok(!h.errors[0].message.includes('\n'));
  assert.equal(h.started.length, 0);
  assert.deepEqual(h.app.exitCodes, [1]);
});

test('a start-up failure (port taken) is shown and the app exits 1', async (t) => {
  const h = harness(t, {
    deps: { startAppliance: async () => Promise.reject(new Error('listen EADDRINUSE: address already in use 0.0.0.0:8080\n    at stack')) },
  });
  const r = await runShell(h.deps);
  assert.equal(r.status, 'failed');
  assert.deepEqual(h.errors.map((e) => e.message), ['listen EADDRINUSE: address already in use 0.0.0.0:8080']);
  assert.deepEqual(h.app.exitCodes, [1]);
});

test('first start shows the generated admin password and ingest token once', async (t) => {
  const h = harness(t, { firstStart: { adminUsername: 'admin', adminPassword: 'S3cret-pass', ingestToken: 'tok_123' } });
  await runShell(h.deps);
  assert.equal(h.infos.length, 1);
  assert.match(h.infos[0].detail, /"admin"/);
  assert.match(h.infos[0].detail, /S3cret-pass/);
  assert.match(h.infos[0].detail, /tok_123/);
  assert.ok(h.infos[0].detail.includes(path.join(path.resolve(USER_DATA), 'initial-admin-password')));

  const h2 = harness(t, { firstStart: { adminUsername: 'ops', adminPassword: null, ingestToken: 'tok_9' } });
  await runShell(h2.deps);
  assert.match(h2.infos[0].detail, /SVC_ADMIN_PASSWORD/);

  const h3 = harness(t); // not a first start: no notice
  await runShell(h3.deps);
  assert.equal(h3.infos.length, 0);
});

test('the tray shows the ingest rate and an import in progress from the service, and keeps them current', async (t) => {
  // Logs keep being stored while `storing`: every reading finds 1,000 more.
  let stored = 0;
  let storing = false;
  let imports: ApplianceActivity['imports'] = [];
  const h = harness(t, { activity: () => ({ logsStored: (stored += storing ? 1_000 : 0), imports }), deps: { trayIntervalMs: 20 } });
  const r = await runShell(h.deps);
  assert.equal(r.status, 'running');
  const tray = h.trays[0]!;
  const labels = () => tray.menu.map((m) => ('label' in m ? `${m.label}${m.enabled === false ? ' (greyed)' : ''}` : '—'));
  await until(() => labels()[0] === 'Ingest idle (greyed)', 'a second reading: nothing stored between them');
  assert.deepEqual(labels(), ['Ingest idle (greyed)', 'No import running (greyed)', '—', LABEL_OPEN, LABEL_COPY, '—', LABEL_QUIT]);
  storing = true;
  imports = [{ name: 'Security.evtx', fractal: 'case-7', phase: 'processing', bytesRead: 25, sizeBytes: 100, eventsAccepted: 3_000 }];
  await until(() => /^Ingesting [\d,]+ logs\/s$/.test(labels()[0]!.replace(' (greyed)', '')), 'a rate');
  assert.equal(labels()[1], 'Importing Security.evtx into case-7: 25%, 3,000 events (greyed)');
  assert.match(tray.tooltip, /^Log Appliance: ingest at http:\/\/192\.168\.1\.20:\d+\/api\/v1\/ingest\nIngesting [\d,]+ logs\/s\nImporting Security\.evtx/);
  clickMenu(tray.menu, LABEL_OPEN); // the actions still work from a redrawn menu
  storing = false;
  imports = [];
  await until(() => labels()[0] === 'Ingest idle (greyed)' && labels()[1] === 'No import running (greyed)', 'idle, no import');
  h.app.quit();
  await until(() => h.app.exitCodes.length === 1, 'the exit');
  const after = tray.updates;
  await new Promise((res) => setTimeout(res, 100));
  assert.equal(tray.updates, after, 'no redraw after the quit');
});
