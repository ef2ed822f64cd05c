// POST /v1/logs end to end: the real OpenTelemetry JS OTLP log exporters (protobuf and JSON,
// plain and gzip) against a real appliance (real HTTP, spool, embedded ClickHouse), then every
// mapped field read back from storage. Also the route's answers with a stand-in pipeline
// (429 with Retry-After, partial success) where the real one cannot be pushed there on demand.
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { SeverityNumber } from '@opentelemetry/api-logs';
import { OTLPLogExporter as JsonExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPLogExporter as ProtoExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import { createHttpApp } from '../../service/src/http/app.ts';
import { HttpError } from '../../service/src/http/errors.ts';
import { decodeExportResponse, decodeStatus } from '../../service/src/ingest/otlp/decode.ts';
import { otlpRoutes } from '../../service/src/ingest/otlp/routes.ts';
import { ExportLogsServiceRequest } from '../../service/src/ingest/otlp/schema.ts';
import type { IngestPipeline } from '../../service/src/ingest/pipeline.ts';
import { ingestScope } from '../../service/src/ingest/plugin.ts';
import type { AcceptResult, IncomingRecord } from '../../service/src/ingest/types.ts';
import { ADMIN_PASSWORD, Client, signIn, startTestAppliance, type TestAppliance } from '../support/appliance.ts';
import { ingestFractal } from '../support/ingest.ts';
import { expectOk } from '../support/api.ts';
import { waitForLogs } from '../support/logs.ts';
import { BIG_TEXT, sdkRecords } from '../support/otlp.ts';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN_ID = '00f067aa0ba902b7';
const SEC = Math.floor(Date.now() / 1000) - 3600; // an hour ago, within any default query range
const NANOS = 123_456_789;

let a: TestAppliance;
let admin: Client;

before(async () => {
  a = await startTestAppliance();
  admin = await signIn(a.url, 'admin', ADMIN_PASSWORD);
});
after(() => a?.dispose());

/**
 * The fractal's logs once it holds n, in the names this file's checks use: `f` is the fields' JSON
 * text (exact digits), `fields` the same flattened to dotted names.
 */
async function rows(fractalId: string, n: number) {
  return (await waitForLogs(a, fractalId, n)).map((r) => ({ f: r.fields_json, fields: r.fields, ts: r.timestamp, its: r.ingest_timestamp, raw: r.raw }));
}

/** The rich record and a map body, made by the real SDK; the resource names the test case. */
function sdkRecordsFor(testCase: string): Promise<ReadableLogRecord[]> {
  return sdkRecords({
    resource: { 'test.case': testCase },
    traceId: TRACE_ID,
    spanId: SPAN_ID,
    time: [SEC, NANOS],
    second: { timestamp: [SEC, NANOS + 1], severityNumber: SeverityNumber.INFO, severityText: 'INFO', body: { user: 'ann', n: 1 } },
  });
}

/** Exports with a real OTLP exporter; resolves to the exporter's ExportResult code (0 = success). */
async function exportWith(kind: 'proto' | 'json', token: string | null, records: ReadableLogRecord[], gzip = false) {
  const opts = {
    url: `${a.url}/v1/logs`,
    headers: (token ? { authorization: `Bearer ${token}` } : {}) as Record<string, string>,
    compression: (gzip ? 'gzip' : 'none') as never,
    timeoutMillis: 5000,
  };
  const exporter = kind === 'proto' ? new ProtoExporter(opts) : new JsonExporter(opts);
  try {
    return await new Promise<{ code: number; error?: Error }>((r) => exporter.export(records, r));
  } finally {
    await exporter.shutdown();
  }
}

function isoNs(sec: number, nanos: number): string {
  return `${new Date(sec * 1000).toISOString().slice(0, 19).replace('T', ' ')}.${String(nanos).padStart(9, '0')}`;
}

describe('the real OpenTelemetry exporters', () => {
  for (const [kind, gzip] of [['proto', false], ['proto', true], ['json', false], ['json', true]] as const) {
    test(`${kind}${gzip ? ' + gzip' : ''}: every mapped field and the timestamp are stored`, async () => {
      const name = `otlp-${kind}${gzip ? '-gzip' : ''}`;
      const f = await ingestFractal(admin, name);
      const res = await exportWith(kind, f.token, await sdkRecordsFor(name), gzip);
      assert.equal(res.code, 0, `export failed: ${res.error?.message}`);
      const [r1, r2] = await rows(f.id, 2);
      const x = r1!.fields;
      assert.equal(x.message, 'payment failed');
      assert.equal(x.severity_text, 'ERROR');
      assert.equal(x.severity_number, 17);
      assert.equal(x.trace_id, TRACE_ID);
      assert.equal(x.span_id, SPAN_ID);
      assert.equal(x['resource.service.name'], 'checkout');
      assert.equal(x['resource.host.name'], 'web-1');
      assert.equal(x['resource.test.case'], name);
      assert.equal(x['scope.name'], 'app.payments');
      assert.equal(x['scope.version'], '1.2.3');
      assert.equal(x['scope.team'], 'payments');
      assert.equal(x['order.id'], 'o-17');
      assert.equal(x.retry, 2);
      assert.equal(x.ratio, 0.25);
      assert.equal(x.ok, false);
      assert.equal(x['http.request.header.x-req'], 'abc');
      assert.equal(x['http.status'], 502);
      assert.ok(x.tags !== undefined, 'the array attribute is stored');
      // int64 beyond 2^53: every digit, whether the engine keeps it as a number or as text.
      assert.match(r1!.f, new RegExp(`"total_micros":"?${BIG_TEXT}"?[,}]`));
      // timestamp: TimeUnixNano to the nanosecond.
      assert.equal(r1!.ts, isoNs(SEC, NANOS));
      assert.equal(r2!.ts, isoNs(SEC, NANOS + 1));
      // raw: the record in OTLP JSON form.
      const raw = JSON.parse(r1!.raw);
      assert.equal(raw.timeUnixNano, `${SEC}${NANOS}`);
      assert.equal(raw.traceId, TRACE_ID);
      assert.deepEqual(raw.body, { stringValue: 'payment failed' });
      assert.match(r1!.raw, new RegExp(`"intValue":"${BIG_TEXT}"`));
      // A map body is stored as its JSON text.
      assert.deepEqual(JSON.parse(r2!.fields.message as string), { user: 'ann', n: 1 });
      assert.equal(r2!.fields.severity_number, 9);
      assert.equal(r2!.fields.trace_id, undefined);
    });
  }

  test('without a token the exporter is refused', async () => {
    const res = await exportWith('proto', null, await sdkRecordsFor('no-token'));
    assert.notEqual(res.code, 0);
  });
});

const otlpJson = (records: object[], resource: object[] = []) => ({
  resourceLogs: [{ resource: { attributes: resource }, scopeLogs: [{ scope: { name: 'hand' }, logRecords: records }] }],
});

function post(token: string | null, body: string | Buffer | Uint8Array, type: string | null, headers: Record<string, string> = {}, path = '/v1/logs') {
  return fetch(`${a.url}${path}`, {
    method: 'POST',
    headers: { ...(type ? { 'content-type': type } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
    body: body as never,
  }).then(async (r) => ({ status: r.status, headers: r.headers, body: Buffer.from(await r.arrayBuffer()) }));
}

describe('hand-written requests', () => {
  let f: { id: string; token: string };
  before(async () => {
    f = await ingestFractal(admin, 'otlp-hand');
  });

  test('OTLP JSON in snake_case with int64 at the limits; observed time; response {}', async () => {
    const g = await ingestFractal(admin, 'otlp-json-limits');
    const text = `{"resource_logs":[{"resource":{"attributes":[{"key":"service.name","value":{"string_value":"api"}}]},
      "scope_logs":[{"scope":{"name":"s"},"log_records":[{"time_unix_nano":"0","observed_time_unix_nano":"${SEC}000000042",
      "severity_number":13,"trace_id":"${TRACE_ID.toUpperCase()}","body":{"int_value":"9223372036854775807"},
      "attributes":[{"key":"max","value":{"intValue":9223372036854775807}},{"key":"min","value":{"intValue":"-9223372036854775808"}},
        {"key":"deep","value":{"kvlistValue":{"values":[{"key":"a","value":{"kvlistValue":{"values":[{"key":"b","value":{"boolValue":true}}]}}}]}}}]}]}]}]}`;
    const r = await post(g.token, text, 'application/json');
    assert.equal(r.status, 200, r.body.toString());
    assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
    assert.deepEqual(JSON.parse(r.body.toString()), {});
    const [row] = await rows(g.id, 1);
    assert.equal(row!.ts, isoNs(SEC, 42));
    assert.equal(row!.fields['resource.service.name'], 'api');
    assert.equal(row!.fields['scope.name'], 's');
    assert.equal(row!.fields.severity_number, 13);
    assert.equal(row!.fields.trace_id, TRACE_ID);
    assert.equal(row!.fields['deep.a.b'], true);
    assert.match(row!.f, /"max":"?9223372036854775807"?[,}]/);
    assert.match(row!.f, /"min":"?-9223372036854775808"?[,}]/);
    assert.match(row!.f, /"message":"?9223372036854775807"?[,}]/);
  });

  test('no timestamp in the record: the ingestion time', async () => {
    const g = await ingestFractal(admin, 'otlp-no-time');
    const r = await post(g.token, JSON.stringify(otlpJson([{ body: { stringValue: 'timeless' } }])), 'application/json');
    assert.equal(r.status, 200);
    const [row] = await rows(g.id, 1);
    assert.equal(row!.fields.message, 'timeless');
    assert.equal(row!.ts, row!.its);
  });

  test('protobuf success: 200, application/x-protobuf, zero-length body', async () => {
    const body = ExportLogsServiceRequest.encode(
      ExportLogsServiceRequest.fromObject({ resource_logs: [{ scope_logs: [{ log_records: [{ body: { string_value: 'pb' } }] }] }] }),
    ).finish();
    const r = await post(f.token, body, 'application/x-protobuf');
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-type'), 'application/x-protobuf');
    assert.equal(r.body.length, 0);
    // gzip by hand as well
    const z = await post(f.token, gzipSync(body), 'application/x-protobuf', { 'content-encoding': 'gzip' });
    assert.equal(z.status, 200);
    assert.equal(z.body.length, 0);
  });

  test('missing or unknown token: 401, in the request content type', async () => {
    const pb = await post(null, Buffer.alloc(0), 'application/x-protobuf');
    assert.equal(pb.status, 401);
    assert.equal(pb.headers.get('content-type'), 'application/x-protobuf');
    assert.equal(decodeStatus(pb.body).code, 16);
    const js = await post(`svc_ingest_${'0'.repeat(32)}`, '{}', 'application/json');
    assert.equal(js.status, 401);
    const body = JSON.parse(js.body.toString());
    assert.equal(body.code, 16);
    assert.equal(typeof body.message, 'string');
  });

  test('another content type: 415', async () => {
    for (const type of ['text/plain', 'application/x-ndjson', null]) {
      const r = await post(f.token, '{"resourceLogs":[]}', type);
      assert.equal(r.status, 415, `${type}: ${r.body.toString()}`);
      assert.match(JSON.parse(r.body.toString()).message, /application\/x-protobuf/);
    }
  });

  test('undecodable protobuf or JSON: 400 with a google.rpc.Status', async () => {
    const pb = await post(f.token, Buffer.from([0x0a, 0xff, 0xff, 0xff, 0x0f, 0x01, 0x02]), 'application/x-protobuf');
    assert.equal(pb.status, 400);
    assert.equal(pb.headers.get('content-type'), 'application/x-protobuf');
    const st = decodeStatus(pb.body);
    assert.equal(st.code, 3);
    assert.match(st.message, /protobuf/);
    const js = await post(f.token, '{"resourceLogs": [', 'application/json');
    assert.equal(js.status, 400);
    assert.equal(JSON.parse(js.body.toString()).code, 3);
    const typed = await post(f.token, JSON.stringify(otlpJson([{ timeUnixNano: 'noon' }])), 'application/json');
    assert.equal(typed.status, 400);
    assert.match(JSON.parse(typed.body.toString()).message, /timeUnixNano/);
  });

  test('a corrupt gzip body: 400', async () => {
    const r = await post(f.token, Buffer.from('not gzip at all'), 'application/json', { 'content-encoding': 'gzip' });
    assert.equal(r.status, 400);
  });

  test('only logs: /v1/traces and /v1/metrics are not served', async () => {
    for (const p of ['/v1/traces', '/v1/metrics']) {
      const r = await post(f.token, '{}', 'application/json', {}, p);
      assert.equal(r.status, 404, p);
    }
  });
});

