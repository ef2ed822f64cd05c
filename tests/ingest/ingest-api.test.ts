// POST /api/v1/ingest end to end: real HTTP, real spool, real embedded ClickHouse.
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { ADMIN_PASSWORD, Client, signIn, startTestAppliance, type TestAppliance } from '../support/appliance.ts';
import { ingestFractal } from '../support/ingest.ts';
import { storedLogs, waitForLogs } from '../support/logs.ts';

let a: TestAppliance;
let admin: Client;

function send(token: string | null, body: string | Buffer, headers: Record<string, string> = {}) {
  return fetch(`${a.url}/api/v1/ingest`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
    body: body as unknown as BodyInit,
  }).then(async (r) => ({ status: r.status, headers: r.headers, body: await r.json() }));
}

before(async () => {
  a = await startTestAppliance({ SVC_MAX_BODY_SIZE: String(4 * 1024 * 1024) });
  admin = await signIn(a.url, 'admin', ADMIN_PASSWORD);
});
after(() => a.dispose());

describe('accepted formats', () => {
  test('a JSON array, a single object and NDJSON are all accepted, and the content is sniffed', async () => {
    const f = await ingestFractal(admin, 'formats');
    const arr = await send(f.token, JSON.stringify([{ msg: 'one' }, { msg: 'two' }]));
    assert.equal(arr.status, 200);
    assert.deepEqual([arr.body.accepted, arr.body.rejected, arr.body.durable], [2, 0, true]);
    assert.equal(arr.body.data.accepted, 2);
    assert.equal((await send(f.token, '{"msg":"three"}')).body.accepted, 1);
    const nd = await send(f.token, '{"msg":"four"}\n{"msg":"five"}\n\n{"msg":"six"}\n', { 'content-type': 'application/x-ndjson' });
    assert.equal(nd.body.accepted, 3);
    // The header says text/plain; the content is JSON, and that is what counts.
    assert.equal((await send(f.token, '{"msg":"seven"}', { 'content-type': 'text/plain' })).body.accepted, 1);
    // Pretty-printed objects one after another.
    assert.equal((await send(f.token, '{\n  "msg": "eight"\n}\n{\n  "msg": "nine"\n}')).body.accepted, 2);
    const rows = await waitForLogs(a, f.id, 9);
    assert.deepEqual(rows.map((r) => r.fields.msg).sort(), ['eight', 'five', 'four', 'nine', 'one', 'seven', 'six', 'three', 'two']);
  });

  test('nested objects are flattened with dots, types are kept, raw is the original record', async () => {
    const f = await ingestFractal(admin, 'shape');
    const rec = '{"http":{"status":503,"method":"GET"},"ok":false,"ratio":0.5,"tags":["a","b"],"note":null}';
    assert.equal((await send(f.token, rec)).status, 200);
    const [row] = await waitForLogs(a, f.id, 1);
    assert.equal(row!.fields['http.status'], 503);
    assert.equal(row!.fields['http.method'], 'GET');
    assert.equal(row!.fields.ok, false);
    assert.equal(row!.fields.ratio, 0.5);
    assert.equal(row!.fields.tags, '["a","b"]');
    assert.equal(row!.raw, rec);
    assert.match(row!.log_id, /^[0-9a-f-]{36}$/);
  });

  test('date- and time-like strings stay the strings that were sent, for filters and for rows', async () => {
    const f = await ingestFractal(admin, 'date-strings');
    const rec = { seen: '2024-01-01T00:00:00Z', day: '2024-01-02', at: '2024-01-01 10:00:00.123456789', msg: 'first sighting' };
    assert.equal((await send(f.token, JSON.stringify(rec))).status, 200);
    const [row] = await waitForLogs(a, f.id, 1);
    assert.deepEqual([row!.fields.seen, row!.fields.day, row!.fields.at], [rec.seen, rec.day, rec.at]);
    const r = await admin.post('/api/v1/query', { query: 'seen="2024-01-01T00:00:00Z" day="2024-01-02"', fractal_id: f.id, start: '2023-01-01T00:00:00Z' });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.count, 1, 'the filters compare with the text as sent');
    assert.deepEqual([r.body.results[0].seen, r.body.results[0].at], [rec.seen, rec.at]);
  });

  test("a row's norm_log is the record's own text when that already was its fields, else the fields made from it", async () => {
    const json = await ingestFractal(admin, 'norm-json');
    const rec = '{"zeta":1,"alpha":"x y","mid":2.5,"gone":null}';
    assert.equal((await send(json.token, rec)).status, 200);
    const kv = await ingestFractal(admin, 'norm-kv', { parser_type: 'kv' });
    assert.equal((await send(kv.token, 'user=alice action="log in"', { 'content-type': 'text/plain' })).status, 200);
    await waitForLogs(a, json.id, 1);
    await waitForLogs(a, kv.id, 1);
    const rowOf = async (fractal_id: string) => {
      const r = await admin.post('/api/v1/query', { query: '*', fractal_id });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.results[0];
    };
    const j = await rowOf(json.id);
    assert.equal(j.norm_log, rec, 'the record as sent, key order kept');
    assert.deepEqual([j.zeta, j.alpha, j.mid, 'gone' in j], ['1', 'x y', '2.5', false], 'a null is no field, as for the filters');
    const k = await rowOf(kv.id);
    assert.deepEqual(JSON.parse(k.norm_log), { user: 'alice', action: 'log in' });
    assert.deepEqual([k.user, k.action], ['alice', 'log in']);
  });

  test('a gzip body is accepted', async () => {
    const f = await ingestFractal(admin, 'gzip');
    const r = await send(f.token, gzipSync('{"msg":"zipped"}\n{"msg":"again"}\n'), { 'content-encoding': 'gzip' });
    assert.equal(r.status, 200);
    assert.equal(r.body.accepted, 2);
    await waitForLogs(a, f.id, 2);
  });
});

