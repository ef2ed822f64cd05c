// Search in place: the archived rows a query's range needs, as a second source beside the hot
// store, in the hot table's row shape, for the query engine's one compiled pipeline to read.
//
// Which archived rows: with `include_archive: true`, every archived row of the range whose log the
// hot store does not hold (by log_id, compared only from the hot store's oldest log on: nothing
// older is there); otherwise only rows older than the fractal's oldest hot log, read when the range
// reaches before it. Every log is archived, so the archive also holds what the hot store still
// has: reading it for the whole range would read the hot days twice and compare every id, while
// the hot store holds every log from its oldest on (retention and quota delete from the oldest
// end). So no row comes twice, and a query over recent days never touches the archive.
import type { NecessaryText } from '../query/plan/necessary-text.ts';
import type { Analytics } from '../storage/clickhouse.ts';
import type { LogStore } from '../logs/log-store.ts';
import type { ArchiveStore } from './archive-store.ts';
import { sqlString, type ArchiveBackend } from './backend.ts';
import { ARCHIVE_STRUCTURE, type ArchivedFile } from './iceberg.ts';

export interface ArchiveSearchRequest {
  fractalIds: string[];
  /** Both ends included (query-language.md §5). */
  start: Date;
  end: Date;
  /** The request asked for the archive (`include_archive: true`). */
  explicit: boolean;
  /**
   * Texts every kept event contains (query/plan/necessary-text.ts): tested before parsing the
   * fields. Asked for only when archived rows are read (it parses the query once more).
   */
  texts: () => NecessaryText[];
}

/** What the archive part of an answer read: the files the current snapshots list in range. */
export interface ArchiveScan {
  files: number;
  bytes: number;
  rows: number;
}

export interface ArchiveSearchPlan {
  /** The source for the pipeline (hot and archived rows, one shape), or null: hot store only. */
  source: string | null;
  scanned: ArchiveScan;
  /** Sentences for the answer: a damaged file left out, a folder the engine cannot read. */
  warnings: string[];
  /** Set when the request asked for the archive and it cannot be read at all: answered 400. */
  refusal?: string;
  /** Hides the backend's credentials in SQL shown or logged. */
  redact(sql: string): string;
}

/** Columns of the hot `logs` table the query engine reads, and the marker of archived rows. */
const HOT_COLUMNS = 'fractal_id, timestamp, ingest_timestamp, log_id, raw, fields, fields_text, toUInt8(0) AS from_archive';
// The file's columns are renamed first (a_*): an alias equal to a column name it reads would read itself.
const FILE_COLUMNS = 'fractal_id AS a_fractal_id, log_id AS a_log_id, timestamp_ns, ingest_timestamp_ns, raw AS a_raw, fields AS a_fields';
const ARCHIVED_COLUMNS = `toUUID(a_fractal_id) AS fractal_id, fromUnixTimestamp64Nano(timestamp_ns, 'UTC') AS timestamp,
  fromUnixTimestamp64Nano(ingest_timestamp_ns, 'UTC') AS ingest_timestamp, toUUID(a_log_id) AS log_id, a_raw AS raw,
  CAST(if(a_fields = '', a_raw, a_fields) AS JSON) AS fields, a_fields AS fields_text, toUInt8(1) AS from_archive`;
const FIELDS_TEXT = "if(fields = '', raw, fields)";

const NEVER_REACHED = '1000000000000000000';

/** Files checked once stay checked (an archived file never changes: a rewrite has a new name). */
const CHECKED_MAX = 100_000;

export class ArchiveSearch {
  /** `<fractal>/<key>@<bytes>@<fingerprint>` → null when readable, else the engine's reason. */
  private readonly checked = new Map<string, string | null>();

  constructor(
    private readonly store: ArchiveStore,
    private readonly ch: Analytics,
    private readonly logs: LogStore,
    private readonly backend: () => ArchiveBackend | null,
  ) {}

  async plan(req: ArchiveSearchRequest): Promise<ArchiveSearchPlan> {
    const backend = this.backend();
    const plan: ArchiveSearchPlan = { source: null, scanned: { files: 0, bytes: 0, rows: 0 }, warnings: [], redact: (sql) => backend?.redact(sql) ?? sql };
    if (!backend) {
      if (req.explicit) plan.warnings.push('The archive is off: this answer holds the hot store only. An administrator switches it on in Admin › Archive.');
      return plan;
    }
    const startNs = BigInt(req.start.getTime()) * 1_000_000n;
    const endNs = BigInt(req.end.getTime()) * 1_000_000n + 999_999n;
    const branches: string[] = [];
    let texts: NecessaryText[] | undefined;
    for (const fractalId of req.fractalIds) {
      let files = this.store.filesOverlapping(fractalId, Number(startNs / 1000n), Number(endNs / 1000n) + 1);
      if (files.length === 0) continue;
      const hotOldest = await this.logs.oldestNs(fractalId);
      let upperNs = endNs;
      let compareIdsFrom: bigint | null = null;
      if (!req.explicit) {
        if (hotOldest !== null && hotOldest <= startNs) continue;
        if (hotOldest !== null && hotOldest - 1n < upperNs) upperNs = hotOldest - 1n;
        files = files.filter((f) => BigInt(f.minTsUs) * 1000n <= upperNs);
        if (files.length === 0) continue;
      } else if (hotOldest !== null && hotOldest <= endNs) compareIdsFrom = hotOldest > startNs ? hotOldest : startNs;
      if (backend.kind === 'local' && this.ch.transport === 'remote') {
        const why = `The archive is a local folder of this appliance, which the remote ClickHouse server cannot read`;
        if (req.explicit) plan.refusal = `${why}: search in place needs the S3 backend with a remote server (Admin › Archive).`;
        else plan.warnings.push(`This range reaches before the hot store's oldest log, but archived logs were not searched: ${why}. Use the S3 backend to search the archive in place.`);
        return plan;
      }
      const readable = await this.readable(backend, fractalId, files, plan.warnings);
      if (readable.length === 0) continue;
      for (const f of readable) {
        plan.scanned.files++;
        plan.scanned.bytes += f.bytes;
        plan.scanned.rows += f.rows;
      }
      texts ??= req.texts();
      branches.push(this.branchSql(backend, fractalId, readable, { startNs, upperNs, endNs, compareIdsFrom, texts }));
    }
    if (branches.length) plan.source = `(SELECT ${HOT_COLUMNS} FROM ${this.ch.table('logs')} UNION ALL ${branches.join(' UNION ALL ')})`;
    return plan;
  }

