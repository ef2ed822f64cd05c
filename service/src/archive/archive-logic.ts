// The archive domain's logic: settings (checked against the backend before they are kept), the
// archiver's life, per-fractal status, archive retention and maintenance on a timer.
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.ts';
import { badRequest } from '../http/errors.ts';
import type { Spool } from '../ingest/spool.ts';
import type { Analytics } from '../storage/clickhouse.ts';
import type { LogStore } from '../logs/log-store.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { FractalsStore } from '../tenancy/fractals-store.ts';
import type { ArchiveSettings, ArchiveStore } from './archive-store.ts';
import { Archiver } from './archiver.ts';
import { ArchiveSearch } from './archive-search.ts';
import { GLOB_CHARACTERS, type ArchiveBackend } from './backend.ts';
import { LocalBackend } from './local-backend.ts';
import { maintainTable } from './maintenance.ts';
import { RestoreJobs } from './restore.ts';
import { S3Backend } from './s3-backend.ts';

export type ArchiveSettingsInput = Partial<Omit<ArchiveSettings, 's3_secret_key'>> & { s3_secret_key?: string | null };

/** The settings as an admin reads them: the secret never leaves, only whether one is set. */
export function publicSettings(s: ArchiveSettings, dataDir: string) {
  const { s3_secret_key, ...rest } = s;
  return { ...rest, path: s.path ?? path.join(dataDir, 'archive'), s3_secret_key_set: s3_secret_key !== null };
}

export function backendFor(s: ArchiveSettings, dataDir: string): ArchiveBackend {
  if (s.backend === 's3') {
    return new S3Backend({
      endpoint: s.s3_endpoint!,
      bucket: s.s3_bucket!,
      prefix: s.s3_prefix,
      region: s.s3_region ?? 'us-east-1',
      accessKey: s.s3_access_key ?? '',
      secretKey: s.s3_secret_key ?? '',
    });
  }
  return new LocalBackend(path.resolve(s.path ?? path.join(dataDir, 'archive')));
}

/** Where two settings archive to differs: the catalog of one does not describe the other. */
const place = (s: ArchiveSettings) => JSON.stringify(s.backend === 's3' ? [s.s3_endpoint, s.s3_bucket, s.s3_prefix] : [s.path]);

export class ArchiveService {
  /** Made by open(), once the ingest pipeline's spool exists. */
  archiver!: Archiver;
  readonly restores: RestoreJobs;
  /** Search in place: the archived rows a query's range needs (the query service asks). */
  readonly search: ArchiveSearch;
  private timer: NodeJS.Timeout | null = null;
  private maintaining: Promise<void> | null = null;
  lastMaintenanceError: string | null = null;

  constructor(
    readonly store: ArchiveStore,
    readonly ch: Analytics,
    private readonly fractals: FractalsStore,
    private readonly config: Config,
    private readonly log: FastifyBaseLogger,
    logs: LogStore,
    private readonly metrics: Metrics,
  ) {
    this.restores = new RestoreJobs(store, logs, () => this.backend);
    this.search = new ArchiveSearch(store, ch, logs, () => this.backend);
  }

  /** The backend archived files are read from and written to, null while the archive is off. */
  backend: ArchiveBackend | null = null;

  /** Text that may hold an engine statement reading the archive, with the backend's credentials hidden (log lines). */
  redact(text: string): string {
    return this.backend?.redact(text) ?? text;
  }

  settings(): ArchiveSettings {
    return this.store.settings();
  }

  /**
   * Before the spool's recovery: the archive's cursor decides which segments it keeps.
   * `ingestBusy`: storage is behind ingest now (the archive's rolls wait, archiver.ts).
   */
  open(spool: Spool, ingestBusy: () => boolean): void {
    const s = this.store.settings();
    this.backend = s.enabled ? backendFor(s, this.config.dataDir) : null;
    this.archiver = new Archiver(spool, this.ch, this.store, this.config.archive, this.log, () => this.backend !== null, ingestBusy);
    spool.attachReader(this.archiver);
    const archiver = this.archiver;
    this.metrics.trackArchive(() => ({ lagLogs: archiver.lagLogs, archivedLogs: archiver.archivedLogs, faulty: archiver.fault !== null }));
    this.store.failInterruptedJobs();
  }

