// The ClickHouse side of a fractal: its stored logs. Ingest writes here, queries read here,
// tenancy asks for stats and removes a deleted fractal's logs, comments look up a log's time.
import { chTime, type Analytics } from '../storage/clickhouse.ts';
import type { FractalStats } from '../tenancy/fractals-store.ts';

/** DateTime64 text ("YYYY-MM-DD hh:mm:ss.nnnnnnnnn", UTC) → RFC 3339 with milliseconds. */
const isoTime = (t: string): string => new Date(`${t.slice(0, 23).replace(' ', 'T')}Z`).toISOString();
/** isoTime, with null for no time (the engine's zero time, as min/max of no rows give it). */
const isoOrNull = (t: string | null): string | null => (t && !t.startsWith('1970-01-01') ? isoTime(t) : null);

/**
 * A time as a row shows it ("YYYY-MM-DD hh:mm:ss.mmm", UTC) or as RFC 3339 (a zone of its own),
 * or null when it reads as no time.
 */
export function parseShownTime(text: string): Date | null {
  const t = text.trim();
  const d = new Date(/[zZ]|[+-]\d{2}:?\d{2}$/.test(t) ? t : `${t.replace(' ', 'T')}Z`);
  return Number.isNaN(d.getTime()) ? null : d;
}

/**
 * The millisecond a row shows its time to (the stored time may be finer), as a condition with its
 * parameters `from` and `to`: with the fractal and the log id it reads one primary-key range.
 */
export const IN_MILLISECOND = "timestamp >= {from:DateTime64(9, 'UTC')} AND timestamp < {to:DateTime64(9, 'UTC')}";
export const millisecond = (at: Date): { from: string; to: string } => ({ from: chTime(at), to: chTime(new Date(at.getTime() + 1)) });

/**
 * The event's fields as JSON text (§1.7 `norm_log`): the text ingest made, which is the record
 * itself when that already was the fields (see clickhouse-migrations.ts, version 3). Reading it
 * costs what reading a String column costs; `toString(fields)` rebuilt it row by row.
 */
export const FIELDS_TEXT_SQL = "if(fields_text = '', raw, fields_text)";

/** One stored log as text columns (aliases differ from column names: ClickHouse would otherwise read the alias in WHERE). */
export interface StoredLogText {
  id_text: string;
  fractal_text: string;
  time_text: string;
  ingest_text: string;
  raw: string;
  fields_json: string;
}

/** The hot retention's gate while the archive is on: only logs it holds. */
const ARCHIVED = (before: Date | null): string => (before ? ` AND ingest_timestamp < {archived:DateTime64(9, 'UTC')}` : '');

/** The tables ingest writes rows for. */
export type IngestTable = 'logs_ingest' | 'logs';

export class LogStore {
  constructor(private readonly ch: Analytics) {}

  private get logs() {
    return this.ch.table('logs');
  }

  /** Stats for each fractal that has logs; fractals without logs are absent. */
  async statsByFractal(ids?: string[]): Promise<Map<string, FractalStats>> {
    const where = ids ? 'WHERE fractal_id IN {ids:Array(UUID)}' : '';
    const rs = await this.ch.client.query({
      query: `SELECT toString(fractal_id) AS id, count() AS n, sum(length(raw)) AS bytes,
                toString(min(timestamp)) AS oldest, toString(max(timestamp)) AS newest
              FROM ${this.logs} ${where} GROUP BY fractal_id`,
      query_params: ids ? { ids } : {},
      format: 'JSONEachRow',
    });
    const rows = (await rs.json()) as Array<{ id: string; n: string | number; bytes: string | number; oldest: string; newest: string }>;
    return new Map(
      rows.map((r) => [
        r.id,
        { log_count: Number(r.n), size_bytes: Number(r.bytes), oldest: isoOrNull(r.oldest), newest: isoOrNull(r.newest) },
      ]),
    );
  }

  async stats(fractalId: string): Promise<FractalStats> {
    return (await this.statsByFractal([fractalId])).get(fractalId) ?? { log_count: 0, size_bytes: 0, oldest: null, newest: null };
  }

