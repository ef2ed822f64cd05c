// The loopback ClickHouse HTTP bridge, driven by the real @clickhouse/client over HTTP.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import zlib from 'node:zlib';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createClient, ClickHouseError, type ClickHouseClient } from '@clickhouse/client';
import { startClickHouseHttpBridge, type ClickHouseHttpBridge } from '../support/clickhouse-http-bridge.ts';

const USER = 'alice';
const PASSWORD = 'pa:ss w0rd';
const DB = 'bridge_it';

let dataDir: string;
let bridge: ClickHouseHttpBridge;
let admin: ClickHouseClient; // no database: unqualified names resolve in `default`
let inDb: ClickHouseClient; // database: DB
const clients: ClickHouseClient[] = [];

function client(extra: Parameters<typeof createClient>[0] = {}): ClickHouseClient {
  const c = createClient({ url: bridge.url, username: USER, password: PASSWORD, ...extra });
  clients.push(c);
  return c;
}

interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** A bare HTTP request (no client library, no automatic decompression). */
function raw(method: string, pathAndQuery: string, headers: Record<string, string> = {}, body?: Buffer | string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${bridge.url}${pathAndQuery}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

const basic = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;

function isClickHouseError(code: string, type?: string) {
  return (e: unknown) => {
    assert.ok(e instanceof ClickHouseError, `expected a ClickHouseError, got ${String(e)}`);
    assert.equal(e.code, code, e.message);
    if (type !== undefined) assert.equal(e.type, type);
    return true;
  };
}

// The rows inserted below. `tricky` holds every character the HTTP parameter encoding escapes.
const tricky = `it's a "quoted" \\ back\\slash\ttab\nnewline`;
const injection = "' OR 1=1 --";
const rows = [
  { id: 1, ts: '2024-01-02 03:04:05.678', msg: 'hello', attrs: { user: { name: 'ann', id: 7 }, ok: true }, labels: { env: 'prod', region: 'eu' } },
  { id: 2, ts: '2024-01-02 03:04:06.000', msg: tricky, attrs: { user: { name: 'bob' } }, labels: { env: 'dev', "k'ey": 'v\\al' } },
  { id: 3, ts: '2024-01-02 03:04:07.000', msg: injection, attrs: {}, labels: {} },
];

before(async () => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'ch-http-bridge-'));
  bridge = await startClickHouseHttpBridge({ dataDir, user: USER, password: PASSWORD });
  admin = client();
  inDb = client({ database: DB });
});

