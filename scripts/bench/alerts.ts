// Alert benchmark (issue 13). Prints figures; asserts nothing.
//
//   npm run bench:alerts [-- --rate 20000 --seconds 180 --alerts 200 --interval 60]
//
// Two runs of the appliance (`service/src/main.ts` as a child process, fresh data each), both fed a
// steady `rate` logs/s for `seconds`: first with no alert, then with `alerts` enabled alerts (event
// alerts with mixed filters and regexes, and a few compound ones), each delivering to a webhook
// receiver in this process. Reported: the ingest rate of both runs (accepted, and stored end to end),
// every alert tick's duration against the interval (from the service's "alert tick" log lines), and
// whether each event alert's webhook got exactly the matching logs: none missed, none twice
// (counted per log against the same filters evaluated here on what the service accepted).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { rmSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { signIn } from '../../tests/support/appliance.ts';
import { startServiceProcess } from '../../tests/support/service-process.ts';
import { fmt, freshDataDir, median } from './support.ts';

const { values: args } = parseArgs({
  options: {
    rate: { type: 'string', default: '20000' },
    seconds: { type: 'string', default: '180' },
    alerts: { type: 'string', default: '200' },
    interval: { type: 'string', default: '60' },
  },
});
const RATE = Number(args.rate);
const SECONDS = Number(args.seconds);
const ALERTS = Number(args.alerts);
const INTERVAL = Number(args.interval);
const BATCH = 2000;

// ---- the logs: web requests with a sequence number ----------------------------------------------

const hosts = Array.from({ length: 40 }, (_, i) => `web-${String(i).padStart(2, '0')}`);
const users = ['alice', 'bob', 'carol', 'dave', 'eve', 'mallory', 'svc-backup', 'trent'];
const paths = ['/api/v1/orders', '/api/v1/users/42', '/login', '/static/app.js', '/api/v1/search', '/admin/export', '/health'];
const statuses = [200, 200, 200, 201, 304, 401, 403, 404, 500, 503];
const methods = ['GET', 'GET', 'GET', 'POST', 'PUT', 'DELETE'];

interface Log {
  seq: number;
  host: string;
  user: string;
  path: string;
  status: number;
  method: string;
  bytes: number;
  message: string;
}

function makeLog(seq: number): Log {
  const r = (n: number) => Math.floor(((seq + 1) * 2654435761 + n * 40503) % 1000003);
  const host = hosts[r(1) % hosts.length]!;
  const user = users[r(2) % users.length]!;
  const path = paths[r(3) % paths.length]!;
  const status = statuses[r(4) % statuses.length]!;
  const method = methods[r(5) % methods.length]!;
  return { seq, host, user, path, status, method, bytes: r(6) % 50_000, message: `${method} ${path} by ${user} on ${host} -> ${status}` };
}

// ---- the alerts: a query each, and the same filter in JavaScript -----------------------------------

interface BenchAlert {
  query: string;
  type: 'event' | 'compound';
  /** The event alert's filter on one log (compound alerts are not counted). */
  matches?: (l: Log) => boolean;
}

function makeAlerts(n: number): BenchAlert[] {
  const out: BenchAlert[] = [];
  for (let i = 0; out.length < n; i++) {
    const host = hosts[i % hosts.length]!;
    const user = users[(i * 3) % users.length]!;
    const status = statuses[(i * 7) % statuses.length]!;
    const method = methods[(i * 5) % methods.length]!;
    const path = paths[(i * 11) % paths.length]!;
    switch (i % 8) {
      case 0:
        out.push({ query: `host=${host} user=${user} status=${status}`, type: 'event', matches: (l) => l.host === host && l.user === user && l.status === status });
        break;
      case 1:
        out.push({ query: `host=${host} method=${method} path=/admin/`, type: 'event', matches: (l) => l.host === host && l.method === method && l.path.includes('/admin') });
        break;
      case 2:
        out.push({ query: `user=${user} status>=500 host=${host}`, type: 'event', matches: (l) => l.user === user && l.status >= 500 && l.host === host });
        break;
      case 3:
        out.push({ query: `host=${host} message=/by ${user} on/ status!=200 method=${method}`, type: 'event', matches: (l) => l.host === host && l.message.includes(`by ${user} on`) && l.status !== 200 && l.method === method });
        break;
      case 4:
        out.push({ query: `path="${path}" host=${host} user=${user}`, type: 'event', matches: (l) => l.path === path && l.host === host && l.user === user });
        break;
      case 5:
        out.push({ query: `host=/^${host}$/ status=${status} bytes<5000`, type: 'event', matches: (l) => l.host === host && l.status === status && l.bytes < 5000 });
        break;
      case 6:
        out.push({ query: `in(user, values=[${user}, trent]) host=${host} status=401`, type: 'event', matches: (l) => (l.user === user || l.user === 'trent') && l.host === host && l.status === 401 });
        break;
      default:
        if (out.filter((a) => a.type === 'compound').length < Math.max(1, Math.floor(n / 40))) {
          out.push({ query: `status=503 host=${host} | groupBy(user) | _count > 3`, type: 'compound' });
        } else {
          out.push({ query: `user=${user} host=${host} method=${method} status=${status}`, type: 'event', matches: (l) => l.user === user && l.host === host && l.method === method && l.status === status });
        }
    }
  }
  return out;
}

