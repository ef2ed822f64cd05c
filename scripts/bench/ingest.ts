// Ingest benchmark (issues: ingestion pipeline; 18, mixed logs). Prints figures; asserts nothing.
//
//   npm run bench:ingest [-- --mode mix|homogeneous --seed 18 --logs 1000000 --batch 5000 --connections 8]
//   npm run bench:ingest -- --burst [--preload 300000 --logs 600000 --idle-s 20]
//   --skip-engine: the service only (no engine-alone rates), to iterate on the service's memory
//
// The stream: `mix` (the default; `--mix` says it too) interleaves web access logs, Sysmon process
// creations, authentication, firewall and DNS records (12–16 fields, about 60 names in all,
// numbers, nested objects, about 390 bytes; support.ts mixedLog, seeded); `homogeneous` is one
// kind of web log of about 290 bytes (support.ts webLog).
//
// Throughput (the default):
// 1. Starts the appliance (`service/src/main.ts`) as a child process on a fresh data directory.
// 2. Sends the logs as NDJSON batches over N parallel connections and reports: accepted logs/s
//    (first byte sent → last 200), end-to-end logs/s (first byte sent → all countable by a query),
//    the peak resident memory of the service's process tree (VmHWM) and its CPU time.
// 3. In this process, with no service in front, inserts the same logs in the same batch size into
//    the embedded engine (2 inserts in flight) and reports its own rate: into the `logs` table
//    itself (the `JSON` column) and into a table whose fields are a `Map(String, String)`.
//
// --burst (searches during a burst): stores `--preload` logs, then runs an analyst's loop of four
// queries (one every 200 ms, in turn: errors grouped by host, a count of one event type, a
// field-exists filter, a contains search on user) for `--idle-s` seconds idle, then again while
// `--logs` more logs are sent as fast as they are accepted; prints p50/p95 of both and the ratio.
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import type { Client } from '../../tests/support/appliance.ts';
import { startService, threadCpuLines } from './ingest-run.ts';
import { makeIngestBatches, sendIngestBatches } from './ingest-load.ts';
import { fmt, freshDataDir } from './support.ts';

const { values: args } = parseArgs({
  options: {
    mode: { type: 'string', default: 'mix' },
    mix: { type: 'boolean', default: false },
    seed: { type: 'string', default: '18' },
    logs: { type: 'string' },
    batch: { type: 'string', default: '5000' },
    connections: { type: 'string', default: '8' },
    burst: { type: 'boolean', default: false },
    preload: { type: 'string', default: '300000' },
    'idle-s': { type: 'string', default: '20' },
    'skip-engine': { type: 'boolean', default: false },
  },
});
const MODE = args.mix ? 'mix' : args.mode;
if (MODE !== 'mix' && MODE !== 'homogeneous') throw new Error(`--mode is mix or homogeneous, not "${MODE}"`);
const SEED = Number(args.seed);
const TOTAL = Number(args.logs ?? (args.burst ? 600_000 : 1_000_000));
const PRELOAD = args.burst ? Number(args.preload) : 0;
const BATCH = Number(args.batch);
const CONNECTIONS = Number(args.connections);

const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');

const LOAD = { mode: MODE, seed: SEED, batch: BATCH, connections: CONNECTIONS } as const;

/** Logs [from, from + n) as NDJSON batches of BATCH lines, their timestamps ending now. */
const makeBatches = (from: number, n: number, t0: number) => makeIngestBatches(LOAD, from, n, t0);

const send = (base: string, token: string, admin: Client, fractalId: string, batches: Buffer[], expect: number) =>
  sendIngestBatches({ base, token, admin, fractalId, batches, expect, connections: CONNECTIONS });

/** The analyst's four queries (bench:ingest --burst): what a responder types while logs arrive. */
const ANALYST_QUERIES = ['level=error | groupBy(host)', 'event_type=process_creation | count()', 'rule_id=* | count()', 'user=~adm'];

/** Runs the analyst's loop (a query every 200 ms, in turn) until `until()`; the latencies in ms. */
async function analystLoop(admin: Client, fractalId: string, until: () => boolean): Promise<number[]> {
  const ms: number[] = [];
  for (let k = 0; !until(); k++) {
    const t0 = performance.now();
    const r = await admin.post('/api/v1/query', {
      query: ANALYST_QUERIES[k % ANALYST_QUERIES.length],
      fractal_id: fractalId,
      start: new Date(Date.now() - 7 * 86_400_000).toISOString(),
      end: new Date(Date.now() + 86_400_000).toISOString(),
    });
    if (r.status !== 200) throw new Error(`query answered ${r.status}: ${JSON.stringify(r.body).slice(0, 300)}`);
    const took = performance.now() - t0;
    ms.push(took);
    await new Promise((res) => setTimeout(res, Math.max(0, 200 - took)));
  }
  return ms;
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};

