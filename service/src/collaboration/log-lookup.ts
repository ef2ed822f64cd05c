// The one ClickHouse read of the comments domain: does this log exist in this fractal, and what
// is its event time? (A comment stores the log's timestamp so comment lists never touch
// ClickHouse.) Kept here, beside its only user, while logs/log-store.ts is being reworked by
// the ingest work; it belongs there once that settles.
import type { Analytics } from '../storage/clickhouse.ts';

/** ClickHouse DateTime64 text ("YYYY-MM-DD hh:mm:ss.nnnnnnnnn", UTC) → RFC 3339 with milliseconds. */
const rfc3339 = (t: string) => new Date(`${t.slice(0, 23).replace(' ', 'T')}Z`).toISOString();
const chTime = (d: Date) => d.toISOString().replace('T', ' ').replace('Z', '');

/**
 * The event time of log `logId` in fractal `fractalId`, or null when the fractal holds no such
 * log. `near` (the time the client saw on the row) narrows the search to that millisecond, which
 * reads one primary-key range; without it, or when it is off, the fractal's log ids are scanned.
 */
export async function findLogTimestamp(
  ch: Analytics,
  fractalId: string,
  logId: string,
  opts: { near?: Date; timeoutS: number },
): Promise<string | null> {
  const attempt = async (window: { from: Date; to: Date } | null): Promise<string | null> => {
    const rs = await ch.client.query({
      query: `SELECT toString(timestamp) AS t FROM ${ch.table('logs')}
              WHERE fractal_id = {fid:UUID} AND log_id = {id:UUID}
              ${window ? "AND timestamp >= {from:DateTime64(9, 'UTC')} AND timestamp < {to:DateTime64(9, 'UTC')}" : ''}
              LIMIT 1
              SETTINGS max_execution_time = ${Math.max(1, Math.floor(opts.timeoutS))}`,
      query_params: window ? { fid: fractalId, id: logId, from: chTime(window.from), to: chTime(window.to) } : { fid: fractalId, id: logId },
      format: 'JSONEachRow',
    });
    const [row] = (await rs.json()) as Array<{ t: string }>;
    return row ? rfc3339(row.t) : null;
  };
  if (opts.near) {
    const from = new Date(Math.floor(opts.near.getTime()));
    const found = await attempt({ from, to: new Date(from.getTime() + 1) });
    if (found) return found;
  }
  return attempt(null);
}
