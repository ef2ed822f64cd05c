// Per-fractal retention (days) and disk quota, enforced on a timer and right after an admin
// changes them, without a restart. A fractal over a `reject` quota refuses new logs (ingest asks
// isBlocked); over a `rollover` quota its oldest logs are deleted until it fits.
import type { FractalRow, FractalsStore } from '../tenancy/fractals-store.ts';
import type { LogStore } from './log-store.ts';

export class RetentionEnforcer {
  private blocked = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  /**
   * While the archive is on, the instant before which every ingested log is archived: retention
   * and quota delete only logs ingested before it (archive/archiver.ts `archivedBefore`).
   */
  archiveGate: () => Date | null = () => null;

  constructor(
    private readonly fractals: FractalsStore,
    private readonly logs: LogStore,
    private readonly onError: (err: Error, fractal: string) => void,
  ) {}

  isBlocked(fractalId: string): boolean {
    return this.blocked.has(fractalId);
  }
  get blockedFractals(): string[] {
    return [...this.blocked];
  }

  start(intervalMs: number): void {
    this.timer = setInterval(() => void this.enforceAll(), intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  enforceAll(): Promise<void> {
    this.running ??= (async () => {
      try {
        for (const f of this.fractals.list()) await this.enforce(f);
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }

  async enforce(f: FractalRow | string): Promise<void> {
    const fractal = typeof f === 'string' ? this.fractals.get(f) : f;
    if (!fractal) {
      if (typeof f === 'string') this.blocked.delete(f);
      return;
    }
    try {
      if (fractal.retention_days) await this.logs.deleteOlderThan(fractal.id, fractal.retention_days, this.archiveGate());
      if (!fractal.quota_bytes) {
        this.blocked.delete(fractal.id);
      } else {
        let stats = await this.logs.stats(fractal.id);
        if (stats.size_bytes > fractal.quota_bytes && fractal.quota_action === 'rollover') {
          await this.logs.trimToSize(fractal.id, fractal.quota_bytes, this.archiveGate());
          stats = await this.logs.stats(fractal.id);
        }
        if (fractal.quota_action === 'reject' && stats.size_bytes >= fractal.quota_bytes) this.blocked.add(fractal.id);
        else this.blocked.delete(fractal.id);
        this.fractals.saveStats(fractal.id, stats);
      }
    } catch (err) {
      this.onError(err as Error, fractal.id);
    }
  }
}
