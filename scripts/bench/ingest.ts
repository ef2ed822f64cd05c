// Ingest benchmark (issue: ingestion pipeline). Prints figures; asserts nothing.
//
//   npm run bench:ingest [-- --logs 1000000 --batch 5000 --connections 8]
//
// 1. Starts the appliance (`service/src/main.ts`) as a child process on a fresh data directory.
// 2. Sends realistic ~300-byte JSON logs as NDJSON batches over N parallel connections and
//    reports: accepted logs/s (first byte sent → last 200), end-to-end logs/s (first byte sent →
//    all countable by a query), and the service's peak resident memory (VmHWM).
// 3. In this process, with no service in front, inserts the same number of rows in the same
//    batch size into the embedded engine (2 inserts in flight) and reports its own rate.
import { randomUUID } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { signIn } from '../../tests/support/appliance.ts';
import { startServiceProcess } from '../../tests/support/service-process.ts';
import { fmt, freshDataDir, webLog } from './support.ts';

const { values: args } = parseArgs({
  options: {
    logs: { type: 'string', default: '1000000' },
    batch: { type: 'string', default: '5000' },
    connections: { type: 'string', default: '8' },
  },
});
const TOTAL = Number(args.logs);
const BATCH = Number(args.batch);
const CONNECTIONS = Number(args.connections);

async function main() {
  const t0 = Date.now() - TOTAL * 3; // one log every 3 ms, the last one now
  console.log(`Preparing ${fmt(TOTAL)} logs in batches of ${fmt(BATCH)}...`);
  const batches: Buffer[] = [];
  let bytes = 0;
  for (let b = 0; b < TOTAL; b += BATCH) {
    const lines: string[] = [];
    for (let i = b; i < Math.min(TOTAL, b + BATCH); i++) lines.push(webLog(i, t0, 3));
    const buf = Buffer.from(lines.join('\n') + '\n');
    bytes += buf.length;
    batches.push(buf);
  }
  console.log(`  average log size ${Math.round(bytes / TOTAL)} bytes, ${(bytes / 1e6).toFixed(0)} MB in all`);

  // ---- through the service ---------------------------------------------------------------------
  const dataDir = freshDataDir('bench-ingest');
  const service = await startServiceProcess({
    dataDir,
    env: { SVC_ADMIN_PASSWORD: 'bench-password', SVC_INGEST_RATE_LIMIT: '100000', SVC_INGEST_RATE_BURST: '100000' },
    timeoutMs: 120_000, // a busy machine starts the service slowly
  });
  const { child, base } = service;
  const token = /Ingest token:\s+(svc_ingest_[0-9a-f]{32})/.exec(service.output())![1]!;
  const admin = await signIn(base, 'admin', 'bench-password');
  const fractalId = (await admin.get('/api/v1/fractals')).body.data[0].id as string;

  let peakRss = 0;
  const rssTimer = setInterval(() => {
    try {
      const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      if (m) peakRss = Math.max(peakRss, Number(m[1]) * 1024);
    } catch {
      /* exited */
    }
  }, 100);

  console.log(`Sending over ${CONNECTIONS} connections...`);
  let next = 0;
  let retries429 = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      for (;;) {
        const i = next++;
        if (i >= batches.length) return;
        for (;;) {
          const r = await fetch(`${base}/api/v1/ingest`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' },
            body: batches[i] as unknown as BodyInit,
          });
          const body = await r.text();
          if (r.status === 200) break;
          if (r.status !== 429) throw new Error(`ingest answered ${r.status}: ${body}`);
          retries429++;
          await new Promise((res) => setTimeout(res, 50));
        }
      }
    }),
  );
  const acceptedAt = performance.now();
  for (;;) {
    if ((await admin.get(`/api/v1/fractals/${fractalId}/stats`)).body.data.log_count >= TOTAL) break;
    await new Promise((r) => setTimeout(r, 25));
  }
  const storedAt = performance.now();
  clearInterval(rssTimer);
  await service.stop();
  rmSync(dataDir, { recursive: true, force: true });

  const acceptedRate = TOTAL / ((acceptedAt - start) / 1000);
  const e2eRate = TOTAL / ((storedAt - start) / 1000);

  // ---- the engine alone ------------------------------------------------------------------------
  console.log('Inserting the same rows into the embedded engine directly...');
  const engineDir = freshDataDir('bench-engine');
  const { loadConfig } = await import('../../service/src/config.ts');
  const { openAnalytics } = await import('../../service/src/storage/clickhouse.ts');
  const { migrateClickHouse } = await import('../../service/src/storage/clickhouse-migrations.ts');
  const { formatNs, parseTimestampNs } = await import('../../service/src/ingest/timestamps.ts');
  const ch = await openAnalytics(loadConfig({ SVC_DATA_DIR: engineDir }));
  await migrateClickHouse(ch);
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
  let k = 0;
  const e0 = performance.now();
  await Promise.all(
    [0, 1].map(async () => {
      for (;;) {
        const i = k++;
        if (i >= rows.length) return;
        await ch.insertFormatted(ch.table('logs'), 'JSONEachRow', rows[i]!);
      }
    }),
  );
  const engineRate = TOTAL / ((performance.now() - e0) / 1000);
  await ch.close();
  rmSync(engineDir, { recursive: true, force: true });

  console.log('');
  console.log(`logs                       ${fmt(TOTAL)} (${Math.round(bytes / TOTAL)} B each), batches of ${fmt(BATCH)}, ${CONNECTIONS} connections`);
  console.log(`accepted                   ${fmt(acceptedRate)} logs/s  (${((acceptedAt - start) / 1000).toFixed(2)} s, ${retries429} batches retried after 429)`);
  console.log(`end to end (countable)     ${fmt(e2eRate)} logs/s  (${((storedAt - start) / 1000).toFixed(2)} s)`);
  console.log(`service peak RSS           ${(peakRss / 1024 / 1024).toFixed(0)} MB`);
  console.log(`engine alone, ${fmt(BATCH)}-row inserts, 2 in flight: ${fmt(engineRate)} logs/s`);
  console.log(`end to end / engine alone  ${(e2eRate / engineRate).toFixed(2)}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
