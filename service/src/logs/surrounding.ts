// Surrounding logs (POST /api/v1/logs/surrounding): the N events just before and just after one
// event of a fractal, in the table's own order (timestamp, log_id), optionally only those whose
// field `same` (host, source …) holds the anchor's value. Rows are shaped like a query's event rows.
//
// Efficiency: the table is ordered by (fractal_id, timestamp, log_id), so a fractal and a time
// window select a narrow range of granules. Each side looks in rings of growing width around the
// anchor (1 h, then 6 h, 1 day, 7, 30, 365 days, then everything older/newer) and stops as soon as it
// has N rows: a busy fractal answers from the first hour; a sparse one, or the edge of the data,
// costs a few more index look-ups, never a scan of the whole fractal per ring. Every value is a
// bound query parameter.
import { badRequest, HttpError, notFound } from '../http/errors.ts';
import { isUuid } from '../http/schemas.ts';
import { executableSql, isEngineTimeout, unpackFields } from '../query/run.ts';
import { chTime, type Analytics } from '../storage/clickhouse.ts';
import { FIELDS_TEXT_SQL, IN_MILLISECOND, millisecond, parseShownTime } from './log-store.ts';

export const DEFAULT_SURROUNDING = 10;
export const MAX_SURROUNDING = 200;
/** Ring edges, in seconds from the anchor; past the last one a side reads everything beyond. */
const RING_SECONDS = [3600, 6 * 3600, 86400, 7 * 86400, 30 * 86400, 365 * 86400];
/** Names that are columns of every event, not fields: `same` cannot name them. */
const RESERVED = new Set(['timestamp', 'log_id', 'fractal_id', 'norm_log', 'raw_log', 'ingest_timestamp', '_normalizer']);

export interface SurroundingRequest {
  fractalId: string;
  timestamp: string;
  logId: string;
  before: number;
  after: number;
  same?: string;
}

export type EventRow = Record<string, unknown>;

export interface Surrounding {
  anchor: EventRow;
  before: EventRow[];
  after: EventRow[];
  /** The field matched and the anchor's value of it, when `same` was asked for. */
  same?: { field: string; value: string };
}

/**
 * The millisecond a row's time names: "YYYY-MM-DD hh:mm:ss.mmm" (UTC, as rows show it) or RFC 3339.
 * Null when it is neither.
 */
export function parseRowTime(text: string): Date | null {
  const s = text.trim();
  if (!/^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([zZ]|[+-]\d{2}:?\d{2})?$/.test(s)) return null;
  return parseShownTime(s.replace(' ', 'T'));
}

/** Validates what the route's schema cannot: ids, the time, the field name. */
function checkSurroundingRequest(r: SurroundingRequest): Date {
  if (!isUuid(r.logId)) throw badRequest('The field "log_id" must be a valid UUID.');
  const t = parseRowTime(r.timestamp);
  if (!t) throw badRequest('The field "timestamp" must be RFC 3339 or "YYYY-MM-DD hh:mm:ss.mmm" (UTC), as the log\'s row shows it.');
  if (r.same !== undefined && RESERVED.has(r.same)) {
    throw badRequest(`The field "same" must name a field of the log (like host or source); "${r.same}" is a column every log has.`);
  }
  return t;
}

/** An engine row: the event's time (full precision and as shown), ids, fields as JSON text. */
interface EngineRow {
  t_full: string;
  t_text: string;
  id_text: string;
  fractal_text: string;
  norm_text: string;
  same_text?: string;
}

const SELECT = `toString(timestamp) AS t_full, substring(toString(timestamp), 1, 23) AS t_text, toString(log_id) AS id_text,
  toString(fractal_id) AS fractal_text, ${FIELDS_TEXT_SQL} AS norm_text`;

/** Like a query's event row: the fields by name, then timestamp, log_id, fractal_id, norm_log. */
function eventRow(r: EngineRow): EventRow {
  return { ...unpackFields(r.norm_text), timestamp: r.t_text, log_id: r.id_text, fractal_id: r.fractal_text, norm_log: r.norm_text };
}

