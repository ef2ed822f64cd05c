// Generated bad input (fast-check) at every route that takes a body or a query string: ingest in
// its three formats (also compressed, mislabelled and truncated), every JSON API body the service
// declares, query text and time ranges, odd headers. Whatever is sent, the answer is never a 5xx,
// never later than the deadline, the service stays healthy, and every log an ingest answer
// accepted is stored. CI runs a bounded number of cases; `npm run fuzz` runs many more
// (FUZZ_RUNS, FUZZ_SEED to replay a failure: fast-check prints the seed and the shrunk case).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { ADMIN_PASSWORD, signIn, startTestAppliance, type Client, type TestAppliance } from '../support/appliance.ts';
import { createFractal } from '../support/api.ts';
import { ingestFractal } from '../support/ingest.ts';
import { storedLogs, waitForLogs } from '../support/logs.ts';

const RUNS = Number(process.env.FUZZ_RUNS ?? 30);
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;
const params = (runs = RUNS) => ({ numRuns: runs, ...(SEED === undefined ? {} : { seed: SEED }) });
/** No single answer may take longer (the machine is shared: generous). */
const DEADLINE_MS = 60_000;

let a: TestAppliance;
let admin: Client;
/** Fractals whose stored logs are counted against what ingest accepted. */
let jsonTarget: { id: string; token: string };
let bulkTarget: { id: string; token: string };
let otlpTarget: { id: string; token: string };
/** The fractal the API fuzz may change as it likes (retention, quota, tokens...). */
let playground: string;
const accepted = { json: 0, bulk: 0 };

before(async () => {
  a = await startTestAppliance();
  admin = await signIn(a.url, 'admin', ADMIN_PASSWORD);
  jsonTarget = await ingestFractal(admin, 'fuzz-json');
  bulkTarget = await ingestFractal(admin, 'fuzz-bulk');
  otlpTarget = await ingestFractal(admin, 'fuzz-otlp');
  playground = (await createFractal(admin, 'fuzz-playground')).id;
});
after(() => a.dispose());

interface Sent {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
}

/** Sends one request and returns its status and body text; a 5xx, a dropped connection or a missed deadline fails. */
async function send(req: Sent, as: Client | null = admin): Promise<{ status: number; text: string }> {
  const headers: Record<string, string> = { ...(as?.cookie ? { cookie: as.cookie } : {}), ...req.headers };
  let r: Response;
  try {
    r = await fetch(a.url + req.path, { method: req.method, headers, body: req.body as BodyInit | undefined, signal: AbortSignal.timeout(DEADLINE_MS) });
  } catch (err) {
    throw new Error(`${describeReq(req)} got no answer: ${(err as Error).message}`);
  }
  const text = await r.text();
  assert.ok(r.status < 500, `${describeReq(req)} answered ${r.status}: ${text.slice(0, 300)}`);
  return { status: r.status, text };
}

const describeReq = (req: Sent) =>
  `${req.method} ${req.path.slice(0, 300)} ${JSON.stringify(req.headers ?? {}).slice(0, 200)} body ${
    req.body === undefined ? '(none)' : typeof req.body === 'string' ? JSON.stringify(req.body.slice(0, 300)) : `${req.body.length} bytes`
  }`;

async function healthy(): Promise<void> {
  const r = await fetch(`${a.url}/api/v1/health`, { signal: AbortSignal.timeout(DEADLINE_MS) });
  assert.equal(r.status, 200, 'the service answers health after the fuzz');
}

// ---- generators ------------------------------------------------------------------------------

/** Text a parser might choke on: JSON-ish fragments, control characters, long runs, deep brackets. */
const nastyText = fc.oneof(
  fc.string({ maxLength: 300 }),
  fc.string({ unit: 'binary', maxLength: 300 }),
  fc.jsonValue({ maxDepth: 6 }).map((v) => JSON.stringify(v)),
  fc.tuple(fc.jsonValue({ maxDepth: 4 }), fc.nat({ max: 200 }), fc.string({ maxLength: 5 })).map(([v, at, junk]) => {
    const t = JSON.stringify(v) ?? '';
    return t.slice(0, at) + junk + t.slice(at);
  }),
  fc.tuple(fc.constantFrom('[', '{"a":', '{"__proto__":', '"\\u'), fc.integer({ min: 1, max: 5000 })).map(([open, n]) => open.repeat(n)),
  fc.constantFrom('', 'null', 'true', '[]', '{}', '"x"', '1e999999', '-0', '{"a":1}{"b":2}', '\u0000', '\ufeff{"a":1}', '{"a":"\ud800"}'),
);

