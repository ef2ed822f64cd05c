// Capture at ingest: the archive reads the ingest spool (ingest/spool.ts) with its own cursor, so
// it has every log the hot store got, across a kill and while the engine or the backend is down
// (the spool keeps the segments it has not read). Rows are gathered into a roll (size or time),
// staged in the engine, read back per fractal and ingest day as Parquet, written to the backend,
// and only then committed: Iceberg metadata first, then the catalog and the cursor in one SQLite
// transaction. A failure keeps the roll and retries; a crash re-reads from the cursor, so nothing
// is lost and nothing is committed twice (files of an uncommitted roll are orphans nobody lists).
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import type { FastifyBaseLogger } from 'fastify';
import { readSpoolEntries, spooledBatch, type Spool } from '../ingest/spool.ts';
import type { Analytics } from '../storage/clickhouse.ts';
import type { ArchiveStore, SpoolCursor, TableCommit } from './archive-store.ts';
import type { ArchiveBackend } from './backend.ts';
import { writeTableChange } from './table-writer.ts';

/** The ingest time of a spooled row, to the millisecond. */
const INGEST_TS = /"ingest_timestamp":"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3})/;

/** A spooled batch not yet archived: what the lag and the hot retention's gate are made of. */
interface PendingBatch {
  end: SpoolCursor;
  fractalId: string;
  count: number;
  ingestMs: number;
}

interface RollBatch {
  fractalId: string;
  count: number;
  rows: Buffer;
}

export interface ArchiverOptions {
  rollMs: number;
  rollBytes: number;
  snapshotKeepMs: number;
  /** How long a due roll may wait while ingest is behind (`ingestBusy`) before it is written anyway. */
  maxDeferMs: number;
}

/** How long after ingest was last seen behind the archive still counts it busy (it is sampled every tick). */
const BUSY_HOLD_MS = 2_000;

export interface ArchiveFault {
  message: string;
  since: string;
}

const before = (a: SpoolCursor, b: SpoolCursor) => a.segment < b.segment || (a.segment === b.segment && a.offset < b.offset);

export class Archiver {
  private backend: ArchiveBackend | null = null;
  /** Where the roll being gathered ends; the cursor (committed) is at or before it. */
  private readPos: SpoolCursor | null = null;
  /** Where the lag scan has counted up to. */
  private scanPos: SpoolCursor | null = null;
  private roll: RollBatch[] = [];
  private rollBytes = 0;
  private rollStartedMs = 0;
  private pending: PendingBatch[] = [];
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;
  private retryAtMs = 0;
  /** Commits to the tables run one at a time: rolls, retention, compaction (each reads the catalog it changes). */
  private chain: Promise<unknown> = Promise.resolve();
  private failures = 0;
  fault: ArchiveFault | null = null;
  /** When ingest was last seen behind (performance.now()); 0: never. */
  private ingestBusyAt = 0;
  /** A due roll is waiting for ingest to catch up (status and tests). */
  deferring = false;
  /** Rolls committed and logs archived since start (metrics). */
  archivedLogs = 0;
  lastCommitAt: string | null = null;

