// The lines the shipper tests feed a daemon and the check that each arrived once, with its time and
// fields: RFC 5424, timestamps three hours back (one millisecond apart), a sequence number per line.
import assert from 'node:assert/strict';
import type { TestAppliance } from './appliance.ts';
import { storedLogs } from './logs.ts';
import { feed } from './shippers.ts';

/** The paces the issue names: 200, 1,000 and 5,000 lines a second, as many lines as each pace gives in a second. */
export const PACES = [200, 1000, 5000] as const;

export interface Sent {
  route: string;
  /** Sent time by sequence number (ISO, UTC, milliseconds). */
  times: string[];
}

/** Feeds `route`'s lines at each pace in turn to a daemon's TCP input. */
export async function feedAtPaces(port: number, route: string, paces: readonly number[] = PACES): Promise<Sent> {
  const base = Date.now() - 3 * 3600_000;
  const times: string[] = [];
  for (const pace of paces) {
    const lines: string[] = [];
    for (let i = 0; i < pace; i++) {
      const seq = times.length;
      const iso = new Date(base + seq).toISOString();
      times.push(iso);
      lines.push(`<14>1 ${iso} shipper-host ${route} ${4000 + (seq % 100)} - - route=${route} seq=${seq} pace=${pace}`);
    }
    await feed(port, lines, pace);
  }
  return { route, times };
}

/** Waits until every line sent for the route is stored, then checks each is there once, with its time and fields. */
export async function expectDelivered(a: TestAppliance, fractalId: string, sent: Sent, timeoutMs = 180_000): Promise<void> {
  const mine = (rows: Awaited<ReturnType<typeof storedLogs>>) => rows.filter((r) => String(r.fields.message ?? '').startsWith(`route=${sent.route} `));
  const until = Date.now() + timeoutMs;
  let rows = mine(await storedLogs(a, fractalId));
  while (rows.length < sent.times.length && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 250));
    rows = mine(await storedLogs(a, fractalId));
  }
  const seen = new Map<number, number>();
  for (const r of rows) {
    const seq = Number(/ seq=(\d+)/.exec(String(r.fields.message))![1]);
    seen.set(seq, (seen.get(seq) ?? 0) + 1);
    const expected = sent.times[seq]!.replace('T', ' ').replace('Z', '000000');
    assert.equal(r.timestamp, expected, `${sent.route} seq ${seq}: the time it was logged`);
    assert.equal(r.fields.hostname, 'shipper-host', `${sent.route}: hostname`);
    assert.equal(r.fields.app_name, sent.route, `${sent.route}: app_name`);
  }
  const missing = sent.times.map((_, i) => i).filter((i) => !seen.has(i));
  const twice = [...seen].filter(([, n]) => n > 1).map(([s]) => s);
  assert.deepEqual({ missing: missing.length, twice: twice.length }, { missing: 0, twice: 0 }, `${sent.route}: ${rows.length} of ${sent.times.length} stored; missing ${missing.slice(0, 10)}; twice ${twice.slice(0, 10)}`);
}
