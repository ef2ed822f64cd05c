// Evidence import benchmark (issue 17, "Numbers"). Prints figures; asserts nothing.
//
//   npm run bench:evidence [-- --ingest-logs 300000 --no-python]
//
// 1. Unpacks ../shared/data/evtx-attack-samples.tar.gz (277 .evtx files). Parses them all with our
//    reader in this process (one core) and, unless --no-python, with python-evtx (the oracle) on
//    the same files: MB/s by CPU time of each.
// 2. Starts the appliance as `npm start` runs it (a child process, fresh data directory) and, in
//    the same run, measures:
//    - ingest: `--ingest-logs` web logs of ~290 bytes as NDJSON batches of 5,000 over 8
//      connections to /api/v1/ingest (the ingest benchmark's load), first byte sent → all countable;
//    - import: every sample file posted to /api/v1/fractals/{id}/imports of another fractal (4
//      uploads at a time) and read end to end (sniffed, parsed, normalized with the default
//      normalizer, spooled, stored), first byte sent → every import done and every event countable.
//    Each with the service's CPU time (utime + stime of the child, /proc) beside the wall clock, and
//    the load average, since the machine is shared.
import { readFileSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { readEvtx } from '../../service/src/evidence/evtx/index.ts';
import { signIn, type Client } from '../../tests/support/appliance.ts';
import { unpackEvtxSamples } from '../../tests/support/evtx-samples.ts';
import { startServiceProcess } from '../../tests/support/service-process.ts';
import { fmt, freshDataDir, runPythonEvtx, webLog } from './support.ts';

const { values: args } = parseArgs({
  options: {
    'ingest-logs': { type: 'string', default: '300000' },
    'no-python': { type: 'boolean', default: false },
  },
});
const INGEST_LOGS = Number(args['ingest-logs']);
const BATCH = 5000;
const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');

/** CPU seconds (user + system) the process has used. */
function cpuOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100; // utime, stime in clock ticks (100/s)
}

async function countable(admin: Client, fractalId: string, n: number): Promise<void> {
  for (;;) {
    if ((await admin.get(`/api/v1/fractals/${fractalId}/stats`)).body.data.log_count >= n) return;
    await new Promise((r) => setTimeout(r, 25));
  }
}

