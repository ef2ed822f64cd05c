// /_bulk and the probe endpoints end to end: real HTTP, real pipeline, real embedded ClickHouse,
// and the official Elasticsearch JavaScript client talking to the appliance unchanged.
import { Client as EsClient } from '@elastic/elasticsearch';
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { createHttpApp } from '../../service/src/http/app.ts';
import { HttpError } from '../../service/src/http/errors.ts';
import { bulkRoutes } from '../../service/src/ingest/bulk/routes.ts';
import type { IngestPipeline } from '../../service/src/ingest/pipeline.ts';
import { ingestScope } from '../../service/src/ingest/plugin.ts';
import type { AcceptResult, IncomingRecord } from '../../service/src/ingest/types.ts';
import { ADMIN_PASSWORD, signIn, startTestAppliance, type Client, type TestAppliance } from '../support/appliance.ts';
import { ingestFractal } from '../support/ingest.ts';
import { waitForLogs } from '../support/logs.ts';

let a: TestAppliance;
let admin: Client;
const clients: EsClient[] = [];

before(async () => {
  a = await startTestAppliance();
  admin = await signIn(a.url, 'admin', ADMIN_PASSWORD);
});
after(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await a.dispose();
});

function esClient(auth: ConstructorParameters<typeof EsClient>[0]['auth']): EsClient {
  const c = new EsClient({ node: a.url, auth, maxRetries: 0 });
  clients.push(c);
  return c;
}

const nd = (...lines: unknown[]) => lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + '\n';

