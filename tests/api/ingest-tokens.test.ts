// Ingest tokens of a fractal over real HTTP: CRUD, toggle, parser and normalizer settings (a
// normalizer by id, or an old-style rule list that becomes the token's own normalizer), where a
// token is accepted, and how it is stored in the SQLite file.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN_PASSWORD, Client, makeUser, signIn, startTestAppliance, type TestAppliance } from '../support/appliance.ts';
import {
  createApiKey,
  createFractal,
  credentialClient,
  expectBadField,
  expectError,
  expectOk,
  grant,
  INGEST_TOKEN_RE,
  metadataFilesContain,
  readMetadataTable,
  unknownId,
  UUID_RE,
} from '../support/api.ts';

let app: TestAppliance;
let admin: Client;
let anon: Client;
let f: any;
let g: any;
const T = () => `/api/v1/fractals/${f.id}/ingest-tokens`;
const createToken = async (body: Record<string, unknown>, base = T()) => expectOk(await admin.post(base, body), [200, 201]);

before(async () => {
  app = await startTestAppliance();
  admin = await signIn(app.url, 'admin', ADMIN_PASSWORD);
  anon = new Client(app.url);
  f = await createFractal(admin, 'tokens-main');
  g = await createFractal(admin, 'tokens-other');
});
after(async () => {
  await app?.dispose();
});

