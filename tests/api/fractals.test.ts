// Fractals over real HTTP against a real appliance (embedded ClickHouse, SQLite file):
// CRUD, select, stats, retention, quota, and what deleting a fractal takes with it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN_PASSWORD, Client, makeUser, signIn, startTestAppliance, type TestAppliance } from '../support/appliance.ts';
import {
  createApiKey,
  createFractal,
  countLogs,
  credentialClient,
  expectBadField,
  expectError,
  expectOk,
  grant,
  INGEST_TOKEN_RE,
  insertLogs,
  readMetadataTable,
  unknownId,
  UUID_RE,
} from '../support/api.ts';

let app: TestAppliance;
let admin: Client;
let anon: Client;
let defaultId: string;

before(async () => {
  app = await startTestAppliance();
  admin = await signIn(app.url, 'admin', ADMIN_PASSWORD);
  anon = new Client(app.url);
  const list = expectOk<any[]>(await admin.get('/api/v1/fractals'));
  defaultId = list.find((f) => f.name === 'default').id;
});
after(async () => {
  await app?.dispose();
});

describe('GET /api/v1/fractals', () => {
  test('lists the default fractal created on first start', async () => {
    const list = expectOk<any[]>(await admin.get('/api/v1/fractals'));
    assert.ok(Array.isArray(list));
    const def = list.find((f) => f.id === defaultId);
    assert.ok(def);
    assert.equal(def.name, 'default');
    assert.equal(def.is_default, true);
    assert.match(def.id, UUID_RE);
  });

  test('needs a session or key (401)', async () => {
    expectError(await anon.get('/api/v1/fractals'), 401);
  });

  test('rejects a garbage credential (401)', async () => {
    expectError(await credentialClient(app.url, 'svc_' + '0'.repeat(40)).get('/api/v1/fractals'), 401);
    expectError(await credentialClient(app.url, 'not-a-key').get('/api/v1/fractals'), 401);
  });
});

