// /api/v1/normalizers over real HTTP against a real appliance: the shipped default, create, edit,
// validation sentences, one default at a time, no deleting one in use, who may change them, and
// the preview of a sample record through unsaved rules.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN_PASSWORD, Client, makeUser, signIn, startTestAppliance, type TestAppliance } from '../support/appliance.ts';
import { createFractal, expectBadField, expectError, expectOk, grant, unknownId, UUID_RE } from '../support/api.ts';

let app: TestAppliance;
let admin: Client;
let analyst: Client;

before(async () => {
  app = await startTestAppliance();
  admin = await signIn(app.url, 'admin', ADMIN_PASSWORD);
  const f = await createFractal(admin, 'norm-api');
  analyst = await makeUser(admin, 'nadia');
  await grant(admin, f.id, { username: 'nadia' }, 'admin');
});
after(() => app?.dispose());

const create = async (body: Record<string, unknown>) => expectOk(await admin.post('/api/v1/normalizers', body), 201);

describe('normalizers', () => {
  test('the shipped default is there, marked default, mapping syslog-ng names and its time fields', async () => {
    const list = expectOk<any[]>(await admin.get('/api/v1/normalizers'));
    const d = list.find((n) => n.is_default);
    assert.ok(d, 'a default exists');
    assert.equal(d.name, 'Default');
    assert.deepEqual(d.transforms, []);
    const target = (source: string) => d.field_mappings.find((m: any) => m.sources.includes(source))?.target;
    assert.equal(target('HOST'), 'hostname');
    assert.equal(target('PROGRAM'), 'app_name');
    assert.equal(target('PID'), 'proc_id');
    assert.equal(target('MESSAGE'), 'message');
    assert.equal(target('SourceIp'), 'src_ip');
    assert.equal(target('programname'), 'app_name');
    assert.deepEqual(d.timestamp_fields, ['ISODATE', 'DATE', 'timereported']);
    assert.equal(list.filter((n) => n.is_default).length, 1);
  });

  test('create, read, edit (version counts edits), delete', async () => {
    const n = await create({
      name: 'windows events',
      description: 'evtx_dump output',
      transforms: ['flatten_leaf'],
      field_mappings: [{ sources: ['Event.System.Provider.#attributes.Name'], target: 'Provider_Name' }],
      value_mappings: [{ from_field: 'EventID', to_field: 'sigma_category', map: { '1': 'process_creation' } }],
      timestamp_fields: ['SystemTime'],
    });
    assert.match(n.id, UUID_RE);
    assert.equal(n.version, 1);
    assert.equal(n.is_default, false);
    assert.deepEqual(n.used_by, { ingest_tokens: [], feeds: [] });
    const got = expectOk(await admin.get(`/api/v1/normalizers/${n.id}`));
    assert.deepEqual(got.value_mappings, [{ from_field: 'EventID', to_field: 'sigma_category', map: { '1': 'process_creation' } }]);
    const edited = expectOk(await admin.put(`/api/v1/normalizers/${n.id}`, { transforms: ['flatten_leaf', 'snake_case'] }));
    assert.equal(edited.version, 2);
    assert.deepEqual(edited.transforms, ['flatten_leaf', 'snake_case']);
    assert.deepEqual(edited.timestamp_fields, ['SystemTime'], 'a PUT keeps what it does not name');
    assert.equal(expectOk(await admin.del(`/api/v1/normalizers/${n.id}`)).deleted, true);
    expectError(await admin.get(`/api/v1/normalizers/${n.id}`), 404, 'not found');
  });

  test('bad definitions are refused with a sentence naming the field', async () => {
    expectBadField(await admin.post('/api/v1/normalizers', { name: 'x', transforms: ['shout'] }), 'transforms.0');
    expectBadField(await admin.post('/api/v1/normalizers', { name: 'x', field_mappings: [{ sources: [], target: 'a' }] }), 'field_mappings.0.sources');
    expectBadField(await admin.post('/api/v1/normalizers', { name: 'x', field_mappings: [{ sources: ['a'] }] }), 'field_mappings.0.target');
    expectBadField(await admin.post('/api/v1/normalizers', { name: 'x', value_mappings: [{ from_field: 'a', to_field: 'b', map: { a: 1 } }] }), 'value_mappings.0.map.a');
    expectBadField(await admin.post('/api/v1/normalizers', { name: 'x', field_mappings: [{ sources: ['  '], target: 'a' }] }), 'field_mappings[0].sources[0]');
    expectError(await admin.post('/api/v1/normalizers', { name: 'x', transforms: ['flatten_leaf', 'dedot'] }), 400, 'flatten_leaf and dedot');
    await create({ name: 'unique-name' });
    expectError(await admin.post('/api/v1/normalizers', { name: 'UNIQUE-name' }), 409, 'already exists');
  });

  test('one default at a time: setting it on another moves it; the default cannot be deleted', async () => {
    const before = expectOk<any[]>(await admin.get('/api/v1/normalizers')).find((n) => n.is_default);
    const n = await create({ name: 'new default', is_default: true });
    assert.equal(n.is_default, true);
    const list = expectOk<any[]>(await admin.get('/api/v1/normalizers'));
    assert.deepEqual(list.filter((x) => x.is_default).map((x) => x.id), [n.id]);
    expectError(await admin.del(`/api/v1/normalizers/${n.id}`), 409, 'default');
    expectError(await admin.put(`/api/v1/normalizers/${n.id}`, { is_default: false }), 400, 'make another normalizer the default');
    expectOk(await admin.put(`/api/v1/normalizers/${before.id}`, { is_default: true }));
    assert.equal(expectOk(await admin.get(`/api/v1/normalizers/${n.id}`)).is_default, false);
  });

  test('only global admins change normalizers; anyone signed in reads them', async () => {
    assert.equal(expectOk<any[]>(await analyst.get('/api/v1/normalizers')).length > 0, true);
    expectError(await analyst.post('/api/v1/normalizers', { name: 'mine' }), 403);
    const n = await create({ name: 'not yours' });
    expectError(await analyst.put(`/api/v1/normalizers/${n.id}`, { transforms: ['lowercase'] }), 403);
    expectError(await analyst.del(`/api/v1/normalizers/${n.id}`), 403);
    expectError(await new Client(app.url).get('/api/v1/normalizers'), 401);
    expectError(await admin.get(`/api/v1/normalizers/${unknownId()}`), 404);
  });

  test('preview: a sample through unsaved rules, each field with where it came from, and the time it gives', async () => {
    const evtx = JSON.stringify({
      Event: {
        System: { Provider: { '#attributes': { Name: 'Microsoft-Windows-Sysmon' } }, EventID: 1, TimeCreated: { '#attributes': { SystemTime: '2024-05-01T10:00:00.123Z' } } },
        EventData: { Image: 'C:\\Windows\\System32\\cmd.exe', Name: 'second Name' },
      },
    });
    const p = expectOk(
      await analyst.post('/api/v1/normalizers/preview', {
        record: evtx,
        transforms: ['flatten_leaf'],
        field_mappings: [{ sources: ['Event.System.Provider.#attributes.Name'], target: 'Provider_Name' }],
        value_mappings: [{ from_field: 'EventID', to_field: 'sigma_category', map: { '1': 'process_creation' } }],
        timestamp_fields: ['SystemTime'],
      }),
    );
    const byName = Object.fromEntries(p.fields.map((f: any) => [f.name, f]));
    assert.equal(byName.Provider_Name.value, 'Microsoft-Windows-Sysmon');
    assert.deepEqual(byName.Provider_Name.origin, { field: 'Event.System.Provider.#attributes.Name' });
    assert.equal(byName.Image.value, 'C:\\Windows\\System32\\cmd.exe');
    assert.equal(byName.Name.value, 'second Name', 'the leaf Name is free once the provider name is mapped away');
    assert.deepEqual(byName.sigma_category, { name: 'sigma_category', value: 'process_creation', origin: { valueMapping: 0, from: 'EventID' } });
    assert.deepEqual(p.timestamp, { field: 'SystemTime', time: '2024-05-01T10:00:00.123Z' });

    const kv = expectOk(await analyst.post('/api/v1/normalizers/preview', { record: 'UserName=ann SrcIP=10.0.0.1', parser_type: 'kv', transforms: ['snake_case'] }));
    assert.deepEqual(kv.fields.map((f: any) => f.name), ['user_name', 'src_ip']);
    expectError(await analyst.post('/api/v1/normalizers/preview', { record: '{"a":' }), 400, 'cannot be read as json');
    expectError(await analyst.post('/api/v1/normalizers/preview', { record: '  ' }), 400, 'record');
  });
});
