// Archive benchmark (issue 19, "Numbers"). Prints figures; asserts nothing.
//
//   npm run bench:archive [-- --logs 1000000 --archived 10000000 --runs 5 --chunk 1000000 --keep]
//   npm run bench:archive -- --reuse <dir>      (the archived dataset kept by an earlier --keep run)
//   --skip-ingest: only the search in place; --skip-search: only (a)-(c)
//
// (a) Ingest with the archive off, then on: bench:ingest's mixed logs (scripts/bench/ingest-load.ts and
//     ingest-run.ts: the same batches, sender and child-process service), end-to-end rate (first byte → all
//     countable in the hot store) and the service's CPU; with the archive on, also when the archive
//     had every log (rolls are cut by SVC_ARCHIVE_ROLL_S, 60 s by default).
// (b) The archive-on run's data directory: archived bytes per million logs (the catalog's file
//     sizes) beside the hot store's (active parts of `logs` on disk, as the engine left them).
// (c) The same directory opened in this process: the fractal's hot logs deleted, then restored from
//     the archive (reconcile: every archived log) — logs/s beside (a)'s ingest rate.
// (d) Search in place: `--archived` logs of the query benchmark (scripts/bench/query-data.ts, seven
//     days) written as archived Parquet by the archive's own writer (Archiver.archiveInserted: the
//     engine generates the rows into the staging table, the roll writer makes the Parquet files and
//     the Iceberg metadata), none of them in the hot store; then the query benchmark's
//     field-equality query (`user=<rank-200 user>`) over one of the seven days through
//     POST /api/v1/query: one warm-up and `--runs` timed runs, wall and CPU time, the scan reported.
// CPU times are this process's (c, d: the appliance runs in it) or the service's (a); the load
// average is printed with them (the machine is shared).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ADMIN_PASSWORD, signIn, startTestAppliance } from '../../tests/support/appliance.ts';
import { makeIngestBatches, sendIngestBatches } from './ingest-load.ts';
import { cpuSeconds, startService } from './ingest-run.ts';
import { generatorParams, generatorSql, PROBE_USER } from './query-data.ts';
import { fmt, freshDataDir, median } from './support.ts';

const { values: args } = parseArgs({
  options: {
    logs: { type: 'string', default: '1000000' },
    archived: { type: 'string', default: '10000000' },
    runs: { type: 'string', default: '5' },
    chunk: { type: 'string', default: '1000000' },
    keep: { type: 'boolean', default: false },
    reuse: { type: 'string' },
    'skip-ingest': { type: 'boolean', default: false },
    'skip-search': { type: 'boolean', default: false },
  },
});
const LOGS = Number(args.logs);
const ARCHIVED = Number(args.archived);
const RUNS = Number(args.runs);
const CHUNK = Number(args.chunk);
const DAY_MS = 86_400_000;
const BATCH = 5000;
const CONNECTIONS = 8;

const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');
const cpuOfThisProcess = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1e6;
};
const mb = (b: number) => `${(b / 1024 / 1024).toFixed(1)} MB`;
const figures: string[] = [];
const say = (line: string) => {
  console.log(line);
  figures.push(line);
};