describe('timestamps', () => {
  test('precedence and formats follow the spec', async () => {
    const f = await ingestFractal(admin, 'times', { timestamp_fields: ['event_time'] });
    const lines = [
      { id: 'token-field', event_time: '2026-03-01T10:00:00Z', timestamp: '2020-01-01T00:00:00Z' },
      { id: 'timestamp', timestamp: '2026-03-02 11:00:00.123456789', '@timestamp': '2020-01-01T00:00:00Z' },
      { id: 'at', '@timestamp': '2026-03-03T12:00:00+02:00', time: 1 },
      { id: 'unix-s', ts: 1767225600 },
      { id: 'unix-ms', _time: 1767225600123 },
      { id: 'unix-ns', time: '1767225600123456789' },
      { id: 'comma', time: '2026-01-01 00:00:00,5' },
    ];
    assert.equal((await send(f.token, lines.map((l) => JSON.stringify(l)).join('\n'))).body.accepted, lines.length);
    const rows = await waitForLogs(a, f.id, lines.length);
    const by = Object.fromEntries(rows.map((r) => [r.fields.id, r.timestamp]));
    assert.equal(by['token-field'], '2026-03-01 10:00:00.000000000');
    assert.equal(by.timestamp, '2026-03-02 11:00:00.123456789');
    assert.equal(by.at, '2026-03-03 10:00:00.000000000');
    assert.equal(by['unix-s'], '2026-01-01 00:00:00.000000000');
    assert.equal(by['unix-ms'], '2026-01-01 00:00:00.123000000');
    assert.equal(by['unix-ns'], '2026-01-01 00:00:00.123456789');
    assert.equal(by.comma, '2026-01-01 00:00:00.500000000');
  });

  test('a record without a timestamp gets the ingestion time; settings fields come before the defaults', async () => {
    assert.equal((await admin.put('/api/v1/settings', { timestamp_fields: ['when'] })).status, 200);
    try {
      const f = await ingestFractal(admin, 'times2');
      const before = Date.now();
      await send(f.token, '{"id":"none"}\n{"id":"settings","when":"2025-05-05T05:05:05Z","timestamp":"2020-01-01T00:00:00Z"}');
      const rows = await waitForLogs(a, f.id, 2);
      const none = rows.find((r) => r.fields.id === 'none')!;
      const t = Date.parse(none.timestamp.replace(' ', 'T').slice(0, 23) + 'Z');
      assert.ok(t >= before - 1000 && t <= Date.now() + 1000, none.timestamp);
      assert.equal(none.timestamp, none.ingest_timestamp);
      assert.equal(rows.find((r) => r.fields.id === 'settings')!.timestamp, '2025-05-05 05:05:05.000000000');
    } finally {
      await admin.put('/api/v1/settings', { timestamp_fields: [] });
    }
  });
});

