// A fractal to ingest into, made through the API, with the value of the token to send with.
import assert from 'node:assert/strict';
import { createFractal } from './api.ts';
import type { Client } from './appliance.ts';

/**
 * A new fractal named `name` and its default ingest token; with `token` settings (parser_type,
 * normalizers, timestamp_fields, …), a second token made with them instead.
 */
export async function ingestFractal(admin: Client, name: string, token: Record<string, unknown> = {}): Promise<{ id: string; token: string }> {
  const f = await createFractal(admin, name);
  if (Object.keys(token).length === 0) return { id: f.id as string, token: f.default_ingest_token as string };
  const t = await admin.post(`/api/v1/fractals/${f.id}/ingest-tokens`, { name: 'custom', ...token });
  assert.equal(t.status, 201, JSON.stringify(t.body));
  return { id: f.id as string, token: t.body.data.token as string };
}

/** Sends records as NDJSON with an ingest token and expects them all accepted (200). */
export async function sendNdjson(base: string, token: string, records: unknown[]): Promise<void> {
  const r = await fetch(`${base}/api/v1/ingest`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' },
    body: records.map((x) => JSON.stringify(x)).join('\n'),
  });
  if (r.status !== 200) throw new Error(`ingest answered ${r.status}: ${await r.text()}`);
}
