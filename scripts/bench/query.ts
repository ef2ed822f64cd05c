// Query benchmark (issue 4, "Speed"; issue 18, mixed data). Prints figures; asserts nothing.
//
//   npm run bench:query [-- --mode mix|homogeneous --logs 10000000 --runs 5 --chunk 1000000 --keep --show-sql --only <name part>]
//   npm run bench:query -- --reuse <dataDir>     (a directory kept by an earlier --keep run; its mode is the one it was built with)
//
// 1. Starts the appliance IN THIS PROCESS (the tests' startTestAppliance) on a fresh data directory,
//    signs in as its administrator and creates a fractal "bench".
// 2. `--mode mix` (the default; `--mix` says it too): N logs of bench:ingest's seeded mix (web
//    access, Sysmon process creation, auth, firewall, DNS; 58 field paths, nested objects, numbers
//    of two JSON types in one path), made in JS and stored through `logs_ingest` as the ingest
//    pipeline writes each row (query-mix.ts; chunks of 25,000), and the queries of query-mix.ts.
//    `--mode homogeneous`: generates N logs inside the engine, `INSERT INTO svc.logs_ingest SELECT … FROM numbers(…)` in
//    chunks: web access logs, Sysmon-like process/network/file events and Windows logon events
//    spread over the last 7 days, ~300 bytes each, every value a deterministic function of the
//    row number (cityHash64(number, k)). Each row is a flat JSON record stored as the pipeline
//    stores one: `raw` is its text, the engine makes the `fields` JSON from it.
//    Either way, then merges the table (OPTIMIZE … FINAL), as days of ingest would have.
// 3. For each investigator query: one warm-up, then `--runs` timed runs of the query language
//    through POST /api/v1/query (wall clock of the HTTP round trip, response parsed) alternating
//    with the hand-written ClickHouse SQL for the same answer, sent through the appliance's own
//    @clickhouse/client instance (appliance.context.ch.client, the embedded chDB engine).
//    The engine's query condition cache is emptied before every call (--condition-cache keeps
//    it); a query whose warm-up takes over a minute gets --slow-runs (3) timed runs.
// 4. Prints p50 and p95 of both, ratio service/SQL (p50s) and CPU ratio, row counts of both
//    (warning when they differ), the geometric mean of the ratios, and the targets: geometric
//    mean ≤ 1.5, ratio ≤ 1.5 for every query, p50 < 300 ms for the filter and groupBy queries.
import { execFileSync } from 'node:child_process';
import { request } from 'node:http';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { chTime } from '../../service/src/storage/clickhouse.ts';
import { ADMIN_PASSWORD, signIn, startTestAppliance, type Client } from '../../tests/support/appliance.ts';
import { loadMix, mixBenches, mixPaths, mixRareToken, type Bench } from './query-mix.ts';
import { fmt, freshDataDir, median, root } from './support.ts';
import { DICTIONARY, generatorParams, generatorSql, PROBE_USER, RARE_HASH, USERS } from './query-data.ts';

const { values: args } = parseArgs({
  options: {
    mode: { type: 'string', default: 'mix' },
    mix: { type: 'boolean', default: false },
    logs: { type: 'string', default: '10000000' },
    runs: { type: 'string', default: '5' },
    chunk: { type: 'string' },
    keep: { type: 'boolean', default: false },
    reuse: { type: 'string' },
    'no-optimize': { type: 'boolean', default: false },
    'show-sql': { type: 'boolean', default: false },
    'condition-cache': { type: 'boolean', default: false },
    'slow-runs': { type: 'string', default: '3' },
    only: { type: 'string' },
  },
});
const RUNS = Number(args.runs);
/** Timed runs for a query whose warm-up through the service took over a minute. */
const SLOW_RUNS = Math.min(RUNS, Number(args['slow-runs']));
const MODE = (args.mix ? 'mix' : args.mode) as 'mix' | 'homogeneous';
if (MODE !== 'mix' && MODE !== 'homogeneous') throw new Error(`--mode is mix or homogeneous, not "${MODE}"`);
// Mixed rows: an insert of 50,000 took ~550 MB of engine memory (docs/ingest.md), past half the default cap.
const CHUNK = Number(args.chunk ?? (MODE === 'mix' ? 25_000 : 1_000_000));
const ROW_CAP = 10_000; // max_query_rows default: event searches and aggregations without a limit
const DAY_MS = 24 * 3600 * 1000;