describe("the token's normalizers", () => {
  test("the token's normalizer renames OTLP attribute names, resource and scope ones included", async () => {
    const n = expectOk(
      await admin.post('/api/v1/normalizers', {
        name: 'otlp names',
        transforms: ['dedot'],
        field_mappings: [{ sources: ['resource.service.name'], target: 'service' }],
        value_mappings: [{ from_field: 'severity_text', to_field: 'level', map: { ERROR: 'error' } }],
      }),
      201,
    );
    const f = await ingestFractal(admin, 'otlp-normalizer', { normalizer_id: n.id });
    const res = await exportWith('proto', f.token, await sdkRecordsFor('named'));
    assert.equal(res.code, 0, res.error?.message);
    const [r1] = await rows(f.id, 2);
    assert.equal(r1!.fields.service, 'checkout', 'a field mapping matches the name as it arrived');
    assert.equal(r1!.fields.resource_host_name, 'web-1', 'dedot on a resource attribute');
    assert.equal(r1!.fields.order_id, 'o-17', 'dedot on a log record attribute');
    assert.equal(r1!.fields.scope_name, 'app.payments');
    assert.equal(r1!.fields['http_request_header_x-req'], 'abc');
    assert.equal(r1!.fields.level, 'error');
    assert.equal(r1!.fields['order.id'], undefined);
  });

  test('a rename rule applies to OTLP attribute names', async () => {
    const f = await ingestFractal(admin, 'otlp-normalized', {
      normalizers: [{ type: 'rename', from: 'resource.service.name', to: 'service' }],
    });
    const res = await exportWith('proto', f.token, await sdkRecordsFor('normalized'));
    assert.equal(res.code, 0, res.error?.message);
    const [r1] = await rows(f.id, 2);
    assert.equal(r1!.fields.service, 'checkout');
    assert.equal(r1!.fields['resource.service.name'], undefined);
    assert.equal(r1!.fields['resource.host.name'], 'web-1');
  });
});

