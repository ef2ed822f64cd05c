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
  /** Sends `signal` (SIGTERM: a graceful stop) and resolves with the exit code once it has exited and all it printed was read. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts the service on `dataDir` (SVC_LOG_LEVEL warn, `env` on top) and resolves once it has
 * printed where it listens and GET /api/v1/health answers 200; fails with its output when it exits
 * first, or kills it after `timeoutMs` (generous: a start under load takes many times longer).
 * Without `port` it listens on port 0, the port the system gives it: a port picked beforehand
 * can be taken by another process's connection before the service binds it.
 */
export async function startServiceProcess(opts: {
  dataDir: string;
  port?: number;
  env?: Record<string, string>;
  timeoutMs?: number;
  /** Options for node itself before the script (a benchmark's `--cpu-prof`). */
  nodeArgs?: string[];
}): Promise<ServiceProcess> {
  const timeoutMs = opts.timeoutMs ?? 180_000;
  const t0 = Date.now();
  // As `npm start` runs it: with the service's environment file (bundled-config/service.env).
  const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), `--env-file=${path.join(root, 'bundled-config', 'service.env')}`, '--import', 'tsx', 'service/src/main.ts'], {
    cwd: root,
    env: { ...process.env, SVC_DATA_DIR: opts.dataDir, SVC_PORT: String(opts.port ?? 0), SVC_HOST: '127.0.0.1', SVC_LOG_LEVEL: 'warn', ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  // 'close' comes after the exit and after its output was read to the end.
  const closed = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const stop = (signal: NodeJS.Signals = 'SIGTERM') => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    return closed;
  };
  let port = 0;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the service exited with code ${child.exitCode}; output:\n${out}`);
    if (Date.now() - t0 > timeoutMs) {
      await stop('SIGKILL');
      throw new Error(`not healthy within ${timeoutMs / 1000} s; output:\n${out}`);
    }
    // main.ts prints "UI and API:   http://127.0.0.1:<port>/" once the listener is bound.
    port ||= Number(/UI and API: +http:\/\/127\.0\.0\.1:(\d+)\//.exec(out)?.[1] ?? 0);
    try {
      if (port && (await fetch(`http://127.0.0.1:${port}/api/v1/health`)).ok) break;
    } catch {
      /* not answering yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { child, port, base: `http://127.0.0.1:${port}`, output: () => out, stop };
}
