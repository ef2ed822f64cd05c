// Per-client login throttle: after `max` failures within `windowMs`, further attempts from that
// address are refused with 429 until the window passes. Successful logins clear the count.
export class LoginLimiter {
  private failures = new Map<string, number[]>();
  constructor(
    private readonly max = 10,
    private readonly windowMs = 5 * 60_000,
  ) {}

  /** Seconds until the client may try again, or 0. */
  retryAfter(client: string, now = Date.now()): number {
    const recent = (this.failures.get(client) ?? []).filter((t) => now - t < this.windowMs);
    this.failures.set(client, recent);
    if (recent.length < this.max) return 0;
    return Math.ceil((recent[0]! + this.windowMs - now) / 1000);
  }
  fail(client: string, now = Date.now()): void {
    const list = this.failures.get(client) ?? [];
    list.push(now);
    this.failures.set(client, list);
    if (this.failures.size > 10_000) this.sweep(now);
  }
  succeed(client: string): void {
    this.failures.delete(client);
  }
  private sweep(now: number): void {
    for (const [k, v] of this.failures) if (!v.some((t) => now - t < this.windowMs)) this.failures.delete(k);
  }
}
