// Scheduled feed syncs (node-schedule). Each enabled feed with a schedule other than `never` has
// one job, at its last sync plus its period (an hour, a day, a week, a calendar month; a feed
// never synced is due at once), so a sync missed while the appliance was off runs when it starts
// again, and a manual sync moves the next one out. Any change of a feed plans it again.
import schedule, { type Job } from 'node-schedule';
import type { Feed, FeedsStore } from './feeds-store.ts';

const HOUR = 3_600_000;
const PERIOD_MS: Record<string, number> = { hourly: HOUR, daily: 24 * HOUR, weekly: 7 * 24 * HOUR };
/** Nothing is planned sooner than this from now (a due feed at start waits for start-up to settle). */
const MIN_DELAY_MS = 1_000;

/** When a feed's next scheduled sync is due, or null when it has none. */
export function nextSyncAt(f: Pick<Feed, 'enabled' | 'sync_schedule' | 'last_sync_at'>, now = new Date()): Date | null {
  if (f.enabled !== 1 || f.sync_schedule === 'never') return null;
  const last = f.last_sync_at ? new Date(f.last_sync_at) : null;
  let due: Date;
  if (!last) due = now;
  else if (f.sync_schedule === 'monthly') {
    due = new Date(last);
    due.setUTCMonth(due.getUTCMonth() + 1);
  } else due = new Date(last.getTime() + PERIOD_MS[f.sync_schedule]!);
  return new Date(Math.max(due.getTime(), now.getTime() + MIN_DELAY_MS));
}

export class FeedScheduler {
  private jobs = new Map<string, Job>();
  private stopped = false;

  constructor(
    private readonly feeds: FeedsStore,
    /** Runs one scheduled sync (the sync records its own outcome; errors are logged by it). */
    private readonly run: (feedId: string) => Promise<unknown>,
  ) {}

  start(): void {
    for (const f of this.feeds.all()) this.plan(f.id);
    this.feeds.onChange((id) => this.plan(id));
  }

  /** The planned time of a feed's next sync (for the feeds page), or null. */
  next(feedId: string): Date | null {
    return this.jobs.get(feedId)?.nextInvocation() ?? null;
  }

  plan(feedId: string): void {
    this.jobs.get(feedId)?.cancel();
    this.jobs.delete(feedId);
    if (this.stopped) return;
    const f = this.feeds.get(feedId);
    const at = f ? nextSyncAt(f) : null;
    if (!at) return;
    const job = schedule.scheduleJob(at, () => {
      this.jobs.delete(feedId);
      void this.run(feedId).finally(() => this.plan(feedId));
    });
    if (job) this.jobs.set(feedId, job);
  }

  stop(): void {
    this.stopped = true;
    for (const j of this.jobs.values()) j.cancel();
    this.jobs.clear();
  }
}
