// Case exports and imports run as jobs: the request that starts one answers with it at once (an
// import after its archive was received and verified), and the page follows it with GET until it
// is done or failed. The newest 200 jobs are kept, in memory and in SQLite (case-jobs-store.ts),
// saved when they start, every few seconds while they run and when they end; an export's archive
// stays on disk under SVC_DATA_DIR/cases/exports until its job is deleted or dropped. A start
// reports the jobs a stop or crash cut short as failed (recoverCaseJobs).
import { randomUUID } from 'node:crypto';
import type { CaseJobsStore } from './case-jobs-store.ts';

export type CaseJobKind = 'export' | 'import';
export type CaseJobStatus = 'running' | 'done' | 'failed';

export interface CaseArchiveInfo {
  /** The name a download is saved under. */
  file_name: string;
  size: number;
  /** SHA-256 of the archive file as written (export) or received (import). */
  sha256: string;
  /** SHA-256 of its manifest.json, which lists every file's hash. */
  manifest_sha256: string;
}

export interface CaseJob {
  id: string;
  kind: CaseJobKind;
  status: CaseJobStatus;
  /** What the job does now, in words (`reading events`, `verifying`, …). */
  phase: string;
  /** 0 … 1. */
  progress: number;
  events_total: number;
  events_done: number;
  /** Archive bytes written (export) or received and read (import). */
  bytes_done: number;
  /** Export: the fractal exported. Import: the fractal created (null until it exists). */
  fractal_id: string | null;
  fractal_name: string;
  errors: string[];
  archive: CaseArchiveInfo | null;
  created_by: string;
  started_at: string;
  finished_at: string | null;
}

const KEEP = 200;
/** How often a running job's progress is saved (what a job cut short by a crash shows). */
const SAVE_EVERY_MS = 2_000;

export class CaseJobs {
  private readonly jobs = new Map<string, CaseJob>();
  private readonly running = new Set<Promise<void>>();
  private readonly stopping = new AbortController();
  private readonly saver: NodeJS.Timeout;
  /** Aborted when the service stops: running jobs end as failed, and a failed import keeps nothing. */
  readonly signal = this.stopping.signal;

  /** `onDrop`: called with a job that is dropped (its export archive goes with it). */
  constructor(
    readonly store: CaseJobsStore,
    private readonly onDrop: (job: CaseJob) => void = () => undefined,
    /** Where a failure outside any request goes (a save of progress, a job's own cleanup): logged, never a crash. */
    private readonly onError: (err: unknown) => void = () => undefined,
  ) {
    for (const j of store.newest(KEEP)) this.jobs.set(j.id, j);
    this.saver = setInterval(() => {
      for (const j of this.jobs.values()) {
        if (j.status !== 'running') continue;
        try {
          store.save(j);
        } catch (err) {
          this.onError(err);
        }
      }
    }, SAVE_EVERY_MS);
    this.saver.unref();
  }

  start(kind: CaseJobKind, fields: { fractal_id: string | null; fractal_name: string; created_by: string; phase: string }): CaseJob {
    const job: CaseJob = {
      id: randomUUID(),
      kind,
      status: 'running',
      progress: 0,
      events_total: 0,
      events_done: 0,
      bytes_done: 0,
      errors: [],
      archive: null,
      started_at: new Date().toISOString(),
      finished_at: null,
      ...fields,
    };
    this.jobs.set(job.id, job);
    this.store.save(job);
    for (const old of this.jobs.values()) {
      if (this.jobs.size <= KEEP) break;
      if (old.status === 'running') continue;
      this.delete(old.id);
    }
    return job;
  }

  get(id: string): CaseJob | undefined {
    return this.jobs.get(id);
  }

  /** Newest first. */
  list(filter: (j: CaseJob) => boolean): CaseJob[] {
    return [...this.jobs.values()].filter(filter).reverse();
  }

  finish(job: CaseJob, error?: string): void {
    job.status = error === undefined ? 'done' : 'failed';
    if (error !== undefined) job.errors.push(error);
    else job.progress = 1;
    job.phase = error === undefined ? 'done' : 'failed';
    job.finished_at = new Date().toISOString();
    this.store.save(job);
  }

  /** The job moves on to `phase`: saved at once, since a job a crash cuts short is reported by its phase. */
  enter(job: CaseJob, phase: string): void {
    job.phase = phase;
    this.store.save(job);
  }

  /** A case import stores its events under `fractalId` (before that fractal exists): recorded first, so a crash's leftovers are found. */
  storingUnder(job: CaseJob, fractalId: string): void {
    this.store.setTarget(job.id, fractalId);
  }

  /** The import's events belong to its fractal now, or were removed: nothing to sweep. */
  swept(job: { id: string }): void {
    this.store.setTarget(job.id, null);
  }

  /** Runs a job's work in the background; its own errors are its job's (the work records them). */
  run(work: Promise<void>): void {
    this.running.add(work);
    // A rejection here would be unhandled and stop the whole service: it is logged instead.
    void work.catch(this.onError).finally(() => this.running.delete(work));
  }

  /** Stops running jobs and waits for them to clean up (before storage closes). */
  async stop(): Promise<void> {
    this.stopping.abort();
    clearInterval(this.saver);
    await Promise.allSettled([...this.running]);
  }

  delete(id: string): CaseJob | undefined {
    const job = this.jobs.get(id);
    if (job) {
      this.jobs.delete(id);
      this.store.delete(id);
      this.onDrop(job);
    }
    return job;
  }
}