describe('POST /api/v1/fractals', () => {
  test('creates a fractal that GET one and the list return', async () => {
    const res = await admin.post('/api/v1/fractals', { name: '  Web Servers  ', description: 'nginx and apache' });
    const f = expectOk(res, [200, 201]);
    assert.match(f.id, UUID_RE);
    assert.equal(f.name, 'Web Servers', 'the name is trimmed');
    assert.equal(f.description, 'nginx and apache');
    assert.equal(f.is_default, false);
    assert.equal(f.retention_days, null);
    assert.equal(f.archive_retention_days, null);
    assert.equal(f.quota_bytes, null);
    assert.equal(f.log_count, 0);
    assert.ok(!Number.isNaN(Date.parse(f.created_at)));

    const one = expectOk(await admin.get(`/api/v1/fractals/${f.id}`));
    assert.equal(one.id, f.id);
    assert.equal(one.name, 'Web Servers');
    assert.equal(one.description, 'nginx and apache');

    const list = expectOk<any[]>(await admin.get('/api/v1/fractals'));
    assert.ok(list.some((x) => x.id === f.id && x.name === 'Web Servers'));
  });

  test('description is optional', async () => {
    const f = expectOk(await admin.post('/api/v1/fractals', { name: 'no-description' }), [200, 201]);
    assert.equal(f.description, '');
  });

  test('a new fractal gets a default ingest token, listed to its admins', async () => {
    const f = expectOk(await admin.post('/api/v1/fractals', { name: 'with-token' }), [200, 201]);
    const tokens = expectOk<any[]>(await admin.get(`/api/v1/fractals/${f.id}/ingest-tokens`));
    assert.equal(tokens.length, 1);
    const t = tokens[0];
    assert.match(t.token, INGEST_TOKEN_RE);
    assert.equal(t.fractal_id, f.id);
    assert.equal(t.enabled, true);
    assert.equal(t.parser_type, 'json');
    if (f.default_ingest_token !== undefined) assert.equal(f.default_ingest_token, t.token);
    // Every fractal's default token is its own.
    const other = expectOk<any[]>(await admin.get(`/api/v1/fractals/${defaultId}/ingest-tokens`));
    assert.ok(other.every((o) => o.token !== t.token));
  });

  test('a duplicate name is a conflict, whatever its case or spacing (409)', async () => {
    await createFractal(admin, 'Firewall');
    expectError(await admin.post('/api/v1/fractals', { name: 'Firewall' }), 409, /Firewall/i);
    expectError(await admin.post('/api/v1/fractals', { name: 'FIREWALL' }), 409);
    expectError(await admin.post('/api/v1/fractals', { name: ' firewall ' }), 409);
    expectError(await admin.post('/api/v1/fractals', { name: 'DEFAULT' }), 409);
    const list = expectOk<any[]>(await admin.get('/api/v1/fractals'));
    assert.equal(list.filter((f) => f.name.toLowerCase() === 'firewall').length, 1);
  });

  test('bad bodies are refused with a sentence naming the field (400)', async () => {
    expectBadField(await admin.post('/api/v1/fractals', {}), 'name');
    expectBadField(await admin.post('/api/v1/fractals', { name: 42 }), 'name');
    expectBadField(await admin.post('/api/v1/fractals', { name: '' }), 'name');
    expectBadField(await admin.post('/api/v1/fractals', { name: '   ' }), 'name');
    expectBadField(await admin.post('/api/v1/fractals', { name: 'x'.repeat(201) }), 'name');
    expectBadField(await admin.post('/api/v1/fractals', { name: 'ok-name', description: 7 }), 'description');
    expectBadField(await admin.post('/api/v1/fractals', { name: 'ok-name', description: 'd'.repeat(2001) }), 'description');
    expectError(await admin.post('/api/v1/fractals', [{ name: 'array' }]), 400);
    expectError(await admin.post('/api/v1/fractals', '{"name": '), 400);
    const list = expectOk<any[]>(await admin.get('/api/v1/fractals'));
    assert.ok(!list.some((f) => f.name === 'ok-name' || f.name === 'array'), 'nothing was created');
  });

  test('needs credentials (401) and the global admin flag (403)', async () => {
    expectError(await anon.post('/api/v1/fractals', { name: 'anon-made' }), 401);
    const plain = await makeUser(admin, 'fractals-plain-user');
    expectError(await plain.post('/api/v1/fractals', { name: 'user-made' }), 403);
    const list = expectOk<any[]>(await admin.get('/api/v1/fractals'));
    assert.ok(!list.some((f) => f.name === 'anon-made' || f.name === 'user-made'));
  });
});

describe('GET /api/v1/fractals/{id}', () => {
  test('unknown id 404, non-UUID id 400 naming the parameter, no credentials 401', async () => {
    expectError(await admin.get(`/api/v1/fractals/${unknownId()}`), 404);
    expectBadField(await admin.get('/api/v1/fractals/not-a-uuid'), 'id');
    expectError(await anon.get(`/api/v1/fractals/${defaultId}`), 401);
  });
});

