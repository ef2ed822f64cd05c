// API keys of fractals and prisms over real HTTP: management routes, authenticating with a key,
// its scope and limits, and how it is stored in the SQLite file.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN_PASSWORD, Client, makeUser, signIn, startTestAppliance, type TestAppliance } from '../support/appliance.ts';
import {
  API_KEY_RE,
  createApiKey,
  createFractal,
  credentialClient,
  expectBadField,
  expectError,
  expectOk,
  grant,
  metadataFilesContain,
  readMetadataTable,
  unknownId,
  UUID_RE,
} from '../support/api.ts';
import { waitFor } from '../support/wait.ts';

let app: TestAppliance;
let admin: Client;
let anon: Client;
let fa: any; // fractal A
let fb: any; // fractal B
let prism: any;
let prismOther: any;
const A = () => `/api/v1/fractals/${fa.id}`;
const B = () => `/api/v1/fractals/${fb.id}`;
const P = () => `/api/v1/prisms/${prism.id}`;
const inOneHour = () => new Date(Date.now() + 3600_000).toISOString();

before(async () => {
  app = await startTestAppliance();
  admin = await signIn(app.url, 'admin', ADMIN_PASSWORD);
  anon = new Client(app.url);
  fa = await createFractal(admin, 'keys-a');
  fb = await createFractal(admin, 'keys-b');
  prism = expectOk(await admin.post('/api/v1/prisms', { name: 'keys-prism', fractal_ids: [fa.id, fb.id] }), 201);
  prismOther = expectOk(await admin.post('/api/v1/prisms', { name: 'keys-prism-other', fractal_ids: [fb.id] }), 201);
});
after(async () => {
  await app?.dispose();
});

