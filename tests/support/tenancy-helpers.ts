// Helpers for the tenancy API tests (fractals, permissions, API keys, ingest tokens).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Client, type Res, type TestAppliance } from './appliance.ts';

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const API_KEY_RE = /^svc_[0-9a-f]{32,}$/;
export const INGEST_TOKEN_RE = /^svc_ingest_[0-9a-f]{32}$/;

/** A valid UUID that names nothing. */
export const unknownId = () => randomUUID();

/** Asserts the error envelope: status, {success:false, error:<sentence>}, and optionally what it says. */
export function expectError(res: Res, status: number, says?: RegExp | string): void {
  const ctx = `${status} expected; got ${res.status} ${JSON.stringify(res.body)}`;
  assert.equal(res.status, status, ctx);
  assert.equal(typeof res.body, 'object', ctx);
  assert.equal(res.body.success, false, ctx);
  assert.equal(typeof res.body.error, 'string', ctx);
  assert.ok(res.body.error.trim().length > 5, `the error should be a sentence: ${ctx}`);
  assert.equal('data' in res.body, false, `an error carries no data: ${ctx}`);
  if (says !== undefined) {
    const re = typeof says === 'string' ? new RegExp(says.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')) : says;
    assert.match(res.body.error, re, ctx);
  }
}

/** Asserts a 400 whose sentence names the field in quotes. */
export function expectBadField(res: Res, field: string): void {
  expectError(res, 400, `"${field}"`);
}

/** Asserts the success envelope and returns the payload. */
export function expectOk<T = any>(res: Res, status: number | number[] = 200): T {
  const ok = Array.isArray(status) ? status : [status];
  assert.ok(ok.includes(res.status), `expected ${ok.join('/')}; got ${res.status} ${JSON.stringify(res.body)}`);
  assert.equal(res.body.success, true, JSON.stringify(res.body));
  assert.ok('data' in res.body, JSON.stringify(res.body));
  return res.body.data as T;
}

/** A client that authenticates with an API key or token instead of a session. */
export function credentialClient(base: string, value: string, how: 'bearer' | 'x-api-key' = 'bearer'): Client {
  return new Client(base, how === 'bearer' ? { authorization: `Bearer ${value}` } : { 'x-api-key': value });
}

export async function createFractal(admin: Client, name: string, description = ''): Promise<any> {
  return expectOk(await admin.post('/api/v1/fractals', { name, description }), 201);
}

export async function grant(
  admin: Client,
  fractalId: string,
  to: { username: string } | { group_id: string },
  role: 'viewer' | 'analyst' | 'admin',
): Promise<any> {
  return expectOk(await admin.post(`/api/v1/fractals/${fractalId}/permissions`, { ...to, role }), 201);
}

export async function createApiKey(client: Client, scopePath: string, body: Record<string, unknown>): Promise<any> {
  return expectOk(await client.post(`${scopePath}/api-keys`, body), 201);
}

const chTime = (d: Date) => d.toISOString().replace('T', ' ').replace('Z', '');

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

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
