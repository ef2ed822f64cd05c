// `npm start` as a new user runs it: a child process on a fresh data dir, health within 15 s,
// the admin password and ingest token printed once, and everything kept across a restart.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { Client, signIn } from '../support/appliance.ts';
import { freePort, startServiceProcess } from '../support/service-process.ts';

const dataDir = mkdtempSync(path.join(tmpdir(), 'svc-start-'));
after(() => rmSync(dataDir, { recursive: true, force: true }));
const start = (port: number) => startServiceProcess({ dataDir, port, timeoutMs: 15_000 });

test('first start prints credentials once, and a restart keeps users, fractals and tokens', async () => {
  const port = await freePort();
  const first = await start(port);
  await new Promise((r) => setTimeout(r, 200));
  const text = first.output();
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
  assert.equal(await first.stop(), 0);

  const second = await start(port);
  try {
    await new Promise((r) => setTimeout(r, 200));
    assert.doesNotMatch(second.output(), /Admin password|Ingest token/, 'credentials are printed on the first start only');
    const again = await signIn(`http://127.0.0.1:${port}`, 'admin', password);
    const names = (await again.get('/api/v1/fractals')).body.data.map((f: { name: string }) => f.name);
    assert.deepEqual(names, ['default', 'firewall']);
    assert.equal((await again.get(`/api/v1/fractals/${defaultId}/ingest-tokens`)).body.data[0].token, token);
    await signIn(`http://127.0.0.1:${port}`, 'carol', 'carol-password');
    const anon = new Client(`http://127.0.0.1:${port}`);
    assert.equal((await anon.get('/api/v1/fractals')).status, 401);
  } finally {
    assert.equal(await second.stop(), 0);
  }
});
