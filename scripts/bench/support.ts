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

// ---- the heterogeneous mix (bench:ingest --mix) ------------------------------------------------

const dcHosts = Array.from({ length: 40 }, (_, i) => `srv-${String(i).padStart(3, '0')}.corp.example`);
const workstations = Array.from({ length: 60 }, (_, i) => `WS-${String(1000 + i)}`);
const people = ['alice', 'bob', 'carol', 'dave', 'eve', 'mallory', 'trent', 'peggy', 'victor', 'svc-backup', 'admin', 'sysadmin'];
const images = ['C:\\Windows\\System32\\cmd.exe', 'C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe', 'C:\\Program Files\\Mozilla Firefox\\firefox.exe', 'C:\\Windows\\explorer.exe', 'C:\\Windows\\System32\\rundll32.exe', 'C:\\Windows\\System32\\svchost.exe'];
const domains = ['www.example.com', 'updates.vendor.net', 'login.microsoftonline.com', 'cdn.jsdelivr.net', 'x7f3k9.badsite.ru', 'mail.corp.example', 'api.github.com'];
const agents = ['Mozilla/5.0 (Windows NT 10.0; Win64; x64)', 'curl/8.5.0', 'python-requests/2.31', 'Mozilla/5.0 (X11; Linux x86_64)'];

/**
 * Log number `i` of a heterogeneous stream seeded by `seed` (about 385 bytes on average): web
 * access logs, Sysmon process creations, authentication events, firewall and DNS records
 * interleaved, 12–16 fields each (about 60 distinct names in all), some numbers, some nested
 * objects. Every value is a fixed function of `seed` and `i`; its timestamp is `t0 + i * stepMs`.
 * `event_type` names the kind; `level`, `host` and `user` are shared by most kinds.
 */
export function mixedLog(i: number, t0: number, stepMs: number, seed: number): string {
  // A 32-bit mix of (seed, i, n): cheap, and independent enough between fields for a benchmark.
  const r = (n: number) => {
    let h = Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(i + 1, 0xc2b2ae35) ^ Math.imul(n + 7, 0x27d4eb2f);
    h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d);
    h = Math.imul(h ^ (h >>> 12), 0x297a2d39);
    return (h ^ (h >>> 15)) >>> 0;
  };
  const pick = <T>(xs: T[], n: number): T => xs[r(n) % xs.length]!;
  const ip = (n: number) => `10.${r(n) % 256}.${r(n + 1) % 256}.${r(n + 2) % 256}`;
  const timestamp = new Date(t0 + i * stepMs).toISOString();
  const level = pick(['info', 'info', 'info', 'warn', 'error', 'debug'], 1);
  const user = pick(people, 2);
  switch (r(0) % 5) {
    case 0:
      return JSON.stringify({
        timestamp, event_type: 'web', host: pick(dcHosts, 3), service: pick(['nginx', 'api-gateway', 'billing'], 4), level,
        src_ip: ip(5), method: r(8) % 5 === 0 ? 'POST' : 'GET', path: pick(['/api/v1/orders', '/login', '/static/app.js', '/admin/index.php', '/api/v1/search?q=shoes'], 9),
        status: pick([200, 200, 200, 201, 304, 404, 500, 503], 10), bytes: r(11) % 50000, latency_ms: (r(12) % 5000) / 10, user,
        user_agent: pick(agents, 13), http: { request_id: r(16).toString(36), version: pick(['1.1', '2'], 14), referrer: pick(['-', 'https://www.example.com/', 'https://search.example/'], 15) },
        message: `${pick(['GET', 'POST'], 8)} request ${i} answered`,
      });
    case 1: {
      const image = pick(images, 3);
      return JSON.stringify({
        timestamp, event_type: 'process_creation', EventID: 1, host: pick(workstations, 4), level,
        Image: image, CommandLine: `${image.slice(image.lastIndexOf('\\') + 1)} ${pick(['-nop -w hidden -enc SQBFAFgA', '/c whoami', '--new-window', '/S /D', ''], 5)}`,
        ParentImage: pick(images, 6), ProcessId: r(7) % 65536, ParentProcessId: r(8) % 65536, user: `CORP\\${user}`,
        IntegrityLevel: pick(['Medium', 'High', 'System'], 9), Hashes: { md5: r(10).toString(16).padStart(8, '0').repeat(4), sha1: r(11).toString(16).padStart(8, '0').repeat(5) },
        Company: pick(['Microsoft Corporation', 'Mozilla Corporation', '-'], 13),
        RuleName: pick(['-', 'technique_id=T1059.001', 'technique_id=T1218'], 12),
      });
    }
    case 2:
      return JSON.stringify({
        timestamp, event_type: 'auth', host: pick(dcHosts, 3), service: pick(['sshd', 'sso', 'vpn'], 4), level, user,
        src_ip: ip(5), outcome: r(8) % 7 === 0 ? 'failure' : 'success', auth_method: pick(['password', 'publickey', 'saml', 'totp'], 9),
        realm: pick(['CORP', 'EXT'], 16), session_id: r(10).toString(36) + r(11).toString(36), mfa: r(12) % 2 === 0, attempts: 1 + (r(13) % 5),
        geo: { country: pick(['US', 'DE', 'FR', 'BR', 'CN', 'IN'], 14), city: pick(['Berlin', 'Paris', 'Austin', 'Recife', 'Pune'], 15) },
        message: `authentication ${r(8) % 7 === 0 ? 'failed' : 'succeeded'} for ${user}`,
      });
    case 3:
      return JSON.stringify({
        timestamp, event_type: 'firewall', host: pick(['fw-edge-1', 'fw-edge-2', 'fw-core'], 3), level, action: pick(['allow', 'allow', 'deny', 'drop'], 4),
        src_ip: ip(5), dst_ip: ip(8), src_port: 1024 + (r(11) % 60000), dst_port: pick([22, 53, 80, 443, 445, 3389, 8080], 12), protocol: pick(['tcp', 'udp', 'icmp'], 13),
        rule_id: r(14) % 500, bytes_in: r(15) % 100000, bytes_out: r(16) % 100000, interface: pick(['eth0', 'eth1', 'wan0'], 17),
        zone: { src: pick(['lan', 'dmz', 'wan'], 18), dst: pick(['lan', 'dmz', 'wan'], 19) }
      });
    default:
      return JSON.stringify({
        timestamp, event_type: 'dns', host: pick(['dns-1.corp.example', 'dns-2.corp.example'], 3), level, client_ip: ip(4),
        query: `${pick(['www', 'mail', 'cdn', 'api', 'a1b2c3'], 7)}.${pick(domains, 8)}`, qtype: pick(['A', 'AAAA', 'CNAME', 'TXT', 'MX'], 9),
        rcode: pick(['NOERROR', 'NOERROR', 'NXDOMAIN', 'SERVFAIL'], 10), answer_count: r(11) % 6, ttl: r(12) % 86400, latency_ms: (r(13) % 2000) / 10,
        resolver: pick(['unbound', 'bind'], 14), transport: pick(['udp', 'tcp', 'doh'], 17), user, flags: { rd: true, ra: r(15) % 9 !== 0, ad: r(16) % 2 === 0 },
        message: `query answered with ${pick(['NOERROR', 'NXDOMAIN'], 10)}`,
      });
  }
}