const samples = unpackEvtxSamples();
try {
  const buffers = samples.files.map((f) => readFileSync(f));
  const bytes = buffers.reduce((n, b) => n + b.length, 0);
  console.log(`${samples.files.length} .evtx files, ${(bytes / 1e6).toFixed(1)} MB; load average ${load()}`);

  // ---- parsing: ours and python-evtx ------------------------------------------------------------
  let events = 0;
  const c0 = process.cpuUsage();
  const p0 = performance.now();
  for (const b of buffers) for await (const _ of readEvtx(b)) events++;
  const used = process.cpuUsage(c0);
  const parseCpu = (used.user + used.system) / 1e6;
  const parseWall = (performance.now() - p0) / 1000;
  console.log(`parse, ours:        ${fmt(events)} events, ${parseWall.toFixed(2)} s wall, ${parseCpu.toFixed(2)} s CPU → ${(bytes / 1e6 / parseCpu).toFixed(1)} MB/s CPU (${(bytes / 1e6 / parseWall).toFixed(1)} MB/s wall); load ${load()}`);
  if (!args['no-python']) {
    const { events: n, cpuS: pyCpu, wallS: pyWall } = runPythonEvtx(samples.files);
    console.log(`parse, python-evtx: ${fmt(n)} events, ${pyWall.toFixed(1)} s wall, ${pyCpu.toFixed(1)} s CPU → ${(bytes / 1e6 / pyCpu).toFixed(2)} MB/s CPU; ours ${(pyCpu / parseCpu).toFixed(0)}× faster; load ${load()}`);
  }

  // ---- the appliance --------------------------------------------------------------------------
  const dataDir = freshDataDir('bench-evidence');
  const service = await startServiceProcess({
    dataDir,
    env: { SVC_ADMIN_PASSWORD: 'bench-password', SVC_INGEST_RATE_LIMIT: '100000', SVC_INGEST_RATE_BURST: '100000' },
    timeoutMs: 120_000,
  });
  const pid = service.child.pid!;
  try {
    const { base } = service;
    const token = /Ingest token:\s+(svc_ingest_[0-9a-f]{32})/.exec(service.output())![1]!;
    const admin = await signIn(base, 'admin', 'bench-password');
    const ingestFractal = (await admin.get('/api/v1/fractals')).body.data[0].id as string;
    const evidenceFractal = (await admin.post('/api/v1/fractals', { name: 'evidence-bench' })).body.data.id as string;

    // Ingest: the ingest benchmark's logs and batches.
    const t0 = Date.now() - INGEST_LOGS * 3;
    const batches: Buffer[] = [];
    for (let b = 0; b < INGEST_LOGS; b += BATCH) {
      const lines: string[] = [];
      for (let i = b; i < Math.min(INGEST_LOGS, b + BATCH); i++) lines.push(webLog(i, t0, 3));
      batches.push(Buffer.from(lines.join('\n') + '\n'));
    }
    let next = 0;
    const ic0 = cpuOf(pid);
    const is = performance.now();
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let i = next++; i < batches.length; i = next++) {
          for (;;) {
            const r = await fetch(`${base}/api/v1/ingest`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' }, body: batches[i] as unknown as BodyInit });
            await r.text();
            if (r.status === 200) break;
            if (r.status !== 429) throw new Error(`ingest answered ${r.status}`);
            await new Promise((res) => setTimeout(res, 50));
          }
        }
      }),
    );
    await countable(admin, ingestFractal, INGEST_LOGS);
    const ingestWall = (performance.now() - is) / 1000;
    const ingestCpu = cpuOf(pid) - ic0;
    const ingestRate = INGEST_LOGS / ingestWall;
    console.log(`ingest:  ${fmt(INGEST_LOGS)} logs in ${ingestWall.toFixed(2)} s → ${fmt(ingestRate)} logs/s end to end; service CPU ${ingestCpu.toFixed(1)} s (${fmt(INGEST_LOGS / ingestCpu)} logs per CPU-second); load ${load()}`);

    // Import: every sample file, end to end.
    const ec0 = cpuOf(pid);
    const es = performance.now();
    const ids: string[] = [];
    let k = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        for (let i = k++; i < buffers.length; i = k++) {
          const r = await fetch(`${base}/api/v1/fractals/${evidenceFractal}/imports?name=${encodeURIComponent(path.basename(samples.files[i]!))}`, {
            method: 'POST',
            headers: { cookie: admin.cookie, 'content-type': 'application/octet-stream' },
            body: buffers[i] as unknown as BodyInit,
          });
          const body = (await r.json()) as { data?: { id: string }; error?: string };
          if (r.status !== 201) throw new Error(`import answered ${r.status}: ${body.error}`);
          ids.push(body.data!.id);
        }
      }),
    );
    let accepted = 0;
    let rejected = 0;
    for (;;) {
      const list = (await admin.get(`/api/v1/fractals/${evidenceFractal}/imports?limit=1000`)).body.data as Array<{ status: string; events_accepted: number; events_rejected: number }>;
      if (list.length === ids.length && list.every((x) => x.status !== 'running')) {
        accepted = list.reduce((n, x) => n + x.events_accepted, 0);
        rejected = list.reduce((n, x) => n + x.events_rejected, 0);
        break;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    await countable(admin, evidenceFractal, accepted);
    const importWall = (performance.now() - es) / 1000;
    const importCpu = cpuOf(pid) - ec0;
    const importRate = accepted / importWall;
    console.log(
      `import:  ${fmt(accepted)} events (${fmt(rejected)} rejected) of ${ids.length} files in ${importWall.toFixed(2)} s → ${fmt(importRate)} events/s end to end; ` +
        `service CPU ${importCpu.toFixed(1)} s (${fmt(accepted / importCpu)} events per CPU-second); load ${load()}`,
    );
    console.log(`import / ingest: ${(importRate / ingestRate).toFixed(2)} by wall clock, ${(accepted / importCpu / (INGEST_LOGS / ingestCpu)).toFixed(2)} by service CPU (target ≥ 0.8)`);
  } finally {
    await service.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
} finally {
  samples.remove();
}
