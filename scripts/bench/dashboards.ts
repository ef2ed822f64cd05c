// Dashboard benchmark (issue 16, "Numbers"). Prints figures; asserts nothing.
//
//   npm run bench:dashboards -- --reuse <dataDir>   (a directory kept by `npm run bench:query -- --keep`)
//   npm run bench:dashboards                        (first loads the query benchmark's 10M logs itself, and keeps them)
//   options: --runs 3 --concurrency 1,2,4 --rate 200 --public-seconds 30 --refresh 10 --public-only
//            --shared-read-trial (only the trial of step 5)
//
// 1. Starts the appliance IN THIS PROCESS on the query benchmark's data directory (10M logs over 7
//    days in fractal "bench"; without --reuse it runs `scripts/bench/query.ts --keep` first, which
//    loads them, and reuses what it kept).
// 2. Makes a dashboard of 12 widgets an analyst would put on a SOC overview of that data (time
//    charts, groupBy bars and pies, single values, a regex filter, a histogram) over the 7 days.
// 3. Times each widget alone (POST …/widgets/{id}/execute) and the whole dashboard (POST …/execute)
//    at each bound of widget queries run at once (--concurrency), one warm-up then --runs timed
//    runs, the engine's query condition cache emptied before every call (as bench:query does).
//    Target: the whole dashboard in no more than 1.5× its slowest widget alone.
// 4. Shares the dashboard (refresh --refresh seconds) and sends GET /api/v1/shared/{token} at --rate
//    requests a second for --public-seconds from a separate process (http-load.ts: open loop on a
//    fixed schedule, keep-alive; latency from when each request was due), counting the widget
//    queries the service ran and the statements that reached the engine. Target: the rate holds
//    (served as offered, every answer a 200) with at most one query per widget per interval.
// 5. With --shared-read-trial, instead: what sharing one read of the range could save. Each widget's
//    statement as query-service compiles it, run alone; one statement reading every path the widgets
//    read once (the floor of any shared scan); and the range copied once into a Memory table whose
//    `fields` is a named Tuple of Dynamic paths, each widget's statement run on the copy (results
//    compared with each alone). CPU time of this process, the condition cache dropped before each.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Context } from '../../service/src/context.ts';
import { DashboardRuns } from '../../service/src/dashboards/widget-runs.ts';
import { prepareScopeQuery } from '../../service/src/query/query-service.ts';
import { chTime } from '../../service/src/storage/clickhouse.ts';
import { signIn, startTestAppliance, type Client } from '../../tests/support/appliance.ts';
import { runLoad } from './http-load.ts';
import { fmt, median, root } from './support.ts';

const { values: args } = parseArgs({
  options: {
    reuse: { type: 'string' },
    runs: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '1,2,4' },
    rate: { type: 'string', default: '200' },
    'public-seconds': { type: 'string', default: '30' },
    refresh: { type: 'string', default: '10' },
    'public-only': { type: 'boolean', default: false },
    'shared-read-trial': { type: 'boolean', default: false },
  },
});
const RUNS = Number(args.runs);
const BOUNDS = args.concurrency!.split(',').map(Number);
const RATE = Number(args.rate);
const PUBLIC_S = Number(args['public-seconds']);
const REFRESH_S = Number(args.refresh);

const WIDGETS: Array<{ title: string; query: string; chart: string }> = [
  { title: 'Events per hour', query: 'timechart(span=1h)', chart: 'auto' },
  { title: 'Events by source', query: 'groupBy(source)', chart: 'piechart' },
  { title: 'Web status codes', query: 'source=nginx | groupBy(status)', chart: 'barchart' },
  { title: 'Server errors by host', query: 'status>=500 | groupBy(host) | sort(_count, order=desc) | limit(20)', chart: 'barchart' },
  { title: 'Top users', query: 'groupBy(user) | sort(_count, order=desc) | limit(10)', chart: 'barchart' },
  { title: 'Failed logons by user', query: 'event_id=4625 | groupBy(user) | sort(_count, order=desc) | limit(10)', chart: 'table' },
  { title: 'Events', query: 'count()', chart: 'singleval' },
  { title: 'PowerShell or cmd', query: 'image=~powershell,cmd | count()', chart: 'singleval' },
  { title: 'Admin page probes', query: 'url=/admin\\/.*\\.php/ | groupBy(host)', chart: 'barchart' },
  { title: 'Destination ports', query: 'event_id=3 | groupBy(dst_port)', chart: 'piechart' },
  { title: 'Response sizes', query: 'source=nginx | histogram(bytes, buckets=20)', chart: 'auto' },
  { title: 'Logons per hour by outcome', query: 'source=windows-security | groupBy(outcome) | timechart(span=1h)', chart: 'auto' },
];

