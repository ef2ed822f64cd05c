// Waiting for a condition instead of sleeping. Tests run on shared machines (2 cores, a load average
// of 15 while others work, CI the same), where anything asynchronous can take many times longer than
// on an idle machine: a test waits for what it expects to happen, never for an amount of time, and
// its deadline only bounds how long a failing test takes to say so. A passing test never waits for it.

/** The deadline of every wait in the tests unless one has a reason for another. */
export const WAIT_MS = 120_000;

/** Polls `check` until it returns a value that is not undefined/false, or fails after `timeoutMs`. */
export async function waitFor<T>(what: string, check: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = WAIT_MS): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== false) return v as T;
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