/** A record shippers might plausibly send, with odd values. */
const record = fc.dictionary(
  fc.oneof(fc.string({ maxLength: 20 }), fc.constantFrom('timestamp', '@timestamp', 'time', 'msg', 'message', '__proto__', 'constructor', 'a.b', '')),
  fc.oneof(
    fc.jsonValue({ maxDepth: 3 }),
    fc.constantFrom('0001-01-01T00:00:00Z', '9999-12-31T23:59:59Z', '1e30', -1e308, 2 ** 64, '2024-02-30T25:61:61Z', 'NaN'),
  ),
  { maxKeys: 8 },
);

const ingestBody = fc.oneof(
  fc.array(record, { maxLength: 20 }).map((rs) => rs.map((r) => JSON.stringify(r)).join('\n')),
  fc.array(record, { maxLength: 20 }).map((rs) => JSON.stringify(rs)),
  fc.array(fc.oneof(record.map((r) => JSON.stringify(r)), nastyText), { maxLength: 20 }).map((ls) => ls.join('\n')),
  nastyText,
);

const bulkBody = fc
  .array(
    fc.oneof(
      fc.tuple(fc.constantFrom('index', 'create', 'update', 'delete', 'bogus'), record).map(([op, r]) => `${JSON.stringify({ [op]: {} })}\n${JSON.stringify(r)}`),
      record.map((r) => JSON.stringify(r)),
      nastyText,
    ),
    { maxLength: 20 },
  )
  .map((ls) => ls.join('\n') + '\n');

const contentType = fc.constantFrom('application/json', 'application/x-ndjson', 'text/plain', 'application/x-protobuf', 'application/octet-stream', 'multipart/form-data; boundary=x', 'garbage/???', '');

/** How the body is wrapped: as it is, truly gzipped, or labelled compressed without being so. */
const encoding = fc.constantFrom('none', 'gzip', 'gzip-label-only', 'deflate-label-only', 'br', 'gzip, gzip');

function wrap(body: string, enc: string): { body: Uint8Array | string; headers: Record<string, string> } {
  switch (enc) {
    case 'none':
      return { body, headers: {} };
    case 'gzip':
      return { body: gzipSync(body), headers: { 'content-encoding': 'gzip' } };
    case 'gzip-label-only':
      return { body, headers: { 'content-encoding': 'gzip' } };
    case 'deflate-label-only':
      return { body, headers: { 'content-encoding': 'deflate' } };
    default:
      return { body, headers: { 'content-encoding': enc } };
  }
}

// ---- ingest ----------------------------------------------------------------------------------

