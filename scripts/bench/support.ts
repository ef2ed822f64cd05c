// Shared pieces of the benchmarks under scripts/bench: a fresh data directory, the appliance
// in this process (query.ts), admin sign-in, figures. The child process (ingest.ts) is
// tests/support/service-process.ts.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export const root = path.resolve(import.meta.dirname, '../..');

/** A new, empty data directory under the system's temporary directory. */
export const freshDataDir = (prefix: string): string => mkdtempSync(path.join(tmpdir(), `${prefix}-`));

/** Thousands separators, no decimals. */
export const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Signs in and returns the session cookie (`name=value`) to send on later requests. */
export async function signIn(base: string, username: string, password: string): Promise<string> {
  const r = await fetch(`${base}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password }),
  });
  if (!r.ok) throw new Error(`sign-in as ${username} answered ${r.status}: ${await r.text()}`);
  return r.headers.get('set-cookie')!.split(';')[0]!;
}

/**
 * The appliance in this process on `dataDir` (first start: the generated admin password is
 * read back from `<dataDir>/initial-admin-password` by the caller). `env` holds SVC_* settings.
 */
export async function startInProcessAppliance(dataDir: string, env: Record<string, string> = {}) {
  const { loadConfig } = await import('../../service/src/config.ts');
  const { startAppliance } = await import('../../service/src/appliance.ts');
  const config = loadConfig({ SVC_DATA_DIR: dataDir, SVC_PORT: '0', SVC_HOST: '127.0.0.1', SVC_LOG_LEVEL: 'warn', ...env });
  return startAppliance(config, { log: false });
}
