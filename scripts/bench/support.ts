// Shared pieces of the benchmarks under scripts/bench: a fresh data directory, figures, generated
// web logs (ingest.ts, ui.ts). They start the appliance, sign in and drive Chromium with the
// tests' own helpers (tests/support/).
import { spawnSync } from 'node:child_process';
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

const hosts = Array.from({ length: 50 }, (_, i) => `web-${String(i).padStart(2, '0')}.dc1.example.net`);
const services = ['nginx', 'api-gateway', 'auth', 'billing', 'search', 'worker'];
const paths = ['/api/v1/orders', '/api/v1/users/42', '/login', '/static/app.js', '/api/v1/search?q=shoes', '/health'];
const levels = ['info', 'info', 'info', 'warn', 'error', 'debug'];
const users = ['alice', 'bob', 'carol', 'dave', 'eve', 'mallory', 'svc-backup'];

/**
 * Log number `i` as JSON text (about 290 bytes): a web request with host, service, level, client
 * address, method, path, status, bytes, latency, user and message, every value a fixed function of
 * `i`; its timestamp is `t0 + i * stepMs`.
 */
export function webLog(i: number, t0: number, stepMs: number): string {
  const r = (n: number) => (i * 2654435761 + n * 40503) % 1000003;
  return JSON.stringify({
    timestamp: new Date(t0 + i * stepMs).toISOString(),
    host: hosts[r(1) % hosts.length],
    service: services[r(2) % services.length],
    level: levels[r(3) % levels.length],
    src_ip: `10.${r(4) % 256}.${r(5) % 256}.${r(6) % 256}`,
    method: r(7) % 5 === 0 ? 'POST' : 'GET',
    path: paths[r(8) % paths.length],
    status: [200, 200, 200, 201, 304, 404, 500, 503][r(9) % 8],
    bytes: r(10) % 50000,
    latency_ms: (r(11) % 5000) / 10,
    user: users[r(12) % users.length],
    message: `request ${i} handled by ${services[r(2) % services.length]} for ${users[r(12) % users.length]}`,
  });
}

/**
 * python-evtx (Debian's python3-evtx, the oracle) over `files` in one Python process, rendering
 * every record's XML as evtx_dump.py prints it: its events and its own CPU and wall seconds.
 */
export function runPythonEvtx(files: string[]): { events: number; cpuS: number; wallS: number } {
  const script = [
    'import sys, time',
    'import Evtx.Evtx as evtx',
    'n = 0',
    't0 = time.process_time()',
    'w0 = time.perf_counter()',
    'for path in sys.argv[1:]:',
    '    with evtx.Evtx(path) as log:',
    '        for record in log.records():',
    '            record.xml()',
    '            n += 1',
    'print(n, time.process_time() - t0, time.perf_counter() - w0)',
  ].join('\n');
  const r = spawnSync('/usr/bin/python3', ['-c', script, ...files], { encoding: 'utf8', maxBuffer: 1 << 20 });
  if (r.status !== 0) throw new Error(`python-evtx failed: ${r.stderr}`);
  const [events, cpuS, wallS] = r.stdout.trim().split(' ').map(Number) as [number, number, number];
  return { events, cpuS, wallS };
}