describe('parsers and normalizers chosen by the token', () => {
  test('kv token: quoting and escapes', async () => {
    const f = await ingestFractal(admin, 'kv', { parser_type: 'kv' });
    const r = await send(f.token, 'user=alice action="log in" note=\'say "hi"\' path="C:\\\\temp"\nuser=bob status=200', { 'content-type': 'text/plain' });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const rows = await waitForLogs(a, f.id, 2);
    const alice = rows.find((x) => x.fields.user === 'alice')!;
    assert.equal(alice.fields.action, 'log in');
    assert.equal(alice.fields.note, 'say "hi"');
    assert.equal(alice.fields.path, 'C:\\temp');
    assert.equal(rows.find((x) => x.fields.user === 'bob')!.fields.status, '200');
  });

  test('syslog token: RFC 5424 with structured data and RFC 3164', async () => {
    const f = await ingestFractal(admin, 'syslog', { parser_type: 'syslog' });
    const lines = [
      '<165>1 2026-02-03T04:05:06.789Z fw01 sshd 4242 ID47 [exampleSDID@32473 iut="3" eventSource="Application"] Failed password for root',
      '<34>Oct 11 22:14:15 mymachine su[123]: \'su root\' failed for lonvick on /dev/pts/8',
    ];
    const r = await send(f.token, lines.join('\n'), { 'content-type': 'text/plain' });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const rows = await waitForLogs(a, f.id, 2);
    const r5424 = rows.find((x) => x.fields.hostname === 'fw01')!;
    assert.equal(r5424.fields.facility, 20);
    assert.equal(r5424.fields.severity, 5);
    assert.equal(r5424.fields.app_name, 'sshd');
    assert.equal(r5424.fields['sd.exampleSDID@32473.iut'], '3');
    assert.equal(r5424.fields.message, 'Failed password for root');
    assert.equal(r5424.timestamp, '2026-02-03 04:05:06.789000000');
    const r3164 = rows.find((x) => x.fields.hostname === 'mymachine')!;
    assert.equal(r3164.fields.facility, 4);
    assert.equal(r3164.fields.severity, 2);
    assert.equal(r3164.fields.app_name, 'su');
    assert.equal(r3164.raw, lines[1]);
  });

  test('built-in normalization and configured rules bring shippers onto one name', async () => {
    const f = await ingestFractal(admin, 'norm', {
      normalization: true,
      normalizers: [
        { type: 'rename', from: 'Computer', to: 'host' },
        { type: 'copy', from: 'host', to: 'host_copy' },
        { type: 'value_map', field: 'level', values: { W: 'warning', E: 'error' } },
      ],
    });
    const body = ['{"SourceIP":"10.0.0.1"}', '{"source":{"ip":"10.0.0.2"}}', '{"src-ip":"10.0.0.3","Computer":"ws1","level":"W"}'].join('\n');
    assert.equal((await send(f.token, body)).body.accepted, 3);
    const rows = await waitForLogs(a, f.id, 3);
    assert.deepEqual(rows.map((r) => r.fields.src_ip).sort(), ['10.0.0.1', '10.0.0.2', '10.0.0.3']);
    const third = rows.find((r) => r.fields.src_ip === '10.0.0.3')!;
    assert.equal(third.fields.host, 'ws1');
    assert.equal(third.fields.host_copy, 'ws1');
    assert.equal(third.fields.level, 'warning');
    assert.equal(third.fields.Computer, undefined);

    const off = await ingestFractal(admin, 'norm-off', { normalization: false });
    await send(off.token, '{"SourceIP":"10.0.0.9"}');
    const [row] = await waitForLogs(a, off.id, 1);
    assert.equal(row!.fields.SourceIP, '10.0.0.9');
  });
});

