// Unit tests of the OTLP/HTTP logs decoding (no appliance): requests produced by the real
// OpenTelemetry JS exporters (captured by a tiny local HTTP server), hand-written OTLP JSON in its
// accepted spellings, hand-built protobuf, and the response encodings.
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { before, describe, test } from 'node:test';
import { SeverityNumber } from '@opentelemetry/api-logs';
import { OTLPLogExporter as JsonExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPLogExporter as ProtoExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import {
  OtlpPayloadError,
  decodeExportResponse,
  decodeJson,
  decodeProtobuf,
  decodeStatus,
  encodeExportResponse,
  encodeStatus,
  quoteUnsafeIntegers,
  toIncomingRecords,
} from '../../service/src/ingest/otlp/decode.ts';
import { otlpFormat } from '../../service/src/ingest/otlp/routes.ts';
import { ExportLogsServiceRequest } from '../../service/src/ingest/otlp/schema.ts';
import type { IncomingRecord } from '../../service/src/ingest/types.ts';
import { BigNumberText } from '../../service/src/shared/exact-json.ts';
import { BIG_TEXT, sdkRecords } from '../support/otlp.ts';

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const SPAN_ID = 'b7ad6b7169203331';
const SEC = 1_767_323_045; // 2026-01-02T03:04:05Z
const NS = `${SEC}123456789`;

/** Sends records with a real exporter to a capturing server and returns what went over the wire. */
async function capture(kind: 'proto' | 'json', records: ReadableLogRecord[], gzip = false): Promise<{ headers: IncomingHttpHeaders; body: Buffer }> {
  let got: { headers: IncomingHttpHeaders; body: Buffer } | null = null;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got = { headers: req.headers, body: Buffer.concat(chunks) };
      res.writeHead(200, { 'content-type': kind === 'proto' ? 'application/x-protobuf' : 'application/json' });
      res.end(kind === 'proto' ? '' : '{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/logs`;
  const opts = { url, compression: (gzip ? 'gzip' : 'none') as never };
  const exporter = kind === 'proto' ? new ProtoExporter(opts) : new JsonExporter(opts);
  const result = await new Promise<{ code: number; error?: Error }>((r) => exporter.export(records, r));
  await exporter.shutdown();
  await new Promise((r) => server.close(r));
  assert.equal(result.code, 0, `export failed: ${result.error?.message}`);
  assert.ok(got);
  const g = got as { headers: IncomingHttpHeaders; body: Buffer };
  return { headers: g.headers, body: g.headers['content-encoding'] === 'gzip' ? gunzipSync(g.body) : g.body };
}

function checkSdkRecords(records: IncomingRecord[]) {
  assert.equal(records.length, 2);
  const f = records[0]!.fields!;
  assert.equal(f.message, 'payment failed');
  assert.equal(f.severity_text, 'ERROR');
  assert.equal(f.severity_number, 17);
  assert.equal(f.trace_id, TRACE_ID);
  assert.equal(f.span_id, SPAN_ID);
  assert.equal(f.timestamp, NS);
  assert.equal(f['resource.service.name'], 'checkout');
  assert.equal(f['resource.host.name'], 'web-1');
  assert.equal(f['resource.service.instance.count'], 3);
  assert.equal(f['scope.name'], 'app.payments');
  assert.equal(f['scope.version'], '1.2.3');
  assert.equal(f['scope.team'], 'payments');
  assert.equal(f['order.id'], 'o-17');
  assert.ok(f['order.total_micros'] instanceof BigNumberText, 'an int64 beyond 2^53 is BigNumberText');
  assert.equal((f['order.total_micros'] as BigNumberText).text, BIG_TEXT);
  assert.equal(f.retry, 2);
  assert.equal(f.ratio, 0.25);
  assert.equal(f.ok, false);
  assert.deepEqual(f.tags, ['a', 'b']);
  assert.equal(f['http.request.header.x-req'], 'abc');
  assert.equal(f['http.status'], 502);
  // raw: the record in OTLP JSON form.
  const raw = JSON.parse(records[0]!.text);
  assert.equal(raw.timeUnixNano, NS);
  assert.equal(raw.traceId, TRACE_ID);
  assert.equal(raw.spanId, SPAN_ID);
  assert.equal(raw.severityNumber, 17);
  assert.deepEqual(raw.body, { stringValue: 'payment failed' });
  assert.deepEqual(
    raw.attributes.find((a: { key: string }) => a.key === 'order.total_micros'),
    { key: 'order.total_micros', value: { intValue: BIG_TEXT } },
  );
  assert.match(records[0]!.text, new RegExp(`"intValue":"${BIG_TEXT}"`));

  const g = records[1]!.fields!;
  assert.equal(typeof g.message, 'string');
  assert.deepEqual(JSON.parse(g.message as string), { user: 'ann', n: 1, list: [1, 'x'] });
  assert.equal(g.timestamp, `${SEC}000000005`);
  assert.equal(g.severity_number, 9);
  assert.equal(g.severity_text, undefined);
  assert.equal(g.trace_id, undefined, 'no span context: no trace_id');
  assert.equal(g.span_id, undefined);
}

describe('requests from the real OpenTelemetry exporters', () => {
  let records: ReadableLogRecord[];
  before(async () => {
    // The rich record, and one with a map body.
    records = await sdkRecords({
      resource: { 'service.instance.count': 3 },
      traceId: TRACE_ID,
      spanId: SPAN_ID,
      time: [SEC, 123_456_789],
      second: { timestamp: [SEC, 5], severityNumber: SeverityNumber.INFO, body: { user: 'ann', n: 1, list: [1, 'x'] } },
    });
  });

  test('protobuf exporter', async () => {
    const { headers, body } = await capture('proto', records);
    assert.equal(otlpFormat(headers['content-type']), 'protobuf');
    checkSdkRecords(toIncomingRecords(decodeProtobuf(body)));
  });

  test('protobuf exporter, gzip', async () => {
    const { headers, body } = await capture('proto', records, true);
    assert.equal(headers['content-encoding'], 'gzip');
    checkSdkRecords(toIncomingRecords(decodeProtobuf(body)));
  });

  test('JSON exporter', async () => {
    const { headers, body } = await capture('json', records);
    assert.equal(otlpFormat(headers['content-type']), 'json');
    checkSdkRecords(toIncomingRecords(decodeJson(body)));
  });
});

const json = (o: unknown) => Buffer.from(typeof o === 'string' ? o : JSON.stringify(o));

describe('OTLP JSON', () => {
  test('snake_case keys, uppercase hex ids, int64 as string or bare number, typed values', () => {
    const text = `{"resource_logs":[{"resource":{"attributes":[{"key":"service.name","value":{"string_value":"api"}}]},
      "scope_logs":[{"scope":{"name":"s","version":"9","attributes":[{"key":"lib","value":{"stringValue":"x"}}]},
      "log_records":[{"time_unix_nano":"1767323045000000001","severity_number":"SEVERITY_NUMBER_WARN","severity_text":"Warning",
        "trace_id":"0AF7651916CD43DD8448EB211C80319C","span_id":"B7AD6B7169203331",
        "body":{"string_value":"hi"},
        "attributes":[
          {"key":"big","value":{"int_value":"9223372036854775807"}},
          {"key":"bare","value":{"intValue":-9223372036854775808}},
          {"key":"small","value":{"intValue":"42"}},
          {"key":"d","value":{"doubleValue":1.5}},
          {"key":"nan","value":{"doubleValue":"NaN"}},
          {"key":"b","value":{"boolValue":true}},
          {"key":"bytes","value":{"bytesValue":"AQID"}},
          {"key":"empty","value":{}},
          {"key":"nothing"},
          {"key":"emptymap","value":{"kvlistValue":{"values":[]}}},
          {"key":"arr","value":{"arrayValue":{"values":[{"intValue":"1"},{"stringValue":"two"},{"intValue":"9007199254740993"},{"kvlistValue":{"values":[{"key":"k","value":{"boolValue":false}}]}}]}}},
          {"key":"m","value":{"kvlist_value":{"values":[{"key":"a","value":{"kvlistValue":{"values":[{"key":"b","value":{"intValue":"7"}}]}}}]}}}
        ]}]}]}]}`;
    const [r] = toIncomingRecords(decodeJson(json(text)));
    const f = r!.fields!;
    assert.equal(f['resource.service.name'], 'api');
    assert.equal(f['scope.name'], 's');
    assert.equal(f['scope.version'], '9');
    assert.equal(f['scope.lib'], 'x');
    assert.equal(f.timestamp, '1767323045000000001');
    assert.equal(f.severity_number, 13);
    assert.equal(f.severity_text, 'Warning');
    assert.equal(f.trace_id, TRACE_ID);
    assert.equal(f.span_id, SPAN_ID);
    assert.equal(f.message, 'hi');
    assert.deepEqual(f.big, new BigNumberText('9223372036854775807'));
    assert.deepEqual(f.bare, new BigNumberText('-9223372036854775808'));
    assert.equal(f.small, 42);
    assert.equal(f.d, 1.5);
    assert.equal(f.nan, 'NaN');
    assert.equal(f.b, true);
    assert.equal(f.bytes, 'AQID');
    assert.equal(f.empty, null);
    assert.equal(f.nothing, null);
    assert.deepEqual(f.emptymap, {});
    assert.deepEqual(f.arr, [1, 'two', new BigNumberText('9007199254740993'), { k: false }]);
    assert.equal(f['m.a.b'], 7);
    const raw = JSON.parse(r!.text);
    assert.equal(raw.severityNumber, 13);
    assert.equal(raw.traceId, TRACE_ID);
    assert.deepEqual(raw.attributes[1], { key: 'bare', value: { intValue: '-9223372036854775808' } });
  });

  test('timestamp: timeUnixNano, else observedTimeUnixNano, else absent', () => {
    const rec = (r: object) => ({ resourceLogs: [{ scopeLogs: [{ logRecords: [r] }] }] });
    const one = (r: object) => toIncomingRecords(decodeJson(json(rec(r))))[0]!.fields!;
    assert.equal(one({ timeUnixNano: '1767323045000000000', observedTimeUnixNano: '1767323046000000000' }).timestamp, '1767323045000000000');
    assert.equal(one({ timeUnixNano: '0', observedTimeUnixNano: '1767323046000000000' }).timestamp, '1767323046000000000');
    assert.equal(one({ observedTimeUnixNano: 1767323046000000000 }).timestamp, '1767323046000000000', 'a bare number keeps its digits');
    assert.equal('timestamp' in one({ timeUnixNano: '0', observedTimeUnixNano: 0 }), false);
    assert.equal('timestamp' in one({}), false);
  });

  test('ids: all-zero and empty ids are left out; bad ids are refused', () => {
    const one = (r: object) => toIncomingRecords(decodeJson(json({ resourceLogs: [{ scopeLogs: [{ logRecords: [r] }] }] })))[0]!.fields!;
    const z = one({ traceId: '0'.repeat(32), spanId: '' });
    assert.equal('trace_id' in z, false);
    assert.equal('span_id' in z, false);
    // base64 ids (older senders) of the right size
    assert.equal(one({ traceId: Buffer.from(TRACE_ID, 'hex').toString('base64') }).trace_id, TRACE_ID);
    assert.throws(() => one({ traceId: 'not-an-id' }), OtlpPayloadError);
  });

  test('bodies: kvlist and array as JSON text (big ints exact), numbers and bools as values', () => {
    const one = (body: object) => toIncomingRecords(decodeJson(json({ resourceLogs: [{ scopeLogs: [{ logRecords: [{ body }] }] }] })))[0]!.fields!;
    const kv = one({ kvlistValue: { values: [{ key: 'a', value: { intValue: '9223372036854775807' } }, { key: 'b', value: { arrayValue: { values: [{ stringValue: 'x' }] } } }] } });
    assert.equal(kv.message, '{"a":9223372036854775807,"b":["x"]}');
    assert.equal(one({ arrayValue: { values: [{ intValue: 1 }, { boolValue: true }] } }).message, '[1,true]');
    assert.equal(one({ intValue: '12' }).message, 12);
    assert.deepEqual(one({ intValue: '12345678901234567890' }).message, new BigNumberText('12345678901234567890'));
    assert.equal(one({ doubleValue: 2.5 }).message, 2.5);
    assert.equal(one({ boolValue: false }).message, false);
    assert.equal('message' in one({}), false);
  });

  test('record attributes win over same-named mapped prefixes; mapped fields win over attributes', () => {
    const [r] = toIncomingRecords(
      decodeJson(json({
        resourceLogs: [{
          resource: { attributes: [{ key: 'x', value: { stringValue: 'from resource' } }] },
          scopeLogs: [{ logRecords: [{ body: { stringValue: 'the body' }, attributes: [{ key: 'message', value: { stringValue: 'attr' } }, { key: 'resource.x', value: { stringValue: 'attr' } }] }] }],
        }],
      })),
    );
    assert.equal(r!.fields!.message, 'the body');
    assert.equal(r!.fields!['resource.x'], 'attr');
  });

  test('several resources and scopes keep record order', () => {
    const lr = (m: string) => ({ body: { stringValue: m } });
    const req = {
      resourceLogs: [
        { resource: { attributes: [{ key: 'r', value: { intValue: 1 } }] }, scopeLogs: [{ scope: { name: 'a' }, logRecords: [lr('1'), lr('2')] }, { scope: { name: 'b' }, logRecords: [lr('3')] }] },
        { resource: { attributes: [{ key: 'r', value: { intValue: 2 } }] }, scopeLogs: [{ logRecords: [lr('4')] }] },
        { scopeLogs: [] },
        {},
      ],
    };
    const recs = toIncomingRecords(decodeJson(json(req)));
    assert.deepEqual(recs.map((r) => [r.fields!.message, r.fields!['resource.r'], r.fields!['scope.name']]), [
      ['1', 1, 'a'],
      ['2', 1, 'a'],
      ['3', 1, 'b'],
      ['4', 2, undefined],
    ]);
  });

  test('an empty request has no records', () => {
    assert.deepEqual(toIncomingRecords(decodeJson(json({}))), []);
    assert.deepEqual(toIncomingRecords(decodeJson(json({ resourceLogs: [] }))), []);
  });

  test('invalid payloads are OtlpPayloadError with a sentence naming the place', () => {
    const bad = (b: unknown) => assert.throws(() => decodeJson(json(b)), OtlpPayloadError);
    bad('{not json');
    bad('[1,2]');
    bad('"x"');
    bad({ resourceLogs: {} });
    bad({ resourceLogs: [{ scopeLogs: [{ logRecords: [5] }] }] });
    bad({ resourceLogs: [{ scopeLogs: [{ logRecords: [{ timeUnixNano: 'yesterday' }] }] }] });
    bad({ resourceLogs: [{ scopeLogs: [{ logRecords: [{ timeUnixNano: '-5' }] }] }] });
    bad({ resourceLogs: [{ scopeLogs: [{ logRecords: [{ attributes: [{ key: 1 }] }] }] }] });
    bad({ resourceLogs: [{ scopeLogs: [{ logRecords: [{ attributes: [{ key: 'a', value: { intValue: 1.5 } }] }] }] }] });
    bad({ resourceLogs: [{ scopeLogs: [{ logRecords: [{ severityNumber: 'LOUD' }] }] }] });
    bad({ resourceLogs: [{ scopeLogs: [{ logRecords: [{ body: { stringValue: 5 } }] }] }] });
    try {
      decodeJson(json({ resourceLogs: [{ scopeLogs: [{ logRecords: [{}, { attributes: [{ key: 'a', value: { boolValue: 'yes' } }] }] }] }] }));
      assert.fail('expected an error');
    } catch (err) {
      assert.match((err as Error).message, /resourceLogs\[0\]\.scopeLogs\[0\]\.logRecords\[1\]\.attributes\[0\]\.value\.boolValue/);
    }
  });

  test('deep nesting is refused, not a stack overflow', () => {
    const n = 5000;
    const v = '{"kvlistValue":{"values":[{"key":"k","value":'.repeat(n) + '{"stringValue":"x"}' + '}]}}'.repeat(n);
    const text = `{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":${v}}]}]}]}`;
    assert.throws(() => decodeJson(json(text)), OtlpPayloadError);
  });

  test('quoteUnsafeIntegers quotes only bare integer literals beyond 2^53', () => {
    assert.equal(quoteUnsafeIntegers('{"a":1,"b":"9223372036854775807"}'), '{"a":1,"b":"9223372036854775807"}');
    assert.equal(quoteUnsafeIntegers('{"a":9223372036854775807}'), '{"a":"9223372036854775807"}');
    assert.equal(quoteUnsafeIntegers('[-9223372036854775808, 9007199254740991]'), '["-9223372036854775808", 9007199254740991]');
    assert.equal(quoteUnsafeIntegers('[1.12345678901234567, 12345678901234567e3]'), '[1.12345678901234567, 12345678901234567e3]');
    assert.equal(quoteUnsafeIntegers('{"k\\" 1234567890123456789":9223372036854775807}'), '{"k\\" 1234567890123456789":"9223372036854775807"}');
  });
});

describe('protobuf', () => {
  const encode = (o: object) => ExportLogsServiceRequest.encode(ExportLogsServiceRequest.fromObject(o)).finish();

  test('int64 limits, fixed64 times, bytes ids and values', () => {
    const body = encode({
      resource_logs: [{
        resource: { attributes: [{ key: 'service.name', value: { string_value: 'svc' } }] },
        scope_logs: [{
          scope: { name: 'sc', version: 'v1', attributes: [{ key: 'k', value: { int_value: '-1' } }] },
          log_records: [{
            time_unix_nano: '0',
            observed_time_unix_nano: '1767323045999999999',
            severity_number: 21,
            severity_text: 'FATAL',
            trace_id: Buffer.from(TRACE_ID, 'hex'),
            span_id: Buffer.from('0000000000000000', 'hex'),
            flags: 1,
            event_name: 'order.placed',
            body: { kvlist_value: { values: [{ key: 'n', value: { int_value: '-9223372036854775808' } }] } },
            attributes: [
              { key: 'max', value: { int_value: '9223372036854775807' } },
              { key: 'bin', value: { bytes_value: Buffer.from([1, 2, 3]) } },
              { key: 'zero', value: { int_value: '0' } },
              { key: 'f', value: { bool_value: false } },
            ],
          }],
        }],
      }],
    });
    const [r] = toIncomingRecords(decodeProtobuf(body));
    const f = r!.fields!;
    assert.equal(f['resource.service.name'], 'svc');
    assert.equal(f['scope.name'], 'sc');
    assert.equal(f['scope.version'], 'v1');
    assert.equal(f['scope.k'], -1);
    assert.equal(f.timestamp, '1767323045999999999');
    assert.equal(f.severity_number, 21);
    assert.equal(f.severity_text, 'FATAL');
    assert.equal(f.trace_id, TRACE_ID);
    assert.equal('span_id' in f, false);
    assert.equal(f.event_name, 'order.placed');
    assert.equal(f.message, '{"n":-9223372036854775808}');
    assert.deepEqual(f.max, new BigNumberText('9223372036854775807'));
    assert.equal(f.bin, 'AQID');
    assert.equal(f.zero, 0);
    assert.equal(f.f, false);
    const raw = JSON.parse(r!.text);
    assert.deepEqual(raw, {
      observedTimeUnixNano: '1767323045999999999',
      severityNumber: 21,
      severityText: 'FATAL',
      body: { kvlistValue: { values: [{ key: 'n', value: { intValue: '-9223372036854775808' } }] } },
      attributes: [
        { key: 'max', value: { intValue: '9223372036854775807' } },
        { key: 'bin', value: { bytesValue: 'AQID' } },
        { key: 'zero', value: { intValue: '0' } },
        { key: 'f', value: { boolValue: false } },
      ],
      flags: 1,
      traceId: TRACE_ID,
      eventName: 'order.placed',
    });
  });

  test('an empty body is an empty request', () => {
    assert.deepEqual(toIncomingRecords(decodeProtobuf(new Uint8Array(0))), []);
  });

  test('garbage and JSON text are refused', () => {
    assert.throws(() => decodeProtobuf(Buffer.from([0x0a, 0xff, 0xff, 0xff, 0x0f, 0x01])), OtlpPayloadError);
    assert.throws(() => decodeProtobuf(Buffer.from('{"resourceLogs":[]}')), OtlpPayloadError);
    assert.throws(() => decodeProtobuf(Buffer.from('hello, this is not protobuf at all')), OtlpPayloadError);
  });
});

describe('responses and content types', () => {
  test('ExportLogsServiceResponse: empty on success, partial_success otherwise', () => {
    assert.equal((encodeExportResponse('protobuf') as Buffer).length, 0);
    assert.equal(encodeExportResponse('json'), '{}');
    const p = encodeExportResponse('protobuf', { rejected: 2, errorMessage: 'record 1: bad' }) as Buffer;
    assert.deepEqual(decodeExportResponse(p), { partialSuccess: { rejectedLogRecords: '2', errorMessage: 'record 1: bad' } });
    assert.deepEqual(JSON.parse(encodeExportResponse('json', { rejected: 2, errorMessage: 'x' }) as string), {
      partialSuccess: { rejectedLogRecords: '2', errorMessage: 'x' },
    });
  });

  test('google.rpc.Status in either encoding', () => {
    assert.deepEqual(decodeStatus(encodeStatus('protobuf', 400, 'bad') as Buffer), { code: 3, message: 'bad' });
    assert.deepEqual(decodeStatus(encodeStatus('protobuf', 401, 'who') as Buffer), { code: 16, message: 'who' });
    assert.deepEqual(JSON.parse(encodeStatus('json', 429, 'slow down') as string), { code: 8, message: 'slow down', success: false, error: 'slow down' });
  });

  test('otlpFormat', () => {
    assert.equal(otlpFormat('application/x-protobuf'), 'protobuf');
    assert.equal(otlpFormat('Application/X-Protobuf; charset=binary'), 'protobuf');
    assert.equal(otlpFormat('application/protobuf'), 'protobuf');
    assert.equal(otlpFormat('application/json; charset=utf-8'), 'json');
    assert.equal(otlpFormat('text/plain'), null);
    assert.equal(otlpFormat(undefined), null);
    assert.equal(otlpFormat('application/x-ndjson'), null);
  });
});
