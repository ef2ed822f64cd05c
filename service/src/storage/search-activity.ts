// Searches in flight, so ingest can give way to them: the analyst first, the shipper queues and
// is pushed back (429) if storage falls behind. Analytics.streamRows counts every SELECT it streams
// for someone waiting (query routes, histograms, log context, notebooks, an alert's preview), not
// the background ones (the alert engine, dashboard widgets, case exports: `background`); the
// ingest queue waits for a moment with none before it starts its next insert (ingest/queue.ts).
import { RunningCount } from './running-count.ts';

export class SearchActivity extends RunningCount {
  private idleWaiters: Array<() => void> = [];
  /** When the last search ended (performance.now()), 0 before any. */
  lastEndedAt = 0;

  protected ended(): void {
    this.lastEndedAt = performance.now();
    if (this.running === 0) for (const w of this.idleWaiters.splice(0)) w();
  }

  /** Resolves when no search runs, or after `maxWaitMs` at the latest (so ingest never starves). */
  whenIdle(maxWaitMs: number): Promise<void> {
    if (this.running === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, maxWaitMs);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.idleWaiters.push(done);
    });
  }
}
