// Reads what the ingest pipeline stored, straight from ClickHouse, the way a query would.
import type { Appliance } from '../../service/src/appliance.ts';
import { waitFor, WAIT_MS } from './wait.ts';

export interface StoredLog {
  log_id: string;
  timestamp: string;
  ingest_timestamp: string;
  raw: string;
  fields: Record<string, unknown>;
  /** The fields as the engine's JSON text: numbers with every digit (`fields` has them as doubles). */
  fields_json: string;
}

export async function storedLogs(a: Appliance, fractalId: string): Promise<StoredLog[]> {
  const ch = a.context.ch;
  const rs = await ch.client.query({
    query: `SELECT toString(log_id) AS log_id, toString(timestamp) AS timestamp, toString(ingest_timestamp) AS ingest_timestamp,
              raw, toJSONString(fields) AS fields
            FROM ${ch.table('logs')} WHERE fractal_id = {id:UUID} ORDER BY timestamp, raw`,
    query_params: { id: fractalId },
    format: 'JSONEachRow',
  });
  const rows = (await rs.json()) as Array<Omit<StoredLog, 'fields' | 'fields_json'> & { fields: string }>;
  return rows.map((r) => ({ ...r, fields: flat(JSON.parse(r.fields) as Record<string, unknown>), fields_json: r.fields }));
}

/** ClickHouse's JSON column returns dotted paths nested; flatten them back to field names. */
function flat(o: Record<string, unknown>, prefix = '', out: Record<string, unknown> = {}): Record<string, unknown> {
  for (const [k, v] of Object.entries(o)) {
    const name = prefix ? `${prefix}.${k}` : k;
    if (v && typeof v === 'object' && !Array.isArray(v)) flat(v as Record<string, unknown>, name, out);
    else out[name] = v;
  }
  return out;
}

/** Polls until the fractal holds at least `n` logs (ingest is asynchronous), or fails. */
export async function waitForLogs(a: Appliance, fractalId: string, n: number, timeoutMs = WAIT_MS): Promise<StoredLog[]> {
  let found = 0;
  try {
    return await waitFor(`${n} logs in fractal ${fractalId}`, async () => {
      const rows = await storedLogs(a, fractalId);
      found = rows.length;
      return rows.length >= n && rows;
    }, timeoutMs);
  } catch (err) {
    throw new Error(`${(err as Error).message}; found ${found}`);
  }
}