interface Kept {
  fractalId: string;
  logs: number;
  startMs: number;
  endMs: number;
  password: string;
}

/** The query benchmark's data directory: the one named, else made by running it with --keep. */
function dataDirectory(): string {
  if (args.reuse) return path.resolve(args.reuse);
  console.log('No --reuse: loading the query benchmark’s data first (npm run bench:query -- --keep, no queries timed)...');
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/bench/query.ts', '--keep', '--only', '(load only: no query has this name)'], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  process.stdout.write(r.stdout ?? '');
  const kept = /Data kept in (\S+) /.exec(r.stdout ?? '')?.[1];
  if (r.status !== 0 || !kept) throw new Error('the query benchmark did not keep a data directory');
  return kept;
}

/** Wall time, and CPU time of this whole process (the service and the embedded engine's threads). */
async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; cpuMs: number; value: T }> {
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const value = await fn();
  const c = process.cpuUsage(c0);
  return { ms: performance.now() - t0, cpuMs: (c.user + c.system) / 1000, value };
}

const load = () => loadavg().map((x) => x.toFixed(2)).join(', ');

function expectOk(res: { status: number; body: any }, what: string): any {
  if (res.status >= 300 || res.body?.success !== true) throw new Error(`${what} answered ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`);
  return res.body.data;
}