// ---- the queries -------------------------------------------------------------------------------
function benches(table: string, dictionaryRows: string): Bench[] {
  const W = `fractal_id = {fid:UUID} AND timestamp >= {start:DateTime64(9, 'UTC')} AND timestamp <= {end:DateTime64(9, 'UTC')}`;
  // Event searches: newest first (timestamp, then event id), capped like the service; the stored
  // record (`raw`) is the event's text.
  const search = (cond: string) =>
    `SELECT timestamp, log_id, fractal_id, raw FROM ${table} WHERE ${W} AND ${cond} ORDER BY timestamp DESC, log_id DESC LIMIT ${ROW_CAP}`;
  return [
    {
      name: 'rare token',
      query: `"${RARE_HASH.toLowerCase()}"`,
      sql: search(`positionCaseInsensitive(raw, {token:String}) > 0`),
      events: true,
      latencyTarget: true,
    },
    {
      name: 'field equality',
      query: `user=${PROBE_USER}`,
      sql: search(`fields.user.:String = {user:String}`),
      events: true,
      latencyTarget: true,
    },
    {
      name: 'contains-any',
      query: 'image=~powershell,cmd',
      sql: search(`multiSearchAnyCaseInsensitiveUTF8(fields.image.:String, ['powershell', 'cmd'])`),
      events: true,
      latencyTarget: true,
    },
    {
      name: 'regex',
      query: 'url=/admin\\/.*\\.php/',
      sql: search(`match(fields.url.:String, 'admin/.*\\\\.php')`),
      events: true,
      latencyTarget: true,
    },
    {
      name: 'groupBy 1 field',
      query: 'groupBy(host)',
      sql: `SELECT fields.host.:String AS host, count() AS _count FROM ${table} WHERE ${W} GROUP BY host LIMIT ${ROW_CAP}`,
      events: false,
      latencyTarget: true,
    },
    {
      name: 'groupBy 2 fields',
      query: 'groupBy(host, status)',
      sql: `SELECT fields.host.:String AS host, fields.status.:Int64 AS status, count() AS _count FROM ${table} WHERE ${W} GROUP BY host, status LIMIT ${ROW_CAP}`,
      events: false,
      latencyTarget: true,
    },
    {
      name: 'timechart 1h',
      query: 'timechart(span=1h)',
      sql: `SELECT toStartOfHour(timestamp) AS time_bucket, count() AS _count FROM ${table} WHERE ${W} GROUP BY time_bucket ORDER BY time_bucket LIMIT ${ROW_CAP}`,
      events: false,
      latencyTarget: false,
    },
    {
      name: 'count',
      query: 'count()',
      sql: `SELECT count() AS _count FROM ${table} WHERE ${W}`,
      events: false,
      latencyTarget: false,
    },
    {
      name: 'top 10 by count',
      query: 'groupBy(user) | sort(_count, order=desc) | limit(10)',
      sql: `SELECT fields.user.:String AS user, count() AS _count FROM ${table} WHERE ${W} GROUP BY user ORDER BY _count DESC LIMIT 10`,
      events: false,
      latencyTarget: true,
    },
    {
      name: 'filter+groupBy+sort',
      query: 'status>=500 | groupBy(host) | sort(_count, order=desc) | limit(20)',
      sql: `SELECT fields.host.:String AS host, count() AS _count FROM ${table} WHERE ${W} AND fields.status.:Int64 >= 500 GROUP BY host ORDER BY _count DESC LIMIT 20`,
      events: false,
      latencyTarget: true,
    },
    {
      // Beyond the issue's list: enrichment from a 5,000-row dictionary, joined in the engine.
      name: 'match enrichment',
      query: `image=~powershell,cmd | match(dict=${DICTIONARY}, field=user, column=user, include=[dept])`,
      sql: `SELECT timestamp, log_id, fractal_id, raw, d.dept AS dept FROM ${table}
        LEFT JOIN (SELECT row_key AS user, argMax(values['dept'], version) AS dept FROM ${dictionaryRows}
                   WHERE dictionary_id = {dict:UUID} GROUP BY row_key) AS d ON fields.user.:String = d.user
        WHERE ${W} AND multiSearchAnyCaseInsensitiveUTF8(fields.image.:String, ['powershell', 'cmd'])
        ORDER BY timestamp DESC, log_id DESC LIMIT ${ROW_CAP}`,
      events: true,
      latencyTarget: false,
    },
  ];
}