describe('route answers with a stand-in pipeline', () => {
  // The real pipeline refuses only under load or for broken records; a stand-in makes those
  // answers reproducible: 429 with Retry-After, partial success, and all records refused.
  let mode: 'ok' | 'full' | 'partial' | 'none' | 'unauth' = 'ok';
  let received: IncomingRecord[] = [];
  const pipeline: IngestPipeline = {
    authenticate() {
      if (mode === 'unauth') throw new HttpError(401, 'The ingest token is unknown or disabled.');
      return { fractalId: 'f' } as never;
    },
    admit() {},
    async accept(_t, records): Promise<AcceptResult> {
      received = records;
      if (mode === 'full') throw new HttpError(429, 'The ingest queue is full; retry with backoff.', { 'retry-after': '1' });
      const bad = mode === 'partial' ? 1 : mode === 'none' ? records.length : 0;
      const outcomes = records.map((_, i) => (i < bad ? { ok: false as const, error: 'broken' } : { ok: true as const, logId: `id-${i}` }));
      const errors = outcomes.flatMap((o, i) => (o.ok ? [] : [`record ${i + 1}: broken`]));
      return { accepted: records.length - bad, rejected: bad, errors, outcomes, durable: true };
    },
  };
  let base = '';
  let close: () => Promise<void>;
  before(async () => {
    const app = createHttpApp({ logger: false });
    await app.register(ingestScope([otlpRoutes]), { ctx: { config: { maxBodySize: 1024 * 1024 } } as never, pipeline });
    await app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
    close = () => app.close();
  });
  after(() => close?.());

  const two = otlpJson([{ body: { stringValue: 'one' } }, { body: { stringValue: 'two' } }]);
  const twoPb = () =>
    ExportLogsServiceRequest.encode(
      ExportLogsServiceRequest.fromObject({ resource_logs: [{ scope_logs: [{ log_records: [{ body: { string_value: 'one' } }, { body: { string_value: 'two' } }] }] }] }),
    ).finish();
  const send = (body: string | Uint8Array, type: string) =>
    fetch(`${base}/v1/logs`, { method: 'POST', headers: { 'content-type': type }, body: body as never }).then(async (r) => ({
      status: r.status,
      headers: r.headers,
      body: Buffer.from(await r.arrayBuffer()),
    }));

  test('the records handed to the pipeline carry fields and the OTLP JSON text', async () => {
    mode = 'ok';
    const r = await send(JSON.stringify(two), 'application/json');
    assert.equal(r.status, 200);
    assert.deepEqual(received.map((x) => x.fields?.message), ['one', 'two']);
    assert.deepEqual(JSON.parse(received[0]!.text), { body: { stringValue: 'one' } });
  });

  test('a full queue: 429 with Retry-After, as a Status in the request content type', async () => {
    mode = 'full';
    const pb = await send(twoPb(), 'application/x-protobuf');
    assert.equal(pb.status, 429);
    assert.equal(pb.headers.get('retry-after'), '1');
    assert.equal(decodeStatus(pb.body).code, 8);
    const js = await send(JSON.stringify(two), 'application/json');
    assert.equal(js.status, 429);
    assert.equal(js.headers.get('retry-after'), '1');
    assert.equal(JSON.parse(js.body.toString()).code, 8);
  });

  test('some records refused: 200 with partialSuccess', async () => {
    mode = 'partial';
    const pb = await send(twoPb(), 'application/x-protobuf');
    assert.equal(pb.status, 200);
    assert.deepEqual(decodeExportResponse(pb.body), { partialSuccess: { rejectedLogRecords: '1', errorMessage: 'record 1: broken' } });
    const js = await send(JSON.stringify(two), 'application/json');
    assert.equal(js.status, 200);
    assert.deepEqual(JSON.parse(js.body.toString()), { partialSuccess: { rejectedLogRecords: '1', errorMessage: 'record 1: broken' } });
  });

  test('every record refused: 400', async () => {
    mode = 'none';
    const js = await send(JSON.stringify(two), 'application/json');
    assert.equal(js.status, 400);
    assert.match(JSON.parse(js.body.toString()).message, /No valid logs/);
  });

  test('an empty export is a success without calling the pipeline', async () => {
    mode = 'ok';
    received = [];
    const r = await send(new Uint8Array(0), 'application/x-protobuf');
    assert.equal(r.status, 200);
    assert.equal(r.body.length, 0);
    assert.deepEqual(received, []);
  });

  test('401 from the pipeline keeps the request content type', async () => {
    mode = 'unauth';
    const pb = await send(twoPb(), 'application/x-protobuf');
    assert.equal(pb.status, 401);
    assert.equal(decodeStatus(pb.body).code, 16);
  });
});