describe('fractal API keys: management', () => {
  test('create returns the key once with default permissions; GET never returns it', async () => {
    const res = await admin.post(`${A()}/api-keys`, { name: 'ci-reader', description: 'used by CI' });
    const k = expectOk(res, [200, 201]);
    assert.match(k.id, UUID_RE);
    assert.match(k.key, API_KEY_RE);
    assert.equal(k.name, 'ci-reader');
    assert.equal(k.description, 'used by CI');
    assert.equal(k.fractal_id, fa.id);
    assert.equal(k.enabled, true);
    assert.equal(k.expires_at, null);
    assert.deepEqual(k.permissions, { query: true, comment: true, alert_manage: false, notebook: false, dashboard: false });

    const list = await admin.get(`${A()}/api-keys`);
    const listed = expectOk<any[]>(list).find((x) => x.id === k.id);
    assert.ok(listed);
    assert.equal(listed.name, 'ci-reader');
    assert.deepEqual(listed.permissions, k.permissions);
    assert.equal('key' in listed, false);
    assert.ok(!JSON.stringify(list.body).includes(k.key), 'the list never contains the key');

    const one = await admin.get(`${A()}/api-keys/${k.id}`);
    assert.equal(expectOk(one).id, k.id);
    assert.equal('key' in one.body.data, false);
    assert.ok(!JSON.stringify(one.body).includes(k.key), 'GET one never contains the key');

    // Two keys never share a value.
    const k2 = await createApiKey(admin, A(), { name: 'ci-reader-2' });
    assert.notEqual(k2.key, k.key);
  });

  test('permissions given at creation are stored; missing ones default', async () => {
    const k = await createApiKey(admin, A(), { name: 'perm-custom', permissions: { comment: false, dashboard: true } });
    assert.deepEqual(k.permissions, { query: true, comment: false, alert_manage: false, notebook: false, dashboard: true });
    assert.deepEqual(expectOk(await admin.get(`${A()}/api-keys/${k.id}`)).permissions, k.permissions);
  });

  test('a permission name the service does not know is a 400 naming it, on create and update', async () => {
    const k = await createApiKey(admin, A(), { name: 'misspelt' });
    expectError(await admin.put(`${A()}/api-keys/${k.id}`, { permissions: { qurey: true } }), 400, 'qurey');
    expectError(await admin.post(`${A()}/api-keys`, { name: 'misspelt-2', permissions: { quer: false } }), 400, 'quer');
    assert.deepEqual(expectOk(await admin.get(`${A()}/api-keys/${k.id}`)).permissions, k.permissions, 'nothing changed');
  });

  test('PUT changes name, description, permissions (merged), expiry and enabled', async () => {
    const k = await createApiKey(admin, A(), { name: 'to-edit', description: 'before' });
    const exp = inOneHour();
    const u = expectOk(
      await admin.put(`${A()}/api-keys/${k.id}`, { name: 'edited', description: 'after', permissions: { notebook: true }, expires_at: exp }),
    );
    assert.equal(u.name, 'edited');
    assert.equal(u.description, 'after');
    assert.deepEqual(u.permissions, { query: true, comment: true, alert_manage: false, notebook: true, dashboard: false });
    assert.equal(new Date(u.expires_at).getTime(), new Date(exp).getTime());
    assert.equal('key' in u, false);

    const partial = expectOk(await admin.put(`${A()}/api-keys/${k.id}`, { description: '' }));
    assert.equal(partial.name, 'edited', 'omitted fields are kept');
    assert.equal(partial.description, '');
    assert.equal(partial.permissions.notebook, true);

    const cleared = expectOk(await admin.put(`${A()}/api-keys/${k.id}`, { expires_at: null }));
    assert.equal(cleared.expires_at, null);

    const got = expectOk(await admin.get(`${A()}/api-keys/${k.id}`));
    assert.equal(got.name, 'edited');
    assert.equal(got.expires_at, null);

    // The key still works after edits.
    expectOk(await credentialClient(app.url, k.key).get(A()));
    const off = expectOk(await admin.put(`${A()}/api-keys/${k.id}`, { enabled: false }));
    assert.equal(off.enabled, false);
    expectError(await credentialClient(app.url, k.key).get(A()), 401);
  });

  test('toggle disables and re-enables the key', async () => {
    const k = await createApiKey(admin, A(), { name: 'toggled' });
    const kc = credentialClient(app.url, k.key);
    expectOk(await kc.get(A()));
    const off = expectOk(await admin.post(`${A()}/api-keys/${k.id}/toggle`));
    assert.equal(off.enabled, false);
    assert.equal(expectOk(await admin.get(`${A()}/api-keys/${k.id}`)).enabled, false);
    expectError(await kc.get(A()), 401);
    expectError(await kc.get('/api/v1/fractals'), 401);
    const on = expectOk(await admin.post(`${A()}/api-keys/${k.id}/toggle`));
    assert.equal(on.enabled, true);
    expectOk(await kc.get(A()));
  });

  test('DELETE removes the key; it is then refused (401) and unknown (404)', async () => {
    const k = await createApiKey(admin, A(), { name: 'deleted-key' });
    const kc = credentialClient(app.url, k.key);
    expectOk(await kc.get(A()));
    expectOk(await admin.del(`${A()}/api-keys/${k.id}`));
    expectError(await kc.get(A()), 401);
    expectError(await admin.get(`${A()}/api-keys/${k.id}`), 404);
    expectError(await admin.del(`${A()}/api-keys/${k.id}`), 404);
    expectError(await admin.post(`${A()}/api-keys/${k.id}/toggle`), 404);
    assert.ok(!expectOk<any[]>(await admin.get(`${A()}/api-keys`)).some((x) => x.id === k.id));
    // Its name is free again.
    await createApiKey(admin, A(), { name: 'deleted-key' });
  });

  test('a duplicate name on the same fractal is a conflict (409), on another fractal it is fine', async () => {
    const k = await createApiKey(admin, A(), { name: 'shipper' });
    expectError(await admin.post(`${A()}/api-keys`, { name: 'shipper' }), 409, /shipper/);
    expectError(await admin.post(`${A()}/api-keys`, { name: 'SHIPPER' }), 409);
    expectError(await admin.post(`${A()}/api-keys`, { name: ' Shipper ' }), 409);
    const other = await createApiKey(admin, A(), { name: 'shipper-two' });
    expectError(await admin.put(`${A()}/api-keys/${other.id}`, { name: 'Shipper' }), 409);
    expectError(await admin.put(`${A()}/api-keys/${other.id}`, { name: ' shipper ' }), 409);
    assert.equal(expectOk(await admin.get(`${A()}/api-keys/${other.id}`)).name, 'shipper-two');
    assert.equal(expectOk<any[]>(await admin.get(`${A()}/api-keys`)).filter((x) => x.name.toLowerCase() === 'shipper').length, 1);
    // Renaming to its own name in another case is allowed.
    assert.equal(expectOk(await admin.put(`${A()}/api-keys/${k.id}`, { name: 'Shipper' })).name, 'Shipper');
    await createApiKey(admin, B(), { name: 'shipper' });
  });

  test('bad input is refused with a sentence naming the field (400)', async () => {
    const past = new Date(Date.now() - 60_000).toISOString();
    expectBadField(await admin.post(`${A()}/api-keys`, {}), 'name');
    expectBadField(await admin.post(`${A()}/api-keys`, { name: 7 }), 'name');
    expectBadField(await admin.post(`${A()}/api-keys`, { name: '' }), 'name');
    expectBadField(await admin.post(`${A()}/api-keys`, { name: 'bad-desc', description: 1 }), 'description');
    expectBadField(await admin.post(`${A()}/api-keys`, { name: 'bad-exp', expires_at: past }), 'expires_at');
    expectBadField(await admin.post(`${A()}/api-keys`, { name: 'bad-exp', expires_at: 'next tuesday' }), 'expires_at');
    expectBadField(await admin.post(`${A()}/api-keys`, { name: 'bad-exp', expires_at: 1893456000 }), 'expires_at');
    expectBadField(await admin.post(`${A()}/api-keys`, { name: 'bad-perm', permissions: { query: 'yes' } }), 'permissions.query');
    expectBadField(await admin.post(`${A()}/api-keys`, { name: 'bad-perm', permissions: true }), 'permissions');
    expectBadField(await admin.post('/api/v1/fractals/not-a-uuid/api-keys', { name: 'x' }), 'id');
    expectBadField(await admin.get(`${A()}/api-keys/not-a-uuid`), 'keyId');
    assert.ok(
      !expectOk<any[]>(await admin.get(`${A()}/api-keys`)).some((k) => ['bad-desc', 'bad-exp', 'bad-perm'].includes(k.name)),
      'no refused request created a key',
    );

    const k = await createApiKey(admin, A(), { name: 'put-validation' });
    expectBadField(await admin.put(`${A()}/api-keys/${k.id}`, { expires_at: past }), 'expires_at');
    expectBadField(await admin.put(`${A()}/api-keys/${k.id}`, { enabled: 'no' }), 'enabled');
    expectBadField(await admin.put(`${A()}/api-keys/${k.id}`, { name: '' }), 'name');
    expectBadField(await admin.put(`${A()}/api-keys/${k.id}`, { permissions: { dashboard: 1 } }), 'permissions.dashboard');
    expectBadField(await admin.put(`${A()}/api-keys/zzz`, { name: 'x' }), 'keyId');
    expectBadField(await admin.del(`${A()}/api-keys/zzz`), 'keyId');
    expectBadField(await admin.post(`${A()}/api-keys/zzz/toggle`), 'keyId');
    const got = expectOk(await admin.get(`${A()}/api-keys/${k.id}`));
    assert.equal(got.expires_at, null);
    assert.equal(got.enabled, true);
  });

  test('unknown fractal or key, or a key of another fractal, is 404', async () => {
    const kb = await createApiKey(admin, B(), { name: 'belongs-to-b' });
    expectError(await admin.get(`${A()}/api-keys/${kb.id}`), 404);
    expectError(await admin.put(`${A()}/api-keys/${kb.id}`, { name: 'stolen' }), 404);
    expectError(await admin.del(`${A()}/api-keys/${kb.id}`), 404);
    expectError(await admin.post(`${A()}/api-keys/${kb.id}/toggle`), 404);
    assert.equal(expectOk(await admin.get(`${B()}/api-keys/${kb.id}`)).name, 'belongs-to-b');
    expectOk(await credentialClient(app.url, kb.key).get(B()));
    expectError(await admin.get(`${A()}/api-keys/${unknownId()}`), 404);
    expectError(await admin.get(`/api/v1/fractals/${unknownId()}/api-keys`), 404);
    expectError(await admin.post(`/api/v1/fractals/${unknownId()}/api-keys`, { name: 'ghost' }), 404);
  });

  test('no credentials is 401 on every key route; non-admins get 403', async () => {
    const k = await createApiKey(admin, A(), { name: 'anon-target' });
    expectError(await anon.get(`${A()}/api-keys`), 401);
    expectError(await anon.post(`${A()}/api-keys`, { name: 'anon' }), 401);
    expectError(await anon.get(`${A()}/api-keys/${k.id}`), 401);
    expectError(await anon.put(`${A()}/api-keys/${k.id}`, { name: 'anon' }), 401);
    expectError(await anon.del(`${A()}/api-keys/${k.id}`), 401);
    expectError(await anon.post(`${A()}/api-keys/${k.id}/toggle`), 401);

    const analyst = await makeUser(admin, 'keys-analyst');
    await grant(admin, fa.id, { username: 'keys-analyst' }, 'analyst');
    expectError(await analyst.get(`${A()}/api-keys`), 403);
    expectError(await analyst.post(`${A()}/api-keys`, { name: 'analyst-key' }), 403);
    expectError(await analyst.get(`${A()}/api-keys/${k.id}`), 403);
    expectError(await analyst.put(`${A()}/api-keys/${k.id}`, { name: 'x' }), 403);
    expectError(await analyst.del(`${A()}/api-keys/${k.id}`), 403);
    expectError(await analyst.post(`${A()}/api-keys/${k.id}/toggle`), 403);
    const got = expectOk(await admin.get(`${A()}/api-keys/${k.id}`));
    assert.equal(got.name, 'anon-target');
    assert.equal(got.enabled, true);
  });
});

