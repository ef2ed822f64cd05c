// The archive's catalog in SQLite (migration 10): settings, the spool cursor, and per fractal the
// Iceberg table's snapshots, day manifests and data files. A roll's commit is one transaction:
// its files, the new snapshot and the cursor move together, so a crash leaves either all or none.
import type { SecretBox } from '../storage/secret-box.ts';
import type { Db } from '../storage/sqlite.ts';
import type { ArchivedFile, ManifestRecord, SnapshotRecord } from './iceberg.ts';

export interface ArchiveSettings {
  enabled: boolean;
  backend: 'local' | 's3';
  /** null: SVC_DATA_DIR/archive */
  path: string | null;
  s3_endpoint: string | null;
  s3_bucket: string | null;
  s3_prefix: string;
  s3_region: string | null;
  s3_access_key: string | null;
  /** Opened from the sealed column; never sent to a client. */
  s3_secret_key: string | null;
}

export interface SpoolCursor {
  segment: number;
  offset: number;
}

export interface ArchiveTableRow {
  fractal_id: string;
  table_uuid: string;
  metadata_version: number;
  metadata_log: string;
  last_maintenance: string | null;
}

export interface RestoreJobRow {
  id: string;
  fractal_id: string;
  start: string;
  end: string;
  status: 'running' | 'done' | 'failed' | 'cancelled';
  restored: number;
  skipped: number;
  files_total: number;
  files_done: number;
  damaged_files: string;
  error: string | null;
  created_by: string | null;
  created_at: string;
  finished_at: string | null;
}

/** What one commit changes in one fractal's table. */
export interface TableCommit {
  fractalId: string;
  table: ArchiveTableRow;
  snapshot: SnapshotRecord;
  /** Snapshots dropped by this commit (expiry). */
  expiredSnapshots: number[];
  addedFiles: ArchivedFile[];
  removedFiles: string[];
  /** Day manifests written now (replacing the day's previous one). */
  manifests: ManifestRecord[];
  /** Days whose manifest is gone (every file of the day removed). */
  droppedDays: string[];
  /** Keys no longer referenced by the current snapshot (deleted after expiry). */
  garbage: string[];
}

const now = () => new Date().toISOString();