async function burst() {
  const t0 = Date.now() - (PRELOAD + TOTAL) * 3;
  console.log(`Preparing ${fmt(PRELOAD)} + ${fmt(TOTAL)} ${MODE} logs (seed ${SEED})...`);
  const pre = makeBatches(0, PRELOAD, t0);
  const more = makeBatches(PRELOAD, TOTAL, t0);
  const svc = await startService();
  console.log(`Storing ${fmt(PRELOAD)} logs first...`);
  await send(svc.base, svc.token, svc.admin, svc.fractalId, pre.batches, PRELOAD);
  const idleS = Number(args['idle-s']);
  console.log(`Analyst loop idle for ${idleS} s (load ${load()})...`);
  const idleEnd = performance.now() + idleS * 1000;
  const idle = await analystLoop(svc.admin, svc.fractalId, () => performance.now() > idleEnd);
  console.log(`Analyst loop while ${fmt(TOTAL)} more logs are sent (load ${load()})...`);
  let sending = true;
  const cpu0 = svc.cpu();
  const threads0 = svc.threads();
  const sent = send(svc.base, svc.token, svc.admin, svc.fractalId, more.batches, PRELOAD + TOTAL).finally(() => (sending = false));
  const during = await analystLoop(svc.admin, svc.fractalId, () => !sending);
  const s = await sent;
  const cpu = svc.cpu() - cpu0;
  const threads = threadCpuLines(threads0, svc.threads());
  const peak = svc.peakRss();
  const mem = svc.memory();
  await svc.close();
  const line = (name: string, xs: number[]) =>
    console.log(`${name.padEnd(27)}p50 ${fmt(pct(xs, 50))} ms, p95 ${fmt(pct(xs, 95))} ms, max ${fmt(Math.max(...xs))} ms (${xs.length} queries)`);
  console.log('');
  console.log(`queries                    ${ANALYST_QUERIES.join('  ·  ')}`);
  line('idle', idle);
  line('during the burst', during);
  console.log(`p95 burst / p95 idle       ${(pct(during, 95) / pct(idle, 95)).toFixed(2)}   (target ≤ 3)`);
  console.log(`burst                      ${fmt(TOTAL)} ${MODE} logs: accepted ${fmt(TOTAL / s.acceptedS)} logs/s, end to end ${fmt(TOTAL / s.storedS)} logs/s, ${s.retries429} batches retried after 429`);
  console.log(`service                    peak RSS ${(peak / 1024 / 1024).toFixed(0)} MB (largest JS heap ${(mem.heap / 1024 / 1024).toFixed(0)} MB), CPU ${cpu.toFixed(1)} s during the burst, by thread:`);
  for (const l of threads) console.log(`    ${l}`);
  console.log(`load average               ${load()}`);
}

