// Imports in SQLite (`imports`, migration 9): one row per uploaded file, its progress and outcome.
// The runner saves progress after each batch the spool holds, so the row is also what a restart
// resumes from (`phase`, `resume_records`).
import { randomUUID } from 'node:crypto';
import { preparedOnce, type Db } from '../../storage/sqlite.ts';

export type ImportStatus = 'running' | 'done' | 'failed';
export type ImportPhase = 'receiving' | 'processing' | 'alerts' | 'finished';

export interface ImportRow {
  id: string;
  fractal_id: string;
  name: string;
  normalizer_id: string | null;
  timestamp_fields: string;
  status: ImportStatus;
  phase: ImportPhase;
  format: string | null;
  compression: string | null;
  size_bytes: number;
  sha256: string | null;
  bytes_read: number;
  accepted: number;
  rejected: number;
  resume_records: number;
  errors: string;
  alerts: string | null;
  oldest: string | null;
  newest: string | null;
  file_path: string;
  created_by: string;
  created_at: string;
  finished_at: string | null;
  updated_at: string;
}

/** An import as the API shows it. */
export interface ImportView {
  id: string;
  fractal_id: string;
  name: string;
  status: ImportStatus;
  phase: ImportPhase;
  format: string | null;
  compression: string | null;
  normalizer_id: string | null;
  timestamp_fields: string[];
  size_bytes: number;
  sha256: string | null;
  bytes_read: number;
  events_accepted: number;
  events_rejected: number;
  errors: string[];
  alerts: unknown;
  oldest_event: string | null;
  newest_event: string | null;
  created_by: string;
  created_at: string;
  finished_at: string | null;
  updated_at: string;
}

export function importView(r: ImportRow): ImportView {
  return {
    id: r.id,
    fractal_id: r.fractal_id,
    name: r.name,
    status: r.status,
    phase: r.phase,
    format: r.format,
    compression: r.compression,
    normalizer_id: r.normalizer_id,
    timestamp_fields: JSON.parse(r.timestamp_fields) as string[],
    size_bytes: r.size_bytes,
    sha256: r.sha256,
    bytes_read: r.bytes_read,
    events_accepted: r.accepted,
    events_rejected: r.rejected,
    errors: JSON.parse(r.errors) as string[],
    alerts: r.alerts ? JSON.parse(r.alerts) : null,
    oldest_event: r.oldest,
    newest_event: r.newest,
    created_by: r.created_by,
    created_at: r.created_at,
    finished_at: r.finished_at,
    updated_at: r.updated_at,
  };
}

/** What the runner saves after a batch: every counter at once. */
export interface ImportProgress {
  bytes_read: number;
  accepted: number;
  rejected: number;
  resume_records: number;
  errors: string[];
  /** The events' own times seen so far (RFC 3339), to search them. */
  oldest: string | null;
  newest: string | null;
}

export class ImportsStore {
  /** An import of many small files writes a few rows per file. */
  private readonly sql;

  constructor(db: Db) {
    this.sql = preparedOnce(db);
  }

  create(i: { fractalId: string; name: string; normalizerId: string | null; timestampFields: string[]; filePath: (id: string) => string; createdBy: string }): ImportRow {
    const id = randomUUID();
    const now = new Date().toISOString();
    this.sql(
        `INSERT INTO imports (id, fractal_id, name, normalizer_id, timestamp_fields, status, phase, file_path, created_by, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, 'running', 'receiving', ?, ?, ?, ?)`,
      )
      .run(id, i.fractalId, i.name, i.normalizerId, JSON.stringify(i.timestampFields), i.filePath(id), i.createdBy, now, now);
    return this.get(id)!;
  }

  get(id: string): ImportRow | undefined {
    return this.sql('SELECT * FROM imports WHERE id = ?').get(id) as ImportRow | undefined;
  }

  list(fractalId: string, page: { limit: number; offset: number }): ImportRow[] {
    return this.sql('SELECT * FROM imports WHERE fractal_id = ? ORDER BY created_at DESC, id LIMIT ? OFFSET ?').all(fractalId, page.limit, page.offset) as ImportRow[];
  }

  count(fractalId: string): number {
    return (this.sql('SELECT count(*) AS n FROM imports WHERE fractal_id = ?').get(fractalId) as { n: number }).n;
  }

  /** Imports a restart finds unfinished, oldest first. */
  unfinished(): ImportRow[] {
    return this.sql(`SELECT * FROM imports WHERE status = 'running' ORDER BY created_at, id`).all() as ImportRow[];
  }

  received(id: string, bytes: number): void {
    this.sql('UPDATE imports SET size_bytes = ?, updated_at = ? WHERE id = ?').run(bytes, new Date().toISOString(), id);
  }

  /** The whole file is on disk: its size and hash are known, and processing may start. */
  stored(id: string, size: number, sha256: string): void {
    this.sql(`UPDATE imports SET size_bytes = ?, sha256 = ?, phase = 'processing', updated_at = ? WHERE id = ?`).run(size, sha256, new Date().toISOString(), id);
  }

  sniffed(id: string, format: string, compression: string | null): void {
    this.sql('UPDATE imports SET format = ?, compression = ?, updated_at = ? WHERE id = ?').run(format, compression, new Date().toISOString(), id);
  }

  progress(id: string, p: ImportProgress): void {
    this.sql('UPDATE imports SET bytes_read = ?, accepted = ?, rejected = ?, resume_records = ?, errors = ?, oldest = ?, newest = ?, updated_at = ? WHERE id = ?')
      .run(p.bytes_read, p.accepted, p.rejected, p.resume_records, JSON.stringify(p.errors), p.oldest, p.newest, new Date().toISOString(), id);
  }

  phase(id: string, phase: ImportPhase): void {
    this.sql('UPDATE imports SET phase = ?, updated_at = ? WHERE id = ?').run(phase, new Date().toISOString(), id);
  }

  alerts(id: string, summary: unknown): void {
    this.sql('UPDATE imports SET alerts = ?, updated_at = ? WHERE id = ?').run(JSON.stringify(summary), new Date().toISOString(), id);
  }

  finish(id: string, status: 'done' | 'failed', errors: string[]): ImportRow {
    const now = new Date().toISOString();
    this.sql(`UPDATE imports SET status = ?, phase = 'finished', errors = ?, finished_at = ?, updated_at = ? WHERE id = ?`).run(status, JSON.stringify(errors), now, now, id);
    return this.get(id)!;
  }
}