// ---- running -----------------------------------------------------------------------------------
interface Loaded {
  /** Absent in sets kept before the mixed mode: homogeneous. */
  mode?: 'mix' | 'homogeneous';
  fractalId: string;
  logs: number;
  /** Mixed data: the time between two logs, and the rare token searched. */
  stepMs?: number;
  rareToken?: string;
  /** Query range (ms since epoch): the whole 7 days holding the data. */
  startMs: number;
  endMs: number;
  password: string;
  loadSeconds?: number;
  optimizeSeconds?: number;
}

const cpuSince = (c0: NodeJS.CpuUsage) => {
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000;
};
const secs = (t0: number) => ((performance.now() - t0) / 1000).toFixed(1);

interface Outcome {
  ms: number;
  /** CPU time of this whole process (service, engine threads, client) during the call. */
  cpuMs: number;
  rows: number;
  /** log_ids (events) or total of _count (aggregations), to check both sides agree. */
  check: string;
  execMs?: number;
  sql?: string;
  error?: string;
}

async function main() {
  const reuse = args.reuse ? path.resolve(args.reuse) : undefined;
  const dataDir = reuse ?? freshDataDir(MODE === 'mix' ? 'bench-query-mix' : 'bench-query');
  const stateFile = path.join(dataDir, 'bench-query.json');
  if (reuse && !existsSync(stateFile)) throw new Error(`${reuse} holds no bench-query.json: not a directory kept by --keep`);

  console.log(`Starting the appliance in this process on ${dataDir}...`);
  // SVC_ENGINE_MAX_MEMORY_MB from the environment, to measure the engine's memory cap against query speed.
  const cap: Record<string, string> = process.env.SVC_ENGINE_MAX_MEMORY_MB ? { SVC_ENGINE_MAX_MEMORY_MB: process.env.SVC_ENGINE_MAX_MEMORY_MB } : {};
  const appliance = await startTestAppliance({ SVC_QUERY_TIMEOUT_S: '600', ...cap }, dataDir);
  const base = appliance.url;
  const ch = appliance.context.ch;
  const table = ch.table('logs');
  try {
    let state: Loaded;
    if (reuse) {
      state = JSON.parse(readFileSync(stateFile, 'utf8')) as Loaded;
      state.mode ??= 'homogeneous';
      console.log(`Reusing ${fmt(state.logs)} ${state.mode} logs in fractal ${state.fractalId}`);
    } else {
      const admin = await signIn(base, 'admin', ADMIN_PASSWORD);
      const r = await admin.post('/api/v1/fractals', { name: 'bench', description: 'query benchmark data' });
      if (r.status !== 201) throw new Error(`creating the fractal answered ${r.status}: ${JSON.stringify(r.body)}`);
      const fractalId = r.body.data.id as string;
      const logs = Number(args.logs);
      const endMs = Math.floor(Date.now() / 1000) * 1000;
      const startMs = endMs - 7 * DAY_MS;
      state = { mode: MODE, fractalId, logs, startMs, endMs, password: ADMIN_PASSWORD };
      if (MODE === 'mix') {
        state.stepMs = (endMs - startMs - 60_000) / logs; // a minute's margin at the end
        state.rareToken = mixRareToken(logs, startMs, state.stepMs);
        console.log(`Loading ${fmt(logs)} mixed logs in chunks of ${fmt(CHUNK)} (made in JS, inserted through logs_ingest, no HTTP)...`);
        const l0 = performance.now();
        await loadMix(appliance.context.logs, { fractalId, logs, startMs, stepMs: state.stepMs }, CHUNK, (line) => console.log(line));
        state.loadSeconds = (performance.now() - l0) / 1000;
        await merge(ch.client, table, state);
      } else {
        await load(ch.client, table, ch.table('logs_ingest'), state);
      }
      writeFileSync(stateFile, JSON.stringify(state, null, 2));
    }

    const admin = await signIn(base, 'admin', state.password);
    const { cookie } = admin;
    const dictionaryId = state.mode === 'mix' ? undefined : await benchDictionary(admin, state.fractalId);
    const stats = await ch.client.query({
      query: `SELECT count() AS n, round(avg(length(raw))) AS avg_raw, count(DISTINCT _part) AS parts FROM ${table} WHERE fractal_id = {fid:UUID}`,
      query_params: { fid: state.fractalId },
      format: 'JSONEachRow',
    });
    const s = ((await stats.json()) as Array<{ n: string; avg_raw: number; parts: string }>)[0]!;
    console.log(`Data: ${fmt(Number(s.n))} ${state.mode} logs, average raw ${s.avg_raw} bytes, ${s.parts} active part(s)`);
    if (state.mode === 'mix') {
      const p = await mixPaths(ch.client, table, state.fractalId);
      console.log(`      ${p.paths} field paths (in a 1% sample), ${p.mixedTypes} of them holding more than one JSON type`);
    }

    const params = {
      fid: state.fractalId,
      start: chTime(new Date(state.startMs)),
      end: chTime(new Date(state.endMs)),
      token: state.mode === 'mix' ? state.rareToken! : RARE_HASH.toLowerCase(),
      user: PROBE_USER,
      ...(dictionaryId ? { dict: dictionaryId } : {}),
    };
    const body = (query: string) =>
      JSON.stringify({ query, fractal_id: state.fractalId, start: new Date(state.startMs).toISOString(), end: new Date(state.endMs).toISOString() });

    // The engine's query condition cache remembers which granules a WHERE condition matched, so a
    // repeated query skips the rest: the timed runs would measure that memo, not the search (an
    // investigator's next query has other values). It is emptied before every call unless
    // --condition-cache; page, mark and uncompressed caches stay warm.
    const forgetConditions = async () => {
      if (!args['condition-cache']) await ch.client.command({ query: 'SYSTEM DROP QUERY CONDITION CACHE' });
    };
    const viaService = async (b: Bench): Promise<Outcome> => {
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      let status: number;
      let j: { success?: boolean; count?: number; results?: Array<Record<string, unknown>>; sql?: string; execution_ms?: number; error?: string };
      try {
        ({ status, json: j } = await postJson(`${base}/api/v1/query`, body(b.query), cookie));
      } catch (err) {
        return { ms: performance.now() - t0, cpuMs: cpuSince(c0), rows: -1, check: '', error: String((err as Error).message ?? err) };
      }
      const ms = performance.now() - t0;
      const cpuMs = cpuSince(c0);
      if (status !== 200 || !j.success) return { ms, cpuMs, rows: -1, check: '', error: `HTTP ${status}: ${j.error ?? JSON.stringify(j).slice(0, 200)}` };
      const rows = j.results ?? [];
      return { ms, cpuMs, rows: j.count ?? rows.length, check: checkOf(b, rows), execMs: j.execution_ms, sql: j.sql };
    };
    const viaSql = async (b: Bench): Promise<Outcome> => {
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      const rs = await ch.client.query({ query: b.sql, query_params: params, format: 'JSONEachRow' });
      const rows = (await rs.json()) as Array<Record<string, unknown>>;
      return { ms: performance.now() - t0, cpuMs: cpuSince(c0), rows: rows.length, check: checkOf(b, rows) };
    };

    let list = state.mode === 'mix' ? mixBenches(table, ROW_CAP, state.rareToken!) : benches(table, ch.table('dictionary_rows'));
    if (args.only) list = list.filter((b) => b.name.includes(args.only!));
    const results: Array<{ b: Bench; svc: Outcome[]; sql: Outcome[]; runs: number }> = [];
    const loadAtStart = loadAverage();
    console.log(`Timing ${list.length} queries: 1 warm-up + ${RUNS} runs each, service and SQL alternating...`);
    for (const b of list) {
      const svc: Outcome[] = [];
      const sql: Outcome[] = [];
      let failed: string | undefined;
      let runs = RUNS;
      for (let i = 0; i <= runs; i++) {
        await forgetConditions();
        const so = failed ? undefined : await viaService(b);
        if (so?.error) failed = so.error;
        await forgetConditions();
        const qo = await viaSql(b);
        if (i === 0) {
          // warm-up; a query taking minutes gets fewer timed runs (said in the table)
          if (so && so.ms > 60_000) runs = SLOW_RUNS;
          continue;
        }
        if (so && !so.error) svc.push(so);
        sql.push(qo);
      }
      results.push({ b, svc, sql, runs });
      const sm = svc.length ? `${median(svc.map((o) => o.ms)).toFixed(0)} ms` : `error (${failed})`;
      console.log(`  ${b.name.padEnd(20)} service ${sm}, SQL ${median(sql.map((o) => o.ms)).toFixed(0)} ms`);
    }

    // ---- the table -------------------------------------------------------------------------------
    console.log('');
    console.log(`${fmt(state.logs)} ${state.mode} logs over 7 days, ${RUNS} runs each after one warm-up. Service = POST /api/v1/query round trip`);
    console.log(`(exec = its execution_ms, p50); SQL = hand-written SQL on the appliance's own @clickhouse/client (embedded chDB).`);
    console.log(`CPU = median CPU time of this process (service + engine threads) per call; CPU ratio = service / SQL:`);
    console.log(`steadier than wall-clock ratios when other work shares the 2 cores. Engine: ${engineState()}.`);
    console.log(`Query condition cache ${args['condition-cache'] ? 'KEPT between runs' : 'emptied before every call'}; other engine caches warm.`);
    console.log(`Load average (1, 5, 15 min) at the start of the timing ${loadAtStart}, now ${loadAverage()}.`);
    const capMb = appliance.context.config.engineMaxMemoryBytes / 1048576;
    console.log(`Engine memory cap (SVC_ENGINE_MAX_MEMORY_MB): ${capMb ? `${fmt(capMb)} MiB` : "none (the engine's own bound)"}.`);
    console.log(`Targets: geometric mean of the ratios <= 1.5; p50 < 300 ms for the filter and groupBy queries (marked *).`);
    console.log('');
    const head = ['query', 'svc p50', 'svc p95', 'exec', 'SQL p50', 'SQL p95', 'ratio', 'svc CPU', 'SQL CPU', 'CPU ratio', 'svc rows', 'SQL rows', 'targets'];
    const lines: string[][] = [];
    const warnings: string[] = [];
    const ratios: number[] = [];
    const cpuRatios: number[] = [];
    for (const { b, svc, sql, runs } of results) {
      if (runs !== RUNS) warnings.push(`NOTE ${b.name}: its warm-up took over a minute through the service, so ${runs} timed runs instead of ${RUNS}`);
      const sqlMs = median(sql.map((o) => o.ms));
      if (!svc.length) {
        lines.push([b.name + (b.latencyTarget ? ' *' : ''), 'error', '', '', sqlMs.toFixed(0), '', '', '', '', '', '', fmt(sql[0]!.rows), '']);
        continue;
      }
      const svcMs = median(svc.map((o) => o.ms));
      const ratio = svcMs / sqlMs;
      const svcCpu = median(svc.map((o) => o.cpuMs));
      const sqlCpu = median(sql.map((o) => o.cpuMs));
      ratios.push(ratio);
      cpuRatios.push(svcCpu / sqlCpu);
      const marks = [ratio <= 1.5 ? 'ratio ok' : 'RATIO > 1.5'];
      if (b.latencyTarget) marks.push(svcMs < 300 ? '<300 ok' : sqlMs < 300 ? 'OVER 300 ms' : 'OVER 300 ms (SQL too)');
      lines.push([
        b.name + (b.latencyTarget ? ' *' : ''),
        svcMs.toFixed(0),
        p95(svc.map((o) => o.ms)).toFixed(0),
        median(svc.map((o) => o.execMs ?? NaN)).toFixed(0),
        sqlMs.toFixed(0),
        p95(sql.map((o) => o.ms)).toFixed(0),
        ratio.toFixed(2),
        svcCpu.toFixed(0),
        sqlCpu.toFixed(0),
        (svcCpu / sqlCpu).toFixed(2),
        fmt(svc[0]!.rows),
        fmt(sql[0]!.rows),
        marks.join(', '),
      ]);
      if (svc[0]!.rows !== sql[0]!.rows) warnings.push(`WARNING ${b.name}: service returned ${svc[0]!.rows} rows, SQL ${sql[0]!.rows}`);
      else if (svc[0]!.check !== sql[0]!.check) {
        warnings.push(`WARNING ${b.name}: same row count but different ${b.events ? 'events (log_id sets)' : `totals of _count (${svc[0]!.check} vs ${sql[0]!.check})`}`);
      }
    }
    const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
    const row = (cells: string[]) => cells.map((c, i) => (i === 0 || i === cells.length - 1 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
    console.log(row(head));
    console.log(widths.map((w) => '-'.repeat(w)).join('  '));
    for (const l of lines) console.log(row(l));
    const gm = geometricMean(ratios);
    console.log(`Geometric mean of the ratios ${gm.toFixed(2)} (${gm <= 1.5 ? 'target met' : 'OVER 1.5'}), of the CPU ratios ${geometricMean(cpuRatios).toFixed(2)}, over ${ratios.length} queries.`);
    for (const w of warnings) console.log(w);
    if (state.loadSeconds !== undefined) {
      console.log(`\nLoading took ${state.loadSeconds.toFixed(1)} s (${fmt(state.logs / state.loadSeconds)} logs/s), merging ${state.optimizeSeconds?.toFixed(1) ?? '-'} s.`);
    }
    if (args['show-sql']) {
      for (const { b, svc } of results) {
        console.log(`\n-- ${b.name}: ${b.query}\n-- service SQL:\n${svc[0]?.sql ?? '(no answer)'}\n-- hand SQL:\n${b.sql}`);
      }
    }
  } finally {
    await appliance.stop();
    if (args.keep || reuse) console.log(`Data kept in ${dataDir} (rerun with --reuse ${dataDir})`);
    else rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The bench fractal's dictionary of every user and a department, made through the API once per data set. */
async function benchDictionary(admin: Client, fractalId: string): Promise<string> {
  const listed = await admin.get(`/api/v1/dictionaries?fractal_id=${fractalId}`);
  const found = (listed.body.data as Array<{ id: string; name: string }>).find((d) => d.name === DICTIONARY);
  if (found) return found.id;
  const made = await admin.post('/api/v1/dictionaries', { name: DICTIONARY, columns: ['user', 'dept'], fractal_id: fractalId });
  if (made.status !== 201) throw new Error(`creating the dictionary answered ${made.status}: ${JSON.stringify(made.body)}`);
  const depts = ['finance', 'it', 'sales', 'ops', 'legal', 'hr'];
  const csv = ['user,dept', ...USERS.map((u, i) => `${u},${depts[i % depts.length]}`)].join('\n');
  const filled = await admin.post(`/api/v1/dictionaries/${made.body.data.id}/import`, csv, { 'content-type': 'text/csv' });
  if (filled.status !== 200) throw new Error(`filling the dictionary answered ${filled.status}: ${JSON.stringify(filled.body)}`);
  return made.body.data.id as string;
}

/** POST with no client-side time-out (fetch gives up on headers after 300 s; slow queries take longer). */
function postJson(url: string, body: string, cookie: string): Promise<{ status: number; json: any }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { cookie, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        try {
          resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
        } catch (err) {
          reject(err);
        }
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The commit the service code comes from, and whether the query engine has uncommitted changes. */
function engineState(): string {
  try {
    const git = (a: string[]) => execFileSync('git', a, { cwd: root, encoding: 'utf8' }).trim();
    const dirty = git(['status', '--porcelain', '--', 'service/src/query']) !== '';
    return `commit ${git(['rev-parse', '--short', 'HEAD'])}${dirty ? ' + uncommitted changes in service/src/query' : ''}`;
  } catch {
    return 'commit unknown';
  }
}

/** The 95th percentile (nearest rank) of a few timings. */
function p95(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(0.95 * s.length) - 1)]!;
}

const geometricMean = (xs: number[]): number => Math.exp(xs.reduce((a, x) => a + Math.log(x), 0) / xs.length);

const loadAverage = (): string => loadavg().map((x) => x.toFixed(2)).join(', ');

/** What both sides must agree on beyond the row count. */
function checkOf(b: Bench, rows: Array<Record<string, unknown>>): string {
  if (b.events) return rows.map((r) => String(r.log_id)).sort().join(',');
  return String(rows.reduce((n, r) => n + Number(r._count ?? 0), 0));
}

/**
 * Fills `table` through `ingestTable`, the way the ingest pipeline writes a JSON record that needs
 * no changes (its text is its fields; the engine builds the `fields` JSON and `fields_text` stays '').
 */
async function load(client: import('@clickhouse/client').ClickHouseClient, table: string, ingestTable: string, st: Loaded): Promise<void> {
  const N = st.logs;
  const sql = generatorSql(ingestTable);
  console.log(`Loading ${fmt(N)} logs in chunks of ${fmt(CHUNK)} (INSERT … SELECT FROM numbers inside the engine)...`);
  const t0 = performance.now();
  for (let first = 0; first < N; first += CHUNK) {
    const count = Math.min(CHUNK, N - first);
    const c0 = performance.now();
    await client.command({
      query: sql,
      query_params: generatorParams(st, first, count),
    });
    console.log(`  ${fmt(first + count)} / ${fmt(N)}  (${secs(c0)} s for this chunk, ${secs(t0)} s in all)`);
  }
  st.loadSeconds = (performance.now() - t0) / 1000;
  await merge(client, table, st);
}

/** Merges the loaded parts (unless --no-optimize), as days of ingest would have. */
async function merge(client: import('@clickhouse/client').ClickHouseClient, table: string, st: Loaded): Promise<void> {
  if (args['no-optimize']) return;
  console.log('Merging parts (OPTIMIZE TABLE … FINAL), as days of ingest would have...');
  const o0 = performance.now();
  await client.command({ query: `OPTIMIZE TABLE ${table} FINAL` });
  st.optimizeSeconds = (performance.now() - o0) / 1000;
  console.log(`  done in ${secs(o0)} s`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
