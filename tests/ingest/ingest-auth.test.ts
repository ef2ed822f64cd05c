// Ingest refuses a caller without a valid token, and one over the rate limit, before it reads a
// byte of the body: a request that announces a large body and sends only its headers still gets
// its 401 or 429 at once, on all three ingest endpoints (and on the write probes of the bulk
// format's clients). Before, /api/v1/ingest and /v1/logs buffered (and gunzipped) the whole body
// up to SVC_MAX_BODY_SIZE first.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { createHttpApp } from '../../service/src/http/app.ts';
import { HttpError } from '../../service/src/http/errors.ts';
import { bulkRoutes } from '../../service/src/ingest/bulk/routes.ts';
import { otlpRoutes } from '../../service/src/ingest/otlp/routes.ts';
import type { IngestPipeline } from '../../service/src/ingest/pipeline.ts';
import { ingestScope } from '../../service/src/ingest/plugin.ts';
import { ingestRoutes } from '../../service/src/ingest/routes.ts';
import { ADMIN_PASSWORD, Client, signIn, startTestAppliance, type TestAppliance } from '../support/appliance.ts';
import { ingestFractal } from '../support/ingest.ts';
import { WAIT_MS } from '../support/wait.ts';

let a: TestAppliance;
let admin: Client;
let token: string;

before(async () => {
  a = await startTestAppliance();
  admin = await signIn(a.url, 'admin', ADMIN_PASSWORD);
  token = (await ingestFractal(admin, 'auth-first')).token;
});
after(() => a.dispose());

/**
 * Sends a request's headers announcing `length` body bytes plus the first KiB of it, and resolves
 * with the status of the answer; rejects if no answer comes within `ms` (the body never follows).
 */
function headersOnly(
  path: string,
  headers: Record<string, string>,
  opts: { method?: string; base?: string; length?: number; ms?: number } = {},
): Promise<{ status: number; body: string }> {
  const url = new URL(path, opts.base ?? a.url);
  const ms = opts.ms ?? WAIT_MS;
  const length = opts.length ?? 100 * 1024 * 1024;
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, path: url.pathname, method: opts.method ?? 'POST', headers: { 'content-length': String(length), ...headers } });
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`no answer to ${path} within ${ms} ms while its body was still expected`));
    }, ms);
    req.on('response', (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => {
        clearTimeout(timer);
        req.destroy();
        resolve({ status: res.statusCode!, body });
      });
    });
    req.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    req.write(Buffer.alloc(1024, 0x20));
  });
}

const ENDPOINTS: Array<[method: string, path: string, headers: Record<string, string>]> = [
  ['POST', '/api/v1/ingest', { 'content-type': 'application/json' }],
  ['POST', '/api/v1/ingest', { 'content-type': 'application/json', 'content-encoding': 'gzip' }],
  ['POST', '/_bulk', { 'content-type': 'application/x-ndjson' }],
  ['PUT', '/shipper/_bulk', { 'content-type': 'application/x-ndjson' }],
  ['POST', '/v1/logs', { 'content-type': 'application/x-protobuf' }],
  ['POST', '/v1/logs', { 'content-type': 'application/json', 'content-encoding': 'gzip' }],
  ['PUT', '/_index_template/shipper', { 'content-type': 'application/json' }],
  ['PUT', '/_ilm/policy/shipper', { 'content-type': 'application/json' }],
  ['PUT', '/shipper-000001', { 'content-type': 'application/json' }],
];

describe('the token is checked before the body', () => {
  for (const [method, path, headers] of ENDPOINTS) {
    test(`${method} ${path} ${headers['content-encoding'] ?? ''}: no token, or an unknown one, is a 401 before any body arrives`, async () => {
      assert.equal((await headersOnly(path, headers, { method })).status, 401);
      const wrong = await headersOnly(path, { ...headers, authorization: `Bearer svc_ingest_${'0'.repeat(32)}` }, { method });
      assert.equal(wrong.status, 401);
      assert.match(wrong.body, /unknown or disabled/);
    });
  }

  test('an unknown route is a 404 before any body arrives', async () => {
    for (const path of ['/api/v1/no-such-thing', '/_ilm/policy/x/extra', '/v1/traces']) {
      assert.equal((await headersOnly(path, { 'content-type': 'application/json' })).status, 404, path);
    }
  });
});