after(async () => {
  for (const c of clients) await c.close();
  await bridge?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

test('ping answers on /ping and through a SELECT', async () => {
  assert.equal((await admin.ping()).success, true);
  assert.equal((await admin.ping({ select: true })).success, true);
  const r = await raw('GET', '/ping');
  assert.equal(r.status, 200);
  assert.equal(r.body.toString(), 'Ok.\n');
});

test('DDL, then insert() of JSONEachRow values into a table with JSON and Map columns', async () => {
  await admin.command({ query: `CREATE DATABASE ${DB}` });
  await admin.command({
    query: `CREATE TABLE ${DB}.events (
      id UInt32, ts DateTime64(3, 'UTC'), msg String, attrs JSON, labels Map(String, String)
    ) ENGINE = MergeTree ORDER BY id`,
  });
  // Unqualified table name: resolved through the client's `database`.
  const ins = await inDb.insert({ table: 'events', values: rows, format: 'JSONEachRow' });
  assert.equal(ins.executed, true);
  assert.equal(ins.summary?.written_rows, '3');
  assert.ok(bridge.queries.includes('INSERT INTO events FORMAT JSONEachRow'), bridge.queries.join('\n'));
  assert.ok(!bridge.queries.some((q) => q.includes('"hello"')), 'insert data must not be logged as SQL');

  const rs = await inDb.query({
    query: 'SELECT id, msg, ts, attrs, labels FROM events ORDER BY id',
    format: 'JSONEachRow',
  });
  const back = await rs.json<{ id: number; msg: string; ts: string; attrs: any; labels: Record<string, string> }>();
  assert.deepEqual(back.map((r) => r.id), [1, 2, 3]);
  assert.deepEqual(back.map((r) => r.msg), rows.map((r) => r.msg));
  assert.equal(back[0]!.ts, '2024-01-02 03:04:05.678');
  assert.equal(back[0]!.attrs.user.name, 'ann');
  assert.equal(Number(back[0]!.attrs.user.id), 7);
  assert.equal(back[0]!.attrs.ok, true);
  assert.deepEqual(back.map((r) => r.labels), rows.map((r) => r.labels));
});

test('the database URL parameter applies to its own request only', async () => {
  // Right after requests made with database=DB, an unqualified name must not resolve there.
  await assert.rejects(admin.query({ query: 'SELECT count() FROM events' }), isClickHouseError('60', 'UNKNOWN_TABLE'));
  const rs = await admin.query({ query: 'SELECT currentDatabase() AS db', format: 'JSONEachRow' });
  assert.deepEqual(await rs.json(), [{ db: 'default' }]);
  const rs2 = await inDb.query({ query: 'SELECT currentDatabase() AS db', format: 'JSONEachRow' });
  assert.deepEqual(await rs2.json(), [{ db: DB }]);
  await assert.rejects(
    client({ database: 'no_such_db' }).query({ query: 'SELECT 1' }),
    isClickHouseError('81', 'UNKNOWN_DATABASE'),
  );
});

test('query_params are bound server-side, not spliced into the SQL', async () => {
  const byMsg = async (m: string) => {
    const rs = await inDb.query({
      query: 'SELECT id, msg FROM events WHERE msg = {m:String} ORDER BY id',
      query_params: { m },
      format: 'JSONEachRow',
    });
    return rs.json<{ id: number; msg: string }>();
  };
  assert.deepEqual(await byMsg(tricky), [{ id: 2, msg: tricky }]);
  // Spliced naively, this would be `msg = '' OR 1=1 --'` and match every row.
  assert.deepEqual(await byMsg(injection), [{ id: 3, msg: injection }]);
  assert.deepEqual(await byMsg('nothing'), []);

  // Composite parameters, with quotes and backslashes inside the elements.
  const names = ["a'b", 'c\\d', 'e"f', 'tab\there'];
  const rs = await admin.query({
    query:
      'SELECT {names:Array(String)} AS names, {m:Map(String, String)} AS m, {ids:Array(UInt32)} AS ids, {n:Nullable(String)} AS n',
    query_params: { names, m: { "k'1": "v'1" }, ids: [1, 3], n: null },
    format: 'JSONEachRow',
  });
  assert.deepEqual(await rs.json(), [{ names, m: { "k'1": "v'1" }, ids: [1, 3], n: null }]);

  const rs2 = await inDb.query({
    query: 'SELECT id FROM events WHERE id IN {ids:Array(UInt32)} AND labels[{k:String}] = {v:String}',
    query_params: { ids: [1, 2, 3], k: "k'ey", v: 'v\\al' },
    format: 'JSONEachRow',
  });
  assert.deepEqual(await rs2.json(), [{ id: 2 }]);

  // A missing parameter is the engine's error, as on a real server.
  await assert.rejects(admin.query({ query: 'SELECT {x:String}' }), isClickHouseError('456'));
});

test('query parameters also work when the client sends them as multipart/form-data', async () => {
  const mp = client({ database: DB, use_multipart_params: true } as Parameters<typeof createClient>[0]);
  const rs = await mp.query({
    query: 'SELECT id FROM events WHERE msg = {m:String}',
    query_params: { m: tricky },
    format: 'JSONEachRow',
  });
  assert.deepEqual(await rs.json(), [{ id: 2 }]);
});

test('output formats: JSON, JSONCompactEachRow, TabSeparated, CSVWithNames', async () => {
  const json = await inDb.query({ query: 'SELECT id, msg FROM events WHERE id <= 2 ORDER BY id', format: 'JSON' });
  assert.equal(json.response_headers['x-clickhouse-format'], 'JSON');
  const doc = await json.json<{ id: number; msg: string }>();
  assert.equal(doc.rows, 2);
  assert.deepEqual(doc.data, [{ id: 1, msg: 'hello' }, { id: 2, msg: tricky }]);
  assert.deepEqual(doc.meta?.map((m) => m.name), ['id', 'msg']);

  const compact = await inDb.query({ query: 'SELECT id, msg FROM events WHERE id = 1', format: 'JSONCompactEachRow' });
  assert.deepEqual(await compact.json(), [[1, 'hello']]);

  const tsv = await inDb.query({ query: 'SELECT id, msg FROM events WHERE id IN (1, 3) ORDER BY id', format: 'TabSeparated' });
  assert.equal(await tsv.text(), `1\thello\n3\t\\' OR 1=1 --\n`);

  const csv = await inDb.query({ query: 'SELECT id, msg FROM events WHERE id = 1', format: 'CSVWithNames' });
  assert.equal(await csv.text(), '"id","msg"\n1,"hello"\n');
});

test('exec() returns the raw response stream', async () => {
  const r = await admin.exec({ query: 'SELECT 1 AS x, \'y\' AS y FORMAT TSVWithNames' });
  let text = '';
  for await (const chunk of r.stream) text += chunk.toString();
  assert.equal(text, 'x\ty\n1\ty\n');
});

test('stream() delivers 100k rows in several chunks', async () => {
  const rs = await admin.query({ query: 'SELECT number FROM numbers(100000)', format: 'JSONCompactEachRow' });
  let count = 0;
  let sum = 0;
  let batches = 0;
  for await (const batch of rs.stream<[number]>()) {
    batches++;
    for (const row of batch) {
      sum += Number(row.json()[0]);
      count++;
    }
  }
  assert.equal(count, 100_000);
  assert.equal(sum, (99_999 * 100_000) / 2);
  assert.ok(batches > 1, `expected a chunked response, got ${batches} batch(es)`);
});

test('ClickHouse settings apply to their request and do not leak into the next one', async () => {
  const v = async (settings?: Record<string, number>) => {
    const rs = await admin.query({
      query: 'SELECT toUInt64(42) AS v',
      format: 'JSONEachRow',
      ...(settings ? { clickhouse_settings: settings } : {}),
    });
    return ((await rs.json()) as Array<{ v: unknown }>)[0]!.v;
  };
  assert.equal(await v({ output_format_json_quote_64bit_integers: 1 }), '42');
  assert.equal(await v(), 42);
  assert.equal(await v({ output_format_json_quote_64bit_integers: 1 }), '42');
  assert.equal(await v({ output_format_json_quote_64bit_integers: 0 }), 42);

  // A SET statement does not outlive its request either (there are no HTTP sessions).
  await admin.command({ query: 'SET max_block_size = 1234' });
  const rs = await admin.query({ query: "SELECT getSetting('max_block_size') AS b", format: 'JSONEachRow' });
  assert.notEqual(Number(((await rs.json()) as Array<{ b: unknown }>)[0]!.b), 1234);

  // Settings the engine enforces really are applied.
  await assert.rejects(
    admin.query({ query: 'SELECT number FROM numbers(10)', clickhouse_settings: { max_result_rows: '5', result_overflow_mode: 'throw' } }),
    isClickHouseError('396'),
  );
  // That error struck after the engine had started writing the result; none of it may end up in
  // the next response (chDB hands such leftovers to the next query on the connection).
  const clean = await admin.query({ query: 'SELECT 5 AS five', format: 'JSONEachRow' });
  assert.deepEqual(await clean.json(), [{ five: 5 }]);
  // Same failure with no URL settings at all (so no settings reset runs after it).
  await assert.rejects(
    admin.query({ query: "SELECT number FROM numbers(10) SETTINGS max_result_rows = 5, result_overflow_mode = 'throw'" }),
    isClickHouseError('396'),
  );
  const clean2 = await admin.query({ query: 'SELECT 6 AS six', format: 'JSONEachRow' });
  assert.deepEqual(await clean2.json(), [{ six: 6 }]);
  // ...and the limit itself is gone again.
  const many = await admin.query({ query: 'SELECT number FROM numbers(10)', format: 'JSONCompactEachRow' });
  assert.equal((await many.json()).length, 10);
  // HTTP-layer settings (which the engine itself does not know) are accepted.
  const httpLayer = await admin.query({
    query: 'SELECT 1 AS ok',
    format: 'JSONEachRow',
    clickhouse_settings: { wait_end_of_query: 1, send_progress_in_http_headers: 1, http_headers_progress_interval_ms: '1000' },
  });
  assert.deepEqual(await httpLayer.json(), [{ ok: 1 }]);
  // An unknown setting is refused, as by a real server.
  await assert.rejects(
    admin.query({ query: 'SELECT 1', clickhouse_settings: { no_such_setting_xyz: 1 } as Record<string, number> }),
    isClickHouseError('115', 'UNKNOWN_SETTING'),
  );
  await assert.rejects(admin.command({ query: 'SET no_such_setting_xyz = 1, max_block_size = 7' }), isClickHouseError('115'));
  const b = await admin.query({ query: "SELECT getSetting('max_block_size') AS b", format: 'JSONEachRow' });
  assert.notEqual(Number(((await b.json()) as Array<{ b: unknown }>)[0]!.b), 7);
});

test('concurrent requests with different databases and settings do not see each other\'s state', async () => {
  const probe = (c: ClickHouseClient, quote: 0 | 1) =>
    c
      .query({
        query: 'SELECT currentDatabase() AS db, toUInt64(1) AS one',
        format: 'JSONEachRow',
        clickhouse_settings: { output_format_json_quote_64bit_integers: quote },
      })
      .then((rs) => rs.json<{ db: string; one: unknown }>());
  const jobs = Array.from({ length: 24 }, (_, i) => {
    const c = i % 2 === 0 ? admin : inDb;
    const quote = (i % 3 === 0 ? 1 : 0) as 0 | 1;
    return probe(c, quote).then((rows) => ({ rows, expected: [{ db: c === admin ? 'default' : DB, one: quote ? '1' : 1 }] }));
  });
  for (const { rows, expected } of await Promise.all(jobs)) assert.deepEqual(rows, expected);
});

test('query_id is taken from the request and echoed back', async () => {
  const rs = await admin.query({ query: 'SELECT 1 AS one', format: 'JSONEachRow', query_id: 'bridge-test-qid-1' });
  assert.equal(rs.query_id, 'bridge-test-qid-1');
  assert.equal(rs.response_headers['x-clickhouse-query-id'], 'bridge-test-qid-1');
  assert.deepEqual(await rs.json(), [{ one: 1 }]);
  const summary = JSON.parse(String(rs.response_headers['x-clickhouse-summary']));
  assert.equal(summary.result_rows, '1');
});

test('engine errors reject with the ClickHouse code; syntax errors are HTTP 400', async () => {
  await assert.rejects(admin.query({ query: 'SELEC 1' }), isClickHouseError('62', 'SYNTAX_ERROR'));
  await assert.rejects(admin.command({ query: 'DROP TABLE default.no_such_table' }), isClickHouseError('60', 'UNKNOWN_TABLE'));
  await assert.rejects(admin.command({ query: 'SELECT 1; SELECT 2' }), isClickHouseError('62', 'SYNTAX_ERROR'));

  const r = await raw('POST', '/', { Authorization: basic }, 'SELEC 1');
  assert.equal(r.status, 400);
  assert.equal(r.headers['x-clickhouse-exception-code'], '62');
  assert.match(r.body.toString(), /^Code: 62\. DB::Exception: .*\(SYNTAX_ERROR\)/s);

  const r404 = await raw('POST', '/', { Authorization: basic }, 'SELECT * FROM default.no_such_table');
  assert.equal(r404.status, 404);
  assert.equal(r404.headers['x-clickhouse-exception-code'], '60');

  // GET implies readonly, as on a real server.
  const get = await raw('GET', `/?query=${encodeURIComponent(`CREATE TABLE default.t_get (x UInt8) ENGINE = Memory`)}`, { Authorization: basic });
  assert.equal(get.headers['x-clickhouse-exception-code'], '164');
  const getOk = await raw('GET', `/?query=${encodeURIComponent('SELECT 41 + 1')}`, { Authorization: basic });
  assert.equal(getOk.status, 200);
  assert.equal(getOk.body.toString(), '42\n');
});

test('wrong credentials are refused with AUTHENTICATION_FAILED (516)', async () => {
  const bad = client({ password: 'wrong' });
  await assert.rejects(bad.query({ query: 'SELECT 1' }), isClickHouseError('516', 'AUTHENTICATION_FAILED'));
  await assert.rejects(bad.command({ query: 'CREATE DATABASE should_not_exist' }), isClickHouseError('516'));
  assert.equal((await bad.ping({ select: true })).success, false);
  const unknownUser = client({ username: 'mallory' });
  await assert.rejects(unknownUser.query({ query: 'SELECT 1' }), isClickHouseError('516'));

  const r = await raw('POST', '/', {}, 'SELECT 1'); // no credentials = user "default"
  assert.equal(r.status, 403);
  assert.equal(r.headers['x-clickhouse-exception-code'], '516');
  assert.match(r.body.toString(), /^Code: 516\. DB::Exception: default: Authentication failed.*\(AUTHENTICATION_FAILED\)/s);

  // The other two ways of passing credentials work.
  const viaHeaders = await raw('POST', '/', { 'X-ClickHouse-User': USER, 'X-ClickHouse-Key': PASSWORD }, 'SELECT 7');
  assert.equal(viaHeaders.body.toString(), '7\n');
  const viaParams = await raw('POST', `/?user=${USER}&password=${encodeURIComponent(PASSWORD)}`, {}, 'SELECT 8');
  assert.equal(viaParams.body.toString(), '8\n');
  const mixed = await raw('POST', `/?user=${USER}`, { Authorization: basic }, 'SELECT 9');
  assert.equal(mixed.headers['x-clickhouse-exception-code'], '516');

  const check = await admin.query({ query: "SELECT count() AS c FROM system.databases WHERE name = 'should_not_exist'", format: 'JSONEachRow' });
  assert.deepEqual(await check.json(), [{ c: 0 }]);
});

test('gzip request bodies and compressed responses', async () => {
  const gz = client({ database: DB, compression: { request: true, response: true } });
  const ins = await gz.insert({
    table: 'events',
    values: [{ id: 4, ts: '2024-01-02 03:04:08.000', msg: 'gzipped', attrs: { z: 1 }, labels: { c: 'gzip' } }],
    format: 'JSONEachRow',
  });
  assert.equal(ins.summary?.written_rows, '1');
  const rs = await gz.query({ query: 'SELECT msg, labels FROM events WHERE id = 4', format: 'JSONEachRow' });
  assert.equal(rs.response_headers['content-encoding'], 'gzip');
  assert.deepEqual(await rs.json(), [{ msg: 'gzipped', labels: { c: 'gzip' } }]);

  const r = await raw(
    'POST',
    '/?enable_http_compression=1',
    { Authorization: basic, 'Accept-Encoding': 'gzip', 'Content-Encoding': 'gzip' },
    zlib.gzipSync('SELECT 123'),
  );
  assert.equal(r.status, 200);
  assert.equal(r.headers['content-encoding'], 'gzip');
  assert.equal(zlib.gunzipSync(r.body).toString(), '123\n');
  // Without enable_http_compression the response is not compressed.
  const plain = await raw('POST', '/', { Authorization: basic, 'Accept-Encoding': 'gzip' }, 'SELECT 123');
  assert.equal(plain.headers['content-encoding'], undefined);
  assert.equal(plain.body.toString(), '123\n');
});

test('data survives a bridge restart on the same directory', async () => {
  await bridge.close();
  bridge = await startClickHouseHttpBridge({ dataDir, user: USER, password: PASSWORD });
  const c = client({ database: DB });
  const rs = await c.query({ query: 'SELECT count() AS n FROM events', format: 'JSONEachRow' });
  assert.deepEqual(await rs.json(), [{ n: 4 }]);
  assert.deepEqual(bridge.queries, ['SELECT count() AS n FROM events \nFORMAT JSONEachRow']);
});
