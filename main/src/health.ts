// Polls the service's health endpoint until it answers healthy, so the window never opens
// on a half-started service (the listener can be bound before storage is ready).
import { setTimeout as sleep } from 'node:timers/promises';

export interface WaitForHealthOptions {
  /** Give up after this long (whole wait, not per request). */
  timeoutMs?: number;
  /** Pause between attempts. */
  intervalMs?: number;
  /** Defaults to the global fetch (present in Node 20 and Electron's main process). */
  fetch?: typeof globalThis.fetch;
  /** Stops the wait early (the user quit while the service was starting). */
  signal?: AbortSignal;
}

export class HealthTimeoutError extends Error {}

const PER_REQUEST_CAP_MS = 5_000;
const NO_ATTEMPT = 'no attempt made';

/**
 * Resolves once `GET {url}/api/v1/health` returns 200 with `{"status":"healthy"}`;
 * rejects with HealthTimeoutError naming the last failure when timeoutMs runs out,
 * or with the abort reason when `signal` fires.
 */
export async function waitForHealth(url: string, opts: WaitForHealthOptions = {}): Promise<void> {
  const { timeoutMs = 30_000, intervalMs = 250, fetch = globalThis.fetch, signal } = opts;
  const endpoint = `${url.replace(/\/+$/, '')}/api/v1/health`;
  const deadline = Date.now() + timeoutMs;
  let last = NO_ATTEMPT;
  for (;;) {
    signal?.throwIfAborted();
    const remaining = deadline - Date.now();
    if (remaining <= 0) break;
    // A hung request must not eat the whole budget unnoticed: cap each one.
    const capMs = Math.min(remaining, PER_REQUEST_CAP_MS);
    try {
      const cap = AbortSignal.timeout(capMs);
      const res = await fetch(endpoint, { signal: signal ? AbortSignal.any([cap, signal]) : cap });
      const body = await res.text(); // always drain, so the socket is released
      if (res.status === 200) {
        let status: unknown = null;
        try {
          status = (JSON.parse(body) as { status?: unknown }).status ?? null;
        } catch {
          // not JSON: reported below as status null
        }
        if (status === 'healthy') return;
        last = `HTTP 200 with status ${JSON.stringify(status)}`;
      } else {
        last = `HTTP ${res.status}`;
      }
    } catch (e) {
      signal?.throwIfAborted();
      const err = e as Error & { cause?: { code?: string; message?: string } };
      if (err.name === 'TimeoutError') {
        // Cut short by the overall deadline: the answer before it says more than this one.
        if (capMs === PER_REQUEST_CAP_MS || last === NO_ATTEMPT) last = `no answer within ${capMs} ms`;
      } else {
        // fetch wraps the socket error ("ECONNREFUSED" …) in `cause`; that is the useful part.
        last = err.cause?.code ?? err.cause?.message ?? err.message;
      }
    }
    const wait = Math.min(intervalMs, deadline - Date.now());
    if (wait <= 0) break;
    // An aborted sleep rejects with a generic AbortError; surface the caller's reason instead.
    await sleep(wait, undefined, { signal }).catch((e) => {
      signal?.throwIfAborted();
      throw e;
    });
  }
  throw new HealthTimeoutError(`service at ${url} did not become healthy within ${timeoutMs} ms (last: ${last})`);
}
