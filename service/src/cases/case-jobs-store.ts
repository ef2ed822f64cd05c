// Case jobs in SQLite (`case_jobs`, migration 13), so they outlive a restart: a finished export
// keeps its archive and download, and a job a stop or a crash cut short is reported as failed
// rather than vanishing. `target_fractal_id` is set before a case import stores its first event
// (its events go in under that id before the fractal exists) and cleared once they belong to the
// created fractal or were removed: a start finds any left by a crash and sweeps them.
import type { Db } from '../storage/sqlite.ts';
import { preparedOnce } from '../storage/sqlite.ts';
import type { CaseArchiveInfo, CaseJob, CaseJobKind, CaseJobStatus } from './case-jobs.ts';

/** A `case_jobs` row: the job, its errors and archive as JSON text, and the sweep's marker. */
type JobRow = Omit<CaseJob, 'errors' | 'archive'> & { errors: string; archive: string | null; target_fractal_id: string | null };

const toJob = ({ target_fractal_id: _, errors, archive, ...rest }: JobRow): CaseJob => ({
  ...rest,
  errors: JSON.parse(errors) as string[],
  archive: archive ? (JSON.parse(archive) as CaseArchiveInfo) : null,
});

export class CaseJobsStore {
  private readonly sql;

  constructor(private readonly db: Db) {
    this.sql = preparedOnce(db);
  }

  /** The newest `limit` jobs, oldest first. */
  newest(limit: number): CaseJob[] {
    const rows = this.sql('SELECT * FROM case_jobs ORDER BY started_at DESC, rowid DESC LIMIT ?').all(limit) as JobRow[];
    return rows.reverse().map(toJob);
  }

  /** Writes the job as it stands (inserted the first time). */
  save(j: CaseJob): void {
    this.sql(
      `INSERT INTO case_jobs (id, kind, status, phase, progress, events_total, events_done, bytes_done, fractal_id, fractal_name, errors, archive, created_by, started_at, finished_at)
       VALUES (@id, @kind, @status, @phase, @progress, @events_total, @events_done, @bytes_done, @fractal_id, @fractal_name, @errors, @archive, @created_by, @started_at, @finished_at)
       ON CONFLICT (id) DO UPDATE SET status = excluded.status, phase = excluded.phase, progress = excluded.progress, events_total = excluded.events_total,
         events_done = excluded.events_done, bytes_done = excluded.bytes_done, fractal_id = excluded.fractal_id, fractal_name = excluded.fractal_name,
         errors = excluded.errors, archive = excluded.archive, finished_at = excluded.finished_at`,
    ).run({ ...j, errors: JSON.stringify(j.errors), archive: j.archive ? JSON.stringify(j.archive) : null });
  }

  delete(id: string): void {
    this.sql('DELETE FROM case_jobs WHERE id = ?').run(id);
  }

  /** A case import's events go in under this fractal id; null once they are the fractal's or removed. */
  setTarget(id: string, fractalId: string | null): void {
    this.sql('UPDATE case_jobs SET target_fractal_id = ? WHERE id = ?').run(fractalId, id);
  }

  /** Jobs a stop or crash left running. */
  interrupted(): CaseJob[] {
    return (this.sql(`SELECT * FROM case_jobs WHERE status = 'running' ORDER BY started_at`).all() as JobRow[]).map(toJob);
  }

  /** Case imports whose events may be in storage under an id no fractal has: id and that fractal id. */
  unswept(): Array<{ id: string; target_fractal_id: string }> {
    return this.sql(`SELECT id, target_fractal_id FROM case_jobs WHERE target_fractal_id IS NOT NULL AND status != 'running'`).all() as Array<{ id: string; target_fractal_id: string }>;
  }
}