export async function surroundingLogs(ch: Analytics, req: SurroundingRequest, timeoutS: number): Promise<Surrounding> {
  const at = checkSurroundingRequest(req);
  const table = ch.table('logs');
  const run = async (sql: string, params: Record<string, unknown>): Promise<EngineRow[]> => {
    try {
      const rs = await ch.client.query({ query: executableSql(sql, timeoutS), query_params: params, format: 'JSONEachRow' });
      return (await rs.json()) as EngineRow[];
    } catch (err) {
      if (isEngineTimeout(err)) {
        throw new HttpError(504, 'Looking for the surrounding logs took longer than the query time-out; ask for fewer, or an administrator can raise query_timeout_s.');
      }
      throw err;
    }
  };

  // The anchor, looked up in the millisecond its row shows (the stored time may be finer).
  const sameCol = 'toString(getSubcolumn(fields, {same:String}))';
  const [anchorRow] = await run(
    `SELECT ${SELECT}${req.same !== undefined ? `, ${sameCol} AS same_text` : ''}
     FROM ${table}
     WHERE fractal_id = {fid:UUID} AND log_id = {id:UUID} AND ${IN_MILLISECOND}
     LIMIT 1`,
    {
      fid: req.fractalId,
      id: req.logId,
      ...millisecond(at),
      ...(req.same !== undefined ? { same: req.same } : {}),
    },
  );
  if (!anchorRow) throw notFound(`Log ${req.logId} not found at ${req.timestamp} in this fractal.`);
  let same: Surrounding['same'];
  if (req.same !== undefined) {
    const value = anchorRow.same_text ?? '';
    if (value === '') throw badRequest(`The log has no field "${req.same}" (or it is empty), so there is no value to match; choose a field the log has.`);
    same = { field: req.same, value };
  }

  const base = {
    fid: req.fractalId,
    t: anchorRow.t_full,
    id: anchorRow.id_text,
    ...(same ? { same: same.field, sv: same.value } : {}),
  };
  const sameWhere = same ? ` AND ${sameCol} = {sv:String}` : '';
  const anchorMs = parseRowTime(anchorRow.t_text)!.getTime();

  /** One side, ring by ring outward, until it holds `want` rows. */
  const side = async (dir: 'before' | 'after', want: number): Promise<EngineRow[]> => {
    const out: EngineRow[] = [];
    if (want <= 0) return out;
    const sign = dir === 'before' ? -1 : 1;
    const cmp = dir === 'before' ? '<' : '>';
    const order = dir === 'before' ? 'DESC' : 'ASC';
    for (let k = 0; k <= RING_SECONDS.length && out.length < want; k++) {
      const where = ['fractal_id = {fid:UUID}', `(timestamp, log_id) ${cmp} ({t:DateTime64(9, 'UTC')}, {id:UUID})`];
      const params: Record<string, unknown> = { ...base, n: want - out.length };
      // Near edge: the anchor itself for the first ring, else the previous ring's far edge.
      if (k === 0) where.push(`timestamp ${cmp}= {t:DateTime64(9, 'UTC')}`);
      else {
        params.near = chTime(new Date(anchorMs + sign * RING_SECONDS[k - 1]! * 1000));
        where.push(dir === 'before' ? `timestamp < {near:DateTime64(9, 'UTC')}` : `timestamp >= {near:DateTime64(9, 'UTC')}`);
      }
      // Far edge: none past the last ring.
      if (k < RING_SECONDS.length) {
        params.far = chTime(new Date(anchorMs + sign * RING_SECONDS[k]! * 1000));
        where.push(dir === 'before' ? `timestamp >= {far:DateTime64(9, 'UTC')}` : `timestamp < {far:DateTime64(9, 'UTC')}`);
      }
      const rows = await run(
        `SELECT ${SELECT} FROM ${table}
         WHERE ${where.join(' AND ')}${sameWhere}
         ORDER BY timestamp ${order}, log_id ${order}
         LIMIT {n:UInt32}`,
        params,
      );
      out.push(...rows);
    }
    return out;
  };

  const [older, newer] = await Promise.all([side('before', req.before), side('after', req.after)]);
  return {
    anchor: eventRow(anchorRow),
    // Oldest first on both sides, so before + anchor + after reads in time order.
    before: older.reverse().map(eventRow),
    after: newer.map(eventRow),
    ...(same ? { same } : {}),
  };
}
