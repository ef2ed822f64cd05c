// `npm start` as a new user runs it: a child process on a fresh data dir, health within 15 s,
// the admin password and ingest token printed once, and everything kept across a restart.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { Client, signIn } from '../support/appliance.ts';

const root = path.resolve(import.meta.dirname, '../..');
const dataDir = mkdtempSync(path.join(tmpdir(), 'svc-start-'));
after(() => rmSync(dataDir, { recursive: true, force: true }));

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
}

async function start(port: number): Promise<{ child: ChildProcess; out: () => string; healthyAfterMs: number }> {
  let out = '';
  const t0 = Date.now();
  const child = spawn(process.execPath, ['--import', 'tsx', 'service/src/main.ts'], {
    cwd: root,
    env: { ...process.env, SVC_DATA_DIR: dataDir, SVC_PORT: String(port), SVC_HOST: '127.0.0.1', SVC_LOG_LEVEL: 'warn' },
  });
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  for (;;) {
    if (Date.now() - t0 > 15_000) {
      child.kill('SIGKILL');
      throw new Error(`not healthy within 15 s; output:\n${out}`);
    }
    try {
      const r = await fetch(`http://127.0.0.1:${port}/api/v1/health`);
      if (r.status === 200 && (await r.json()).status === 'healthy') break;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { child, out: () => out, healthyAfterMs: Date.now() - t0 };
}

function stop(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.kill('SIGTERM');
  });
}

test('first start prints credentials once, and a restart keeps users, fractals and tokens', async () => {
  const port = await freePort();
  const first = await start(port);
  await new Promise((r) => setTimeout(r, 200));
  const text = first.out();
  const password = /Admin password: (\S+)/.exec(text)?.[1];
  const token = /Ingest token:\s+(svc_ingest_[0-9a-f]{32})/.exec(text)?.[1];
  assert.ok(password, `password not printed:\n${text}`);
  assert.ok(token, `token not printed:\n${text}`);
  assert.match(text, /Admin user:\s+admin/);

  const file = path.join(dataDir, 'initial-admin-password');
  assert.equal(readFileSync(file, 'utf8').trim(), password);
  assert.equal(statSync(file).mode & 0o777, 0o600);

  const admin = await signIn(`http://127.0.0.1:${port}`, 'admin', password);
  const fractals = (await admin.get('/api/v1/fractals')).body.data;
  assert.deepEqual(fractals.map((f: { name: string }) => f.name), ['default']);
  const defaultId = fractals[0].id;
  const tokens = (await admin.get(`/api/v1/fractals/${defaultId}/ingest-tokens`)).body.data;
  assert.equal(tokens[0].token, token);
  const me = (await admin.get('/api/v1/auth/me')).body.data;
  assert.equal(me.selected.id, defaultId);

  // Something to survive the restart.
  assert.equal((await admin.post('/api/v1/users', { username: 'carol', password: 'carol-password' })).status, 201);
  assert.equal((await admin.post('/api/v1/fractals', { name: 'firewall' })).status, 201);
  assert.equal(await stop(first.child), 0);

  const second = await start(port);
  try {
    await new Promise((r) => setTimeout(r, 200));
    assert.doesNotMatch(second.out(), /Admin password|Ingest token/, 'credentials are printed on the first start only');
    const again = await signIn(`http://127.0.0.1:${port}`, 'admin', password);
    const names = (await again.get('/api/v1/fractals')).body.data.map((f: { name: string }) => f.name);
    assert.deepEqual(names, ['default', 'firewall']);
    assert.equal((await again.get(`/api/v1/fractals/${defaultId}/ingest-tokens`)).body.data[0].token, token);
    await signIn(`http://127.0.0.1:${port}`, 'carol', 'carol-password');
    const anon = new Client(`http://127.0.0.1:${port}`);
    assert.equal((await anon.get('/api/v1/fractals')).status, 401);
  } finally {
    assert.equal(await stop(second.child), 0);
  }
});