// ---- the webhook receiver ------------------------------------------------------------------------

class Receiver {
  /** Per alert id: seq → in how many distinct deliveries it came. */
  readonly seen = new Map<string, Map<number, number>>();
  private deliveries = new Set<string>();
  requests = 0;
  bytes = 0;
  private server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      this.requests++;
      const body = Buffer.concat(chunks);
      this.bytes += body.length;
      const id = String(req.headers['x-alert-delivery-id'] ?? '');
      if (!this.deliveries.has(id)) {
        this.deliveries.add(id);
        const p = JSON.parse(body.toString('utf8')) as { alert_id: string; results: Array<{ seq?: string | number }> };
        const m = this.seen.get(p.alert_id) ?? new Map<number, number>();
        for (const r of p.results) if (r.seq !== undefined) m.set(Number(r.seq), (m.get(Number(r.seq)) ?? 0) + 1);
        this.seen.set(p.alert_id, m);
      }
      res.writeHead(200).end('ok');
    });
  });
  url = '';
  async start() {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }
  stop() {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(r));
  }
}

// ---- one run ---------------------------------------------------------------------------------------

interface RunResult {
  accepted: number;
  acceptedPerS: number;
  storedPerS: number;
  behind: number;
  ticks: Array<{ duration_ms: number; windows: number; fired: number; failed: number; overran: boolean }>;
  missed: number;
  duplicated: number;
  expected: number;
  delivered: number;
  receiver: Receiver | null;
}