describe('PUT /api/v1/fractals/{id}', () => {
  test('renames and re-describes; a partial body keeps the other fields', async () => {
    const f = await createFractal(admin, 'put-me', 'first');
    const renamed = expectOk(await admin.put(`/api/v1/fractals/${f.id}`, { name: ' put-me-2 ' }));
    assert.equal(renamed.name, 'put-me-2');
    assert.equal(renamed.description, 'first', 'description kept when only the name changes');

    const described = expectOk(await admin.put(`/api/v1/fractals/${f.id}`, { description: 'second' }));
    assert.equal(described.name, 'put-me-2', 'name kept when only the description changes');
    assert.equal(described.description, 'second');

    const cleared = expectOk(await admin.put(`/api/v1/fractals/${f.id}`, { description: '' }));
    assert.equal(cleared.description, '');

    const again = expectOk(await admin.get(`/api/v1/fractals/${f.id}`));
    assert.equal(again.name, 'put-me-2');
    assert.equal(again.description, '');
  });

  test('keeps its retention and quota settings when renamed', async () => {
    const f = await createFractal(admin, 'put-keeps-settings');
    expectOk(await admin.put(`/api/v1/fractals/${f.id}/retention`, { retention_days: 9 }));
    expectOk(await admin.put(`/api/v1/fractals/${f.id}/disk-quota`, { quota_bytes: 12345, action: 'rollover' }));
    const r = expectOk(await admin.put(`/api/v1/fractals/${f.id}`, { name: 'put-keeps-settings-2' }));
    assert.equal(r.retention_days, 9);
    assert.equal(r.quota_bytes, 12345);
    assert.equal(r.quota_action, 'rollover');
  });

  test('renaming onto another fractal name is a conflict (409); its own name in another case is fine', async () => {
    const a = await createFractal(admin, 'rename-a');
    await createFractal(admin, 'rename-b');
    expectError(await admin.put(`/api/v1/fractals/${a.id}`, { name: 'RENAME-B' }), 409);
    expectError(await admin.put(`/api/v1/fractals/${a.id}`, { name: 'default' }), 409);
    assert.equal(expectOk(await admin.get(`/api/v1/fractals/${a.id}`)).name, 'rename-a');
    assert.equal(expectOk(await admin.put(`/api/v1/fractals/${a.id}`, { name: 'Rename-A' })).name, 'Rename-A');
  });

  test('bad input 400, unknown 404, no credentials 401', async () => {
    const f = await createFractal(admin, 'put-errors');
    expectBadField(await admin.put(`/api/v1/fractals/${f.id}`, { name: 5 }), 'name');
    expectBadField(await admin.put(`/api/v1/fractals/${f.id}`, { name: '' }), 'name');
    expectBadField(await admin.put(`/api/v1/fractals/${f.id}`, { description: false }), 'description');
    expectBadField(await admin.put('/api/v1/fractals/123', { name: 'x' }), 'id');
    expectError(await admin.put(`/api/v1/fractals/${unknownId()}`, { name: 'ghost' }), 404);
    expectError(await anon.put(`/api/v1/fractals/${f.id}`, { name: 'anon' }), 401);
    assert.equal(expectOk(await admin.get(`/api/v1/fractals/${f.id}`)).name, 'put-errors');
  });
});

describe('POST /api/v1/fractals/{id}/select', () => {
  test('selects the fractal for the session, as GET /auth/me shows', async () => {
    const f = await createFractal(admin, 'select-me');
    const user = await makeUser(admin, 'selector');
    await grant(admin, f.id, { username: 'selector' }, 'viewer');
    const r = expectOk(await user.post(`/api/v1/fractals/${f.id}/select`));
    assert.equal(r.selected.id, f.id);
    assert.equal(r.selected.name, 'select-me');
    const me = expectOk(await user.get('/api/v1/auth/me'));
    assert.equal(me.selected.type, 'fractal');
    assert.equal(me.selected.id, f.id);

    // A fractal they hold no role on cannot be selected, and the selection stays.
    expectError(await user.post(`/api/v1/fractals/${defaultId}/select`), 404);
    assert.equal(expectOk(await user.get('/api/v1/auth/me')).selected.id, f.id);
  });

  test('unknown 404, non-UUID 400, no credentials 401', async () => {
    expectError(await admin.post(`/api/v1/fractals/${unknownId()}/select`), 404);
    expectBadField(await admin.post('/api/v1/fractals/xyz/select'), 'id');
    expectError(await anon.post(`/api/v1/fractals/${defaultId}/select`), 401);
  });
});