describe('authenticating with an API key', () => {
  test('works as Authorization: Bearer and as X-API-Key', async () => {
    const k = await createApiKey(admin, A(), { name: 'two-headers' });
    for (const how of ['bearer', 'x-api-key'] as const) {
      const kc = credentialClient(app.url, k.key, how);
      assert.equal(expectOk(await kc.get(A())).id, fa.id, how);
      assert.equal(expectOk(await kc.get(`${A()}/stats`)).log_count, 0, how);
      const me = expectOk(await kc.get('/api/v1/auth/me'));
      assert.equal(me.api_key?.id ?? me.id, k.id, how);
      assert.equal(me.is_admin, false);
      assert.equal(me.selected.id, fa.id);
    }
    // A near miss of the key is refused.
    const wrong = k.key.slice(0, -1) + (k.key.endsWith('0') ? '1' : '0');
    expectError(await credentialClient(app.url, wrong).get(A()), 401);
    expectError(await credentialClient(app.url, wrong, 'x-api-key').get(A()), 401);
  });

  test('an expired key is refused (401) and listed as expired', async () => {
    // Lives long enough to be used once on a busy machine, then is waited out.
    const k = await createApiKey(admin, A(), { name: 'short-lived', expires_at: new Date(Date.now() + 10_000).toISOString() });
    const kc = credentialClient(app.url, k.key);
    expectOk(await kc.get(A()));
    await waitFor('the key to expire', async () => (await kc.get(A())).status === 401);
    expectError(await kc.get('/api/v1/fractals'), 401);
    const got = expectOk(await admin.get(`${A()}/api-keys/${k.id}`));
    assert.equal(got.expired, true);
    // Extending the expiry revives it.
    expectOk(await admin.put(`${A()}/api-keys/${k.id}`, { expires_at: inOneHour() }));
    expectOk(await kc.get(A()));
  });

  test('a key scoped to fractal A sees only A: B is 404 and GET /fractals lists only A', async () => {
    const k = await createApiKey(admin, A(), { name: 'scoped-a' });
    const kc = credentialClient(app.url, k.key);
    expectOk(await kc.get(A()));
    expectError(await kc.get(B()), 404);
    expectError(await kc.get(`${B()}/stats`), 404);
    expectError(await kc.post(`${B()}/select`), 404);
    const list = expectOk<any[]>(await kc.get('/api/v1/fractals'));
    assert.deepEqual(list.map((f) => f.id), [fa.id]);
    expectError(await kc.get(P()), 404, /not found/);
    assert.deepEqual(expectOk(await kc.get('/api/v1/prisms')), []);
  });

  test('a key cannot use admin routes (403) and they change nothing', async () => {
    const k = await createApiKey(admin, A(), {
      name: 'all-permissions',
      permissions: { query: true, comment: true, alert_manage: true, notebook: true, dashboard: true },
    });
    const kc = credentialClient(app.url, k.key);
    const refused = [
      await kc.put(A(), { name: 'renamed-by-key' }),
      await kc.del(A()),
      await kc.put(`${A()}/retention`, { retention_days: 1 }),
      await kc.put(`${A()}/archive-retention`, { archive_retention_days: 1 }),
      await kc.put(`${A()}/disk-quota`, { quota_bytes: 1 }),
      await kc.get(`${A()}/permissions`),
      await kc.post(`${A()}/permissions`, { username: 'admin', role: 'viewer' }),
      await kc.get(`${A()}/api-keys`),
      await kc.post(`${A()}/api-keys`, { name: 'minted-by-key' }),
      await kc.put(`${A()}/api-keys/${k.id}`, { permissions: { query: true } }),
      await kc.post(`${A()}/api-keys/${k.id}/toggle`),
      await kc.get(`${A()}/ingest-tokens`),
      await kc.post(`${A()}/ingest-tokens`, { name: 'minted-by-key' }),
      await kc.post('/api/v1/fractals', { name: 'made-by-key' }),
      await kc.post('/api/v1/fractals/stats/refresh'),
      await kc.get('/api/v1/users'),
      await kc.get('/api/v1/groups'),
      await kc.post('/api/v1/prisms', { name: 'prism-by-key', fractal_ids: [fa.id] }),
    ];
    for (const r of refused) expectError(r, 403);
    const f = expectOk(await admin.get(A()));
    assert.equal(f.name, 'keys-a');
    assert.equal(f.retention_days, null);
    assert.ok(!expectOk<any[]>(await admin.get(`${A()}/api-keys`)).some((x) => x.name === 'minted-by-key'));
    assert.ok(!expectOk<any[]>(await admin.get('/api/v1/fractals')).some((x) => x.name === 'made-by-key'));
    assert.equal(expectOk(await admin.get(`${A()}/api-keys/${k.id}`)).enabled, true);
  });

  test('a key without the query permission cannot read its fractal (403)', async () => {
    const k = await createApiKey(admin, A(), { name: 'no-query', permissions: { query: false } });
    assert.equal(k.permissions.query, false);
    expectError(await credentialClient(app.url, k.key).get(`${A()}/stats`), 403, /query/);
  });

  test('the SQLite file holds no plaintext key', async () => {
    const k = await createApiKey(admin, A(), { name: 'stored-hashed' });
    // Use it once so any "last used" bookkeeping is written too.
    expectOk(await credentialClient(app.url, k.key).get(A()));
    const rows = readMetadataTable(app, 'api_keys');
    const row = rows.find((r) => r.id === k.id);
    assert.ok(row, 'the key row is in the file');
    for (const r of rows) {
      for (const [col, v] of Object.entries(r)) {
        assert.ok(!String(v).includes(k.key), `api_keys.${col} holds the plaintext key`);
        assert.ok(!String(v).includes(k.key.slice(4)), `api_keys.${col} holds the key's hex`);
      }
    }
    assert.equal(metadataFilesContain(app, k.key), false, 'the key appears nowhere in the SQLite file');
  });
});

