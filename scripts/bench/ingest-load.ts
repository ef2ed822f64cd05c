// The ingest benchmark's load, shared by bench:ingest and bench:evidence (which compares an import
// with it on the same machine in the same run): generated logs as NDJSON batches, sent over
// parallel connections to /api/v1/ingest, timed from the first byte sent until a query counts them.
import type { Client } from '../../tests/support/appliance.ts';
import { mixedLog, webLog } from './support.ts';

export type IngestMode = 'mix' | 'homogeneous';

export interface IngestLoad {
  mode: IngestMode;
  seed: number;
  /** Logs a batch (a request). */
  batch: number;
  connections: number;
}

/** Logs [from, from + n) as NDJSON batches of `batch` lines, log i at t0 + 3 ms × i. */
export function makeIngestBatches(load: IngestLoad, from: number, n: number, t0: number): { batches: Buffer[]; bytes: number } {
  const batches: Buffer[] = [];
  let bytes = 0;
  for (let b = from; b < from + n; b += load.batch) {
    const lines: string[] = [];
    for (let i = b; i < Math.min(from + n, b + load.batch); i++) lines.push(load.mode === 'mix' ? mixedLog(i, t0, 3, load.seed) : webLog(i, t0, 3));
    const buf = Buffer.from(lines.join('\n') + '\n');
    bytes += buf.length;
    batches.push(buf);
  }
  return { batches, bytes };
}

export interface Sent {
  acceptedS: number;
  storedS: number;
  retries429: number;
}

/** Sends the batches over `connections` connections (429s retried after 50 ms) and waits until the fractal counts `expect` logs. */
export async function sendIngestBatches(o: { base: string; token: string; admin: Client; fractalId: string; batches: Buffer[]; expect: number; connections: number }): Promise<Sent> {
  let next = 0;
  let retries429 = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: o.connections }, async () => {
      for (;;) {
        const i = next++;
        if (i >= o.batches.length) return;
        for (;;) {
          const r = await fetch(`${o.base}/api/v1/ingest`, {
            method: 'POST',
            headers: { authorization: `Bearer ${o.token}`, 'content-type': 'application/x-ndjson' },
            body: o.batches[i] as unknown as BodyInit,
          });
          const body = await r.text();
          if (r.status === 200) break;
          if (r.status !== 429) throw new Error(`ingest answered ${r.status}: ${body}`);
          retries429++;
          await new Promise((res) => setTimeout(res, 50));
        }
      }
    }),
  );
  const acceptedAt = performance.now();
  await countable(o.admin, o.fractalId, o.expect);
  return { acceptedS: (acceptedAt - start) / 1000, storedS: (performance.now() - start) / 1000, retries429 };
}

/** Resolves once the fractal's stats count at least `n` logs. */
export async function countable(admin: Client, fractalId: string, n: number): Promise<void> {
  for (;;) {
    if ((await admin.get(`/api/v1/fractals/${fractalId}/stats`)).body.data.log_count >= n) return;
    await new Promise((r) => setTimeout(r, 25));
  }
}