async function main() {
  const dataDir = dataDirectory();
  const stateFile = path.join(dataDir, 'bench-query.json');
  if (!existsSync(stateFile)) throw new Error(`${dataDir} holds no bench-query.json: not a directory kept by bench:query --keep`);
  const state = JSON.parse(readFileSync(stateFile, 'utf8')) as Kept;
  console.log(`Starting the appliance in this process on ${dataDir} (${fmt(state.logs)} logs)...`);
  const appliance = await startTestAppliance({ SVC_QUERY_TIMEOUT_S: '600' }, dataDir);
  const ctx = appliance.context;
  try {
    const admin: Client = await signIn(appliance.url, 'admin', state.password);
    const name = `bench dashboard ${new Date().toISOString().slice(0, 19)}`;
    const d = expectOk(
      await admin.post('/api/v1/dashboards', { name, fractal_id: state.fractalId, time_range: 'custom', start: new Date(state.startMs).toISOString(), end: new Date(state.endMs).toISOString() }),
      'creating the dashboard',
    );
    const widgets: Array<{ id: string; title: string }> = [];
    for (const [i, w] of WIDGETS.entries()) {
      const made = expectOk(
        await admin.post(`/api/v1/dashboards/${d.id}/widgets`, { title: w.title, query_content: w.query, chart_type: w.chart, pos_x: (i % 3) * 4, pos_y: Math.floor(i / 3) * 4, width: 4, height: 4 }),
        `adding "${w.title}"`,
      );
      widgets.push({ id: made.id, title: w.title });
    }
    const forget = () => ctx.ch.client.command({ query: 'SYSTEM DROP QUERY CONDITION CACHE' });
    const runOne = async (id: string) => {
      await forget();
      const r = await timed(() => admin.post(`/api/v1/dashboards/${d.id}/widgets/${id}/execute`, { max_age_s: 0 }));
      expectOk(r.value, 'running a widget');
      return r;
    };
    const runAll = async () => {
      await forget();
      const r = await timed(() => admin.post(`/api/v1/dashboards/${d.id}/execute`, { max_age_s: 0 }));
      const data = expectOk(r.value, 'running the dashboard');
      const failed = (data.results as Array<{ success: boolean; error?: string }>).filter((x) => !x.success);
      if (failed.length) throw new Error(`${failed.length} widgets failed: ${failed[0]!.error}`);
      return r;
    };

    if (args['shared-read-trial']) {
      await sharedReadTrial(ctx, state);
      return;
    }

    // ---- each widget alone -------------------------------------------------------------------------
    const alone: Array<{ title: string; ms: number; cpuMs: number; rows: number }> = [];
    console.log(`Load average at start: ${load()}`);
    if (!args['public-only']) console.log(`Timing each widget alone: 1 warm-up + ${RUNS} runs...`);
    for (const w of args['public-only'] ? [] : widgets) {
      await runOne(w.id);
      const times: number[] = [];
      const cpu: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const r = await runOne(w.id);
        times.push(r.ms);
        cpu.push(r.cpuMs);
      }
      const rows = expectOk(await admin.post(`/api/v1/dashboards/${d.id}/widgets/${w.id}/execute`, { max_age_s: 3600 }), 'reading a result').count as number;
      alone.push({ title: w.title, ms: median(times), cpuMs: median(cpu), rows });
      console.log(`  ${w.title.padEnd(28)} ${median(times).toFixed(0).padStart(6)} ms  CPU ${median(cpu).toFixed(0).padStart(6)} ms  (${rows} rows)`);
    }
    const slowest = alone.reduce((a, b) => (b.ms > a.ms ? b : a), alone[0] ?? { title: '-', ms: NaN, cpuMs: NaN, rows: 0 });
    const sum = alone.reduce((n, w) => n + w.ms, 0);
    const cpuSum = alone.reduce((n, w) => n + w.cpuMs, 0);

    // ---- the whole dashboard, at each bound ----------------------------------------------------------
    const allByBound: Array<{ bound: number; ms: number; cpuMs: number; peak: number }> = [];
    for (const bound of args['public-only'] ? [] : BOUNDS) {
      ctx.dashboardRuns = new DashboardRuns(bound);
      await runAll();
      const times: number[] = [];
      const cpu: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const r = await runAll();
        times.push(r.ms);
        cpu.push(r.cpuMs);
      }
      allByBound.push({ bound, ms: median(times), cpuMs: median(cpu), peak: ctx.dashboardRuns.peakActive });
      console.log(`  all 12 at most ${bound} at once: ${median(times).toFixed(0)} ms  CPU ${median(cpu).toFixed(0)} ms`);
    }
    ctx.dashboardRuns = new DashboardRuns();

    // ---- public reads of a shared link ------------------------------------------------------------------
    expectOk(await admin.put('/api/v1/settings', { shared_links_enabled: true }), 'enabling shared links');
    expectOk(await admin.put(`/api/v1/dashboards/${d.id}/refresh-interval`, { refresh_interval_s: REFRESH_S }), 'setting the refresh interval');
    const link = expectOk(await admin.post(`/api/v1/dashboards/${d.id}/shared-links`, { label: 'bench' }), 'making a shared link');
    const publicUrl = `${appliance.url}/api/v1/shared/${link.token}`;
    let statements = 0;
    const stream = ctx.ch.streamRows;
    ctx.ch.streamRows = (...a: Parameters<typeof stream>) => {
      statements++;
      return stream.apply(ctx.ch, a);
    };
    // Statements sent without rows (command(): DDL, INSERT … SELECT) count too.
    const command = ctx.ch.client.command;
    ctx.ch.client.command = ((...a: Parameters<typeof command>) => {
      statements++;
      return command.apply(ctx.ch.client, a);
    }) as typeof command;
    // One read first, outside the window: it builds the shared answer (and runs the widgets if their
    // results are older than the interval); the window then holds the steady state and its refreshes.
    const warm = await timed(() => fetch(publicUrl).then((r) => r.text()));
    console.log(`  first public read (builds the answer): ${warm.ms.toFixed(0)} ms`);
    const q0 = ctx.dashboardRuns.queriesRun;
    const s0 = statements;
    console.log(`Public reads: ${RATE} requests/s for ${PUBLIC_S} s on a link of a dashboard refreshing every ${REFRESH_S} s...`);
    const c0 = process.cpuUsage();
    // How long the service's event loop was held up at a time: blocked by its own work, or not given the CPU.
    const loopDelay = monitorEventLoopDelay({ resolution: 10 });
    loopDelay.enable();
    const pub = await runLoad(publicUrl, RATE, PUBLIC_S);
    loopDelay.disable();
    const pubCpu = process.cpuUsage(c0);
    const queries = ctx.dashboardRuns.queriesRun - q0;
    const engine = statements - s0;
    ctx.ch.streamRows = stream;
    ctx.ch.client.command = command;
    // Within the window the results come due at most once per interval (the last may just start).
    const allowed = WIDGETS.length * (Math.floor(pub.seconds / REFRESH_S) + 1);

    // ---- the figures -----------------------------------------------------------------------------------
    console.log('');
    console.log(`${fmt(state.logs)} logs over 7 days (the query benchmark's set); dashboard of ${WIDGETS.length} widgets over all 7 days; medians of ${RUNS} runs after a warm-up,`);
    console.log(`the engine's query condition cache emptied before every call. 2-core machine shared with other work: figures are noisy.`);
    console.log('');
    console.log(`Load average at the end: ${load()}`);
    if (alone.length) console.log(`Slowest widget alone: ${slowest.title}, ${slowest.ms.toFixed(0)} ms (CPU ${slowest.cpuMs.toFixed(0)} ms). Sum of all 12 alone: ${sum.toFixed(0)} ms (CPU ${cpuSum.toFixed(0)} ms).`);
    for (const a of allByBound) {
      const ratio = a.ms / slowest.ms;
      console.log(
        `Whole dashboard, at most ${a.bound} widget queries at once: ${a.ms.toFixed(0)} ms = ${ratio.toFixed(2)}× the slowest alone (${(a.ms / sum).toFixed(2)}× their sum); CPU ${a.cpuMs.toFixed(0)} ms = ${(a.cpuMs / slowest.cpuMs).toFixed(2)}× the slowest's CPU (${(a.cpuMs / cpuSum).toFixed(2)}× their sum); peak ${a.peak} at once  ${ratio <= 1.5 ? 'target met' : 'TARGET (≤ 1.5×) NOT MET'}`,
      );
    }
    console.log('');
    const non200 = Object.values(pub.statuses).reduce((n, k) => n + k, 0);
    const held = pub.offeredPerS >= RATE * 0.98 && pub.servedPerS >= RATE * 0.98 && non200 + pub.errors + pub.unanswered === 0;
    console.log(
      `Public link: ${fmt(pub.sent)} of ${fmt(pub.planned)} requests sent; offered ${pub.offeredPerS.toFixed(1)}/s (target ${RATE}/s), served ${pub.servedPerS.toFixed(1)}/s (200s); ` +
        `non-200: ${non200}${non200 ? ` ${JSON.stringify(pub.statuses)}` : ''}, connection errors: ${pub.errors}, unanswered: ${pub.unanswered}`,
    );
    console.log(`  latency from when each request was due: p50 ${pub.p50.toFixed(1)} ms, p99 ${pub.p99.toFixed(1)} ms, max ${pub.max.toFixed(0)} ms; the generator's send lag p99 ${pub.sendLagP99.toFixed(1)} ms, its CPU ${(pub.cpuMs / 1000).toFixed(1)} s`);
    console.log(`  the service's event loop delay: p50 ${(loopDelay.percentile(50) / 1e6).toFixed(1)} ms, p99 ${(loopDelay.percentile(99) / 1e6).toFixed(1)} ms, max ${(loopDelay.max / 1e6).toFixed(0)} ms`);
    console.log(`  CPU of the service process (service, engine) during the load: ${((pubCpu.user + pubCpu.system) / 1e6).toFixed(1)} s over ${pub.seconds.toFixed(1)} s = ${((pubCpu.user + pubCpu.system) / 1e3 / Math.max(1, pub.ok)).toFixed(2)} ms a request`);
    console.log(
      `  widget queries run: ${queries} (allowed: at most one per widget per interval, ${allowed} = ${WIDGETS.length} widgets × ${Math.floor(pub.seconds / REFRESH_S) + 1} intervals), statements at the engine: ${engine}  ` +
        `${queries <= allowed && held ? 'target met' : `TARGET NOT MET${held ? '' : ' (the rate did not hold)'}${queries <= allowed ? '' : ' (too many queries)'}`}`,
    );
    console.log(`Data kept in ${dataDir} (rerun with --reuse ${dataDir})`);
  } finally {
    await appliance.stop();
  }
}

