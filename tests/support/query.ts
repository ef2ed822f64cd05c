// Query test helpers: a small investigation dataset sent through the real ingest endpoint, a test
// file's appliance with one fractal of events, and a `query` call returning the flat response of
// POST /api/v1/query.
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { ADMIN_PASSWORD, signIn, startTestAppliance, type Client, type TestAppliance } from './appliance.ts';
import { ingestFractal } from './ingest.ts';
import { waitForLogs } from './logs.ts';

const minutesAgo = (m: number, base = Date.now()) => new Date(base - m * 60_000).toISOString();

/** Eight events an investigator would recognise, newest first by `minutes` ago. */
export function sampleEvents(base = Date.now()) {
  return [
    { minutes: 1, user: 'alice', host: 'web1', status: 200, bytes: 100, src_ip: '10.0.0.5', action: 'login', image: 'C:\\Windows\\System32\\cmd.exe', msg: 'login ok' },
    { minutes: 2, user: 'bob', host: 'web1', status: 404, bytes: 250, src_ip: '192.168.1.7', action: 'get', image: 'nginx', msg: 'not found /admin' },
    { minutes: 3, user: 'alice', host: 'web2', status: 500, bytes: 50, src_ip: '10.0.0.5', action: 'get', image: 'C:\\Windows\\powershell.exe', msg: 'Internal Error' },
    { minutes: 4, user: 'carol', host: 'db1', status: 200, bytes: 1000, src_ip: '172.16.0.9', action: 'query', image: 'postgres', msg: 'select ok' },
    { minutes: 5, user: 'alice', host: 'web1', status: 200, bytes: 300, src_ip: '10.0.0.6', action: 'logout', image: 'nginx', msg: 'bye Zoë' },
    { minutes: 6, user: 'dave', host: 'web2', status: 301, bytes: 0, src_ip: 'not-an-ip', action: 'get', image: 'nginx', msg: 'moved' },
    { minutes: 7, user: 'bob', host: 'db1', status: 500, bytes: 75, src_ip: '192.168.1.8', action: 'query', image: 'postgres', msg: 'deadlock detected' },
    { minutes: 8, user: 'erin', host: 'web1', status: 200, bytes: 9, action: 'login', image: 'POWERSHELL.EXE', msg: 'login ok' },
  ].map(({ minutes, ...fields }) => ({ timestamp: minutesAgo(minutes, base), ...fields }));
}

/** An event as sent: an object (written with JSON.stringify) or a line already written (as a number JSON.stringify would round). */
export type EventLine = object | string;

export async function ingest(a: TestAppliance, token: string, fractalId: string, events: EventLine[]): Promise<void> {
  const before = (await waitForLogs(a, fractalId, 0)).length;
  const r = await fetch(`${a.url}/api/v1/ingest`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' },
    body: events.map((e) => (typeof e === 'string' ? e : JSON.stringify(e))).join('\n'),
  });
  assert.equal(r.status, 200, await r.text());
  await waitForLogs(a, fractalId, before + events.length);
}

/** A new fractal named `name` holding `events`, sent through the ingest endpoint; its id. */
export async function fractalWith(a: TestAppliance, admin: Client, name: string, events: EventLine[]): Promise<string> {
  const f = await ingestFractal(admin, name);
  await ingest(a, f.token, f.id, events);
  return f.id;
}

export interface QueryResponse {
  success: boolean;
  results: Array<Record<string, any>>;
  count: number;
  field_order: string[];
  is_aggregated: boolean;
  chart_type: string;
  chart_config: Record<string, unknown>;
  limit_hit?: string;
  error?: string;
  error_type?: string;
  error_pos?: { start: number; end: number };
  [k: string]: unknown;
}

export async function query(client: Client, q: string, extra: Record<string, unknown> = {}): Promise<{ status: number; body: QueryResponse }> {
  const r = await client.post('/api/v1/query', { query: q, ...extra });
  return { status: r.status, body: r.body as QueryResponse };
}

/** Runs a query that must succeed and returns its body. */
export async function ok(client: Client, q: string, extra: Record<string, unknown> = {}): Promise<QueryResponse> {
  const r = await query(client, q, extra);
  assert.equal(r.status, 200, `${q}: ${JSON.stringify(r.body)}`);
  assert.equal(r.body.success, true);
  return r.body;
}

/** POST /api/v1/query/stream with the client's session: the response, its body not yet read. */
export function queryStream(client: Client, body: Record<string, unknown>, signal?: AbortSignal): Promise<Response> {
  return fetch(`${client.base}/api/v1/query/stream`, {
    method: 'POST',
    headers: { cookie: client.cookie, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal,
  });
}

/** Reads a server-sent-event response into its frames. */
export async function sseFrames(res: Response): Promise<Array<{ event: string; data: any }>> {
  const text = await res.text();
  return text
    .split('\n\n')
    .filter((b) => b.trim())
    .map((b) => {
      const event = /^event: (.*)$/m.exec(b)![1];
      const data = JSON.parse(/^data: (.*)$/m.exec(b)![1]);
      return { event, data };
    });
}

/**
 * The span of the first `part` in `q` at or after code point `from`, in code points (the whole-query
 * coordinates of `error_pos`, query-language.md §6).
 */
export function spanOf(q: string, part: string, from = 0): { start: number; end: number } {
  const cps = Array.from(q);
  const len = Array.from(part).length;
  for (let i = from; i + len <= cps.length; i++) if (cps.slice(i, i + len).join('') === part) return { start: i, end: i + len };
  throw new Error(`${part} not in ${q}`);
}

/** One column of the rows. */
export const col = (body: QueryResponse, name: string) => body.results.map((r) => r[name]);

/** A test file's appliance, its administrator signed in, and the fractal holding the file's events. */
export class QueryDataset {
  a!: TestAppliance;
  admin!: Client;
  /** The fractal's id. */
  fractal!: string;

  /** Runs a query on the fractal that must succeed and returns its body. */
  run = (q: string, extra: Record<string, unknown> = {}): Promise<QueryResponse> => ok(this.admin, q, { fractal_id: this.fractal, ...extra });
}

/**
 * Sets up the calling test file: before its tests, a fresh appliance, the administrator signed in and a
 * fractal named `name` that receives `events()` through the ingest endpoint (they are made just before
 * they are sent, so times relative to now stay recent); after them, the appliance goes. The fields of
 * the returned dataset are there once the tests run.
 */
export function queryDataset(name: string, events: () => EventLine[]): QueryDataset {
  const data = new QueryDataset();
  before(async () => {
    data.a = await startTestAppliance();
    data.admin = await signIn(data.a.url, 'admin', ADMIN_PASSWORD);
    data.fractal = await fractalWith(data.a, data.admin, name, events());
  });
  after(() => data.a?.dispose());
  return data;
}