async function waitUntil<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30 * 60_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** (a), (b), (c). */
async function ingestAndRestore(): Promise<void> {
  const t0 = Date.now() - LOGS * 3;
  console.log(`Preparing ${fmt(LOGS)} mixed logs (seed 18) in batches of ${fmt(BATCH)}...`);
  const { batches, bytes } = makeIngestBatches({ mode: 'mix', seed: 18, batch: BATCH, connections: CONNECTIONS }, 0, LOGS, t0);

  const run = async (archive: boolean) => {
    const svc = await startService({ keepDataDir: archive });
    if (archive) {
      const r = await svc.admin.put('/api/v1/archive', { enabled: true });
      if (r.status !== 200) throw new Error(`switching the archive on answered ${r.status}: ${JSON.stringify(r.body)}`);
    }
    const loadBefore = load();
    const cpu0 = svc.cpu();
    const s = await sendIngestBatches({ base: svc.base, token: svc.token, admin: svc.admin, fractalId: svc.fractalId, batches, expect: LOGS, connections: CONNECTIONS });
    const cpu = svc.cpu() - cpu0;
    let archivedS: number | undefined;
    let status: { size_bytes: number; files: number; logs: number } | undefined;
    if (archive) {
      const a0 = performance.now();
      status = await waitUntil('the archive to hold every log', async () => {
        const st = (await svc.admin.get(`/api/v1/fractals/${svc.fractalId}/archive`)).body.data;
        return st.logs >= LOGS && st.lag_logs === 0 ? st : undefined;
      });
      archivedS = s.storedS + (performance.now() - a0) / 1000;
    }
    const cpuAll = cpuSeconds(svc.child.pid!);
    await svc.close();
    return { s, cpu, cpuAll, archivedS, status, dataDir: svc.dataDir, fractalId: svc.fractalId, loadBefore, loadAfter: load() };
  };
  console.log(`(a) ingest, archive off (load ${load()})...`);
  const off = await run(false);
  console.log(`(a) ingest, archive on (load ${load()})...`);
  const on = await run(true);
  const rateOff = LOGS / off.s.storedS;
  const rateOn = LOGS / on.s.storedS;
  say(`(a) logs                        ${fmt(LOGS)} mixed (${Math.round(bytes / LOGS)} B each), batches of ${fmt(BATCH)}, ${CONNECTIONS} connections`);
  say(`(a) end to end, archive off     ${fmt(rateOff)} logs/s  (${off.s.storedS.toFixed(1)} s; service CPU ${off.cpu.toFixed(1)} s; load ${off.loadBefore} → ${off.loadAfter})`);
  say(`(a) end to end, archive on      ${fmt(rateOn)} logs/s  (${on.s.storedS.toFixed(1)} s; service CPU ${on.cpu.toFixed(1)} s; load ${on.loadBefore} → ${on.loadAfter})`);
  say(`(a) loss with the archive on    ${(100 * (1 - rateOn / rateOff)).toFixed(1)} % of the rate (target ≤ 10 %); CPU ${(100 * (on.cpu / off.cpu - 1)).toFixed(1)} % more`);
  say(`(a) every log archived after    ${on.archivedS!.toFixed(1)} s (rolls every SVC_ARCHIVE_ROLL_S); service CPU in all, start included ${on.cpuAll.toFixed(1)} s`);

  // (b) and (c): the archive-on run's directory, opened in this process.
  console.log(`(c) opening ${on.dataDir} in this process...`);
  const app = await startTestAppliance({ SVC_ADMIN_PASSWORD: 'bench-password', SVC_QUERY_TIMEOUT_S: '600' }, on.dataDir);
  try {
    const ch = app.context.ch;
    const rs = await ch.client.query({
      query: `SELECT sum(bytes_on_disk) AS b FROM system.parts WHERE database = {db:String} AND table = 'logs' AND active`,
      query_params: { db: ch.database },
      format: 'JSONEachRow',
    });
    const hotBytes = Number(((await rs.json()) as Array<{ b: string }>)[0]!.b);
    const archivedBytes = on.status!.size_bytes;
    say(`(b) archived per million logs   ${mb((archivedBytes / LOGS) * 1e6)} (${on.status!.files} Parquet files, zstd)`);
    say(`(b) hot store per million logs  ${mb((hotBytes / LOGS) * 1e6)} (active parts of logs on disk, unmerged as ingest left them)`);

    await app.context.logs.deleteFractal(on.fractalId);
    const admin = await signIn(app.url, 'admin', 'bench-password');
    const c0 = cpuOfThisProcess();
    const r0 = performance.now();
    const job = (await admin.post(`/api/v1/fractals/${on.fractalId}/archive/reconcile`, {})).body.data;
    const done = await waitUntil('the restore', async () => {
      const j = (await admin.get(`/api/v1/archive/jobs/${job.id}`)).body.data;
      return j.status === 'running' ? undefined : j;
    });
    const restoreS = (performance.now() - r0) / 1000;
    const restoreCpu = cpuOfThisProcess() - c0;
    if (done.status !== 'done') throw new Error(`the restore ended ${done.status}: ${done.error}`);
    const restoreRate = done.restored / restoreS;
    say(`(c) restore                     ${fmt(done.restored)} logs in ${restoreS.toFixed(1)} s = ${fmt(restoreRate)} logs/s, CPU ${restoreCpu.toFixed(1)} s (load ${load()})`);
    say(`(c) restore / ingest (off)      ${(restoreRate / rateOff).toFixed(2)} (target ≥ 0.5)`);
  } finally {
    await app.dispose();
    console.log(`(a-c) data directory left at ${on.dataDir} (remove it when done)`);
  }
}