  /**
   * Inserts NDJSON rows (one JSON object per line, as ingest/pipeline.ts writes them) in one
   * statement: one part in ClickHouse, however many chunks. `logs_ingest` rows carry the record's
   * text once (`raw`) and `fields` as JSON text only when it differs; the engine makes the `fields`
   * JSON (see clickhouse-migrations.ts). `logs` rows (spools of older versions) are table rows.
   */
  async insert(table: IngestTable, chunks: Buffer[]): Promise<void> {
    await this.ch.insertFormatted(this.ch.table(table), 'JSONEachRow', chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
  }

  /**
   * The event time of log `logId` in fractal `fractalId` (RFC 3339 with milliseconds), or null
   * when the fractal holds no such log. A comment stores it, so comment lists never touch
   * ClickHouse. `near` (the time the client saw on the row) narrows the search to that
   * millisecond, which reads one primary-key range; without it, or when it is off, the fractal's
   * log ids are scanned.
   */
  async logTimestamp(fractalId: string, logId: string, opts: { near?: Date; timeoutS: number }): Promise<string | null> {
    const attempt = async (at: Date | null): Promise<string | null> => {
      const rs = await this.ch.client.query({
        query: `SELECT toString(timestamp) AS t FROM ${this.logs}
                WHERE fractal_id = {fid:UUID} AND log_id = {id:UUID} ${at ? `AND ${IN_MILLISECOND}` : ''}
                LIMIT 1
                SETTINGS max_execution_time = ${Math.max(1, Math.floor(opts.timeoutS))}`,
        query_params: { fid: fractalId, id: logId, ...(at ? millisecond(at) : {}) },
        format: 'JSONEachRow',
      });
      const [row] = (await rs.json()) as Array<{ t: string }>;
      return row ? isoTime(row.t) : null;
    };
    if (opts.near) {
      const found = await attempt(new Date(Math.floor(opts.near.getTime())));
      if (found) return found;
    }
    return attempt(null);
  }

  /** Log `logId` of a fractal in the millisecond `at`, all of it as text, or null. */
  async logAt(fractalId: string, logId: string, at: Date): Promise<StoredLogText | null> {
    const rs = await this.ch.client.query({
      query: `SELECT toString(log_id) AS id_text, toString(fractal_id) AS fractal_text, toString(timestamp) AS time_text,
                toString(ingest_timestamp) AS ingest_text, raw, ${FIELDS_TEXT_SQL} AS fields_json
              FROM ${this.logs}
              WHERE fractal_id = {fid:UUID} AND log_id = {id:UUID} AND ${IN_MILLISECOND}
              LIMIT 1`,
      query_params: { fid: fractalId, id: logId, ...millisecond(at) },
      format: 'JSONEachRow',
    });
    const [row] = (await rs.json()) as StoredLogText[];
    return row ?? null;
  }

  /** Which of these log ids the fractal already holds (spool replay after a crash). */
  async existingLogIds(fractalId: string, ids: string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rs = await this.ch.client.query({
      query: `SELECT toString(log_id) AS id FROM ${this.logs} WHERE fractal_id = {fid:UUID} AND log_id IN {ids:Array(UUID)}`,
      query_params: { fid: fractalId, ids },
      format: 'JSONEachRow',
    });
    return new Set(((await rs.json()) as Array<{ id: string }>).map((r) => r.id));
  }

  /**
   * Every stored log of a fractal in time order as text columns (a case export): the times to the
   * nanosecond, `fields_text` as stored. Streamed: a fractal of any size passes through in chunks.
   */
  async *streamCaseEvents(fractalId: string, signal?: AbortSignal): AsyncGenerator<Array<[string, string, string, string, string]>> {
    yield* this.ch.streamRows(
      `SELECT toString(log_id), toString(timestamp), toString(ingest_timestamp), raw, fields_text
       FROM ${this.logs} WHERE fractal_id = {fid:UUID} ORDER BY timestamp, log_id`,
      { fid: fractalId },
      { signal, background: true },
    ) as AsyncIterable<Array<[string, string, string, string, string]>>;
  }

  /**
   * Retention: drops logs whose event time is older than `days`; with `ingestedBefore` (the archive
   * is on) only those the archive holds, ingested before that instant.
   */
  async deleteOlderThan(fractalId: string, days: number, ingestedBefore: Date | null = null): Promise<void> {
    await this.ch.client.command({
      query: `ALTER TABLE ${this.logs} DELETE WHERE fractal_id = {id:UUID} AND timestamp < now64(9) - toIntervalDay({days:UInt32})${ARCHIVED(ingestedBefore)}`,
      query_params: { id: fractalId, days, ...(ingestedBefore ? { archived: chTime(ingestedBefore) } : {}) },
      clickhouse_settings: { mutations_sync: '2' },
    });
  }

  /** Rollover quota: deletes the oldest logs until the fractal's logs fit in `bytes` (`ingestedBefore` as for retention). */
  async trimToSize(fractalId: string, bytes: number, ingestedBefore: Date | null = null): Promise<void> {
    const rs = await this.ch.client.query({
      query: `SELECT toString(max(timestamp)) AS cutoff FROM (
                SELECT timestamp, sum(length(raw)) OVER (ORDER BY timestamp DESC, log_id DESC) AS newer_bytes
                FROM ${this.logs} WHERE fractal_id = {id:UUID})
              WHERE newer_bytes > {bytes:UInt64}`,
      query_params: { id: fractalId, bytes },
      format: 'JSONEachRow',
    });
    const [row] = (await rs.json()) as Array<{ cutoff: string }>;
    if (!row || row.cutoff.startsWith('1970-01-01')) return;
    await this.ch.client.command({
      query: `ALTER TABLE ${this.logs} DELETE WHERE fractal_id = {id:UUID} AND timestamp <= {cutoff:DateTime64(9, 'UTC')}${ARCHIVED(ingestedBefore)}`,
      query_params: { id: fractalId, cutoff: row.cutoff, ...(ingestedBefore ? { archived: chTime(ingestedBefore) } : {}) },
      clickhouse_settings: { mutations_sync: '2' },
    });
  }

  /**
   * Restores archived logs (`source`: the archive's table function over Parquet files) of
   * [startNs, endNs) into the fractal, through the ingest entry table, leaving out every log_id the
   * hot store already holds. Returns how many were restored and how many were already there.
   */
  async restoreFrom(source: string, fractalId: string, startNs: bigint, endNs: bigint): Promise<{ restored: number; skipped: number }> {
    const params = { fid: fractalId, s: startNs.toString(), e: endNs.toString() };
    // The archive keeps ids as text (docs/archive.md).
    const inRange = `timestamp_ns >= {s:Int64} AND timestamp_ns < {e:Int64} AND fractal_id = {fid:String}`;
    const present = `toUUID(log_id) IN (SELECT log_id FROM ${this.logs} WHERE fractal_id = {fid:UUID}
                       AND timestamp >= fromUnixTimestamp64Nano({s:Int64}, 'UTC') AND timestamp < fromUnixTimestamp64Nano({e:Int64}, 'UTC'))`;
    const rs = await this.ch.client.query({
      query: `SELECT count() AS total, countIf(${present}) AS present FROM ${source} WHERE ${inRange}`,
      query_params: params,
      format: 'JSONEachRow',
    });
    const [c] = (await rs.json()) as Array<{ total: string | number; present: string | number }>;
    const total = Number(c?.total ?? 0);
    const skipped = Number(c?.present ?? 0);
    if (total > skipped) {
      await this.ch.client.command({
        query: `INSERT INTO ${this.ch.table('logs_ingest')} (fractal_id, timestamp, ingest_timestamp, log_id, raw, fields)
                SELECT toUUID(fractal_id), fromUnixTimestamp64Nano(timestamp_ns, 'UTC'), fromUnixTimestamp64Nano(ingest_timestamp_ns, 'UTC'), toUUID(log_id), raw, fields
                FROM ${source} WHERE ${inRange} AND NOT ${present}`,
        query_params: params,
        clickhouse_settings: { input_format_try_infer_dates: 0, input_format_try_infer_datetimes: 0 },
      });
    }
    return { restored: total - skipped, skipped };
  }

  /**
   * The event time of the fractal's oldest log in the hot store (nanoseconds since the epoch, as
   * text), null when it holds none. Reads the sort key in order: a few granules, not the fractal.
   */
  async oldestNs(fractalId: string): Promise<bigint | null> {
    const rs = await this.ch.client.query({
      query: `SELECT toString(toUnixTimestamp64Nano(timestamp)) AS ns FROM ${this.logs} WHERE fractal_id = {id:UUID} ORDER BY timestamp LIMIT 1`,
      query_params: { id: fractalId },
      format: 'JSONEachRow',
    });
    const [r] = (await rs.json()) as Array<{ ns: string }>;
    return r ? BigInt(r.ns) : null;
  }

  async deleteFractal(fractalId: string): Promise<void> {
    await this.ch.client.command({
      query: `ALTER TABLE ${this.logs} DELETE WHERE fractal_id = {id:UUID}`,
      query_params: { id: fractalId },
      clickhouse_settings: { mutations_sync: '2' },
    });
  }
}