describe('ingest token CRUD', () => {
  test('a new fractal lists exactly its default token', async () => {
    const h = await createFractal(admin, 'tokens-fresh');
    const list = expectOk<any[]>(await admin.get(`/api/v1/fractals/${h.id}/ingest-tokens`));
    assert.equal(list.length, 1);
    assert.match(list[0].token, INGEST_TOKEN_RE);
    assert.equal(list[0].fractal_id, h.id);
    assert.equal(list[0].enabled, true);
  });

  test('create with defaults: json parser, normalization on, no rules, enabled, a fresh token', async () => {
    const t = await createToken({ name: '  nginx  ' });
    assert.match(t.id, UUID_RE);
    assert.equal(t.name, 'nginx');
    assert.equal(t.fractal_id, f.id);
    assert.match(t.token, INGEST_TOKEN_RE);
    assert.equal(t.parser_type, 'json');
    assert.equal(t.normalization, true);
    assert.equal(t.normalizer_id, null);
    assert.equal(t.normalizer.name, 'Default', 'with normalization on and no normalizer named, the default applies');
    assert.equal(t.normalizer.is_default, true);
    assert.deepEqual(t.timestamp_fields, []);
    assert.equal(t.enabled, true);

    const one = expectOk(await admin.get(`${T()}/${t.id}`));
    assert.equal(one.token, t.token);
    assert.equal(one.name, 'nginx');
    const list = expectOk<any[]>(await admin.get(T()));
    assert.equal(list.find((x) => x.id === t.id)?.token, t.token, 'the list shows the value in full');
    // Every token value is distinct.
    assert.equal(new Set(list.map((x) => x.token)).size, list.length);
  });

  test('create with every setting; they are stored and echoed', async () => {
    const n = expectOk(await admin.post('/api/v1/normalizers', { name: 'firewall names', transforms: ['snake_case'] }), 201);
    const t = await createToken({
      name: 'firewall-syslog',
      parser_type: 'syslog',
      normalizer_id: n.id,
      timestamp_fields: ['event_time', 'ts'],
      enabled: false,
    });
    assert.equal(t.parser_type, 'syslog');
    assert.equal(t.normalization, true, 'naming a normalizer applies it');
    assert.equal(t.normalizer_id, n.id);
    assert.deepEqual(t.normalizer, { id: n.id, name: 'firewall names', is_default: false });
    assert.deepEqual(t.timestamp_fields, ['event_time', 'ts']);
    assert.equal(t.enabled, false);
    const one = expectOk(await admin.get(`${T()}/${t.id}`));
    assert.equal(one.parser_type, 'syslog');
    assert.equal(one.normalizer_id, n.id);
    assert.deepEqual(one.timestamp_fields, ['event_time', 'ts']);
    assert.equal(one.enabled, false);

    const off = await createToken({ name: 'raw-names', normalization: false });
    assert.equal(off.normalization, false);
    assert.equal(off.normalizer, null, 'normalization off applies no normalizer');
  });

  test('normalizer_id must name a normalizer; null goes back to the default', async () => {
    expectBadField(await admin.post(T(), { name: 'n-bad', normalizer_id: 'nope' }), 'normalizer_id');
    const unknown = await admin.post(T(), { name: 'n-bad', normalizer_id: unknownId() });
    assert.equal(unknown.status, 400);
    assert.match(unknown.body.error, /"normalizer_id" names no normalizer/);
    const n = expectOk(await admin.post('/api/v1/normalizers', { name: 'for n-put' }), 201);
    const t = await createToken({ name: 'n-put', normalizer_id: n.id });
    assert.equal(expectOk(await admin.put(`${T()}/${t.id}`, { normalizer_id: null })).normalizer.name, 'Default');
    const inUse = await admin.put(`${T()}/${t.id}`, { normalizer_id: n.id });
    assert.equal(inUse.status, 200);
    const del = await admin.del(`/api/v1/normalizers/${n.id}`);
    assert.equal(del.status, 409, 'a normalizer a token applies cannot be deleted');
    assert.match(del.body.error, /ingest token "n-put" of fractal "tokens-main"/);
  });

  test('an old-style rule list becomes a normalizer of the token, doing what the rules did', async () => {
    const normalizers = [
      { type: 'rename', from: 'src_ip', to: 'source.ip' },
      { type: 'copy', from: 'host', to: 'host.name' },
      { type: 'case', style: 'snake' },
      { type: 'value_map', field: 'level', values: { WARN: 'warning', ERR: 'error' } },
    ];
    const t = await createToken({ name: 'legacy-rules', normalization: false, normalizers });
    assert.equal(t.normalization, true);
    assert.equal(t.normalizer.name, 'tokens-main / legacy-rules');
    const n = expectOk(await admin.get(`/api/v1/normalizers/${t.normalizer_id}`));
    assert.deepEqual(n.transforms, ['snake_case']);
    assert.deepEqual(n.field_mappings, [{ sources: ['src_ip'], target: 'source.ip' }]);
    assert.deepEqual(n.value_mappings, [
      { from_field: 'host', to_field: 'host.name' },
      { from_field: 'level', to_field: 'level', map: { WARN: 'warning', ERR: 'error' } },
    ]);
    const preview = expectOk(
      await admin.post('/api/v1/normalizers/preview', { normalizer_id: n.id, record: '{"src_ip":"10.1.1.1","host":"h","level":"WARN","userName":"x"}' }),
    );
    assert.deepEqual(
      preview.fields.map((x: any) => [x.name, x.value]),
      [['source.ip', '10.1.1.1'], ['host', 'h'], ['level', 'warning'], ['user_name', 'x'], ['host.name', 'h']],
    );
  });

  test('parser_type accepts json, kv and syslog; anything else is 400 naming parser_type', async () => {
    for (const p of ['json', 'kv', 'syslog']) {
      const t = await createToken({ name: `parser-${p}`, parser_type: p });
      assert.equal(t.parser_type, p);
      assert.equal(expectOk(await admin.get(`${T()}/${t.id}`)).parser_type, p);
    }
    for (const bad of ['xml', 'JSON', 'grok', '', 3, null]) {
      expectBadField(await admin.post(T(), { name: 'parser-bad', parser_type: bad }), 'parser_type');
    }
    const t = await createToken({ name: 'parser-put' });
    expectBadField(await admin.put(`${T()}/${t.id}`, { parser_type: 'csv' }), 'parser_type');
    assert.equal(expectOk(await admin.get(`${T()}/${t.id}`)).parser_type, 'json');
    assert.ok(!expectOk<any[]>(await admin.get(T())).some((x) => x.name === 'parser-bad'));
  });

  test('normalization must be a boolean (400 naming it)', async () => {
    expectBadField(await admin.post(T(), { name: 'norm-bad', normalization: 'yes' }), 'normalization');
    expectBadField(await admin.post(T(), { name: 'norm-bad', normalization: 1 }), 'normalization');
    const t = await createToken({ name: 'norm-flip', normalization: true });
    assert.equal(expectOk(await admin.put(`${T()}/${t.id}`, { normalization: false })).normalization, false);
    assert.equal(expectOk(await admin.get(`${T()}/${t.id}`)).normalization, false);
    assert.equal(expectOk(await admin.put(`${T()}/${t.id}`, { normalization: true })).normalization, true);
  });

  test('a bad normalizer rule is refused with 400 naming the rule field', async () => {
    const cases: Array<[unknown, string]> = [
      ['rename a to b', 'normalizers'],
      [{ type: 'rename', from: 'a', to: 'b' }, 'normalizers'],
      [[1], 'normalizers.0'],
      [[{ type: 'explode' }], 'normalizers[0].type'],
      [[{ from: 'a', to: 'b' }], 'normalizers[0].type'],
      [[{ type: 'rename', to: 'b' }], 'normalizers[0].from'],
      [[{ type: 'rename', from: 'a' }], 'normalizers[0].to'],
      [[{ type: 'copy', from: 'a', to: '   ' }], 'normalizers[0].to'],
      [[{ type: 'rename', from: 'a', to: 'b' }, { type: 'case', style: 'SHOUTING' }], 'normalizers[1].style'],
      [[{ type: 'value_map', values: { a: 'b' } }], 'normalizers[0].field'],
      [[{ type: 'value_map', field: 'level', values: ['a'] }], 'normalizers[0].values'],
      [[{ type: 'value_map', field: 'level', values: { a: 1 } }], 'normalizers[0].values'],
    ];
    for (const [normalizers, field] of cases) {
      expectBadField(await admin.post(T(), { name: 'rules-bad', normalizers }), field);
    }
    assert.ok(!expectOk<any[]>(await admin.get(T())).some((x) => x.name === 'rules-bad'), 'no token was created');

    const t = await createToken({ name: 'rules-put', normalizers: [{ type: 'case', style: 'lower' }] });
    const own = t.normalizer_id;
    expectBadField(await admin.put(`${T()}/${t.id}`, { normalizers: [{ type: 'rename', from: '', to: 'x' }] }), 'normalizers[0].from');
    assert.deepEqual(expectOk(await admin.get(`/api/v1/normalizers/${own}`)).transforms, ['lowercase'], 'rules unchanged');
    const replaced = expectOk(await admin.put(`${T()}/${t.id}`, { normalizers: [{ type: 'rename', from: 'msg', to: 'message' }] }));
    assert.equal(replaced.normalizer_id, own, 'the token keeps its own normalizer, rewritten');
    const rewritten = expectOk(await admin.get(`/api/v1/normalizers/${own}`));
    assert.deepEqual(rewritten.transforms, []);
    assert.ok(rewritten.field_mappings.some((m: any) => m.target === 'message' && m.sources.includes('msg')));
    const cleared = expectOk(await admin.put(`${T()}/${t.id}`, { normalizers: [] }));
    assert.equal(cleared.normalizer_id, null, 'an empty list goes back to the default');
  });

  test('timestamp_fields must be a list of non-empty field names', async () => {
    expectBadField(await admin.post(T(), { name: 'ts-bad', timestamp_fields: 'ts' }), 'timestamp_fields');
    expectBadField(await admin.post(T(), { name: 'ts-bad', timestamp_fields: [5] }), 'timestamp_fields.0');
    expectBadField(await admin.post(T(), { name: 'ts-bad', timestamp_fields: ['ts', ''] }), 'timestamp_fields.1');
    const t = await createToken({ name: 'ts-ok', timestamp_fields: ['@timestamp'] });
    assert.deepEqual(t.timestamp_fields, ['@timestamp']);
    const u = expectOk(await admin.put(`${T()}/${t.id}`, { timestamp_fields: ['event.created', 'time'] }));
    assert.deepEqual(u.timestamp_fields, ['event.created', 'time']);
    assert.deepEqual(expectOk(await admin.get(`${T()}/${t.id}`)).timestamp_fields, ['event.created', 'time']);
    assert.deepEqual(expectOk(await admin.put(`${T()}/${t.id}`, { timestamp_fields: [] })).timestamp_fields, []);
  });

  test('PUT changes only what it is given and keeps the token value', async () => {
    const t = await createToken({
      name: 'put-partial',
      parser_type: 'kv',
      normalizers: [{ type: 'case', style: 'kebab' }],
      timestamp_fields: ['when'],
    });
    const u = expectOk(await admin.put(`${T()}/${t.id}`, { parser_type: 'syslog' }));
    assert.equal(u.parser_type, 'syslog');
    assert.equal(u.name, 'put-partial');
    assert.equal(u.normalizer_id, t.normalizer_id);
    assert.deepEqual(u.timestamp_fields, ['when']);
    assert.equal(u.enabled, true);
    assert.equal(u.token, t.token, 'editing never changes the value shippers are configured with');

    const renamed = expectOk(await admin.put(`${T()}/${t.id}`, { name: ' put-renamed ', enabled: false }));
    assert.equal(renamed.name, 'put-renamed');
    assert.equal(renamed.enabled, false);
    assert.equal(renamed.parser_type, 'syslog');
    assert.equal(renamed.token, t.token);
  });

  test('toggle flips enabled and keeps everything else', async () => {
    const t = await createToken({ name: 'toggle-me', parser_type: 'kv' });
    const off = expectOk(await admin.post(`${T()}/${t.id}/toggle`));
    assert.equal(off.enabled, false);
    assert.equal(off.token, t.token);
    assert.equal(off.parser_type, 'kv');
    assert.equal(expectOk(await admin.get(`${T()}/${t.id}`)).enabled, false);
    const on = expectOk(await admin.post(`${T()}/${t.id}/toggle`));
    assert.equal(on.enabled, true);
    assert.equal(expectOk<any[]>(await admin.get(T())).find((x) => x.id === t.id).enabled, true);
  });

  test('DELETE removes the token; its value no longer resolves', async () => {
    const t = await createToken({ name: 'delete-me' });
    assert.ok(app.context.ingestTokens.byValue(t.token), 'resolvable before delete');
    expectOk(await admin.del(`${T()}/${t.id}`));
    expectError(await admin.get(`${T()}/${t.id}`), 404);
    expectError(await admin.del(`${T()}/${t.id}`), 404);
    expectError(await admin.put(`${T()}/${t.id}`, { name: 'zombie' }), 404);
    expectError(await admin.post(`${T()}/${t.id}/toggle`), 404);
    assert.ok(!expectOk<any[]>(await admin.get(T())).some((x) => x.id === t.id || x.token === t.token));
    assert.equal(app.context.ingestTokens.byValue(t.token), undefined);
    // The name is free again, with a new value.
    const again = await createToken({ name: 'delete-me' });
    assert.notEqual(again.token, t.token);
  });

  test('a duplicate name on the same fractal is a conflict (409), on another fractal it is fine', async () => {
    const t = await createToken({ name: 'app-logs' });
    expectError(await admin.post(T(), { name: 'app-logs' }), 409, /app-logs/);
    expectError(await admin.post(T(), { name: 'APP-LOGS' }), 409);
    expectError(await admin.post(T(), { name: ' App-Logs ' }), 409);
    // The default token already holds the name "default".
    expectError(await admin.post(T(), { name: 'Default' }), 409);
    const other = await createToken({ name: 'app-logs-2' });
    expectError(await admin.put(`${T()}/${other.id}`, { name: 'App-Logs' }), 409);
    assert.equal(expectOk(await admin.get(`${T()}/${other.id}`)).name, 'app-logs-2');
    assert.equal(expectOk<any[]>(await admin.get(T())).filter((x) => x.name.toLowerCase() === 'app-logs').length, 1);
    assert.equal(expectOk(await admin.put(`${T()}/${t.id}`, { name: 'APP-logs' })).name, 'APP-logs', 'own name in another case is fine');
    await createToken({ name: 'app-logs' }, `/api/v1/fractals/${g.id}/ingest-tokens`);
  });

  test('other bad input is 400 naming the field', async () => {
    expectBadField(await admin.post(T(), {}), 'name');
    expectBadField(await admin.post(T(), { name: 9 }), 'name');
    expectBadField(await admin.post(T(), { name: '' }), 'name');
    expectBadField(await admin.post(T(), { name: 'en', enabled: 'true' }), 'enabled');
    expectBadField(await admin.post('/api/v1/fractals/abc/ingest-tokens', { name: 'x' }), 'id');
    expectBadField(await admin.get('/api/v1/fractals/abc/ingest-tokens'), 'id');
    expectBadField(await admin.get(`${T()}/abc`), 'tokenId');
    expectBadField(await admin.put(`${T()}/abc`, { name: 'x' }), 'tokenId');
    expectBadField(await admin.del(`${T()}/abc`), 'tokenId');
    expectBadField(await admin.post(`${T()}/abc/toggle`), 'tokenId');
    const t = await createToken({ name: 'put-bad' });
    expectBadField(await admin.put(`${T()}/${t.id}`, { name: '' }), 'name');
    expectBadField(await admin.put(`${T()}/${t.id}`, { enabled: 0 }), 'enabled');
    expectError(await admin.post(T(), '{"name":'), 400);
  });

  test('unknown fractal or token, or a token of another fractal, is 404', async () => {
    const other = await createToken({ name: 'lives-on-g' }, `/api/v1/fractals/${g.id}/ingest-tokens`);
    expectError(await admin.get(`${T()}/${other.id}`), 404);
    expectError(await admin.put(`${T()}/${other.id}`, { name: 'moved' }), 404);
    expectError(await admin.del(`${T()}/${other.id}`), 404);
    expectError(await admin.post(`${T()}/${other.id}/toggle`), 404);
    const still = expectOk(await admin.get(`/api/v1/fractals/${g.id}/ingest-tokens/${other.id}`));
    assert.equal(still.name, 'lives-on-g');
    assert.equal(still.enabled, true);
    expectError(await admin.get(`${T()}/${unknownId()}`), 404);
    expectError(await admin.get(`/api/v1/fractals/${unknownId()}/ingest-tokens`), 404);
    expectError(await admin.post(`/api/v1/fractals/${unknownId()}/ingest-tokens`, { name: 'ghost' }), 404);
  });

  test('no credentials is 401 on every token route; viewers, analysts and API keys get 403 and see no value', async () => {
    const t = await createToken({ name: 'guarded' });
    expectError(await anon.get(T()), 401);
    expectError(await anon.post(T(), { name: 'anon' }), 401);
    expectError(await anon.get(`${T()}/${t.id}`), 401);
    expectError(await anon.put(`${T()}/${t.id}`, { name: 'anon' }), 401);
    expectError(await anon.del(`${T()}/${t.id}`), 401);
    expectError(await anon.post(`${T()}/${t.id}/toggle`), 401);

    const viewer = await makeUser(admin, 'tok-viewer');
    const analyst = await makeUser(admin, 'tok-analyst');
    await grant(admin, f.id, { username: 'tok-viewer' }, 'viewer');
    await grant(admin, f.id, { username: 'tok-analyst' }, 'analyst');
    const key = await createApiKey(admin, `/api/v1/fractals/${f.id}`, { name: 'tok-key' });
    for (const c of [viewer, analyst, credentialClient(app.url, key.key)]) {
      for (const r of [
        await c.get(T()),
        await c.get(`${T()}/${t.id}`),
        await c.post(T(), { name: 'sneaky' }),
        await c.put(`${T()}/${t.id}`, { name: 'sneaky' }),
        await c.del(`${T()}/${t.id}`),
        await c.post(`${T()}/${t.id}/toggle`),
      ]) {
        expectError(r, 403);
        assert.ok(!JSON.stringify(r.body).includes('svc_ingest_'), 'no token value leaks in a refusal');
      }
    }
    const nobody = await makeUser(admin, 'tok-nobody');
    expectError(await nobody.get(T()), 404);
    const got = expectOk(await admin.get(`${T()}/${t.id}`));
    assert.equal(got.name, 'guarded');
    assert.equal(got.enabled, true);
  });
});