describe('ingest', () => {
  test('/api/v1/ingest: never a 5xx, and what it accepts is stored', async () => {
    await fc.assert(
      fc.asyncProperty(ingestBody, contentType, encoding, async (text, type, enc) => {
        const w = wrap(text, enc);
        const r = await send({ method: 'POST', path: '/api/v1/ingest', headers: { authorization: `Bearer ${jsonTarget.token}`, 'content-type': type, ...w.headers }, body: w.body }, null);
        if (r.status === 200) accepted.json += (JSON.parse(r.text) as { accepted: number }).accepted;
      }),
      params(),
    );
    await healthy();
  });

  test('/_bulk: never a 5xx, and every item it created is stored', async () => {
    await fc.assert(
      fc.asyncProperty(bulkBody, fc.constantFrom('application/x-ndjson', 'application/json', 'text/plain'), encoding, async (text, type, enc) => {
        const w = wrap(text, enc);
        const r = await send({ method: 'POST', path: '/_bulk', headers: { authorization: `Bearer ${bulkTarget.token}`, 'content-type': type, ...w.headers }, body: w.body }, null);
        if (r.status === 200) {
          const items = (JSON.parse(r.text) as { items: Array<Record<string, { status: number }>> }).items;
          accepted.bulk += items.filter((it) => Object.values(it)[0]!.status === 201).length;
        }
      }),
      params(),
    );
    await healthy();
  });

  test('/v1/logs: protobuf-labelled bytes and JSON-labelled junk are never a 5xx', async () => {
    const otlpBody = fc.oneof(
      fc.uint8Array({ maxLength: 2000 }),
      nastyText,
      fc.array(record, { maxLength: 5 }).map((rs) =>
        JSON.stringify({ resourceLogs: [{ resource: { attributes: [] }, scopeLogs: [{ logRecords: rs.map((r) => ({ body: { stringValue: JSON.stringify(r) }, attributes: r })) }] }] }),
      ),
    );
    await fc.assert(
      fc.asyncProperty(otlpBody, fc.constantFrom('application/x-protobuf', 'application/json', 'application/protobuf', 'text/plain'), fc.boolean(), async (body, type, gz) => {
        const w: { body: Uint8Array | string; headers: Record<string, string> } = gz ? { body: gzipSync(body), headers: { 'content-encoding': 'gzip' } } : { body, headers: {} };
        await send({ method: 'POST', path: '/v1/logs', headers: { authorization: `Bearer ${otlpTarget.token}`, 'content-type': type, ...w.headers }, body: w.body }, null);
      }),
      params(),
    );
    await healthy();
  });

  test('odd credentials and headers on the ingest routes are a 4xx', async () => {
    const auth = fc.oneof(
      fc.string({ maxLength: 200 }),
      fc.string({ maxLength: 60 }).map((s) => `Bearer ${s}`),
      fc.constantFrom('Bearer', 'Bearer ', 'Basic Og==', 'ApiKey', `Bearer svc_ingest_${'0'.repeat(32)}`, `Bearer svc_ingest_${'g'.repeat(32)}`),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('/api/v1/ingest', '/_bulk', '/v1/logs'), auth, contentType, async (path, authorization, type) => {
        const headers: Record<string, string> = { 'content-type': type };
        // fetch refuses header values with control characters; those never reach a server as such.
        if (/^[\t\x20-\x7e]*$/.test(authorization)) headers.authorization = authorization;
        const r = await send({ method: 'POST', path, headers, body: '{"msg":"x"}' }, null);
        assert.ok(r.status >= 400, `${path} with ${JSON.stringify(authorization)} answered ${r.status}`);
      }),
      params(),
    );
    await healthy();
  });

  test('nothing accepted is lost: the stored logs are exactly what the answers accepted', async () => {
    for (const [target, n] of [
      [jsonTarget, accepted.json],
      [bulkTarget, accepted.bulk],
    ] as const) {
      if (n > 0) await waitForLogs(a, target.id, n);
      assert.equal((await storedLogs(a, target.id)).length, n);
    }
  });
});

// ---- the JSON API ----------------------------------------------------------------------------

/** Routes the fuzz leaves alone: they end its session, lock its address, change the whole appliance, or reach outside the box. */
const SKIP = [
  /^\/api\/v1\/auth\//,
  /^\/api\/v1\/settings/,
  /^\/api\/v1\/feeds/,
  /\/(test|sync)$/,
  /\/ai(\/|$)|ai-status/,
  /^\/api\/v1\/ingest$|^\/_bulk$|^\/v1\/logs$/, // fuzzed above, with their own counts
  /\/events$/, // live streams stay open by design
  /^\/api\/v1\/query\/stream$/,
];

const pathParam = fc.oneof(
  { weight: 4, arbitrary: fc.constant('PLAYGROUND') },
  { weight: 2, arbitrary: fc.constant('').map(() => randomUUID()) },
  { weight: 1, arbitrary: fc.constantFrom('x', '0', '-1', '%00', '..%2F..', 'a'.repeat(300), '%F0%9F%92%A9', 'null') },
);