  /**
   * One fractal's archived rows: each ingest day's files through the engine, rows outside the range
   * and rows without the necessary texts dropped before the fields are parsed, then the ids the
   * hot store holds (when asked to compare them).
   */
  private branchSql(
    backend: ArchiveBackend,
    fractalId: string,
    files: ArchivedFile[],
    o: { startNs: bigint; upperNs: bigint; endNs: bigint; compareIdsFrom: bigint | null; texts: NecessaryText[] },
  ): string {
    const where = [`timestamp_ns >= ${o.startNs}`, `timestamp_ns <= ${o.upperNs}`];
    for (const t of o.texts) {
      const column = t.on === 'record' ? 'raw' : FIELDS_TEXT;
      where.push(
        t.anyOf.length === 1
          ? `positionCaseInsensitive(${column}, ${sqlString(t.anyOf[0]!)}) > 0`
          : `multiSearchAnyCaseInsensitive(${column}, [${t.anyOf.map(sqlString).join(', ')}])`,
      );
    }
    const byDay = new Map<string, string[]>();
    for (const f of files) byDay.set(f.day, [...(byDay.get(f.day) ?? []), `${fractalId}/${f.key}`]);
    const days = [...byDay.values()].map((keys) => `SELECT ${FILE_COLUMNS} FROM ${backend.engineSource(keys, ARCHIVE_STRUCTURE)} WHERE ${where.map((c) => `(${c})`).join(' AND ')}`);
    let rows = `SELECT * FROM (${days.join(' UNION ALL ')})`;
    if (o.compareIdsFrom !== null) {
      const id = sqlString(fractalId);
      rows += ` WHERE timestamp_ns < ${o.compareIdsFrom} OR toUUID(a_log_id) NOT IN (SELECT log_id FROM ${this.ch.table('logs')}
        WHERE fractal_id = toUUID(${id}) AND timestamp >= fromUnixTimestamp64Nano(${o.compareIdsFrom}, 'UTC') AND timestamp <= fromUnixTimestamp64Nano(${o.endNs}, 'UTC'))`;
    }
    // The LIMIT (never reached) keeps the engine from pushing the query's own conditions below it:
    // pushed down, they parsed every row's fields before the cheap tests above had dropped it
    // (1.4 million rows: about 6 s of CPU instead of 0.3).
    return `SELECT ${ARCHIVED_COLUMNS} FROM (${rows} LIMIT ${NEVER_REACHED})`;
  }

  /** A query failed: an archived file may have been damaged since it was checked; the next read checks again. */
  forgetChecks(): void {
    this.checked.clear();
  }

  /**
   * A statement failed on an archived file the footer check passed (a damaged page inside it: the
   * engine's error names the file, "… (in file/uri <path>) …"): that file is left out of the plans
   * from now on and named in their warnings. True when the error named one of the checked files,
   * so the caller may run the query again without it.
   */
  leaveOutFailedFile(detail: string): boolean {
    const where = /\(in file\/uri (.+?)\)/.exec(detail)?.[1];
    if (!where) return false;
    const backend = this.backend();
    const reason = (backend?.redact(detail) ?? detail).split('\n')[0]!.split(' (in file/uri')[0]!.replace(/[: ]+$/, '').slice(0, 200);
    let found = false;
    for (const [id, fault] of this.checked) {
      if (fault === null && where.endsWith(id.slice(0, id.indexOf('@')))) {
        this.checked.set(id, reason);
        found = true;
      }
    }
    return found;
  }

  /**
   * The files the engine can read; each one that it cannot is named in `warnings` and left out.
   * A first read of a file reads its Parquet footer (the row count), then it is remembered.
   */
  private async readable(backend: ArchiveBackend, fractalId: string, files: ArchivedFile[], warnings: string[]): Promise<ArchivedFile[]> {
    const out: ArchivedFile[] = [];
    await Promise.all(
      files.map(async (f) => {
        const key = `${fractalId}/${f.key}`;
        const id = `${key}@${f.bytes}@${(await backend.fingerprint?.(key)) ?? ''}`;
        if (!this.checked.has(id)) {
          if (this.checked.size >= CHECKED_MAX) this.checked.clear();
          this.checked.set(id, await this.check(backend, key));
        }
        const fault = this.checked.get(id);
        if (fault === null) out.push(f);
        else warnings.push(`The archived file ${fractalId}/${f.key} could not be read (${fault}); this answer leaves out the ${f.rows} logs it holds.`);
      }),
    );
    return out.sort((a, b) => a.key.localeCompare(b.key));
  }

  private async check(backend: ArchiveBackend, key: string): Promise<string | null> {
    try {
      const rs = await this.ch.client.query({ query: `SELECT count() AS n FROM ${backend.engineSource([key], ARCHIVE_STRUCTURE)}`, format: 'JSONEachRow' });
      await rs.json();
      return null;
    } catch (err) {
      return backend.redact(String((err as Error).message ?? err).split('\n')[0]!.slice(0, 200));
    }
  }
}