describe('GET /api/v1/fractals/{id}/stats and POST /fractals/stats/refresh', () => {
  test('report the logs stored in ClickHouse: count, size, oldest and newest', async () => {
    const f = await createFractal(admin, 'stats-fractal');
    const empty = expectOk(await admin.get(`/api/v1/fractals/${f.id}/stats`));
    assert.equal(empty.log_count, 0);
    assert.equal(empty.size_bytes, 0);
    assert.equal(empty.oldest, null);
    assert.equal(empty.newest, null);

    await insertLogs(app, f.id, [
      { timestamp: '2026-01-02 03:04:05.678', fields: { a: 1, msg: 'middle' } },
      { timestamp: '2026-01-01 00:00:00.000', fields: { a: 2, msg: 'first' } },
      { timestamp: '2026-01-05 12:30:00.250', fields: { a: 3, msg: 'last' } },
    ]);
    const s = expectOk(await admin.get(`/api/v1/fractals/${f.id}/stats`));
    assert.equal(s.log_count, 3);
    assert.ok(s.size_bytes > 0, 'size_bytes grows with stored logs');
    assert.equal(new Date(s.oldest).toISOString(), '2026-01-01T00:00:00.000Z');
    assert.equal(new Date(s.newest).toISOString(), '2026-01-05T12:30:00.250Z');

    // Another fractal's logs do not count here.
    await insertLogs(app, defaultId, [{ timestamp: '2025-06-01 00:00:00.000', fields: { other: true } }]);
    const again = expectOk(await admin.get(`/api/v1/fractals/${f.id}/stats`));
    assert.equal(again.log_count, 3);
    assert.equal(new Date(again.oldest).toISOString(), '2026-01-01T00:00:00.000Z');

    await insertLogs(app, f.id, [{ timestamp: '2026-01-03 00:00:00.000', fields: { a: 4, msg: 'one more, with a longer body' } }]);
    const more = expectOk(await admin.get(`/api/v1/fractals/${f.id}/stats`));
    assert.equal(more.log_count, 4);
    assert.ok(more.size_bytes > s.size_bytes, 'size grows when logs are added');

    // The fractal itself now reports the count.
    assert.equal(expectOk(await admin.get(`/api/v1/fractals/${f.id}`)).log_count, 4);
  });

  test('refresh recomputes every fractal, including empty ones, and the list shows the counts', async () => {
    const busy = await createFractal(admin, 'refresh-busy');
    const idle = await createFractal(admin, 'refresh-idle');
    await insertLogs(app, busy.id, [
      { timestamp: '2026-02-01 00:00:00.000', fields: { n: 1 } },
      { timestamp: '2026-02-02 00:00:00.000', fields: { n: 2 } },
    ]);
    const all = expectOk<any[]>(await admin.post('/api/v1/fractals/stats/refresh'));
    assert.ok(Array.isArray(all));
    const b = all.find((x) => x.fractal_id === busy.id);
    const i = all.find((x) => x.fractal_id === idle.id);
    assert.ok(b && i, 'every fractal is in the refresh result');
    assert.equal(b.log_count, 2);
    assert.ok(b.size_bytes > 0);
    assert.equal(new Date(b.oldest).toISOString(), '2026-02-01T00:00:00.000Z');
    assert.equal(new Date(b.newest).toISOString(), '2026-02-02T00:00:00.000Z');
    assert.equal(i.log_count, 0);
    assert.equal(i.size_bytes, 0);
    assert.equal(i.oldest, null);

    const list = expectOk<any[]>(await admin.get('/api/v1/fractals'));
    assert.equal(list.find((f) => f.id === busy.id).log_count, 2);
    assert.equal(list.find((f) => f.id === idle.id).log_count, 0);
  });

  test('stats: unknown 404, non-UUID 400, no credentials 401; refresh: 401 and 403 for non-admins', async () => {
    expectError(await admin.get(`/api/v1/fractals/${unknownId()}/stats`), 404);
    expectBadField(await admin.get('/api/v1/fractals/nope/stats'), 'id');
    expectError(await anon.get(`/api/v1/fractals/${defaultId}/stats`), 401);
    expectError(await anon.post('/api/v1/fractals/stats/refresh'), 401);
    const user = await makeUser(admin, 'refresh-nonadmin');
    expectError(await user.post('/api/v1/fractals/stats/refresh'), 403);
  });
});

