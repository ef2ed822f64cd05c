// The ClickHouse side of a fractal: its stored logs. Ingest writes here, queries read here,
// tenancy asks for stats and removes a deleted fractal's logs, comments look up a log's time.
import { chTime, type Analytics } from '../storage/clickhouse.ts';
import type { FractalStats } from '../tenancy/fractals-store.ts';

const toIso = (chTime: string | null): string | null =>
  chTime && !chTime.startsWith('1970-01-01') ? new Date(chTime.replace(' ', 'T') + 'Z').toISOString() : null;

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
        { log_count: Number(r.n), size_bytes: Number(r.bytes), oldest: toIso(r.oldest), newest: toIso(r.newest) },
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
    const attempt = async (window: { from: Date; to: Date } | null): Promise<string | null> => {
      const rs = await this.ch.client.query({
        query: `SELECT toString(timestamp) AS t FROM ${this.logs}
                WHERE fractal_id = {fid:UUID} AND log_id = {id:UUID}
                ${window ? "AND timestamp >= {from:DateTime64(9, 'UTC')} AND timestamp < {to:DateTime64(9, 'UTC')}" : ''}
                LIMIT 1
                SETTINGS max_execution_time = ${Math.max(1, Math.floor(opts.timeoutS))}`,
        query_params: window ? { fid: fractalId, id: logId, from: chTime(window.from), to: chTime(window.to) } : { fid: fractalId, id: logId },
        format: 'JSONEachRow',
      });
      const [row] = (await rs.json()) as Array<{ t: string }>;
      // DateTime64(9) text → RFC 3339 with milliseconds.
      return row ? new Date(`${row.t.slice(0, 23).replace(' ', 'T')}Z`).toISOString() : null;
    };
    if (opts.near) {
      const from = new Date(Math.floor(opts.near.getTime()));
      const found = await attempt({ from, to: new Date(from.getTime() + 1) });
      if (found) return found;
    }
    return attempt(null);
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

  /** Retention: drops logs whose event time is older than `days`. */
  async deleteOlderThan(fractalId: string, days: number): Promise<void> {
    await this.ch.client.command({
      query: `ALTER TABLE ${this.logs} DELETE WHERE fractal_id = {id:UUID} AND timestamp < now64(9) - toIntervalDay({days:UInt32})`,
      query_params: { id: fractalId, days },
      clickhouse_settings: { mutations_sync: '2' },
    });
  }

  /** Rollover quota: deletes the oldest logs until the fractal's logs fit in `bytes`. */
  async trimToSize(fractalId: string, bytes: number): Promise<void> {
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
      query: `ALTER TABLE ${this.logs} DELETE WHERE fractal_id = {id:UUID} AND timestamp <= {cutoff:DateTime64(9, 'UTC')}`,
      query_params: { id: fractalId, cutoff: row.cutoff },
      clickhouse_settings: { mutations_sync: '2' },
    });
  }

  async deleteFractal(fractalId: string): Promise<void> {
    await this.ch.client.command({
      query: `ALTER TABLE ${this.logs} DELETE WHERE fractal_id = {id:UUID}`,
      query_params: { id: fractalId },
      clickhouse_settings: { mutations_sync: '2' },
    });
  }
}

