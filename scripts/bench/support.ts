// Shared pieces of the benchmarks under scripts/bench: a fresh data directory, the appliance
// started as a child process (ingest.ts) or in this process (query.ts), admin sign-in, figures.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
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

export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
}

/** Waits until GET /api/v1/health answers 200 (about 30 s at most). */
export async function waitForHealth(base: string, describe: () => string = () => ''): Promise<void> {
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${base}/api/v1/health`)).ok) return;
    } catch {
      /* starting */
    }
    if (i > 300) throw new Error(`service did not start:\n${describe()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
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

export interface ChildAppliance {
  child: ChildProcess;
  base: string;
  port: number;
  /** Everything the service printed on stdout so far. */
  output(): string;
  stop(): Promise<void>;
}

/** `service/src/main.ts` as a child process on `dataDir`, listening on a free loopback port. */
export async function startChildAppliance(dataDir: string, env: Record<string, string> = {}): Promise<ChildAppliance> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, ['--import', 'tsx', 'service/src/main.ts'], {
    cwd: root,
    env: { ...process.env, SVC_DATA_DIR: dataDir, SVC_PORT: String(port), SVC_HOST: '127.0.0.1', SVC_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  await waitForHealth(base, () => out);
  return {
    child,
    base,
    port,
    output: () => out,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
  };
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