async function run(withAlerts: boolean): Promise<RunResult> {
  const dataDir = freshDataDir(`bench-alerts-${withAlerts ? 'on' : 'off'}`);
  const service = await startServiceProcess({
    dataDir,
    env: {
      SVC_ADMIN_PASSWORD: 'bench-password',
      SVC_INGEST_RATE_LIMIT: '100000',
      SVC_INGEST_RATE_BURST: '100000',
      SVC_ALERT_INTERVAL_S: String(INTERVAL),
      SVC_LOG_LEVEL: 'info',
    },
    timeoutMs: 120_000,
  });
  const { base } = service;
  const admin = await signIn(base, 'admin', 'bench-password');
  const fractalId = (await admin.get('/api/v1/fractals')).body.data[0].id as string;
  const token = /Ingest token:\s+(svc_ingest_[0-9a-f]{32})/.exec(service.output())![1]!;

  let receiver: Receiver | null = null;
  const alertIds: Array<{ id: string; alert: BenchAlert }> = [];
  if (withAlerts) {
    receiver = new Receiver();
    await receiver.start();
    const hook = (await admin.post('/api/v1/webhooks', { name: 'bench', url: receiver.url, fractal_id: fractalId, retry_count: 5 })).body.data;
    for (const [i, a] of makeAlerts(ALERTS).entries()) {
      const r = await admin.post('/api/v1/alerts', { name: `bench ${i}`, fractal_id: fractalId, query_string: a.query, alert_type: a.type, webhook_action_ids: [hook.id] });
      if (r.status !== 201) throw new Error(`alert ${i} (${a.query}) refused: ${JSON.stringify(r.body)}`);
      alertIds.push({ id: r.body.data.id, alert: a });
    }
    console.log(`  ${alertIds.length} alerts (${alertIds.filter((a) => a.alert.type === 'compound').length} compound) on one webhook`);
  }

  // A steady rate: one batch every BATCH/RATE seconds, on schedule; a late batch is not made up.
  const accepted: Log[] = [];
  const total = RATE * SECONDS;
  const periodMs = (BATCH / RATE) * 1000;
  let seq = 0;
  let behind = 0;
  const inFlight = new Set<Promise<void>>();
  const t0 = performance.now();
  for (let b = 0; seq < total; b++) {
    const due = t0 + b * periodMs;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    else if (wait < -periodMs) behind++;
    const logs = Array.from({ length: BATCH }, () => makeLog(seq++));
    const body = logs.map((l) => JSON.stringify(l)).join('\n');
    const p: Promise<void> = fetch(`${base}/api/v1/ingest`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' }, body })
      .then(async (r) => {
        await r.text();
        if (r.status === 200) for (const l of logs) accepted.push(l);
      })
      .catch(() => undefined)
      .finally(() => inFlight.delete(p));
    inFlight.add(p);
    if (inFlight.size > 64) await Promise.race(inFlight);
  }
  await Promise.all(inFlight);
  const acceptedS = (performance.now() - t0) / 1000;
  // Stored: countable by a query.
  for (;;) {
    const r = await admin.post('/api/v1/query', { query: '* | count()', fractal_id: fractalId, start: '2000-01-01T00:00:00Z' });
    if (Number(r.body.results?.[0]?._count ?? 0) >= accepted.length) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const storedS = (performance.now() - t0) / 1000;

  let missed = 0;
  let duplicated = 0;
  let expected = 0;
  let delivered = 0;
  if (withAlerts && receiver) {
    const want = alertIds
      .filter((a) => a.alert.matches)
      .map((a) => ({ id: a.id, seqs: accepted.filter((l) => a.alert.matches!(l)).map((l) => l.seq) }));
    expected = want.reduce((s, w) => s + w.seqs.length, 0);
    const done = () => want.every((w) => w.seqs.every((s) => receiver!.seen.get(w.id)?.has(s)));
    const until = Date.now() + (3 * INTERVAL + 120) * 1000;
    while (!done() && Date.now() < until) await new Promise((r) => setTimeout(r, 1000));
    for (const w of want) {
      const got = receiver.seen.get(w.id) ?? new Map();
      for (const s of w.seqs) if (!got.has(s)) missed++;
      for (const [, n] of got) {
        delivered++;
        if (n > 1) duplicated++;
      }
    }
  }
  const ticks = service
    .output()
    .split('\n')
    .filter((l) => l.includes('"alert tick'))
    .map((l) => JSON.parse(l) as { duration_ms: number; windows: number; fired: number; failed: number; overran: boolean });
  await service.stop('SIGTERM');
  await receiver?.stop();
  rmSync(dataDir, { recursive: true, force: true });
  return {
    accepted: accepted.length,
    acceptedPerS: accepted.length / acceptedS,
    storedPerS: accepted.length / storedS,
    behind,
    ticks,
    missed,
    duplicated,
    expected,
    delivered,
    receiver,
  };
}

async function main() {
  console.log(`Alert benchmark: ${fmt(RATE)} logs/s for ${SECONDS} s, ${ALERTS} alerts, tick every ${INTERVAL} s`);
  console.log(`Machine: ${cpus().length} cores, load average ${loadavg().map((x) => x.toFixed(2)).join(' ')} (1, 5, 15 min) before the runs`);
  console.log('Run 1: no alerts');
  const off = await run(false);
  console.log(`  accepted ${fmt(off.accepted)} logs: ${fmt(off.acceptedPerS)} logs/s accepted, ${fmt(off.storedPerS)} logs/s stored end to end; batches late: ${off.behind}`);
  console.log(`  load average now ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  console.log(`Run 2: ${ALERTS} alerts`);
  const on = await run(true);
  console.log(`  accepted ${fmt(on.accepted)} logs: ${fmt(on.acceptedPerS)} logs/s accepted, ${fmt(on.storedPerS)} logs/s stored end to end; batches late: ${on.behind}`);
  const durations = on.ticks.map((t) => t.duration_ms);
  console.log(
    `  ticks: ${on.ticks.length}, duration median ${fmt(durations.length ? median(durations) : 0)} ms, max ${fmt(Math.max(0, ...durations))} ms against ${fmt(INTERVAL * 1000)} ms; overran: ${on.ticks.filter((t) => t.overran).length}; failed evaluations: ${on.ticks.reduce((s, t) => s + t.failed, 0)}`,
  );
  console.log(`  per tick (ms): ${durations.map((d) => fmt(d)).join(', ')}`);
  console.log(`  webhook: ${fmt(on.receiver?.requests ?? 0)} requests, ${(((on.receiver?.bytes ?? 0) as number) / 1e6).toFixed(1)} MB`);
  console.log(`  matches of the event alerts: expected ${fmt(on.expected)}, delivered ${fmt(on.delivered)}, missed ${on.missed}, delivered twice ${on.duplicated}`);
  const drop = 1 - on.storedPerS / off.storedPerS;
  console.log(`Ingest rate with alerts against without (stored end to end): ${(100 * (1 - drop)).toFixed(1)} % (a drop of ${(100 * drop).toFixed(1)} %; target: at most 15 %)`);
  console.log(`Load average after the runs: ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