describe('the rate limit is applied before the body', () => {
  // The ingest scope as the appliance registers it, with a pipeline over its rate limit (the real
  // token bucket refills with time, which a test on a shared machine cannot pin down).
  test('over the limit, every ingest endpoint answers 429 before the body is sent', async () => {
    const pipeline: IngestPipeline = {
      authenticate: () => ({ fractalId: '00000000-0000-4000-8000-000000000000' }) as never,
      admit: () => {
        throw new HttpError(429, 'Ingest rate limit exceeded; retry with backoff.', { 'retry-after': '1' });
      },
      accept: () => assert.fail('nothing is accepted over the limit'),
    };
    const app = createHttpApp({ logger: false });
    const ctx = { config: { maxBodySize: 200 * 1024 * 1024, dataDir: '/tmp/none', port: 0 }, startedAt: new Date(), fractals: { get: () => undefined } };
    await app.register(ingestScope([ingestRoutes, bulkRoutes, otlpRoutes]) as never, { ctx, pipeline } as never);
    await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
      for (const [method, path, headers] of ENDPOINTS) {
        const r = await headersOnly(path, { ...headers, authorization: `Bearer ${token}` }, { method, base });
        assert.equal(r.status, 429, `${method} ${path}`);
        assert.match(r.body, /rate limit/i, `${method} ${path}`);
      }
    } finally {
      await app.close();
    }
  });
});

describe("the bulk format's write probes", () => {
  const put = (path: string, body: unknown, auth?: string) =>
    fetch(`${a.url}${path}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', ...(auth ? { authorization: `Bearer ${auth}` } : {}) },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
  const get = (path: string, auth?: string) =>
    fetch(`${a.url}${path}`, { headers: auth ? { authorization: `Bearer ${auth}` } : {} }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));

  test('every write needs the ingest token; nothing is kept from a refused one', async () => {
    for (const path of ['/_index_template/t1', '/_template/t1', '/_component_template/t1', '/_ilm/policy/t1', '/_ingest/pipeline/t1', '/_data_stream/t1', '/some-index']) {
      const r = await put(path, { index_patterns: ['stolen-*'] });
      assert.equal(r.status, 401, path);
      assert.equal(r.body.error.type, 'security_exception', path);
    }
    const t = await get('/_index_template/t1', token);
    assert.deepEqual(t.body.index_templates[0].index_template.index_patterns, ['t1*'], 'the default answer, not the refused body');
  });

  test('a big template keeps only its small keys, and another fractal never sees it', async () => {
    const mappings = { properties: Object.fromEntries(Array.from({ length: 40_000 }, (_, i) => [`field_${i}`, { type: 'keyword' }])) };
    const r = await put('/_index_template/huge', { index_patterns: ['huge-*'], priority: 200, template: { mappings } }, token);
    assert.equal(r.status, 200);
    const back = (await get('/_index_template/huge', token)).body.index_templates[0].index_template;
    assert.deepEqual(back.index_patterns, ['huge-*']);
    assert.equal(back.priority, 200);
    assert.equal(back.template, undefined, 'the mappings (about 1 MB) are not kept');
    const other = (await ingestFractal(admin, 'auth-other')).token;
    const seen = (await get('/_index_template/huge', other)).body.index_templates[0].index_template;
    assert.deepEqual(seen.index_patterns, ['huge*'], "another fractal's token gets the default answer");
    assert.deepEqual((await get('/_index_template')).body.index_templates, [], 'no token: nothing stored is listed');
  });

  test('at most 100 names are kept per kind', async () => {
    for (let i = 0; i < 120; i++) assert.equal((await put(`/_ilm/policy/p${i}`, { policy: { phases: {} } }, token)).status, 200);
    const all = (await get('/_ilm/policy', token)).body;
    assert.equal(Object.keys(all).length, 100);
    assert.ok(all.p119 && !all.p0, 'the oldest names went first');
  });
});