describe('PUT /api/v1/fractals/{id}/retention and /archive-retention', () => {
  for (const [route, field] of [
    ['retention', 'retention_days'],
    ['archive-retention', 'archive_retention_days'],
  ] as const) {
    test(`${route}: set, read back, clear with null`, async () => {
      const f = await createFractal(admin, `${route}-set`);
      const r = expectOk(await admin.put(`/api/v1/fractals/${f.id}/${route}`, { [field]: 30 }));
      assert.equal(r[field], 30);
      assert.equal(expectOk(await admin.get(`/api/v1/fractals/${f.id}`))[field], 30);
      const list = expectOk<any[]>(await admin.get('/api/v1/fractals'));
      assert.equal(list.find((x) => x.id === f.id)[field], 30);
      const cleared = expectOk(await admin.put(`/api/v1/fractals/${f.id}/${route}`, { [field]: null }));
      assert.equal(cleared[field], null);
      assert.equal(expectOk(await admin.get(`/api/v1/fractals/${f.id}`))[field], null);
    });

    test(`${route}: one setting does not disturb the other`, async () => {
      const f = await createFractal(admin, `${route}-independent`);
      const otherRoute = route === 'retention' ? 'archive-retention' : 'retention';
      const otherField = field === 'retention_days' ? 'archive_retention_days' : 'retention_days';
      expectOk(await admin.put(`/api/v1/fractals/${f.id}/${otherRoute}`, { [otherField]: 400 }));
      const r = expectOk(await admin.put(`/api/v1/fractals/${f.id}/${route}`, { [field]: 7 }));
      assert.equal(r[field], 7);
      assert.equal(r[otherField], 400);
    });

    test(`${route}: bad values 400 naming "${field}", 404, 401`, async () => {
      const f = await createFractal(admin, `${route}-bad`);
      expectBadField(await admin.put(`/api/v1/fractals/${f.id}/${route}`, {}), field);
      expectBadField(await admin.put(`/api/v1/fractals/${f.id}/${route}`, { [field]: '30' }), field);
      expectBadField(await admin.put(`/api/v1/fractals/${f.id}/${route}`, { [field]: 1.5 }), field);
      expectBadField(await admin.put(`/api/v1/fractals/${f.id}/${route}`, { [field]: 0 }), field);
      expectBadField(await admin.put(`/api/v1/fractals/${f.id}/${route}`, { [field]: -3 }), field);
      expectBadField(await admin.put(`/api/v1/fractals/not-an-id/${route}`, { [field]: 3 }), 'id');
      expectError(await admin.put(`/api/v1/fractals/${unknownId()}/${route}`, { [field]: 3 }), 404);
      expectError(await anon.put(`/api/v1/fractals/${f.id}/${route}`, { [field]: 3 }), 401);
      assert.equal(expectOk(await admin.get(`/api/v1/fractals/${f.id}`))[field], null, 'nothing changed');
    });
  }
});