  /** After the spool's recovery (its durable end is where a first start begins). */
  async start(): Promise<void> {
    await this.archiver.configure(this.backend);
    this.archiver.start();
    this.timer = setInterval(() => void this.maintainAll(), this.config.archive.maintenanceMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.restores.stop();
    await this.archiver.stop();
    await this.maintaining;
  }

  /** Changes the settings: a backend that cannot be written is refused with what is wrong. */
  async update(input: ArchiveSettingsInput): Promise<ArchiveSettings> {
    const old = this.store.settings();
    const next: ArchiveSettings = { ...old, ...Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) } as ArchiveSettings;
    if (input.s3_secret_key === undefined) next.s3_secret_key = old.s3_secret_key;
    if (next.path !== null && next.path !== undefined) {
      if (!path.isAbsolute(next.path)) throw badRequest(`path must be an absolute folder path; "${next.path}" is relative.`);
      if (GLOB_CHARACTERS.test(next.path)) throw badRequest('path must not contain { } * ? or , (the engine reads them as a pattern).');
    }
    if (next.backend === 's3') {
      for (const k of ['s3_endpoint', 's3_bucket'] as const) if (!next[k]) throw badRequest(`${k} is required for the s3 backend.`);
      if (!/^https?:\/\/[^/]+\/?$/.test(next.s3_endpoint!)) throw badRequest('s3_endpoint must be an http:// or https:// address without a path, e.g. http://10.0.0.5:9000.');
      if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(next.s3_bucket!)) throw badRequest('s3_bucket must be a bucket name: 3-63 lower-case letters, digits, dots and hyphens.');
      if (GLOB_CHARACTERS.test(next.s3_prefix) || next.s3_prefix.startsWith('/')) throw badRequest('s3_prefix must not start with / nor contain { } * ? or ,.');
    }
    if (next.enabled) {
      try {
        await backendFor(next, this.config.dataDir).check();
      } catch (err) {
        throw badRequest((err as Error).message);
      }
    }
    if (place(next) !== place(old) || next.backend !== old.backend) this.store.forgetTables();
    this.store.saveSettings(next);
    this.backend = next.enabled ? backendFor(next, this.config.dataDir) : null;
    await this.archiver.configure(this.backend);
    return next;
  }

  /** The fractal's archive: size, files, time range, lag and last maintenance. */
  status(fractalId: string) {
    const s = this.store.summary(fractalId);
    const t = this.store.table(fractalId);
    const usToIso = (us: number | null) => (us === null ? null : new Date(Math.floor(us / 1000)).toISOString());
    return {
      enabled: this.archiver.enabled,
      size_bytes: s.size_bytes,
      files: s.files,
      logs: s.rows,
      oldest: usToIso(s.min_us),
      newest: usToIso(s.max_us),
      lag_logs: this.archiver.lagByFractal().get(fractalId) ?? 0,
      last_maintenance: t?.last_maintenance ?? null,
      fault: this.archiver.fault,
      metadata_location: this.backend && t ? `${this.backend.location(fractalId)}/metadata/v${t.metadata_version}.metadata.json` : null,
    };
  }

  /** Reconcile: restore everything the archive holds of the fractal (what the hot store has is skipped). */
  reconcile(fractalId: string, createdBy: string | null) {
    const s = this.store.summary(fractalId);
    const start = new Date(Math.floor((s.min_us ?? 0) / 1000));
    const end = new Date(Math.floor((s.max_us ?? 0) / 1000) + 1);
    return this.restores.start(fractalId, start, end, createdBy);
  }

  /** The archive's part of GET /system/pressure. */
  pressure() {
    return {
      enabled: this.archiver.enabled,
      active: this.archiver.fault !== null,
      lag_logs: this.archiver.lagLogs,
      last_commit: this.archiver.lastCommitAt,
      detail: this.archiver.fault ? `${this.archiver.fault.message}. Logs wait in the spool and are archived once the backend works again.` : '',
      since: this.archiver.fault?.since ?? null,
    };
  }

  /** Archive retention, compaction and snapshot expiry for every archived fractal. */
  maintainAll(): Promise<void> {
    this.maintaining ??= (async () => {
      try {
        const backend = this.backend;
        if (!backend) return;
        for (const t of this.store.tables()) {
          const f = this.fractals.get(t.fractal_id);
          await this.archiver.exclusive(() =>
            maintainTable(backend, this.store, this.ch, t.fractal_id, {
              retentionDays: f?.archive_retention_days ?? null,
              snapshotKeepMs: this.config.archive.snapshotKeepMs,
            }),
          );
        }
        this.lastMaintenanceError = null;
      } catch (err) {
        this.lastMaintenanceError = (err as Error).message;
        this.log.error({ err: (err as Error).message }, 'archive maintenance failed; it runs again at its next interval');
      } finally {
        this.maintaining = null;
      }
    })();
    return this.maintaining;
  }
}
