// A plain record's own text is what the engine makes its `fields` from (ingest/verbatim.ts, the
// logs_ingest entry table). These tests check the scanner's verdicts, and — against the embedded
// engine itself — that rows written through the entry table are stored with the same values and
// the same types as rows holding the record parsed, flattened and serialised as a nested object.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { loadConfig } from '../../service/src/config.ts';
import { flatten } from '../../service/src/ingest/flatten.ts';
import { parseJsonRecord } from '../../service/src/ingest/parsers/json.ts';
import { keyCount, plainObjectMembers } from '../../service/src/ingest/verbatim.ts';
import { openAnalytics, type Analytics } from '../../service/src/storage/clickhouse.ts';
import { migrateClickHouse } from '../../service/src/storage/clickhouse-migrations.ts';

/** What the pipeline does: the text itself when plain and unchanged, else the re-serialised fields. */
function fieldsText(text: string): string {
  const members = plainObjectMembers(text);
  const obj = parseJsonRecord(text);
  const fields = flatten(obj);
  return members >= 0 && fields === obj && keyCount(obj) === members ? text : JSON.stringify(fields);
}

describe('plainObjectMembers', () => {
  test('flat objects of strings, integers, fractions, booleans and null are plain', () => {
    assert.equal(plainObjectMembers('{}'), 0);
    assert.equal(plainObjectMembers('{"a":"x","b":1,"c":-2.5,"d":true,"e":false,"f":null}'), 6);
    assert.equal(plainObjectMembers('{ "a" : 1 , "b" : "two" }'), 2);
    assert.equal(plainObjectMembers('{"esc":"a\\"b\\\\","u":"\\u00e9","":0,"a.b":123456789012345}'), 4);
    assert.equal(plainObjectMembers('{"a":1,"a":2}'), 2, 'a duplicate key is counted twice (the caller compares with the parsed keys)');
  });

  test('anything that re-serialises differently is not plain', () => {
    for (const t of [
      '{"a":{"b":1}}', // flattened
      '{"a":[1]}', // array kept as text
      '{"a":5.0}', // 5 would be an Int64, 5.0 is a Float64
      '{"a":-0}',
      '{"a":-0.0}',
      '{"a":1e5}',
      '{"a":1.5E2}',
      '{"a":1234567890123456}', // 16 digits: possibly beyond 2^53
      '{"a":0.1234567890123456}',
      '{"a":1}\n',
      '{"a":\n1}',
      '{\t"a":1}',
      ' {"a":1}',
      '{"a":1} ',
      '[{"a":1}]',
      '"text"',
      '{"a":1,}',
      '{"a" 1}',
      '{"a":"unterminated}',
    ]) {
      assert.equal(plainObjectMembers(t), -1, t);
    }
  });

  test('a duplicated key, __proto__ and non-canonical numbers take the ordinary path', () => {
    assert.equal(fieldsText('{"a":1,"a":2}'), '{"a":2}');
    // __proto__ is a field like any other (tests/ingest/hostile-records.test.ts), kept on the ordinary path
    assert.equal(fieldsText('{"__proto__":1,"b":2}'), '{"__proto__":1,"b":2}');
    assert.equal(fieldsText('{"a":5.0,"b":1}'), '{"a":5,"b":1}');
    const plain = '{"msg":"hello \\"you\\"","n":42,"r":0.25,"ok":true,"none":null}';
    assert.equal(fieldsText(plain), plain);
  });
});

// ---- against the engine ---------------------------------------------------------------------------

