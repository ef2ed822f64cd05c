// `npm start` as a new user runs it: a child process on a fresh data dir that turns healthy,
// the admin password and ingest token printed once, and everything kept across a restart.
// (How fast it starts is the "ready in N ms" it prints, not a deadline here: machines are shared.)
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { Client, signIn } from '../support/appliance.ts';
import { startServiceProcess } from '../support/service-process.ts';
import { waitFor } from '../support/wait.ts';

const dataDir = mkdtempSync(path.join(tmpdir(), 'svc-start-'));
after(() => rmSync(dataDir, { recursive: true, force: true }));
const start = () => startServiceProcess({ dataDir });

test('first start prints credentials once, and a restart keeps users, fractals and tokens', async () => {
  const first = await start();
  // The first-start facts are printed after the listener answers health: wait for their last line.
  const text = await waitFor('the first-start facts', () => /Try it:.*\n/.test(first.output()) && first.output());
  const password = /Admin password: (\S+)/.exec(text)?.[1];
  const token = /Ingest token:\s+(svc_ingest_[0-9a-f]{32})/.exec(text)?.[1];
  assert.ok(password, `password not printed:\n${text}`);
  assert.ok(token, `token not printed:\n${text}`);
  assert.match(text, /Admin user:\s+admin/);

  const file = path.join(dataDir, 'initial-admin-password');
  assert.equal(readFileSync(file, 'utf8').trim(), password);
  assert.equal(statSync(file).mode & 0o777, 0o600);

  const admin = await signIn(first.base, 'admin', password);
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

  const second = await start();
  const base = second.base;
  let stopped = false;
  try {
    const again = await signIn(base, 'admin', password);
    const names = (await again.get('/api/v1/fractals')).body.data.map((f: { name: string }) => f.name);
    assert.deepEqual(names, ['default', 'firewall']);
    assert.equal((await again.get(`/api/v1/fractals/${defaultId}/ingest-tokens`)).body.data[0].token, token);
    await signIn(base, 'carol', 'carol-password');
    const anon = new Client(base);
    assert.equal((await anon.get('/api/v1/fractals')).status, 401);
    // Everything it will print is printed once it has exited.
    assert.equal(await second.stop(), 0);
    stopped = true;
    assert.match(second.output(), /ready in \d+ ms/);
    assert.doesNotMatch(second.output(), /Admin password|Ingest token/, 'credentials are printed on the first start only');
  } finally {
    if (!stopped) await second.stop();
  }
});