describe('PUT /api/v1/fractals/{id}/disk-quota', () => {
  test('sets a quota with action reject or rollover; null clears it', async () => {
    const f = await createFractal(admin, 'quota-fractal');
    const a = expectOk(await admin.put(`/api/v1/fractals/${f.id}/disk-quota`, { quota_bytes: 1_000_000, action: 'rollover' }));
    assert.equal(a.quota_bytes, 1_000_000);
    assert.equal(a.quota_action, 'rollover');
    const got = expectOk(await admin.get(`/api/v1/fractals/${f.id}`));
    assert.equal(got.quota_bytes, 1_000_000);
    assert.equal(got.quota_action, 'rollover');

    const b = expectOk(await admin.put(`/api/v1/fractals/${f.id}/disk-quota`, { quota_bytes: 5_000_000_000, action: 'reject' }));
    assert.equal(b.quota_bytes, 5_000_000_000);
    assert.equal(b.quota_action, 'reject');

    const c = expectOk(await admin.put(`/api/v1/fractals/${f.id}/disk-quota`, { quota_bytes: 2048 }));
    assert.equal(c.quota_bytes, 2048);
    assert.equal(c.quota_action, 'reject', 'the action is kept when omitted');

    const d = expectOk(await admin.put(`/api/v1/fractals/${f.id}/disk-quota`, { quota_bytes: null }));
    assert.equal(d.quota_bytes, null);
    assert.equal(expectOk(await admin.get(`/api/v1/fractals/${f.id}`)).quota_bytes, null);
  });

  test('bad values 400 naming the field, 404, 401', async () => {
    const f = await createFractal(admin, 'quota-bad');
    expectBadField(await admin.put(`/api/v1/fractals/${f.id}/disk-quota`, { quota_bytes: 100, action: 'delete' }), 'action');
    expectBadField(await admin.put(`/api/v1/fractals/${f.id}/disk-quota`, { quota_bytes: 100, action: 1 }), 'action');
    expectBadField(await admin.put(`/api/v1/fractals/${f.id}/disk-quota`, { action: 'reject' }), 'quota_bytes');
    expectBadField(await admin.put(`/api/v1/fractals/${f.id}/disk-quota`, { quota_bytes: '100' }), 'quota_bytes');
    expectBadField(await admin.put(`/api/v1/fractals/${f.id}/disk-quota`, { quota_bytes: -1 }), 'quota_bytes');
    expectBadField(await admin.put(`/api/v1/fractals/${f.id}/disk-quota`, { quota_bytes: 0 }), 'quota_bytes');
    expectBadField(await admin.put(`/api/v1/fractals/${f.id}/disk-quota`, { quota_bytes: 10.5 }), 'quota_bytes');
    expectBadField(await admin.put('/api/v1/fractals/zzz/disk-quota', { quota_bytes: 100 }), 'id');
    expectError(await admin.put(`/api/v1/fractals/${unknownId()}/disk-quota`, { quota_bytes: 100 }), 404);
    expectError(await anon.put(`/api/v1/fractals/${f.id}/disk-quota`, { quota_bytes: 100 }), 401);
    const got = expectOk(await admin.get(`/api/v1/fractals/${f.id}`));
    assert.equal(got.quota_bytes, null, 'nothing changed');
    assert.equal(got.quota_action, 'reject');
  });
});