let ch: Analytics;
let dir: string;
before(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'verbatim-'));
  ch = await openAnalytics(loadConfig({ SVC_DATA_DIR: dir }));
  await migrateClickHouse(ch);
});
after(async () => {
  await ch.close();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * Each text stored twice: as the pipeline writes it (a logs_ingest row: raw, plus fields as JSON
 * text only when not verbatim) and as a row of logs holding the parsed, flattened record as a
 * nested object. Returns both stored forms (values and types) per text.
 */
async function storedPairs(texts: string[]): Promise<Array<{ a: string; b: string; text: string }>> {
  const fid = randomUUID();
  const ts = '2026-01-01 00:00:00.000000000';
  const head = (k: number, side: number) =>
    `"fractal_id":"${fid}","timestamp":"${ts}","ingest_timestamp":"${ts}","log_id":"00000000-0000-4000-8000-${String(k * 2 + side).padStart(12, '0')}"`;
  const viaIngest = texts.map((t, k) => {
    const f = fieldsText(t);
    return `{${head(k, 0)},"raw":${JSON.stringify(t)}${f === t ? '' : `,"fields":${JSON.stringify(f)}`}}`;
  });
  const direct = texts.map((t, k) => `{${head(k, 1)},"raw":${JSON.stringify(t)},"fields":${JSON.stringify(flatten(parseJsonRecord(t)))}}`);
  await ch.insertFormatted(ch.table('logs_ingest'), 'JSONEachRow', Buffer.from(viaIngest.join('\n') + '\n'));
  await ch.insertFormatted(ch.table('logs'), 'JSONEachRow', Buffer.from(direct.join('\n') + '\n'));
  const rs = await ch.client.query({
    query: `SELECT toString(log_id) AS id, raw, toJSONString(fields) AS j, toJSONString(JSONAllPathsWithTypes(fields)) AS t
            FROM ${ch.table('logs')} WHERE fractal_id = {fid:UUID} ORDER BY log_id`,
    query_params: { fid },
    format: 'JSONEachRow',
  });
  const got = (await rs.json()) as Array<{ id: string; raw: string; j: string; t: string }>;
  assert.equal(got.length, texts.length * 2);
  const out = [];
  for (let i = 0; i < got.length; i += 2) {
    assert.equal(got[i]!.raw, got[i + 1]!.raw);
    out.push({ a: got[i]!.j + ' ' + got[i]!.t, b: got[i + 1]!.j + ' ' + got[i + 1]!.t, text: got[i]!.raw });
  }
  return out;
}

const numberLiteral = fc.oneof(
  fc.integer().map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => JSON.stringify(d)),
  fc.constantFrom('5.0', '-0', '0', '-0.5', '0.10', '302.30', '1e5', '2.5E-3', '123456789012345', '1234567890123456', '9007199254740993', '1.000000000000001'),
);
const valueLiteral = fc.oneof(
  fc.string().map((s) => JSON.stringify(s)),
  fc.constantFrom('"\\u00e9\\/\\b"', '"2026-01-02T03:04:05Z"', '"10.0.0.1"', '"true"', '"123"'),
  numberLiteral,
  fc.constantFrom('true', 'false', 'null', '{"x":1}', '[1,"a"]'),
);
const keyLiteral = fc.oneof(fc.constantFrom('a', 'b', 'a.b', 'status', '', 'k k'), fc.string({ maxLength: 8 }).filter((k) => k !== '__proto__')).map((k) => JSON.stringify(k));
const record = fc
  .array(fc.tuple(keyLiteral, valueLiteral, fc.constantFrom('', ' ')), { maxLength: 8 })
  .map((members) => `{${members.map(([k, v, sp]) => `${k}:${sp}${v}`).join(',')}}`);

test('through the ingest entry table the engine stores the same values with the same types as from a nested object', async () => {
  const samples = fc.sample(record, { numRuns: 400, seed: 20260101 });
  const texts = [
    ...samples,
    '{"timestamp":"2026-01-02T03:04:05.123Z","host":"web-01","status":200,"bytes":1234,"latency_ms":12.5,"ok":true,"user":null}',
    '{"d":"2026-01-02","f":5.5,"i":-7,"s":"ünïcødé","e":"\\"quoted\\" \\\\ \\n"}',
    // Not verbatim: flattened, arrays as text, exact big numbers, a duplicated key.
    '{"http":{"status":503,"req":{"method":"GET"}},"tags":["a",1],"n":18446744073709551617,"m":-12345678901234567890123,"x":1,"x":2}',
    '{"":4,"with space":1,"dotted.key":2,"ünïcødé":3,"f":1e300,"g":1.0,"h":-0}',
  ];
  let verbatim = 0;
  for (const t of texts) if (fieldsText(t) === t) verbatim++;
  assert.ok(verbatim > 50, `the sample should exercise the verbatim path (${verbatim} of ${texts.length})`);
  for (const p of await storedPairs(texts)) assert.equal(p.a, p.b, `record ${p.text}`);
});
