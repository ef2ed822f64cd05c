// Helpers for the API tests (tests/api), against a real appliance over real HTTP: the response
// envelope asserted, fixtures made through the API (fractals, role grants, API keys), credentials,
// reads of the stores behind the API (ClickHouse rows, the SQLite file) and network probes.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Client, type Res, type TestAppliance } from './appliance.ts';
import { chTime } from '../../service/src/storage/clickhouse.ts';

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const API_KEY_RE = /^svc_[0-9a-f]{32,}$/;
export const INGEST_TOKEN_RE = /^svc_ingest_[0-9a-f]{32}$/;

/** A valid UUID that names nothing. */
export const unknownId = () => randomUUID();

// ---- the response envelope ------------------------------------------------------------------

/** Asserts the success envelope with the given status (or one of them) and returns its data. */
export function expectOk<T = any>(res: Res, status: number | number[] = 200): T {
  const ok = Array.isArray(status) ? status : [status];
  assert.ok(ok.includes(res.status), `expected ${ok.join('/')}; got ${res.status} ${JSON.stringify(res.body)}`);
  assert.equal(res.body?.success, true, `expected success:true, got ${JSON.stringify(res.body)}`);
  assert.ok('data' in res.body, `expected a data field, got ${JSON.stringify(res.body)}`);
  return res.body.data as T;
}

/**
 * Asserts the error envelope {success:false, error:"<sentence>"}, without data, with the given
 * status; each of `mentions` (a string or pattern) must appear in the sentence, e.g. the field a
 * 400 is about. Returns the sentence.
 */
export function expectError(res: Res, status: number, ...mentions: Array<string | RegExp>): string {
  const error = expectErrorSentence(res, status, ...mentions);
  assert.equal('data' in res.body, false, `an error carries no data: ${JSON.stringify(res.body)}`);
  return error;
}

/** expectError for the answers that report data beside their error (GET /api/v1/health/clickhouse). */
export function expectErrorSentence(res: Res, status: number, ...mentions: Array<string | RegExp>): string {
  const ctx = `${status} expected; got ${res.status} ${JSON.stringify(res.body)}`;
  assert.equal(res.status, status, ctx);
  assert.equal(typeof res.body, 'object', ctx);
  assert.equal(res.body.success, false, ctx);
  const error = res.body.error;
  assert.equal(typeof error, 'string', ctx);
  assert.match(error, /^\S.{8,}[.!?]$/s, `the error should be a sentence: ${ctx}`);
  for (const m of mentions) {
    if (typeof m === 'string') assert.ok(error.includes(m), `error ${JSON.stringify(error)} should mention ${JSON.stringify(m)}`);
    else assert.match(error, m, ctx);
  }
  return error;
}

/** Asserts a 400 whose sentence names the field in quotes. */
export function expectBadField(res: Res, field: string): void {
  expectError(res, 400, `"${field}"`);
}

/** Ids of the items of a list response. */
export function idsOf(res: Res): string[] {
  return expectOk<Array<{ id: string }>>(res).map((x) => x.id);
}

// ---- fixtures and credentials ---------------------------------------------------------------

/** A client that authenticates with an API key or token instead of a session. */
export function credentialClient(base: string, value: string, how: 'bearer' | 'x-api-key' = 'bearer'): Client {
  return new Client(base, how === 'bearer' ? { authorization: `Bearer ${value}` } : { 'x-api-key': value });
}

/** Creates a fractal (as a global admin) and returns it. */
export async function createFractal(admin: Client, name: string, description = ''): Promise<any> {
  return expectOk(await admin.post('/api/v1/fractals', { name, description }), 201);
}

/** Grants a user (by name) or a group a role on a fractal (or a prism) and returns the permission. */
export async function grant(
  by: Client,
  scopeId: string,
  to: { username: string } | { group_id: string },
  role: 'viewer' | 'analyst' | 'admin',
  scope: 'fractal' | 'prism' = 'fractal',
): Promise<any> {
  return expectOk(await by.post(`/api/v1/${scope}s/${scopeId}/permissions`, { ...to, role }), 201);
}

export async function createApiKey(client: Client, scopePath: string, body: Record<string, unknown>): Promise<any> {
  return expectOk(await client.post(`${scopePath}/api-keys`, body), 201);
}

// ---- the stores behind the API --------------------------------------------------------------


/** Inserts log rows straight into ClickHouse for a fractal; returns what was inserted. */
export async function insertLogs(
  app: TestAppliance,
  fractalId: string,
  rows: Array<{ timestamp: string; fields: Record<string, unknown> }>,
): Promise<Array<{ log_id: string; raw: string }>> {
  const values = rows.map((r) => ({
    fractal_id: fractalId,
    timestamp: r.timestamp,
    ingest_timestamp: chTime(new Date()),
    log_id: randomUUID(),
    raw: JSON.stringify(r.fields),
    fields: r.fields,
  }));
  await app.context.ch.client.insert({ table: app.context.ch.table('logs'), values, format: 'JSONEachRow' });
  return values.map((v) => ({ log_id: v.log_id, raw: v.raw }));
}

/** Number of rows ClickHouse holds for a fractal. */
export async function countLogs(app: TestAppliance, fractalId: string): Promise<number> {
  const rs = await app.context.ch.client.query({
    query: `SELECT count() AS n FROM ${app.context.ch.table('logs')} WHERE fractal_id = {id:UUID}`,
    query_params: { id: fractalId },
    format: 'JSONEachRow',
  });
  const rows = (await rs.json()) as Array<{ n: number | string }>;
  return Number(rows[0]?.n ?? 0);
}

/** Reads rows of a metadata table through a separate connection to the SQLite file. */
export function readMetadataTable(app: TestAppliance, table: string, where = '1 = 1', params: unknown[] = []): Array<Record<string, unknown>> {
  const db = new Database(path.join(app.dataDir, 'metadata.sqlite'), { readonly: true, fileMustExist: true });
  try {
    return db.prepare(`SELECT * FROM ${table} WHERE ${where}`).all(...params) as Array<Record<string, unknown>>;
  } finally {
    db.close();
  }
}

/** True when the bytes of the SQLite file (or its write-ahead log) contain the string. */
export function metadataFilesContain(app: TestAppliance, needle: string): boolean {
  for (const suffix of ['', '-wal']) {
    const file = path.join(app.dataDir, `metadata.sqlite${suffix}`);
    if (existsSync(file) && readFileSync(file).includes(Buffer.from(needle, 'utf8'))) return true;
  }
  return false;
}

// ---- network --------------------------------------------------------------------------------

/** True when something accepts TCP connections on host:port. */
export function isListening(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ port, host });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/**
 * One HTTP request sent from a chosen loopback source address (e.g. 127.0.0.7), so a test can act
 * as a different client machine. Returns status, headers and the parsed JSON body.
 */
export function requestFrom(
  localAddress: string,
  url: string,
  opts: { method?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: any }> {
  return new Promise((resolve, reject) => {
    const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    const req = http.request(
      url,
      {
        method: opts.method ?? 'GET',
        localAddress,
        headers: { ...(payload ? { 'content-type': 'application/json' } : {}), ...opts.headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (text += d));
        res.on('end', () => {
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {
            /* not JSON */
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
        });
      },
    );
    req.once('error', reject);
    req.end(payload);
  });
}