  constructor(
    private readonly spool: Spool,
    private readonly ch: Analytics,
    private readonly store: ArchiveStore,
    private readonly opts: ArchiverOptions,
    private readonly log: FastifyBaseLogger,
    /** Whether the archive is on (before configure() ran, at the spool's recovery). */
    private readonly on: () => boolean,
    /**
     * Whether storage is behind ingest now (the ingest queue holds more than an insert's worth):
     * a due roll then waits, up to `maxDeferMs`, since writing it takes the engine's CPU from the
     * inserts. The archive lags through a burst (the spool keeps what it has not read) and catches
     * up once ingest has room again.
     */
    private readonly ingestBusy: () => boolean = () => false,
  ) {}

  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.chain.then(fn, fn);
    this.chain = run.catch(() => undefined);
    return run;
  }

  /** The spool keeps every segment from the cursor's on while the archive is on. */
  firstNeededSegment(): number {
    return this.on() ? (this.store.cursor()?.segment ?? Number.MAX_SAFE_INTEGER) : Number.MAX_SAFE_INTEGER;
  }

  get enabled(): boolean {
    return this.backend !== null;
  }

  /**
   * Starts archiving to `backend` (null: stops). A first start begins at the spool's durable end:
   * logs accepted before the archive was switched on are not archived.
   */
  async configure(backend: ArchiveBackend | null): Promise<void> {
    await this.running;
    this.backend = backend;
    this.roll = [];
    this.rollBytes = 0;
    this.pending = [];
    this.fault = null;
    if (!backend) {
      this.store.setCursor(null);
      this.readPos = this.scanPos = null;
      this.spool.release();
      return;
    }
    let cursor = this.store.cursor();
    if (!cursor) {
      cursor = this.spool.durableEnd();
      this.store.setCursor(cursor);
    }
    this.readPos = { ...cursor };
    this.scanPos = { ...cursor };
  }

  start(tickMs = 250): void {
    const loop = () => {
      if (this.stopped) return;
      this.timer = setTimeout(() => {
        this.running = this.tick().finally(() => {
          this.running = null;
          loop();
        });
      }, tickMs);
      this.timer.unref();
    };
    loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  /** Logs accepted and not yet archived, by fractal. */
  lagByFractal(): Map<string, number> {
    const lag = new Map<string, number>();
    for (const p of this.pending) lag.set(p.fractalId, (lag.get(p.fractalId) ?? 0) + p.count);
    return lag;
  }

  get lagLogs(): number {
    return this.pending.reduce((n, p) => n + p.count, 0);
  }

  /**
   * Every log ingested before this instant is in the archive (or predates it): hot retention and
   * quota delete only such logs while the archive is on. null: the archive is off.
   */
  archivedBefore(): Date | null {
    if (!this.backend) return null;
    // A request stamped just now may still be on its way into the spool (stamp, then fsync): a margin.
    let ms = Date.now() - 10_000;
    for (const p of this.pending) if (p.ingestMs < ms) ms = p.ingestMs;
    return new Date(ms);
  }

  /** One pass: count what is new, gather, and roll when the roll is big or old enough. */
  async tick(): Promise<void> {
    if (!this.backend || !this.readPos) return;
    try {
      this.scan();
      this.gather();
    } catch (err) {
      this.setFault(`reading the ingest spool failed: ${(err as Error).message}`);
      return;
    }
    if (!this.roll.length) return;
    const due = this.rollBytes >= this.opts.rollBytes || Date.now() - this.rollStartedMs >= this.opts.rollMs;
    if (!due || Date.now() < this.retryAtMs) return;
    if (this.ingestBusy()) this.ingestBusyAt = performance.now();
    const busy = this.ingestBusyAt > 0 && performance.now() - this.ingestBusyAt < BUSY_HOLD_MS;
    this.deferring = busy && Date.now() - this.rollStartedMs < this.opts.rollMs + this.opts.maxDeferMs;
    if (this.deferring) return;
    try {
      await this.exclusive(() => this.commitRoll());
      this.failures = 0;
      if (this.fault) this.log.info('the archive is writing again');
      this.fault = null;
    } catch (err) {
      this.failures++;
      // Back off up to a minute; the roll stays and is written again as it is.
      this.retryAtMs = Date.now() + Math.min(60_000, 1000 * 2 ** Math.min(this.failures, 6));
      this.setFault((err as Error).message);
    }
  }

  /** Writes what is gathered now, whatever its size or age (tests, and stop). */
  async flush(): Promise<void> {
    await this.running;
    if (!this.backend || !this.readPos) return;
    this.scan();
    this.gather();
    if (this.roll.length) await this.exclusive(() => this.commitRoll());
  }

  private setFault(message: string): void {
    if (!this.fault) {
      this.fault = { message, since: new Date().toISOString() };
      this.log.error({ err: message }, 'the archive cannot write; logs stay in the spool until it can');
    } else this.fault.message = message;
  }

  /** Counts the batches between the scan position and the spool's durable end. */
  private scan(): void {
    this.walk(this.scanPos!, (payload, end) => {
      const b = spooledBatch(payload, end.segment);
      if (b && b.table === 'logs_ingest') {
        const ts = INGEST_TS.exec(b.rows.subarray(0, 400).toString('latin1'))?.[1];
        this.pending.push({ end, fractalId: b.fractalId, count: b.count, ingestMs: ts ? Date.parse(`${ts.replace(' ', 'T')}Z`) : Date.now() });
      }
      return true;
    });
  }

  /** Adds batches from the read position to the roll until it is full. */
  private gather(): void {
    this.walk(this.readPos!, (payload, end) => {
      if (this.rollBytes >= this.opts.rollBytes) return false;
      const b = spooledBatch(payload, end.segment);
      // Rows of the older `logs` format (spools from before v2) are left to the hot store.
      if (b && b.table === 'logs_ingest') {
        if (!this.roll.length) this.rollStartedMs = Date.now();
        this.roll.push({ fractalId: b.fractalId, count: b.count, rows: Buffer.from(b.rows) });
        this.rollBytes += b.rows.length;
      }
      return true;
    });
  }

  /** Walks whole entries from `pos` (moved along) to the spool's durable end; `visit` returning false stops before that entry. */
  private walk(pos: SpoolCursor, visit: (payload: Buffer, end: SpoolCursor) => boolean): void {
    let chunk = 16 << 20;
    for (;;) {
      const durable = this.spool.durableEnd();
      if (pos.segment > durable.segment) return;
      const sealed = pos.segment < durable.segment;
      let fd: number;
      try {
        fd = openSync(this.spool.segmentFile(pos.segment), 'r');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || !sealed) throw err;
        if (!this.nextSegment(pos)) return;
        continue;
      }
      let buf: Buffer;
      let rest: number;
      try {
        const limit = sealed ? fstatSync(fd).size : durable.offset;
        rest = limit - pos.offset;
        buf = Buffer.allocUnsafe(Math.max(0, Math.min(rest, chunk)));
        if (buf.length) buf = buf.subarray(0, readSync(fd, buf, 0, buf.length, pos.offset));
      } finally {
        closeSync(fd);
      }
      if (rest <= 0) {
        if (sealed && this.nextSegment(pos)) continue;
        return;
      }
      let consumed = 0;
      for (const e of readSpoolEntries(buf)) {
        if (!visit(e.payload, { segment: pos.segment, offset: pos.offset + e.end })) {
          pos.offset += consumed;
          return;
        }
        consumed = e.end;
      }
      pos.offset += consumed;
      if (consumed === 0) {
        if (buf.length < rest) chunk *= 4; // one entry larger than the read: read more
        else if (sealed) {
          // A torn tail a crash left (never answered 200): the segment ends here.
          if (!this.nextSegment(pos)) return;
        } else return;
      }
    }
  }

  private nextSegment(pos: SpoolCursor): boolean {
    const next = this.spool.segments().find((n) => n > pos.segment) ?? this.spool.durableEnd().segment;
    if (next <= pos.segment) return false;
    pos.segment = next;
    pos.offset = 0;
    return true;
  }

  private async commitRoll(): Promise<void> {
    const from = this.store.cursor()!;
    const to = { ...this.readPos! };
    const stage = this.ch.table('archive_stage');
    await this.ch.client.command({ query: `TRUNCATE TABLE ${stage}` });
    await this.ch.insertFormatted(stage, 'JSONEachRow', Buffer.concat(this.roll.map((b) => b.rows)));
    const expected = this.roll.reduce((n, b) => n + b.count, 0);
    // Named by the spool range: the same roll written again replaces its own files.
    const name = `${pad(from.segment)}-${pad(from.offset, 12)}_${pad(to.segment)}-${pad(to.offset, 12)}.parquet`;
    await this.writeStaged(name, `${from.segment}:${from.offset}-${to.segment}:${to.offset}`, to, expected);
    this.archivedLogs += expected;
    this.lastCommitAt = new Date().toISOString();
    this.roll = [];
    this.rollBytes = 0;
    this.pending = this.pending.filter((p) => before(to, p.end));
    this.spool.release();
  }

  /**
   * Archives the rows an INSERT puts into the staging table (`insertInto(stage)`: fractal_id,
   * timestamp, ingest_timestamp, log_id, raw) through the same writer as a roll, the cursor
   * unchanged: how `npm run bench:archive` builds ten million archived logs without ingesting
   * them. Files are named `<name>.parquet` in each ingest day they touch.
   */
  archiveInserted(insertInto: (stage: string) => string, params: Record<string, unknown>, name: string): Promise<number> {
    return this.exclusive(async () => {
      const stage = this.ch.table('archive_stage');
      await this.ch.client.command({ query: `TRUNCATE TABLE ${stage}` });
      await this.ch.client.command({ query: insertInto(stage), query_params: params });
      return this.writeStaged(`${name}.parquet`, name, this.store.cursor(), null);
    });
  }

  /**
   * Writes the staging table's rows as one Parquet file per fractal and ingest day, then commits
   * them (Iceberg metadata, then the catalog with the cursor `to`). `expected`: the rows the stage
   * must hold, else nothing is written. The number of rows written.
   */
  private async writeStaged(name: string, range: string, to: SpoolCursor | null, expected: number | null): Promise<number> {
    const backend = this.backend!;
    const stage = this.ch.table('archive_stage');
    const rs = await this.ch.client.query({
      query: `SELECT toString(fractal_id) AS fractal, toString(toDate(ingest_timestamp)) AS day, count() AS n,
                     toUnixTimestamp64Micro(min(timestamp)) AS min_us, toUnixTimestamp64Micro(max(timestamp)) AS max_us
              FROM ${stage} GROUP BY fractal, day ORDER BY fractal, day`,
      format: 'JSONEachRow',
    });
    const groups = (await rs.json()) as Array<{ fractal: string; day: string; n: string | number; min_us: string | number; max_us: string | number }>;
    const staged = groups.reduce((n, g) => n + Number(g.n), 0);
    if (expected !== null && staged !== expected) throw new Error(`the engine staged ${staged} of the roll's ${expected} logs; the roll will be written again`);

    const added = new Map<string, Array<{ key: string; day: string; rows: number; bytes: number; minTsUs: number; maxTsUs: number }>>();
    for (const g of groups) {
      const data = await this.exportParquet(stage, g.fractal, g.day);
      const key = `data/ingest_day=${g.day}/${name}`;
      try {
        await backend.put(`${g.fractal}/${key}`, data);
      } catch (err) {
        throw new Error(`writing ${g.fractal}/${key} to the archive failed: ${(err as Error).message}`, { cause: err });
      }
      const list = added.get(g.fractal) ?? [];
      list.push({ key, day: g.day, rows: Number(g.n), bytes: data.length, minTsUs: Number(g.min_us), maxTsUs: Number(g.max_us) });
      added.set(g.fractal, list);
    }
    const changes: TableCommit[] = [];
    for (const [fractalId, files] of added) {
      changes.push(
        await writeTableChange(backend, this.store, fractalId, {
          added: files,
          removed: [],
          operation: 'append',
          expireBeforeMs: Date.now() - this.opts.snapshotKeepMs,
          summary: { 'svc.spool-range': range },
        }),
      );
    }
    this.store.commit(changes, to);
    await this.ch.client.command({ query: `TRUNCATE TABLE ${stage}` }).catch(() => undefined);
    return staged;
  }

  private async exportParquet(stage: string, fractalId: string, day: string): Promise<Buffer> {
    // Iceberg v2 times are microseconds: the exact nanoseconds go along as numbers (restore reads them).
    const rs = await this.ch.client.exec({
      query: `SELECT toString(fid) AS fractal_id, toString(lid) AS log_id, toDateTime64(ts, 6, 'UTC') AS timestamp, toDateTime64(its, 6, 'UTC') AS ingest_timestamp,
                     toUnixTimestamp64Nano(ts) AS timestamp_ns, toUnixTimestamp64Nano(its) AS ingest_timestamp_ns, raw, fields
              FROM (SELECT fractal_id AS fid, log_id AS lid, timestamp AS ts, ingest_timestamp AS its, raw, fields FROM ${stage}
                    WHERE fractal_id = {fractal:UUID} AND toDate(ingest_timestamp) = {day:Date})
              ORDER BY ts, lid
              FORMAT Parquet`,
      query_params: { fractal: fractalId, day },
      clickhouse_settings: {
        output_format_parquet_compression_method: 'zstd',
        output_format_parquet_string_as_string: 1,
      },
    });
    const chunks: Buffer[] = [];
    for await (const c of rs.stream) chunks.push(c as Buffer);
    return Buffer.concat(chunks);
  }
}

const pad = (n: number, width = 10) => String(n).padStart(width, '0');