/** (d) */
async function searchInPlace(): Promise<void> {
  const reuse = args.reuse ? path.resolve(args.reuse) : undefined;
  const dataDir = reuse ?? freshDataDir('bench-archive');
  const stateFile = path.join(dataDir, 'bench-archive.json');
  if (reuse && !existsSync(stateFile)) throw new Error(`${reuse} holds no bench-archive.json: not a directory kept by --keep`);
  console.log(`(d) starting the appliance in this process on ${dataDir}...`);
  const app = await startTestAppliance({ SVC_QUERY_TIMEOUT_S: '600', SVC_ARCHIVE_ROLL_S: '3600' }, dataDir);
  try {
    const admin = await signIn(app.url, 'admin', ADMIN_PASSWORD);
    let st: { fractalId: string; logs: number; startMs: number; endMs: number; buildS?: number; buildCpuS?: number };
    if (reuse) {
      st = JSON.parse(readFileSync(stateFile, 'utf8'));
      console.log(`(d) reusing ${fmt(st.logs)} archived logs of fractal ${st.fractalId}`);
    } else {
      const f = await admin.post('/api/v1/fractals', { name: 'archived', description: 'bench:archive search in place' });
      if (f.status !== 201) throw new Error(`creating the fractal answered ${f.status}`);
      const on = await admin.put('/api/v1/archive', { enabled: true });
      if (on.status !== 200) throw new Error(`switching the archive on answered ${on.status}`);
      const endMs = Math.floor(Date.now() / DAY_MS) * DAY_MS; // whole days: one ingest day per event day
      st = { fractalId: f.body.data.id, logs: ARCHIVED, startMs: endMs - 7 * DAY_MS, endMs };
      console.log(`(d) writing ${fmt(ARCHIVED)} archived logs in chunks of ${fmt(CHUNK)} through the archive's writer...`);
      const b0 = performance.now();
      const c0 = cpuOfThisProcess();
      for (let first = 0; first < ARCHIVED; first += CHUNK) {
        const count = Math.min(CHUNK, ARCHIVED - first);
        await app.context.archive.archiver.archiveInserted((stage) => generatorSql(stage), generatorParams(st, first, count), `bench-${String(first).padStart(10, '0')}`);
        console.log(`  ${fmt(first + count)} / ${fmt(ARCHIVED)} (${((performance.now() - b0) / 1000).toFixed(0)} s)`);
      }
      st.buildS = (performance.now() - b0) / 1000;
      st.buildCpuS = cpuOfThisProcess() - c0;
      writeFileSync(stateFile, JSON.stringify(st, null, 2));
    }
    const status = app.context.archive.status(st.fractalId);
    say(`(d) archive                     ${fmt(status.logs)} logs, ${status.files} files, ${mb(status.size_bytes)}${st.buildS ? ` (written in ${st.buildS.toFixed(0)} s, CPU ${st.buildCpuS!.toFixed(0)} s)` : ''}`);

    const dayStart = st.startMs + 3 * DAY_MS;
    const body = { query: `user=${PROBE_USER}`, fractal_id: st.fractalId, start: new Date(dayStart).toISOString(), end: new Date(dayStart + DAY_MS - 1).toISOString() };
    const times: number[] = [];
    const cpus: number[] = [];
    let last: any;
    for (let i = 0; i <= RUNS; i++) {
      const c0 = cpuOfThisProcess();
      const t0 = performance.now();
      const r = await admin.post('/api/v1/query', body);
      const ms = performance.now() - t0;
      if (r.status !== 200) throw new Error(`the query answered ${r.status}: ${JSON.stringify(r.body).slice(0, 300)}`);
      last = r.body;
      if (i === 0) console.log(`  warm-up ${ms.toFixed(0)} ms, ${last.count} rows`);
      else {
        times.push(ms);
        cpus.push((cpuOfThisProcess() - c0) * 1000);
      }
    }
    const a = last.archive ?? { files_scanned: 0, bytes_scanned: 0, rows_scanned: 0 };
    say(`(d) one day, \`${body.query}\`   p50 ${median(times).toFixed(0)} ms (target < 2000), runs ${times.map((t) => t.toFixed(0)).join(' ')} ms; CPU p50 ${median(cpus).toFixed(0)} ms; ${last.count} rows`);
    say(`(d) scanned                     ${a.files_scanned} files, ${mb(a.bytes_scanned)}, ${fmt(a.rows_scanned)} archived rows (load ${load()})`);
  } finally {
    await app.dispose();
    if (!reuse && !args.keep) {
      const { rmSync } = await import('node:fs');
      rmSync(dataDir, { recursive: true, force: true });
    } else console.log(`(d) kept: npm run bench:archive -- --skip-ingest --reuse ${dataDir}`);
  }
}

async function main() {
  const c0 = cpuOfThisProcess();
  if (!args['skip-ingest']) await ingestAndRestore();
  if (!args['skip-search']) await searchInPlace();
  console.log('\n---- figures ----');
  for (const l of figures) console.log(l);
  console.log(`this process's CPU ${(cpuOfThisProcess() - c0).toFixed(1)} s; load average now ${load()}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