/** Step 5 (--shared-read-trial): one read of the range shared by the widgets, measured; nothing of it is in the service. */
async function sharedReadTrial(ctx: Context, state: Kept) {
  const ch = ctx.ch.client;
  const rows = async (query: string, params: Record<string, unknown>) => (await (await ch.query({ query, query_params: params, format: 'JSONCompactEachRow' })).json()) as unknown[][];
  const forget = () => ch.command({ query: 'SYSTEM DROP QUERY CONDITION CACHE' });
  const range = { start: new Date(state.startMs), end: new Date(state.endMs), timeColumn: 'timestamp' as const };
  const compiled = [];
  for (const w of WIDGETS) compiled.push((await prepareScopeQuery(ctx, { query: w.query, scope: { type: 'fractal', id: state.fractalId }, ...range })).compiled);
  const paths = [...new Set(compiled.flatMap((c) => [...c.sql.matchAll(/fields\.`([^`]+)`/g)].map((m) => m[1]!)))];
  console.log(`Load average at start: ${load()}. ${WIDGETS.length} widgets reading ${paths.length} distinct paths (${paths.join(', ')}).`);
  const alone: string[] = [];
  let cpuAlone = 0;
  for (const [i, c] of compiled.entries()) {
    await forget();
    const r = await timed(() => rows(c.sql, c.params));
    cpuAlone += r.cpuMs;
    alone.push(JSON.stringify(r.value));
    console.log(`  alone    ${WIDGETS[i]!.title.padEnd(28)} ${r.ms.toFixed(0).padStart(6)} ms  CPU ${r.cpuMs.toFixed(0).padStart(6)} ms`);
  }
  console.log(`  all ${WIDGETS.length} alone: CPU ${cpuAlone.toFixed(0)} ms`);
  const where = `fractal_id = {f:UUID} AND timestamp >= {s:DateTime64(9, 'UTC')} AND timestamp <= {e:DateTime64(9, 'UTC')}`;
  const p = { f: state.fractalId, s: chTime(range.start), e: chTime(range.end) };
  await forget();
  const floor = await timed(() => rows(`SELECT count(), ${paths.map((x) => `sum(length(toString(fields.\`${x}\`)))`).join(', ')} FROM ${ctx.ch.table('logs')} WHERE ${where}`, p));
  console.log(`  one read of the ${paths.length} paths (the floor of a shared scan): ${floor.ms.toFixed(0)} ms  CPU ${floor.cpuMs.toFixed(0)} ms`);
  const copy = `${ctx.ch.table('logs')}_dashboard_trial`;
  await ch.command({ query: `DROP TABLE IF EXISTS ${copy}` });
  try {
    await forget();
    const made = await timed(() =>
      ch.command({
        query: `CREATE TABLE ${copy} ENGINE = Memory AS SELECT fractal_id, timestamp, CAST(tuple(${paths.map((x) => `fields.\`${x}\``).join(', ')}) AS Tuple(${paths.map((x) => `\`${x}\` Dynamic`).join(', ')})) AS fields FROM ${ctx.ch.table('logs')} WHERE ${where}`,
        query_params: p,
      }),
    );
    const [database, name] = copy.includes('.') ? copy.split('.') : ['default', copy];
    const bytes = (await rows(`SELECT total_bytes FROM system.tables WHERE database = {d:String} AND name = {n:String}`, { d: database!, n: name! }))[0]?.[0];
    console.log(`  the copy (paths as Dynamic elements of a Tuple): ${made.ms.toFixed(0)} ms  CPU ${made.cpuMs.toFixed(0)} ms, ${(Number(bytes) / 1e9).toFixed(2)} GB in memory`);
    let cpuCopy = 0;
    for (const [i, c] of compiled.entries()) {
      const r = await timed(() => rows(c.sql.replace(`FROM ${ctx.ch.table('logs')}`, `FROM ${copy}`), c.params)).catch((err: Error) => err);
      if (r instanceof Error) {
        console.log(`  on copy  ${WIDGETS[i]!.title.padEnd(28)} cannot run: ${r.message.split('\n')[0]!.slice(0, 100)}`);
        continue;
      }
      cpuCopy += r.cpuMs;
      const same = JSON.stringify(r.value) === alone[i];
      console.log(`  on copy  ${WIDGETS[i]!.title.padEnd(28)} ${r.ms.toFixed(0).padStart(6)} ms  CPU ${r.cpuMs.toFixed(0).padStart(6)} ms  ${same ? 'same rows as alone' : 'ROWS DIFFER FROM ALONE'}`);
    }
    console.log(`  copy + widgets on it: CPU ${(made.cpuMs + cpuCopy).toFixed(0)} ms against ${cpuAlone.toFixed(0)} ms alone`);
  } finally {
    await ch.command({ query: `DROP TABLE IF EXISTS ${copy}` });
  }
  console.log(`Load average at the end: ${load()}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