describe('bad input', () => {
  test('status table: 401 without or with a bad token, 400 for bad payloads, 413 over the limit', async () => {
    const f = await ingestFractal(admin, 'bad');
    const none = await send(null, '{"a":1}');
    assert.equal(none.status, 401);
    assert.match(none.body.error, /ingest token/);
    assert.equal((await send('svc_ingest_' + '0'.repeat(32), '{"a":1}')).status, 401);
    // Filebeat/Logstash style `api_key: "id:key"` arrives as ApiKey base64("id:key").
    const beat = await send(null, '{"via":"beats"}', { authorization: `ApiKey ${Buffer.from(`beats:${f.token}`).toString('base64')}` });
    assert.equal(beat.status, 200, JSON.stringify(beat.body));

    const cases: Array<[string | Buffer, RegExp, Record<string, string>?]> = [
      ['{"a":', /invalid JSON/],
      ['[1, 2, "x"]', /expected a JSON object, got number/],
      ['', /empty/],
      ['   \n  ', /No log records/],
      ['[]', /No log records/],
      [Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]), /UTF-8/],
      ['{"a":1}', /Content type "multipart\/form-data" is not accepted/, { 'content-type': 'multipart/form-data; boundary=x' }],
      ['{"a":"b\u0000c"}', /invalid JSON/],
    ];
    for (const [body, msg, headers] of cases) {
      const r = await send(f.token, body, headers);
      assert.equal(r.status, 400, `${JSON.stringify(String(body))} → ${r.status} ${JSON.stringify(r.body)}`);
      assert.equal(r.body.success, false);
      assert.match(r.body.error, msg);
    }
    const big = await send(f.token, '{"a":"' + 'x'.repeat(5 * 1024 * 1024) + '"}');
    assert.equal(big.status, 413);
    assert.match(big.body.error, /SVC_MAX_BODY_SIZE/);
    // The service keeps serving.
    assert.equal((await send(f.token, '{"still":"serving"}')).status, 200);
  });

  test('good records of a partly bad batch are kept; the response says how many and why', async () => {
    const f = await ingestFractal(admin, 'partial');
    const r = await send(f.token, '{"n":1}\nnot json\n{"n":2}\n42\n{"n":3}');
    assert.equal(r.status, 200);
    assert.equal(r.body.accepted, 3);
    assert.equal(r.body.rejected, 2);
    assert.match(r.body.errors[0], /^record 2: invalid JSON/);
    assert.match(r.body.errors[1], /^record 4: expected a JSON object, got number/);
    const rows = await waitForLogs(a, f.id, 3);
    assert.deepEqual(rows.map((x) => x.fields.n).sort(), [1, 2, 3]);
  });

  test('hostile but valid records are stored faithfully', async () => {
    const f = await ingestFractal(admin, 'hostile');
    let deep: Record<string, unknown> = { leaf: 'bottom' };
    for (let i = 0; i < 200; i++) deep = { d: deep };
    const many = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`f${i}`, i]));
    const records = [
      { kind: 'deep', ...deep },
      { kind: 'many', ...many },
      { kind: 'huge', blob: 'y'.repeat(1024 * 1024) },
      { kind: 'keys', 'with space': 1, 'dotted.key': 2, 'ünïcødé': 3, '': 4 },
    ];
    const body = records.map((r) => JSON.stringify(r)).join('\n') + '\n{"kind":"big","n":18446744073709551616,"m":12345678901234567890123}';
    const r = await send(f.token, body);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.accepted, 5);
    const rows = await waitForLogs(a, f.id, 5);
    const kind = (k: string) => rows.find((x) => x.fields.kind === k)!;
    assert.equal(kind('many').fields.f9999, 9999);
    assert.equal((kind('huge').fields.blob as string).length, 1024 * 1024);
    assert.equal(kind('keys').fields['with space'], 1);
    assert.equal(kind('keys').fields['dotted.key'], 2);
    assert.equal(kind('keys').fields['ünïcødé'], 3);
    assert.ok(kind('deep').raw.includes('"leaf":"bottom"'));
    // Beyond 2^63 the exact digits are kept: never wrapped, never rounded.
    assert.match(kind('big').raw, /18446744073709551616/);
    assert.equal(String(kind('big').fields.n), '18446744073709551616');
    assert.equal(String(kind('big').fields.m), '12345678901234567890123');
  });
});

describe('backpressure', () => {
  test('pressure endpoint lists every layer and needs authentication', async () => {
    assert.equal((await new Client(a.url).get('/api/v1/system/pressure')).status, 401);
    const r = await admin.get('/api/v1/system/pressure');
    assert.equal(r.status, 200);
    assert.deepEqual(Object.keys(r.body.data.layers).sort(), ['disk_quota', 'queue', 'rate_limit', 'spool', 'storage']);
    assert.equal(r.body.data.layers.queue.slots, 100);
  });
});

test('every accepted log is countable in storage', async () => {
  const f = await ingestFractal(admin, 'count');
  const lines = Array.from({ length: 12_345 }, (_, i) => JSON.stringify({ i, msg: `event ${i}` })).join('\n');
  const r = await send(f.token, lines);
  assert.equal(r.body.accepted, 12_345);
  const rows = await waitForLogs(a, f.id, 12_345);
  assert.equal(new Set(rows.map((x) => x.fields.i)).size, 12_345);
  assert.equal((await storedLogs(a, f.id)).length, 12_345);
});