describe('where an ingest token is accepted and how it is stored', () => {
  test('an ingest token is refused (401) on non-ingest routes, as Bearer or X-API-Key', async () => {
    const t = await createToken({ name: 'not-a-session' });
    for (const how of ['bearer', 'x-api-key'] as const) {
      const c = credentialClient(app.url, t.token, how);
      expectError(await c.get('/api/v1/fractals'), 401, /ingest/i);
      expectError(await c.get(`/api/v1/fractals/${f.id}`), 401);
      expectError(await c.get(`/api/v1/fractals/${f.id}/stats`), 401);
      expectError(await c.get(T()), 401);
      expectError(await c.get('/api/v1/auth/me'), 401);
      expectError(await c.post('/api/v1/fractals', { name: 'made-by-ingest-token' }), 401);
    }
    assert.ok(!expectOk<any[]>(await admin.get('/api/v1/fractals')).some((x) => x.name === 'made-by-ingest-token'));
  });

  test('POST /api/v1/ingest honours enable, disable and delete at once', async () => {
    const ingest = (token: string) => credentialClient(app.url, token).post('/api/v1/ingest', { message: 'token state check' });
    const t = await createToken({ name: 'shipper-state' });
    assert.equal((await ingest(t.token)).status, 200);
    expectOk(await admin.post(`${T()}/${t.id}/toggle`));
    expectError(await ingest(t.token), 401);
    expectOk(await admin.post(`${T()}/${t.id}/toggle`));
    assert.equal((await ingest(t.token)).status, 200);
    expectOk(await admin.put(`${T()}/${t.id}`, { enabled: false }));
    expectError(await ingest(t.token), 401);
    expectOk(await admin.put(`${T()}/${t.id}`, { enabled: true }));
    assert.equal((await ingest(t.token)).status, 200);
    expectOk(await admin.del(`${T()}/${t.id}`));
    expectError(await ingest(t.token), 401);

    const born = await createToken({ name: 'born-disabled', enabled: false });
    expectError(await ingest(born.token), 401);
    // An API key is not an ingest token.
    const key = await createApiKey(admin, `/api/v1/fractals/${f.id}`, { name: 'not-for-ingest' });
    expectError(await ingest(key.key), 401);
  });

  test('a fractal admin (not a global admin) sees token values in full', async () => {
    const t = await createToken({ name: 'for-shippers' });
    const fadmin = await makeUser(admin, 'tok-fadmin');
    await grant(admin, f.id, { username: 'tok-fadmin' }, 'admin');
    const list = expectOk<any[]>(await fadmin.get(T()));
    assert.equal(list.find((x) => x.id === t.id)?.token, t.token);
    assert.equal(expectOk(await fadmin.get(`${T()}/${t.id}`)).token, t.token);
    const mine = expectOk(await fadmin.post(T(), { name: 'made-by-fadmin', parser_type: 'kv' }), [200, 201]);
    assert.match(mine.token, INGEST_TOKEN_RE);
    assert.equal(expectOk(await admin.get(`${T()}/${mine.id}`)).token, mine.token);
    // Their role does not reach another fractal's tokens.
    expectError(await fadmin.get(`/api/v1/fractals/${g.id}/ingest-tokens`), 404);
  });

  test('the value is stored encrypted: not in plaintext in ingest_tokens nor anywhere in the SQLite file', async () => {
    const t = await createToken({ name: 'sealed' });
    const rows = readMetadataTable(app, 'ingest_tokens');
    assert.ok(rows.some((r) => r.id === t.id), 'the token row is in the file');
    const listed = expectOk<any[]>(await admin.get(T())).map((x) => x.token as string);
    for (const value of listed) {
      for (const r of rows) {
        for (const [col, v] of Object.entries(r)) {
          assert.ok(!String(v).includes(value), `ingest_tokens.${col} holds a plaintext token`);
          assert.ok(!String(v).includes(value.slice('svc_ingest_'.length)), `ingest_tokens.${col} holds a token's hex`);
        }
      }
      assert.equal(metadataFilesContain(app, value), false, `${value} appears in the SQLite file`);
    }
    // Yet it reads back unchanged.
    assert.equal(expectOk(await admin.get(`${T()}/${t.id}`)).token, t.token);
  });
});