async function throughput() {
  const t0 = Date.now() - TOTAL * 3; // one log every 3 ms, the last one now
  console.log(`Preparing ${fmt(TOTAL)} ${MODE} logs (seed ${SEED}) in batches of ${fmt(BATCH)}...`);
  const { batches, bytes } = makeBatches(0, TOTAL, t0);
  console.log(`  average log size ${Math.round(bytes / TOTAL)} bytes, ${(bytes / 1e6).toFixed(0)} MB in all`);
  const loadBefore = load();

  // ---- through the service ---------------------------------------------------------------------
  const svc = await startService();
  console.log(`Sending over ${CONNECTIONS} connections (load ${loadBefore})...`);
  const cpu0 = svc.cpu();
  const threads0 = svc.threads();
  const s = await send(svc.base, svc.token, svc.admin, svc.fractalId, batches, TOTAL);
  const serviceCpu = svc.cpu() - cpu0;
  const threads = threadCpuLines(threads0, svc.threads());
  const peakRss = svc.peakRss();
  const mem = svc.memory();
  await svc.close();
  const acceptedRate = TOTAL / s.acceptedS;
  const e2eRate = TOTAL / s.storedS;

  const mb = (b: number) => `${(b / 1024 / 1024).toFixed(0)} MB`;
  const serviceLines = () => {
    console.log(`logs                       ${fmt(TOTAL)} ${MODE} (seed ${SEED}, ${Math.round(bytes / TOTAL)} B each), batches of ${fmt(BATCH)}, ${CONNECTIONS} connections`);
    console.log(`accepted                   ${fmt(acceptedRate)} logs/s  (${s.acceptedS.toFixed(2)} s, ${s.retries429} batches retried after 429)`);
    console.log(`end to end (countable)     ${fmt(e2eRate)} logs/s  (${s.storedS.toFixed(2)} s, ${(s.storedS - s.acceptedS).toFixed(2)} s after the last 200)`);
    console.log(`service peak RSS (tree)    ${mb(peakRss)}, CPU ${serviceCpu.toFixed(1)} s`);
    console.log(`  largest samples          RSS ${mb(mem.rss)}, JS heap ${mb(mem.heap)}, Buffers/external ${mb(mem.external)} (the rest is mostly the engine's)`);
    console.log(`  CPU by thread (${(serviceCpu * 1e6 / TOTAL).toFixed(0)} µs a log in all):`);
    for (const l of threads) console.log(`    ${l}`);
  };
  if (args['skip-engine']) {
    console.log('');
    serviceLines();
    console.log(`load average               before ${loadBefore}, after ${load()}`);
    return;
  }

  // ---- the engine alone ------------------------------------------------------------------------
  console.log('Inserting the same logs into the embedded engine directly...');
  const engineDir = freshDataDir('bench-engine');
  const { loadConfig } = await import('../../service/src/config.ts');
  const { openAnalytics } = await import('../../service/src/storage/clickhouse.ts');
  const { migrateClickHouse } = await import('../../service/src/storage/clickhouse-migrations.ts');
  const { formatNs, parseTimestampNs } = await import('../../service/src/ingest/timestamps.ts');
  const ch = await openAnalytics(loadConfig({ SVC_DATA_DIR: engineDir }));
  await migrateClickHouse(ch);
  // The Map baseline: the logs table with its fields as text pairs (nested objects as their text).
  await ch.client.command({
    query: `CREATE TABLE ${ch.table('logs_map')} (fractal_id UUID, timestamp DateTime64(9, 'UTC'), ingest_timestamp DateTime64(9, 'UTC'),
      log_id UUID, raw String CODEC(ZSTD(1)), fields Map(String, String), fields_text String CODEC(ZSTD(1)))
      ENGINE = MergeTree PARTITION BY toYYYYMM(timestamp) ORDER BY (fractal_id, timestamp, log_id)`,
  });
  // Rows of the logs table itself, built beforehand so only the engine is timed: the fields as an
  // object, `fields_text` '' (the record's text is its fields), through the appliance's own insert.
  const fid = randomUUID();
  const now = formatNs(BigInt(Date.now()) * 1_000_000n);
  const rows = batches.map((b) =>
    Buffer.from(
      b
        .toString()
        .trimEnd()
        .split('\n')
        .map((line) => {
          const o = JSON.parse(line);
          return `{"fractal_id":"${fid}","timestamp":"${formatNs(parseTimestampNs(o.timestamp)!)}","ingest_timestamp":"${now}","log_id":"${randomUUID()}","raw":${JSON.stringify(line)},"fields":${line},"fields_text":""}`;
        })
        .join('\n') + '\n',
    ),
  );
  const engineRate = async (table: string) => {
    let k = 0;
    const e0 = performance.now();
    const c0 = process.cpuUsage();
    await Promise.all(
      [0, 1].map(async () => {
        for (;;) {
          const i = k++;
          if (i >= rows.length) return;
          await ch.insertFormatted(ch.table(table), 'JSONEachRow', rows[i]!);
        }
      }),
    );
    const c = process.cpuUsage(c0);
    return { rate: TOTAL / ((performance.now() - e0) / 1000), cpuS: (c.user + c.system) / 1e6 };
  };
  const json = await engineRate('logs');
  const map = await engineRate('logs_map');
  await ch.close();
  rmSync(engineDir, { recursive: true, force: true });

  console.log('');
  serviceLines();
  console.log(`engine alone, JSON column  ${fmt(json.rate)} logs/s  (${fmt(BATCH)}-row inserts, 2 in flight, CPU ${json.cpuS.toFixed(1)} s)`);
  console.log(`engine alone, Map column   ${fmt(map.rate)} logs/s  (same rows, CPU ${map.cpuS.toFixed(1)} s)`);
  console.log(`end to end / engine (JSON) ${(e2eRate / json.rate).toFixed(2)}`);
  console.log(`load average               before ${loadBefore}, after ${load()}`);
}

(args.burst ? burst() : throughput()).catch((err) => {
  console.error(err);
  process.exit(1);
});
