// bench:query's mixed data (issue 18, item 5): the seeded heterogeneous stream bench:ingest sends
// (support.ts mixedLog: web access, Sysmon process creation, auth, firewall, DNS; 58 field paths,
// nested objects, numbers whose JSON type varies within one path), stored the way the ingest
// pipeline stores it, and investigator queries that make sense on it, each with its hand SQL.
import type { ClickHouseClient } from '@clickhouse/client';
import { flatten } from '../../service/src/ingest/flatten.ts';
import { formatNs } from '../../service/src/ingest/timestamps.ts';
import { keyCount, plainObjectMembers } from '../../service/src/ingest/verbatim.ts';
import type { LogStore } from '../../service/src/logs/log-store.ts';
import { fmt, mixedLog } from './support.ts';

/** One query of the benchmark and its hand-written SQL twin. */
export interface Bench {
  name: string;
  query: string;
  /** Hand-written SQL; `W` is the scope and time range, the same for every query. */
  sql: string;
  /** Event search (rows are events, compared by log_id) or aggregation (compared by total _count). */
  events: boolean;
  /** The 300 ms latency target applies (filter and groupBy queries). */
  latencyTarget: boolean;
}

/** The seed of the stored mix (bench:ingest's default too). */
export const MIX_SEED = 18;

/**
 * The rare token of the mixed data: the session id of the first auth event from a third of the
 * way in (a random base-36 text, so about one event holds it).
 */
export function mixRareToken(logs: number, t0: number, stepMs: number): string {
  for (let i = Math.floor(logs / 3); ; i++) {
    const rec = JSON.parse(mixedLog(i, t0, stepMs, MIX_SEED)) as { event_type: string; session_id?: string };
    if (rec.event_type === 'auth' && rec.session_id) return rec.session_id;
  }
}

/**
 * Stores `logs` mixed records in fractal `fractalId` through `logs_ingest`, as the ingest pipeline
 * writes each row (pipeline.ts accept: the record's text as `raw`, the flattened fields as JSON
 * text unless the record is flat, its own `timestamp`): no HTTP, no queue, no spool, so the
 * engine's insert is the only cost. Rows are made in JS while the engine stores the previous chunk.
 */
export async function loadMix(
  logStore: LogStore,
  st: { fractalId: string; logs: number; startMs: number; stepMs: number },
  chunk: number,
  say: (line: string) => void,
): Promise<void> {
  const rowsOf = (from: number, count: number): Buffer => {
    const ingestTs = formatNs(BigInt(st.startMs + 7 * 24 * 3600 * 1000) * 1_000_000n);
    const rows: string[] = new Array(count);
    for (let i = from; i < from + count; i++) {
      const text = mixedLog(i, st.startMs, st.stepMs, MIX_SEED);
      const obj = JSON.parse(text) as Record<string, unknown>;
      const fields = flatten(obj);
      const verbatim = fields === obj && plainObjectMembers(text) === keyCount(obj);
      const ts = formatNs(BigInt(Date.parse(obj.timestamp as string)) * 1_000_000n);
      // log ids: a UUID made from the row number (version 4 layout), so reruns store the same rows.
      const hex = i.toString(16).padStart(12, '0');
      rows[i - from] =
        `{"fractal_id":"${st.fractalId}","timestamp":"${ts}","ingest_timestamp":"${ingestTs}","log_id":"00000000-0000-4000-8000-${hex}","raw":${JSON.stringify(text)}` +
        `${verbatim ? '' : `,"fields":${JSON.stringify(JSON.stringify(fields))}`}}\n`;
    }
    return Buffer.from(rows.join(''));
  };
  const t0 = performance.now();
  let pending: Promise<void> | null = null;
  for (let first = 0; first < st.logs; first += chunk) {
    const count = Math.min(chunk, st.logs - first);
    const rows = rowsOf(first, count);
    if (pending) await pending;
    pending = logStore.insert('logs_ingest', [rows]).then(() => {
      const s = (performance.now() - t0) / 1000;
      say(`  ${fmt(first + count)} / ${fmt(st.logs)}  (${s.toFixed(1)} s, ${fmt((first + count) / s)} logs/s)`);
    });
  }
  await pending;
}

/** The distinct field paths of the stored mix and how many hold more than one JSON type. */
export async function mixPaths(client: ClickHouseClient, table: string, fid: string): Promise<{ paths: number; mixedTypes: number }> {
  const rs = await client.query({
    query: `SELECT count() AS paths, countIf(length(types) > 1) AS mixed FROM (
              SELECT path, groupUniqArrayArray(t) AS types FROM (
                SELECT arrayJoin(JSONAllPathsWithTypes(fields)) AS pt, pt.1 AS path, [pt.2] AS t
                FROM ${table} WHERE fractal_id = {fid:UUID} AND cityHash64(log_id) % 100 = 0)
              GROUP BY path)`,
    query_params: { fid },
    format: 'JSONEachRow',
  });
  const [r] = (await rs.json()) as Array<{ paths: string; mixed: string }>;
  return { paths: Number(r!.paths), mixedTypes: Number(r!.mixed) };
}

