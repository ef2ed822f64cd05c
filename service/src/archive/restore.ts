// Restore jobs: a fractal's time window read back from its archived Parquet files into the hot
// store, one file at a time (progress, cancel between files), leaving out logs the hot store
// already holds (by log_id). A file that cannot be read is named in the job and the rest goes on.
// Reconcile is the same job over everything the archive holds of the fractal.
import { randomUUID } from 'node:crypto';
import type { LogStore } from '../logs/log-store.ts';
import type { ArchiveStore, RestoreJobRow } from './archive-store.ts';
import type { ArchiveBackend } from './backend.ts';
import { ARCHIVE_STRUCTURE } from './iceberg.ts';

export class RestoreJobs {
  private readonly cancelled = new Set<string>();
  private readonly running = new Map<string, Promise<void>>();

  constructor(
    private readonly store: ArchiveStore,
    private readonly logs: LogStore,
    private readonly backend: () => ArchiveBackend | null,
  ) {}

  /** Starts a job over [start, end) of event time; answers at once with the job. */
  start(fractalId: string, start: Date, end: Date, createdBy: string | null): RestoreJobRow {
    const backend = this.backend();
    const job = this.store.createJob({ id: randomUUID(), fractal_id: fractalId, start: start.toISOString(), end: end.toISOString(), created_by: createdBy });
    if (!backend) {
      this.store.updateJob(job.id, { status: 'failed', error: 'The archive is off; switch it on in Admin › Archive first.', finished_at: new Date().toISOString() });
      return this.store.job(job.id)!;
    }
    const run = this.run(job.id, backend, fractalId, start, end).finally(() => {
      this.running.delete(job.id);
      this.cancelled.delete(job.id);
    });
    this.running.set(job.id, run);
    return this.store.job(job.id)!;
  }

  cancel(id: string): RestoreJobRow | null {
    const job = this.store.job(id);
    if (job?.status === 'running') this.cancelled.add(id);
    return job;
  }

  /** Waits for every running job (stop, tests). */
  async settle(): Promise<void> {
    await Promise.all(this.running.values());
  }

  async stop(): Promise<void> {
    for (const id of this.running.keys()) this.cancelled.add(id);
    await this.settle();
  }

  private async run(id: string, backend: ArchiveBackend, fractalId: string, start: Date, end: Date): Promise<void> {
    const startUs = start.getTime() * 1000;
    const endUs = end.getTime() * 1000;
    const files = this.store.filesOverlapping(fractalId, startUs, endUs);
    this.store.updateJob(id, { files_total: files.length });
    let restored = 0;
    let skipped = 0;
    const damaged: string[] = [];
    try {
      for (const [i, f] of files.entries()) {
        if (this.cancelled.has(id)) {
          this.store.updateJob(id, { status: 'cancelled', finished_at: new Date().toISOString() });
          return;
        }
        try {
          const source = backend.engineSource([`${fractalId}/${f.key}`], ARCHIVE_STRUCTURE);
          const r = await this.logs.restoreFrom(source, fractalId, BigInt(start.getTime()) * 1_000_000n, BigInt(end.getTime()) * 1_000_000n);
          restored += r.restored;
          skipped += r.skipped;
        } catch (err) {
          damaged.push(`${f.key}: ${(err as Error).message.split('\n')[0]}`);
        }
        this.store.updateJob(id, { restored, skipped, files_done: i + 1, damaged_files: JSON.stringify(damaged) });
      }
      this.store.updateJob(id, {
        status: 'done',
        error: damaged.length ? `${damaged.length} archived file(s) could not be read and were left out; the rest was restored.` : null,
        finished_at: new Date().toISOString(),
      });
    } catch (err) {
      this.store.updateJob(id, { status: 'failed', error: (err as Error).message, finished_at: new Date().toISOString() });
    }
  }
}

/** A job as the API answers it. */
export function publicJob(j: RestoreJobRow) {
  return {
    id: j.id,
    fractal_id: j.fractal_id,
    start: j.start,
    end: j.end,
    status: j.status,
    restored: j.restored,
    skipped: j.skipped,
    progress: j.files_total ? j.files_done / j.files_total : j.status === 'running' ? 0 : 1,
    files_total: j.files_total,
    files_done: j.files_done,
    damaged_files: JSON.parse(j.damaged_files) as string[],
    error: j.error,
    created_at: j.created_at,
    finished_at: j.finished_at,
  };
}