interface Sent {
  status: number;
  headers: Headers;
  body: any;
}
async function http(method: string, path: string, opts: { body?: string | Buffer; headers?: Record<string, string> } = {}): Promise<Sent> {
  const r = await fetch(a.url + path, { method, headers: opts.headers, body: opts.body as BodyInit | undefined });
  const text = await r.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: r.status, headers: r.headers, body };
}
const bulk = (token: string | null, body: string | Buffer, headers: Record<string, string> = {}, path = '/_bulk') =>
  http('POST', path, {
    body,
    headers: { 'content-type': 'application/x-ndjson', ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
  });

describe('the official Elasticsearch client', () => {
  const cases: Array<[string, (token: string) => ConstructorParameters<typeof EsClient>[0]['auth']]> = [
    ['Bearer', (token) => ({ bearer: token })],
    ['ApiKey', (token) => ({ apiKey: token })],
    ['Basic auth with the token as password', (token) => ({ username: 'x', password: token })],
  ];
  for (const [how, auth] of cases) {
    test(`helpers.bulk delivers every document with the token as ${how}`, async () => {
      const f = await ingestFractal(admin, `es-client-${how.split(' ')[0]!.toLowerCase()}`);
      const client = esClient(auth(f.token));
      const docs = Array.from({ length: 25 }, (_, i) => ({ '@timestamp': new Date(Date.UTC(2024, 0, 1, 0, 0, i)).toISOString(), n: i, msg: `doc ${i}` }));
      const dropped: unknown[] = [];
      const stats = await client.helpers.bulk({
        datasource: docs,
        onDocument: (d) => (d.n % 2 ? { create: { _index: 'app-odd' } } : { index: { _index: 'app-even' } }),
        onDrop: (d) => dropped.push(d),
        flushBytes: 1000, // several requests
      });
      assert.deepEqual(dropped, []);
      assert.equal(stats.total, 25);
      assert.equal(stats.successful, 25);
      assert.equal(stats.failed, 0);
      const rows = await waitForLogs(a, f.id, 25);
      assert.equal(rows.length, 25);
      for (const r of rows) {
        const n = r.fields.n as number;
        assert.equal(r.fields.msg, `doc ${n}`);
        assert.equal(r.fields._index, n % 2 ? 'app-odd' : 'app-even');
        assert.equal(r.timestamp.slice(0, 19), `2024-01-01 00:00:${String(n).padStart(2, '0')}`);
        assert.deepEqual(JSON.parse(r.raw), docs[n]);
      }
    });
  }

  test('info() and ping() work, with and without credentials', async () => {
    const f = await ingestFractal(admin, 'es-info');
    const info = await esClient({ bearer: f.token }).info();
    assert.match(info.version.number, /^8\.\d+\.\d+$/);
    assert.equal(info.version.build_flavor, 'default');
    assert.equal(info.tagline, 'You Know, for Search');
    assert.ok(info.cluster_uuid && info.cluster_name && info.name);
    assert.ok(info.version.lucene_version && info.version.minimum_wire_compatibility_version && info.version.minimum_index_compatibility_version);
    assert.equal(await esClient(undefined).ping(), true);
    assert.equal((await esClient(undefined).info()).cluster_uuid, info.cluster_uuid);
  });

  test('client.bulk reports a refused item and the client refuses a wrong token', async () => {
    const f = await ingestFractal(admin, 'es-client-bulk');
    const client = esClient({ apiKey: f.token });
    const r = await client.bulk({ operations: [{ index: { _index: 'x' } }, { a: 1 }, { delete: { _index: 'x', _id: '1' } }] });
    assert.equal(r.errors, true);
    assert.equal(r.items[0]!.index!.status, 201);
    assert.equal(r.items[1]!.delete!.status, 400);
    await assert.rejects(esClient({ bearer: 'svc_ingest_' + '0'.repeat(32) }).bulk({ operations: [{ index: {} }, { a: 1 }] }), (e: any) => {
      assert.equal(e.meta?.statusCode, 401);
      return true;
    });
  });
});

describe('POST /_bulk with raw NDJSON', () => {
  test('index with and without _index, create, and bad items: per-item statuses, the good ones stored', async () => {
    const f = await ingestFractal(admin, 'raw-mixed');
    const r = await bulk(
      f.token,
      nd(
        { index: { _index: 'web' } }, { msg: 'first' },
        { index: {} }, { msg: 'second' },
        { create: { _index: 'logs-app-default', _id: 'mine' } }, { msg: 'third' },
        { delete: { _index: 'web', _id: 'x' } },
        { update: { _index: 'web', _id: 'y' } }, { doc: { msg: 'never' } },
        { index: { _index: 'web' } }, '[1,2,3]',
        { index: { _index: 'web' } }, '{broken json',
        { index: { _index: 'web' } }, { msg: 'last' },
      ),
    );
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.headers.get('x-elastic-product'), 'Elasticsearch');
    assert.equal(typeof r.body.took, 'number');
    assert.equal(r.body.errors, true);
    const items = r.body.items as Array<Record<string, any>>;
    assert.deepEqual(items.map((i) => Object.keys(i)[0]), ['index', 'index', 'create', 'delete', 'update', 'index', 'index', 'index']);
    const flat = items.map((i) => Object.values(i)[0]);
    assert.deepEqual(flat.map((i) => i.status), [201, 201, 201, 400, 400, 400, 400, 201]);
    for (const i of [flat[0], flat[1], flat[2], flat[7]]) {
      assert.match(i._id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      assert.equal(i.result, 'created');
      assert.equal(i._version, 1);
      assert.equal(i.error, undefined);
    }
    assert.equal(flat[0]._index, 'web');
    assert.equal(flat[1]._index, 'raw-mixed'); // none named: the fractal's name
    assert.equal(flat[2]._index, 'logs-app-default');
    assert.equal(flat[3].error.type, 'illegal_argument_exception');
    assert.equal(flat[3]._id, 'x');
    assert.equal(flat[4].error.type, 'illegal_argument_exception');
    assert.equal(flat[5].error.type, 'mapper_parsing_exception');
    assert.equal(flat[6].error.type, 'mapper_parsing_exception');
    assert.ok(flat[6].error.reason);

    const rows = await waitForLogs(a, f.id, 4);
    await new Promise((res) => setTimeout(res, 300));
    const all = await waitForLogs(a, f.id, 4);
    assert.equal(all.length, 4, 'only the four good documents are stored');
    const byMsg = Object.fromEntries(rows.map((x) => [x.fields.msg, x]));
    assert.equal(byMsg.first!.fields._index, 'web');
    assert.equal(byMsg.second!.fields._index, undefined);
    assert.equal(byMsg.third!.fields._index, 'logs-app-default');
    assert.equal(byMsg.last!.fields._index, 'web');
    // The response's _id is the stored log_id.
    assert.deepEqual(new Set(rows.map((x) => x.log_id)), new Set([flat[0]._id, flat[1]._id, flat[2]._id, flat[7]._id]));
    assert.equal(byMsg.first!.raw, '{"msg":"first"}');
  });

  test('all items fine: errors is false', async () => {
    const f = await ingestFractal(admin, 'raw-ok');
    const r = await bulk(f.token, nd({ create: { _index: 'a' } }, { msg: 1 }, { create: { _index: 'a' } }, { msg: 2 }));
    assert.equal(r.status, 200);
    assert.equal(r.body.errors, false);
    assert.equal(r.body.items.length, 2);
    await waitForLogs(a, f.id, 2);
  });

  test('an integer beyond 2^64 is stored exactly', async () => {
    const f = await ingestFractal(admin, 'bigint');
    const body = '{"index":{"_index":"big"}}\n{"big":18446744073709551617,"neg":-92233720368547758090,"nested":{"id":123456789012345678901234567890},"small":7}\n';
    const r = await bulk(f.token, body);
    assert.equal(r.status, 200);
    assert.equal(r.body.errors, false);
    await waitForLogs(a, f.id, 1);
    const ch = a.context.ch;
    const rs = await ch.client.query({
      query: `SELECT toJSONString(fields) AS f, raw FROM ${ch.table('logs')} WHERE fractal_id = {id:UUID}`,
      query_params: { id: f.id },
      format: 'JSONEachRow',
    });
    const [row] = (await rs.json()) as Array<{ f: string; raw: string }>;
    assert.match(row!.f, /"big":"?18446744073709551617"?[,}]/);
    assert.match(row!.f, /"neg":"?-92233720368547758090"?[,}]/);
    assert.match(row!.f, /"123456789012345678901234567890"?[,}]/);
    assert.match(row!.raw, /18446744073709551617/);
  });

  test('a body that cannot be read as bulk requests is a 400 in the format\'s error shape', async () => {
    const f = await ingestFractal(admin, 'raw-bad');
    for (const body of ['this is not json at all\n', nd({ bogus: {} }, { a: 1 }), '', '\n\n']) {
      const r = await bulk(f.token, body);
      assert.equal(r.status, 400, body);
      assert.equal(r.headers.get('x-elastic-product'), 'Elasticsearch');
      assert.equal(typeof r.body.error.type, 'string');
      assert.equal(typeof r.body.error.reason, 'string');
      assert.equal(r.body.error.root_cause[0].type, r.body.error.type);
      assert.equal(r.body.status, 400);
    }
  });

  test('missing or invalid token: 401 with the product header and a challenge', async () => {
    for (const headers of [{}, { authorization: 'Bearer svc_ingest_00000000000000000000000000000000' }, { authorization: 'Bearer nonsense' }] as Array<Record<string, string>>) {
      const r = await bulk(null, nd({ index: {} }, { a: 1 }), headers);
      assert.equal(r.status, 401);
      assert.equal(r.headers.get('x-elastic-product'), 'Elasticsearch');
      assert.match(r.headers.get('www-authenticate') ?? '', /Basic/);
      assert.equal(r.body.error.type, 'security_exception');
      assert.equal(r.body.status, 401);
    }
  });

  test('credentials the ways shippers send them: X-API-Key, ApiKey, Basic with the token as password', async () => {
    const f = await ingestFractal(admin, 'raw-auth');
    const basic = (user: string) => `Basic ${Buffer.from(`${user}:${f.token}`).toString('base64')}`;
    for (const headers of [
      { 'x-api-key': f.token },
      { authorization: `ApiKey ${f.token}` },
      { authorization: basic('elastic') },
      { authorization: basic('') },
    ] as Array<Record<string, string>>) {
      const r = await bulk(null, nd({ index: {} }, { via: JSON.stringify(headers) }), headers);
      assert.equal(r.status, 200, JSON.stringify(headers));
    }
    await waitForLogs(a, f.id, 4);
  });

  test('a gzip-compressed body', async () => {
    const f = await ingestFractal(admin, 'raw-gzip');
    const r = await bulk(f.token, gzipSync(nd({ index: { _index: 'z' } }, { msg: 'zipped' }, { create: {} }, { msg: 'too' })), { 'content-encoding': 'gzip' });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.errors, false);
    const rows = await waitForLogs(a, f.id, 2);
    assert.deepEqual(rows.map((x) => x.fields.msg).sort(), ['too', 'zipped']);
    const corrupt = await bulk(f.token, Buffer.from('not gzip at all'), { 'content-encoding': 'gzip' });
    assert.equal(corrupt.status, 400);
    assert.equal(corrupt.headers.get('x-elastic-product'), 'Elasticsearch');
    assert.equal(typeof corrupt.body.error.reason, 'string');
  });

  test('/{index}/_bulk (POST and PUT) uses the path index as the default _index', async () => {
    const f = await ingestFractal(admin, 'path-index');
    const r = await bulk(f.token, nd({ index: {} }, { msg: 'from path' }, { index: { _index: 'own' } }, { msg: 'own index' }), {}, '/shipper-a/_bulk');
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.items.map((i: any) => i.index._index), ['shipper-a', 'own']);
    const put = await http('PUT', '/shipper-b/_bulk', {
      body: nd({ create: {} }, { msg: 'put' }),
      headers: { authorization: `Bearer ${f.token}`, 'content-type': 'application/json' },
    });
    assert.equal(put.status, 200);
    const rows = await waitForLogs(a, f.id, 3);
    const byMsg = Object.fromEntries(rows.map((x) => [x.fields.msg, x.fields._index]));
    assert.deepEqual(byMsg, { 'from path': 'shipper-a', 'own index': 'own', put: 'shipper-b' });
  });

  test('the content types real clients send, answered in kind', async () => {
    const f = await ingestFractal(admin, 'ctypes');
    for (const ct of ['application/x-ndjson', 'application/json', 'application/vnd.elasticsearch+x-ndjson; compatible-with=8']) {
      const r = await bulk(f.token, nd({ index: {} }, { ct }), { 'content-type': ct, accept: ct.includes('vnd') ? 'application/vnd.elasticsearch+json; compatible-with=8' : 'application/json' });
      assert.equal(r.status, 200, ct);
      assert.equal(r.body.errors, false);
      const expected = ct.includes('vnd') ? 'application/vnd.elasticsearch+json;compatible-with=8' : 'application/json';
      assert.ok(r.headers.get('content-type')!.startsWith(expected), r.headers.get('content-type')!);
    }
    await waitForLogs(a, f.id, 3);
  });
});