describe('prism API keys', () => {
  test('create, list, get, edit, toggle and delete under /prisms/{id}/api-keys', async () => {
    const k = await createApiKey(admin, P(), { name: 'prism-reader' });
    assert.match(k.key, API_KEY_RE);
    assert.equal(k.prism_id, prism.id);
    assert.deepEqual(k.permissions, { query: true, comment: true, alert_manage: false, notebook: false, dashboard: false });
    const list = await admin.get(`${P()}/api-keys`);
    assert.ok(expectOk<any[]>(list).some((x) => x.id === k.id));
    assert.ok(!JSON.stringify(list.body).includes(k.key));
    const one = await admin.get(`${P()}/api-keys/${k.id}`);
    assert.equal(expectOk(one).name, 'prism-reader');
    assert.ok(!JSON.stringify(one.body).includes(k.key));
    assert.equal(expectOk(await admin.put(`${P()}/api-keys/${k.id}`, { name: 'prism-reader-2' })).name, 'prism-reader-2');
    expectError(await admin.post(`${P()}/api-keys`, { name: 'PRISM-READER-2' }), 409);

    const kc = credentialClient(app.url, k.key);
    assert.equal(expectOk(await kc.get(P())).id, prism.id);
    assert.deepEqual(expectOk<any[]>(await kc.get('/api/v1/prisms')).map((p) => p.id), [prism.id]);
    expectError(await kc.get(`/api/v1/prisms/${prismOther.id}`), 404);
    expectError(await kc.put(P(), { name: 'renamed-by-key' }), 403);
    expectError(await kc.get(`${P()}/api-keys`), 403);

    assert.equal(expectOk(await admin.post(`${P()}/api-keys/${k.id}/toggle`)).enabled, false);
    expectError(await kc.get(P()), 401);
    assert.equal(expectOk(await admin.post(`${P()}/api-keys/${k.id}/toggle`)).enabled, true);
    expectOk(await kc.get(P()));

    // A prism key is not a fractal key: the fractal route does not know it.
    expectError(await admin.get(`${A()}/api-keys/${k.id}`), 404);

    expectOk(await admin.del(`${P()}/api-keys/${k.id}`));
    expectError(await kc.get(P()), 401);
    expectError(await admin.get(`${P()}/api-keys/${k.id}`), 404);
  });

  test('errors: 400 naming the field, 401, 404', async () => {
    expectBadField(await admin.post(`${P()}/api-keys`, {}), 'name');
    expectBadField(await admin.post(`${P()}/api-keys`, { name: 'p', expires_at: '2001-01-01T00:00:00Z' }), 'expires_at');
    expectBadField(await admin.get('/api/v1/prisms/nope/api-keys'), 'id');
    expectBadField(await admin.get(`${P()}/api-keys/nope`), 'keyId');
    expectError(await anon.get(`${P()}/api-keys`), 401);
    expectError(await anon.post(`${P()}/api-keys`, { name: 'anon' }), 401);
    expectError(await admin.get(`/api/v1/prisms/${unknownId()}/api-keys`), 404);
    expectError(await admin.get(`${P()}/api-keys/${unknownId()}`), 404);
  });
});