describe('DELETE /api/v1/fractals/{id}', () => {
  test('the default fractal cannot be deleted (409) and stays', async () => {
    expectError(await admin.del(`/api/v1/fractals/${defaultId}`), 409, /default/i);
    const list = expectOk<any[]>(await admin.get('/api/v1/fractals'));
    assert.ok(list.some((f) => f.id === defaultId));
  });

  test('removes the fractal with its tokens, API keys, permissions, prism membership and logs', async () => {
    const f = await createFractal(admin, 'doomed');
    const keep = await createFractal(admin, 'survivor');

    const tokens = expectOk<any[]>(await admin.get(`/api/v1/fractals/${f.id}/ingest-tokens`));
    const extra = expectOk(await admin.post(`/api/v1/fractals/${f.id}/ingest-tokens`, { name: 'extra' }), 201);
    const tokenValues = [...tokens.map((t) => t.token), extra.token];
    const key = await createApiKey(admin, `/api/v1/fractals/${f.id}`, { name: 'doomed-key' });
    const keyClient = credentialClient(app.url, key.key);
    expectOk(await keyClient.get(`/api/v1/fractals/${f.id}`));

    const member = await makeUser(admin, 'doomed-viewer');
    await grant(admin, f.id, { username: 'doomed-viewer' }, 'viewer');
    expectOk(await member.get(`/api/v1/fractals/${f.id}`));
    expectOk(await member.post(`/api/v1/fractals/${f.id}/select`));

    const prism = expectOk(await admin.post('/api/v1/prisms', { name: 'doomed-prism', fractal_ids: [f.id, keep.id] }), 201);

    await insertLogs(app, f.id, [
      { timestamp: '2026-01-01 00:00:00.000', fields: { a: 1 } },
      { timestamp: '2026-01-01 00:00:01.000', fields: { a: 2 } },
    ]);
    await insertLogs(app, keep.id, [{ timestamp: '2026-01-01 00:00:00.000', fields: { a: 3 } }]);
    assert.equal(await countLogs(app, f.id), 2);

    // The tokens authenticate at the ingest endpoint (an empty body is refused after that, so no log is written).
    for (const value of tokenValues) {
      const probe = await credentialClient(app.url, value).post('/api/v1/ingest', '');
      assert.notEqual(probe.status, 401, `token accepted before the delete: ${JSON.stringify(probe.body)}`);
    }

    const del = await admin.del(`/api/v1/fractals/${f.id}`);
    expectOk(del);

    // Gone from the API.
    expectError(await admin.get(`/api/v1/fractals/${f.id}`), 404);
    assert.ok(!expectOk<any[]>(await admin.get('/api/v1/fractals')).some((x) => x.id === f.id));
    expectError(await admin.del(`/api/v1/fractals/${f.id}`), 404);
    expectError(await admin.get(`/api/v1/fractals/${f.id}/ingest-tokens`), 404);

    // Its ingest tokens no longer exist, and shippers using them are refused.
    for (const value of tokenValues) {
      assert.equal(app.context.ingestTokens.byValue(value), undefined, `token ${value} still resolves`);
      expectError(await credentialClient(app.url, value).post('/api/v1/ingest', { msg: 'after delete' }), 401);
    }
    assert.equal(readMetadataTable(app, 'ingest_tokens', 'fractal_id = ?', [f.id]).length, 0);

    // Its API key is refused.
    expectError(await keyClient.get(`/api/v1/fractals/${f.id}`), 401);
    expectError(await keyClient.get('/api/v1/fractals'), 401);
    assert.equal(readMetadataTable(app, 'api_keys', 'scope_id = ?', [f.id]).length, 0);

    // Its permissions are gone, and the member's session falls back to a fractal they can still see.
    assert.equal(readMetadataTable(app, 'permissions', 'scope_id = ?', [f.id]).length, 0);
    expectError(await member.get(`/api/v1/fractals/${f.id}`), 404);
    const me = expectOk(await member.get('/api/v1/auth/me'));
    assert.notEqual(me.selected?.id, f.id);

    // It left the prism; the other member stays.
    const p = expectOk(await admin.get(`/api/v1/prisms/${prism.id}`));
    assert.deepEqual(p.fractal_ids, [keep.id]);

    // Its logs are gone from ClickHouse; another fractal's are untouched.
    assert.equal(await countLogs(app, f.id), 0);
    assert.equal(await countLogs(app, keep.id), 1);
    assert.equal(expectOk(await admin.get(`/api/v1/fractals/${keep.id}/stats`)).log_count, 1);
  });

  test('unknown 404, non-UUID 400, no credentials 401, non-admin 403', async () => {
    const f = await createFractal(admin, 'delete-errors');
    expectError(await admin.del(`/api/v1/fractals/${unknownId()}`), 404);
    expectBadField(await admin.del('/api/v1/fractals/42'), 'id');
    expectError(await anon.del(`/api/v1/fractals/${f.id}`), 401);
    const viewer = await makeUser(admin, 'delete-viewer');
    await grant(admin, f.id, { username: 'delete-viewer' }, 'viewer');
    expectError(await viewer.del(`/api/v1/fractals/${f.id}`), 403);
    expectOk(await admin.get(`/api/v1/fractals/${f.id}`));
  });
});