/**
 * The investigator's queries on the mix, with their hand SQL. Rows are compared by the bench:
 * event searches by their log ids, aggregations by their total count.
 */
export function mixBenches(table: string, rowCap: number, rareToken: string): Bench[] {
  const W = `fractal_id = {fid:UUID} AND timestamp >= {start:DateTime64(9, 'UTC')} AND timestamp <= {end:DateTime64(9, 'UTC')}`;
  const search = (cond: string) =>
    `SELECT timestamp, log_id, fractal_id, raw FROM ${table} WHERE ${W} AND ${cond} ORDER BY timestamp DESC, log_id DESC LIMIT ${rowCap}`;
  const agg = (select: string, cond: string, tail: string) => `SELECT ${select} FROM ${table} WHERE ${W}${cond ? ` AND ${cond}` : ''} ${tail}`;
  return [
    { name: 'rare token', query: `"${rareToken}"`, sql: search(`positionCaseInsensitive(raw, {token:String}) > 0`), events: true, latencyTarget: true },
    { name: 'field equality', query: 'user=mallory', sql: search(`fields.user.:String = 'mallory'`), events: true, latencyTarget: true },
    {
      name: 'count of one type',
      query: 'event_type=process_creation | count()',
      sql: agg('count() AS _count', `fields.event_type.:String = 'process_creation'`, ''),
      events: false,
      latencyTarget: true,
    },
    {
      name: 'field exists',
      query: 'rule_id=*',
      sql: search(`fields.rule_id IS NOT NULL`),
      events: true,
      latencyTarget: true,
    },
    {
      name: 'wildcard',
      query: 'user=~adm',
      sql: search(`positionCaseInsensitiveUTF8(fields.user.:String, 'adm') > 0`),
      events: true,
      latencyTarget: true,
    },
    {
      name: 'groupBy 1 field',
      query: 'groupBy(host)',
      sql: agg('fields.host.:String AS host, count() AS _count', '', `GROUP BY host LIMIT ${rowCap}`),
      events: false,
      latencyTarget: true,
    },
    {
      name: 'groupBy 2 fields',
      query: 'groupBy(event_type, level)',
      sql: agg('fields.event_type.:String AS event_type, fields.level.:String AS level, count() AS _count', '', `GROUP BY event_type, level LIMIT ${rowCap}`),
      events: false,
      latencyTarget: true,
    },
    {
      name: 'top 10 users',
      query: 'groupBy(user) | sort(_count, order=desc) | limit(10)',
      sql: agg('fields.user.:String AS user, count() AS _count', '', 'GROUP BY user ORDER BY _count DESC LIMIT 10'),
      events: false,
      latencyTarget: true,
    },
    {
      name: 'errors by host',
      query: 'level=error | groupBy(host) | sort(_count, order=desc) | limit(20)',
      sql: agg('fields.host.:String AS host, count() AS _count', `fields.level.:String = 'error'`, 'GROUP BY host ORDER BY _count DESC LIMIT 20'),
      events: false,
      latencyTarget: true,
    },
    {
      name: 'filter+groupBy+sort',
      query: 'status>=500 | groupBy(host) | sort(_count, order=desc) | limit(20)',
      sql: agg('fields.host.:String AS host, count() AS _count', 'fields.status.:Int64 >= 500', 'GROUP BY host ORDER BY _count DESC LIMIT 20'),
      events: false,
      latencyTarget: true,
    },
    {
      // latency_ms is an Int64 where the value is whole and a Float64 elsewhere, in the same path.
      name: 'number, mixed types',
      query: 'latency_ms>=450 | groupBy(event_type)',
      sql: agg(
        'fields.event_type.:String AS event_type, count() AS _count',
        'coalesce(fields.latency_ms.:Float64, toFloat64(fields.latency_ms.:Int64)) >= 450',
        `GROUP BY event_type LIMIT ${rowCap}`,
      ),
      events: false,
      latencyTarget: true,
    },
    {
      name: 'nested field',
      query: 'geo.country=CN | groupBy(geo.city)',
      sql: agg('fields.geo.city.:String AS `geo.city`, count() AS _count', `fields.geo.country.:String = 'CN'`, `GROUP BY \`geo.city\` LIMIT ${rowCap}`),
      events: false,
      latencyTarget: true,
    },
    {
      name: 'timechart by type',
      query: 'event_type=dns | timechart(span=1h)',
      sql: agg('toStartOfHour(timestamp) AS time_bucket, count() AS _count', `fields.event_type.:String = 'dns'`, `GROUP BY time_bucket ORDER BY time_bucket LIMIT ${rowCap}`),
      events: false,
      latencyTarget: false,
    },
  ];
}