const queryString = fc
  .dictionary(
    fc.constantFrom('fractal_id', 'prism_id', 'start', 'end', 'limit', 'offset', 'search', 'q', 'field', 'log_id', 'timestamp', 'before', 'after', 'cursor', 'interval'),
    fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom('PLAYGROUND', '0001-01-01T00:00:00Z', '9999-12-31T23:59:59Z', '-1', '1e309', 'NaN', '99999999999999999999')),
    { maxKeys: 4 },
  )
  .map((d) => new URLSearchParams(Object.entries(d)).toString());

function fill(url: string, params: string[], query: string): string {
  let i = 0;
  const filled = url.replace(/:[A-Za-z_]+|\*/g, () => params[i++ % params.length]!).replaceAll('PLAYGROUND', playground);
  return query ? `${filled}?${query.replaceAll('PLAYGROUND', playground)}` : filled;
}

describe('every JSON API route', () => {
  test('bodies and query strings of any shape: a 4xx sentence or success, never a 5xx', async () => {
    const routes = a.routes.filter((r) => ['GET', 'POST', 'PUT', 'PATCH'].includes(r.method) && !SKIP.some((re) => re.test(r.url)));
    assert.ok(routes.length > 60, `only ${routes.length} routes found`);
    const perRoute = Math.max(2, Math.ceil(RUNS / 10));
    for (const route of routes) {
      const body = route.method === 'GET' ? fc.constant(undefined) : fc.oneof(fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)), fc.object({ maxDepth: 3 }).map((v) => JSON.stringify(v)), nastyText);
      await fc.assert(
        fc.asyncProperty(fc.array(pathParam, { minLength: 3, maxLength: 3 }), queryString, body, fc.constantFrom('application/json', 'text/csv', 'application/x-yaml'), async (ps, q, b, type) => {
          await send({ method: route.method, path: fill(route.url, ps, q), ...(b === undefined ? {} : { body: b, headers: { 'content-type': type } }) });
        }),
        params(perRoute),
      );
    }
    await healthy();
  });
});

// ---- queries and time ranges -----------------------------------------------------------------

const queryToken = fc.oneof(
  fc.constantFrom('*', '|', 'count()', 'groupBy(', 'table(', ')', '(', '=', '!=', '>', '<', '"', "'", ',', 'host', 'msg', '@v', '//', '/*', 'limit(', 'head(', 'tail(', 'sort(', 'regex(', 'sprintf(', '"%1000000s"', '[', ']', '{', '}', 'join(', 'match(', 'dict=', 'field=', 'as=', 'case {', ';', 'eval(', 'timechart(', 'span=', 'not', 'and', 'or', '\\', '\n', '$', '999999999999999999999', '-1e308'),
  fc.string({ maxLength: 8 }),
);
const queryText = fc.oneof(fc.array(queryToken, { maxLength: 25 }).map((ts) => ts.join(' ')), fc.array(queryToken, { maxLength: 25 }).map((ts) => ts.join('')), nastyText);
const time = fc.oneof(
  fc.date({ min: new Date(-62_000_000_000_000), max: new Date(253_402_300_000_000), noInvalidDate: true }).map((d) => d.toISOString()),
  fc.constantFrom('0001-01-01T00:00:00Z', '9999-12-31T23:59:59Z', '1899-12-31T23:59:59Z', '2262-04-12T00:00:00Z', 'now', '-1', '', '2024-13-45', '1e21'),
  fc.string({ maxLength: 30 }),
);

describe('queries', () => {
  test('query text and time ranges of any shape: never a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(queryText, fc.option(time), fc.option(time), fc.constantFrom('/api/v1/query', '/api/v1/query/validate', '/api/v1/query/fieldstats'), async (query, start, end, path) => {
        const body: Record<string, unknown> = { query, fractal_id: jsonTarget.id };
        if (start !== null) body.start = start;
        if (end !== null) body.end = end;
        await send({ method: 'POST', path, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      }),
      params(RUNS * 2),
    );
    await healthy();
  });

  test('the workspace reads with any time range: never a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('histogram', 'fields', 'recent'), time, time, async (what, start, end) => {
        const q = new URLSearchParams({ fractal_id: jsonTarget.id, start, end });
        await send({ method: 'GET', path: `/api/v1/logs/${what}?${q}` });
      }),
      params(),
    );
    await healthy();
  });
});