describe('what shippers probe before they send', () => {
  test('GET / is cluster info for clients and the UI for browsers', async () => {
    const es = await http('GET', '/', { headers: { accept: 'application/json' } });
    assert.equal(es.status, 200);
    assert.equal(es.headers.get('x-elastic-product'), 'Elasticsearch');
    assert.equal(es.body.tagline, 'You Know, for Search');
    assert.match(es.body.version.number, /^8\./);
    const bare = await http('GET', '/'); // curl, Beats, Logstash: no Accept for HTML
    assert.equal(bare.body.version?.build_flavor, 'default');
    const meta = await http('GET', '/', { headers: { accept: 'text/html', 'x-elastic-client-meta': 'es=8.19.2' } });
    assert.equal(meta.body.cluster_name, es.body.cluster_name);
    const browser = await http('GET', '/', { headers: { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' } });
    assert.equal(browser.headers.get('x-elastic-product'), null);
    assert.equal(typeof browser.body, 'string', 'the UI (or its not-built notice), not JSON');
    const head = await http('HEAD', '/');
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('x-elastic-product'), 'Elasticsearch');
  });

  test('a presented credential must be a valid ingest token; none is fine', async () => {
    const f = await ingestFractal(admin, 'probe-auth');
    assert.equal((await http('GET', '/_license')).status, 200);
    assert.equal((await http('GET', '/_license', { headers: { authorization: `Bearer ${f.token}` } })).status, 200);
    const bad = await http('GET', '/', { headers: { authorization: 'Basic ' + Buffer.from('elastic:changeme').toString('base64') } });
    assert.equal(bad.status, 401);
    assert.equal(bad.headers.get('x-elastic-product'), 'Elasticsearch');
    assert.equal(bad.body.error.type, 'security_exception');
  });

  test('license, xpack, templates, lifecycle, data streams, nodes, health and indices answer plausibly', async () => {
    const f = await ingestFractal(admin, 'probes');
    const h = { authorization: `Bearer ${f.token}`, 'content-type': 'application/json' };
    const get = (p: string) => http('GET', p, { headers: h });
    const put = (p: string, body: unknown = {}) => http('PUT', p, { headers: h, body: JSON.stringify(body) });

    const lic = await get('/_license?human=false');
    assert.equal(lic.body.license.status, 'active');
    assert.equal(lic.body.license.type, 'basic');
    const xp = await get('/_xpack');
    assert.equal(xp.body.features.ilm.available, true);
    assert.equal(xp.body.license.status, 'active');

    const tpl = { index_patterns: ['filebeat-*'], data_stream: {}, priority: 150 };
    assert.deepEqual((await put('/_index_template/filebeat-8.19.0', tpl)).body, { acknowledged: true });
    const got = await get('/_index_template/filebeat-8.19.0');
    assert.equal(got.body.index_templates[0].name, 'filebeat-8.19.0');
    assert.deepEqual(got.body.index_templates[0].index_template, tpl);
    assert.equal((await http('HEAD', '/_index_template/filebeat-8.19.0', { headers: h })).status, 200);
    assert.equal((await get('/_index_template/never-put')).body.index_templates[0].name, 'never-put');
    assert.deepEqual((await put('/_template/logstash', { index_patterns: ['logstash-*'] })).body, { acknowledged: true });
    assert.deepEqual((await get('/_template/logstash')).body.logstash.index_patterns, ['logstash-*']);

    assert.deepEqual((await put('/_ilm/policy/filebeat', { policy: { phases: { hot: { actions: { rollover: { max_age: '30d' } } } } } })).body, { acknowledged: true });
    const pol = await get('/_ilm/policy/filebeat');
    assert.equal(pol.body.filebeat.policy.phases.hot.actions.rollover.max_age, '30d');
    assert.equal((await get('/_ilm/policy/other')).body.other.version, 1);
    assert.equal((await get('/_ilm/status')).body.operation_mode, 'RUNNING');

    assert.deepEqual((await put('/_data_stream/logs-app-default')).body, { acknowledged: true });
    assert.equal((await get('/_data_stream/logs-app-default')).body.data_streams[0].name, 'logs-app-default');

    const nodes = await get('/_nodes/http');
    assert.equal(nodes.body._nodes.total, 1);
    const node = Object.values(nodes.body.nodes)[0] as any;
    assert.match(node.version, /^8\./);
    assert.ok(node.http.publish_address);
    assert.equal((await get('/_cluster/health')).body.status, 'green');

    assert.equal((await http('HEAD', '/logstash', { headers: h })).status, 200);
    const created = await put('/logstash-000001', { aliases: { logstash: { is_write_index: true } } });
    assert.deepEqual(created.body, { acknowledged: true, shards_acknowledged: true, index: 'logstash-000001' });

    for (const p of ['/_license', '/_xpack', '/_index_template/x', '/_ilm/policy/x', '/_nodes', '/_cluster/health', '/_data_stream/x']) {
      const r = await get(p);
      assert.equal(r.status, 200, p);
      assert.equal(r.headers.get('x-elastic-product'), 'Elasticsearch', p);
    }
  });
});

describe('pressure and refusals from the pipeline (stub pipeline, no storage)', () => {
  // The bulk routes in their real ingest scope, with a pipeline whose answers the test sets.
  async function withStub(stub: Partial<IngestPipeline>, fn: (url: string) => Promise<void>) {
    const app = createHttpApp({ logger: false });
    const pipeline: IngestPipeline = {
      authenticate: () => ({ fractalId: '00000000-0000-4000-8000-000000000000' }) as never,
      admit: () => {},
      accept: async (_t, records) => ({
        accepted: records.length,
        rejected: 0,
        errors: [],
        outcomes: records.map((_, i) => ({ ok: true as const, logId: `id-${i}` })),
        durable: true,
      }),
      ...stub,
    };
    const ctx = {
      config: { maxBodySize: 1000, dataDir: '/tmp/none', port: 0 },
      startedAt: new Date(),
      fractals: { get: () => ({ name: 'stub' }) },
    };
    await app.register(ingestScope([bulkRoutes]) as never, { ctx, pipeline } as never);
    await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      await fn(`http://127.0.0.1:${(app.server.address() as { port: number }).port}`);
    } finally {
      await app.close();
    }
  }
  const post = (url: string, body: string) =>
    fetch(url + '/_bulk', { method: 'POST', headers: { 'content-type': 'application/x-ndjson' }, body }).then(async (r) => ({
      status: r.status,
      headers: r.headers,
      body: (await r.json()) as any,
    }));
  const body = nd({ index: {} }, { a: 1 });

  test('over the rate limit: 429 with Retry-After, in the format\'s error shape', async () => {
    await withStub({ admit: () => { throw new HttpError(429, 'Ingest rate limit exceeded; retry with backoff.', { 'retry-after': '2' }); } }, async (url) => {
      const r = await post(url, body);
      assert.equal(r.status, 429);
      assert.equal(r.headers.get('retry-after'), '2');
      assert.equal(r.headers.get('x-elastic-product'), 'Elasticsearch');
      assert.equal(r.body.error.type, 'es_rejected_execution_exception');
      assert.equal(r.body.status, 429);
    });
  });

  test('queue full: a 200 whose every item is a 429 the client retries, with Retry-After', async () => {
    await withStub({ accept: async () => { throw new HttpError(429, 'The ingest queue is full; retry with backoff.', { 'retry-after': '1' }); } }, async (url) => {
      const r = await post(url, nd({ index: {} }, { a: 1 }, { delete: { _id: 'd' } }, { create: { _index: 'x' } }, { b: 2 }));
      assert.equal(r.status, 200);
      assert.equal(r.headers.get('retry-after'), '1');
      assert.equal(r.body.errors, true);
      const flat = r.body.items.map((i: any) => Object.values(i)[0]);
      // The delete is refused for what it is (400); both documents are 429s to retry.
      assert.deepEqual(flat.map((i: any) => i.status), [429, 400, 429]);
      assert.equal(flat[0].error.type, 'es_rejected_execution_exception');
      assert.equal(flat[0].error.reason, 'The ingest queue is full; retry with backoff.');
      assert.equal(flat[2]._index, 'x');
    });
  });

  test('queue full, to syslog-ng (which reads only the status): the whole request is a 429 it retries', async () => {
    await withStub({ accept: async () => { throw new HttpError(429, 'The ingest queue is full; retry with backoff.', { 'retry-after': '1' }); } }, async (url) => {
      const r = await fetch(url + '/_bulk', { method: 'POST', headers: { 'content-type': 'application/x-ndjson', 'user-agent': 'syslog-ng 3.38.1/libcurl 7.88.1' }, body });
      assert.equal(r.status, 429);
      assert.equal(r.headers.get('retry-after'), '1');
      assert.equal(((await r.json()) as any).error.type, 'es_rejected_execution_exception');
    });
  });

  test('a spool that cannot be written: every document a 503 item, not a lost request', async () => {
    await withStub({ accept: async () => { throw new HttpError(503, 'The appliance could not write its ingest spool.', { 'retry-after': '5' }); } }, async (url) => {
      const r = await post(url, body);
      assert.equal(r.status, 200);
      assert.equal(r.body.items[0].index.status, 503);
    });
  });

  test('records the pipeline refuses become item errors; outcomes stay aligned with items', async () => {
    let seen: IncomingRecord[] = [];
    const accept = async (_t: unknown, records: IncomingRecord[]): Promise<AcceptResult> => {
      seen = records;
      return {
        accepted: 1,
        rejected: 1,
        errors: ['record 1: no'],
        outcomes: [{ ok: false, error: 'timestamp out of range' }, { ok: true, logId: 'L2' }],
        durable: true,
      };
    };
    await withStub({ accept }, async (url) => {
      const r = await post(url, nd({ index: { _index: 'i' } }, { a: 1 }, { delete: { _id: 'd' } }, { create: {} }, { b: 2 }));
      assert.equal(r.status, 200);
      assert.equal(r.body.errors, true);
      const flat = r.body.items.map((i: any) => Object.values(i)[0]);
      assert.deepEqual(flat.map((i: any) => i.status), [400, 400, 201]);
      assert.equal(flat[0].error.reason, 'timestamp out of range');
      assert.equal(flat[2]._id, 'L2');
      assert.equal(flat[2]._index, 'stub');
      assert.deepEqual(seen.map((x) => x.text), ['{"a":1}', '{"b":2}']);
      assert.deepEqual(seen[0]!.fields, { a: 1, _index: 'i' });
    });
  });

  test('a body over SVC_MAX_BODY_SIZE: 413 with the product header', async () => {
    await withStub({}, async (url) => {
      const r = await post(url, nd({ index: {} }, { a: 'x'.repeat(2000) }));
      assert.equal(r.status, 413);
      assert.equal(r.headers.get('x-elastic-product'), 'Elasticsearch');
      assert.equal(r.body.status, 413);
    });
  });

  test('an unknown /_ path read by a client is a 404 in the format\'s shape, not the UI', async () => {
    await withStub({}, async (url) => {
      const r = await fetch(url + '/_cat/indices', { headers: { accept: 'application/json' } });
      assert.equal(r.status, 404);
      assert.equal(r.headers.get('x-elastic-product'), 'Elasticsearch');
      assert.equal(((await r.json()) as any).error.type, 'resource_not_found_exception');
    });
  });
});
