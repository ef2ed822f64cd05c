// Sign-in throttle. An attempt is recorded before its password is checked (so parallel guesses
// cannot all pass the check first), under the client address and the user name together: after
// `maxPerUser` failures within `windowMs` that address may not try that name again until the window
// passes, while other names from the same address (people behind one NAT) still can; a looser
// `maxPerAddress` bounds guessing across many names from one address. A successful sign-in clears
// only its own name's count, never another account's.
export class LoginLimiter {
  private attempts = new Map<string, number[]>();
  constructor(
    private readonly maxPerUser = 10,
    private readonly windowMs = 5 * 60_000,
    private readonly maxPerAddress = 50,
  ) {}

  /**
   * Records an attempt of `username` from `client` before the password is checked: 0 when it may
   * go on, else the seconds until it may (and nothing is recorded).
   */
  attempt(client: string, username: string, now = Date.now()): number {
    const keys: Array<[string, number]> = [
      [userKey(client, username), this.maxPerUser],
      [client, this.maxPerAddress],
    ];
    let wait = 0;
    for (const [key, max] of keys) {
      const recent = this.recent(key, now);
      if (recent.length >= max) wait = Math.max(wait, Math.ceil((recent[recent.length - max]! + this.windowMs - now) / 1000));
    }
    if (wait > 0) return wait;
    for (const [key] of keys) this.recent(key, now).push(now);
    if (this.attempts.size > 20_000) this.sweep(now);
    return 0;
  }

  /** The attempt succeeded: that name's count from this address is cleared, and the attempt is not held against the address. */
  succeeded(client: string, username: string): void {
    this.attempts.delete(userKey(client, username));
    this.attempts.get(client)?.pop();
  }

  private recent(key: string, now: number): number[] {
    const list = (this.attempts.get(key) ?? []).filter((t) => now - t < this.windowMs);
    this.attempts.set(key, list);
    return list;
  }

  private sweep(now: number): void {
    for (const [k, v] of this.attempts) if (!v.some((t) => now - t < this.windowMs)) this.attempts.delete(k);
  }
}

const userKey = (client: string, username: string) => `${client}\u0000${username.toLowerCase()}`;
