// The appliance the way `npm start` runs it: `service/src/main.ts` as a child process on a loopback
// port, for tests and benchmarks that need a real process (first-start output, kill -9, its memory).
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '../..');

/** A loopback TCP port that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
}

export interface ServiceProcess {
  child: ChildProcess;
  port: number;
  /** `http://127.0.0.1:<port>` */
  base: string;
  /** Everything the service printed so far, stdout and stderr. */
  output(): string;
  /** Sends `signal` (SIGTERM: a graceful stop) and resolves with the exit code once it has exited. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts the service on `dataDir` (SVC_LOG_LEVEL warn, `env` on top) and resolves once
 * GET /api/v1/health answers 200; fails with its output when it exits first, or kills it after
 * `timeoutMs`.
 * `port` (default: a free one) lets a restart come back on the same address.
 */
export async function startServiceProcess(opts: {
  dataDir: string;
  port?: number;
  env?: Record<string, string>;
  timeoutMs?: number;
}): Promise<ServiceProcess> {
  const port = opts.port ?? (await freePort());
  const base = `http://127.0.0.1:${port}`;
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const t0 = Date.now();
  const child = spawn(process.execPath, ['--import', 'tsx', 'service/src/main.ts'], {
    cwd: root,
    env: { ...process.env, SVC_DATA_DIR: opts.dataDir, SVC_PORT: String(port), SVC_HOST: '127.0.0.1', SVC_LOG_LEVEL: 'warn', ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const stop = (signal: NodeJS.Signals = 'SIGTERM') =>
    new Promise<number | null>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
      child.once('exit', (code) => resolve(code));
      child.kill(signal);
    });
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the service exited with code ${child.exitCode}; output:\n${out}`);
    if (Date.now() - t0 > timeoutMs) {
      await stop('SIGKILL');
      throw new Error(`not healthy within ${timeoutMs / 1000} s; output:\n${out}`);
    }
    try {
      if ((await fetch(`${base}/api/v1/health`)).ok) break;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { child, port, base, output: () => out, stop };
}