export class ArchiveStore {
  constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
  ) {}

  settings(): ArchiveSettings {
    const r = this.db.prepare('SELECT * FROM archive_settings WHERE id = 1').get() as
      | (Omit<ArchiveSettings, 'enabled' | 's3_secret_key'> & { enabled: number; s3_secret_sealed: string | null })
      | undefined;
    if (!r) return { enabled: false, backend: 'local', path: null, s3_endpoint: null, s3_bucket: null, s3_prefix: '', s3_region: null, s3_access_key: null, s3_secret_key: null };
    return {
      enabled: r.enabled === 1,
      backend: r.backend,
      path: r.path,
      s3_endpoint: r.s3_endpoint,
      s3_bucket: r.s3_bucket,
      s3_prefix: r.s3_prefix,
      s3_region: r.s3_region,
      s3_access_key: r.s3_access_key,
      s3_secret_key: r.s3_secret_sealed ? this.box.open(r.s3_secret_sealed) : null,
    };
  }

  saveSettings(s: ArchiveSettings): void {
    this.db
      .prepare(
        `INSERT INTO archive_settings (id, enabled, backend, path, s3_endpoint, s3_bucket, s3_prefix, s3_region, s3_access_key, s3_secret_sealed, updated_at)
         VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT(id) DO UPDATE SET enabled = excluded.enabled, backend = excluded.backend, path = excluded.path,
           s3_endpoint = excluded.s3_endpoint, s3_bucket = excluded.s3_bucket, s3_prefix = excluded.s3_prefix,
           s3_region = excluded.s3_region, s3_access_key = excluded.s3_access_key, s3_secret_sealed = excluded.s3_secret_sealed,
           updated_at = excluded.updated_at`,
      )
      .run(s.enabled ? 1 : 0, s.backend, s.path, s.s3_endpoint, s.s3_bucket, s.s3_prefix, s.s3_region, s.s3_access_key, s.s3_secret_key ? this.box.seal(s.s3_secret_key) : null, now());
  }

  /** A new place to archive to: the catalog of the old one no longer describes it. */
  forgetTables(): void {
    this.db.transaction(() => {
      for (const t of ['archive_tables', 'archive_snapshots', 'archive_manifests', 'archive_files', 'archive_garbage']) this.db.prepare(`DELETE FROM ${t}`).run();
    })();
  }

  cursor(): SpoolCursor | null {
    return (this.db.prepare('SELECT segment, offset FROM archive_cursor WHERE id = 1').get() as SpoolCursor | undefined) ?? null;
  }

  setCursor(c: SpoolCursor | null): void {
    if (!c) this.db.prepare('DELETE FROM archive_cursor').run();
    else
      this.db
        .prepare('INSERT INTO archive_cursor (id, segment, offset, updated_at) VALUES (1, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET segment = excluded.segment, offset = excluded.offset, updated_at = excluded.updated_at')
        .run(c.segment, c.offset, now());
  }

  table(fractalId: string): ArchiveTableRow | null {
    return (this.db.prepare('SELECT * FROM archive_tables WHERE fractal_id = ?').get(fractalId) as ArchiveTableRow | undefined) ?? null;
  }

  tables(): ArchiveTableRow[] {
    return this.db.prepare('SELECT * FROM archive_tables ORDER BY fractal_id').all() as ArchiveTableRow[];
  }

  snapshots(fractalId: string): SnapshotRecord[] {
    const rows = this.db.prepare('SELECT * FROM archive_snapshots WHERE fractal_id = ? ORDER BY sequence_number').all(fractalId) as Array<{
      snapshot_id: number;
      parent_id: number | null;
      sequence_number: number;
      timestamp_ms: number;
      manifest_list: string;
      summary: string;
    }>;
    return rows.map((r) => ({
      snapshotId: r.snapshot_id,
      parentId: r.parent_id,
      sequenceNumber: r.sequence_number,
      timestampMs: r.timestamp_ms,
      manifestList: r.manifest_list,
      summary: JSON.parse(r.summary) as Record<string, string>,
    }));
  }

  manifests(fractalId: string): ManifestRecord[] {
    const rows = this.db.prepare('SELECT * FROM archive_manifests WHERE fractal_id = ? ORDER BY day').all(fractalId) as Array<Record<string, number | string>>;
    return rows.map((r) => ({
      key: String(r.key),
      day: String(r.day),
      bytes: Number(r.bytes),
      snapshotId: Number(r.snapshot_id),
      sequenceNumber: Number(r.sequence_number),
      minSequenceNumber: Number(r.min_sequence_number),
      added: { files: Number(r.added_files), rows: Number(r.added_rows) },
      existing: { files: Number(r.existing_files), rows: Number(r.existing_rows) },
    }));
  }

  /** The data files of a fractal, of some days (all when omitted), oldest day first. */
  files(fractalId: string, days?: string[]): ArchivedFile[] {
    const rows = (
      days
        ? this.db.prepare(`SELECT * FROM archive_files WHERE fractal_id = ? AND day IN (SELECT value FROM json_each(?)) ORDER BY day, key`).all(fractalId, JSON.stringify(days))
        : this.db.prepare('SELECT * FROM archive_files WHERE fractal_id = ? ORDER BY day, key').all(fractalId)
    ) as Array<Record<string, number | string>>;
    return rows.map((r) => ({
      key: String(r.key),
      day: String(r.day),
      rows: Number(r.rows),
      bytes: Number(r.bytes),
      minTsUs: Number(r.min_ts_us),
      maxTsUs: Number(r.max_ts_us),
      snapshotId: Number(r.snapshot_id),
      sequenceNumber: Number(r.sequence_number),
    }));
  }

  /** Files of a fractal whose `timestamp` range meets [startUs, endUs). */
  filesOverlapping(fractalId: string, startUs: number, endUs: number): ArchivedFile[] {
    return this.files(fractalId).filter((f) => f.maxTsUs >= startUs && f.minTsUs < endUs);
  }

  /** Size, files, oldest and newest `timestamp` of a fractal's archive. */
  summary(fractalId: string): { size_bytes: number; files: number; rows: number; min_us: number | null; max_us: number | null } {
    const r = this.db
      .prepare('SELECT COALESCE(SUM(bytes), 0) AS size_bytes, COUNT(*) AS files, COALESCE(SUM(rows), 0) AS rows, MIN(min_ts_us) AS min_us, MAX(max_ts_us) AS max_us FROM archive_files WHERE fractal_id = ?')
      .get(fractalId) as { size_bytes: number; files: number; rows: number; min_us: number | null; max_us: number | null };
    return r;
  }

  /** One roll (or retention / compaction pass): every table's change and the cursor, at once. */
  commit(changes: TableCommit[], cursor: SpoolCursor | null): void {
    this.db.transaction(() => {
      for (const c of changes) {
        this.db
          .prepare(
            `INSERT INTO archive_tables (fractal_id, table_uuid, metadata_version, metadata_log, last_maintenance) VALUES (?, ?, ?, ?, ?)
             ON CONFLICT(fractal_id) DO UPDATE SET metadata_version = excluded.metadata_version, metadata_log = excluded.metadata_log, last_maintenance = excluded.last_maintenance`,
          )
          .run(c.fractalId, c.table.table_uuid, c.table.metadata_version, c.table.metadata_log, c.table.last_maintenance);
        const s = c.snapshot;
        this.db
          .prepare('INSERT INTO archive_snapshots (fractal_id, snapshot_id, parent_id, sequence_number, timestamp_ms, manifest_list, summary) VALUES (?, ?, ?, ?, ?, ?, ?)')
          .run(c.fractalId, s.snapshotId, s.parentId, s.sequenceNumber, s.timestampMs, s.manifestList, JSON.stringify(s.summary));
        for (const id of c.expiredSnapshots) this.db.prepare('DELETE FROM archive_snapshots WHERE fractal_id = ? AND snapshot_id = ?').run(c.fractalId, id);
        for (const f of c.addedFiles)
          this.db
            .prepare('INSERT INTO archive_files (fractal_id, key, day, rows, bytes, min_ts_us, max_ts_us, snapshot_id, sequence_number) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)')
            .run(c.fractalId, f.key, f.day, f.rows, f.bytes, f.minTsUs, f.maxTsUs, f.snapshotId, f.sequenceNumber);
        for (const k of c.removedFiles) this.db.prepare('DELETE FROM archive_files WHERE fractal_id = ? AND key = ?').run(c.fractalId, k);
        for (const m of c.manifests)
          this.db
            .prepare(
              `INSERT INTO archive_manifests (fractal_id, day, key, bytes, snapshot_id, sequence_number, min_sequence_number, added_files, added_rows, existing_files, existing_rows)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
               ON CONFLICT(fractal_id, day) DO UPDATE SET key = excluded.key, bytes = excluded.bytes, snapshot_id = excluded.snapshot_id,
                 sequence_number = excluded.sequence_number, min_sequence_number = excluded.min_sequence_number, added_files = excluded.added_files,
                 added_rows = excluded.added_rows, existing_files = excluded.existing_files, existing_rows = excluded.existing_rows`,
            )
            .run(c.fractalId, m.day, m.key, m.bytes, m.snapshotId, m.sequenceNumber, m.minSequenceNumber, m.added.files, m.added.rows, m.existing.files, m.existing.rows);
        for (const d of c.droppedDays) this.db.prepare('DELETE FROM archive_manifests WHERE fractal_id = ? AND day = ?').run(c.fractalId, d);
        for (const k of c.garbage) this.db.prepare('INSERT OR REPLACE INTO archive_garbage (key, removed_at_ms) VALUES (?, ?)').run(k, s.timestampMs);
      }
      if (cursor) this.setCursor(cursor);
    })();
  }

  touchMaintenance(fractalId: string, at: string): void {
    this.db.prepare('UPDATE archive_tables SET last_maintenance = ? WHERE fractal_id = ?').run(at, fractalId);
  }

  garbageBefore(ms: number): string[] {
    return (this.db.prepare('SELECT key FROM archive_garbage WHERE removed_at_ms < ? ORDER BY key').all(ms) as Array<{ key: string }>).map((r) => r.key);
  }

  dropGarbage(keys: string[]): void {
    const del = this.db.prepare('DELETE FROM archive_garbage WHERE key = ?');
    this.db.transaction(() => keys.forEach((k) => del.run(k)))();
  }

  createJob(j: Pick<RestoreJobRow, 'id' | 'fractal_id' | 'start' | 'end' | 'created_by'>): RestoreJobRow {
    this.db
      .prepare(`INSERT INTO archive_jobs (id, fractal_id, start, end, status, created_by, created_at) VALUES (?, ?, ?, ?, 'running', ?, ?)`)
      .run(j.id, j.fractal_id, j.start, j.end, j.created_by, now());
    return this.job(j.id)!;
  }

  job(id: string): RestoreJobRow | null {
    return (this.db.prepare('SELECT * FROM archive_jobs WHERE id = ?').get(id) as RestoreJobRow | undefined) ?? null;
  }

  /** A fractal's restore jobs, newest first (the page's history). */
  jobsOf(fractalId: string, limit: number): RestoreJobRow[] {
    return this.db.prepare('SELECT * FROM archive_jobs WHERE fractal_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ?').all(fractalId, limit) as RestoreJobRow[];
  }

  updateJob(id: string, patch: Partial<Omit<RestoreJobRow, 'id'>>): void {
    const keys = Object.keys(patch);
    if (!keys.length) return;
    this.db.prepare(`UPDATE archive_jobs SET ${keys.map((k) => `${k} = ?`).join(', ')} WHERE id = ?`).run(...keys.map((k) => (patch as Record<string, unknown>)[k] as never), id);
  }

  /** Jobs a stop interrupted: failed, with a sentence saying so (run the restore again to finish it). */
  failInterruptedJobs(): void {
    this.db.prepare(`UPDATE archive_jobs SET status = 'failed', error = 'The appliance stopped during the restore; start it again (logs already restored are skipped).', finished_at = ? WHERE status = 'running'`).run(now());
  }
}
