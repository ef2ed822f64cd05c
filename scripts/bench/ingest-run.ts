// The ingest benchmark's service (bench:ingest, and bench:archive, which runs the same ingest with the
// archive off and on): the appliance as a child process, its memory and CPU read from /proc. The load
// it is sent is ingest-load.ts.
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { signIn } from '../../tests/support/appliance.ts';
import { freePort, startServiceProcess } from '../../tests/support/service-process.ts';
import { freshDataDir } from './support.ts';

/** The pids of `pid` and its descendants (the engine runs in-process, but count any child too). */
export function processTree(pid: number): number[] {
  const out = [pid];
  for (let k = 0; k < out.length; k++) {
    try {
      for (const task of readdirSync(`/proc/${out[k]}/task`)) {
        const kids = readFileSync(`/proc/${out[k]}/task/${task}/children`, 'utf8').trim();
        if (kids) out.push(...kids.split(/\s+/).map(Number));
      }
    } catch {
      /* exited */
    }
  }
  return out;
}
export const treePeakRss = (pid: number) =>
  processTree(pid).reduce((sum, p) => {
    try {
      return sum + Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${p}/status`, 'utf8'))?.[1] ?? 0) * 1024;
    } catch {
      return sum;
    }
  }, 0);
/** CPU seconds (user + system) the process has used. */
export const cpuSeconds = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
};

/**
 * CPU seconds by thread of the service's process, grouped: the event loop (the JS main thread),
 * V8's and libuv's helpers (GC, compile, fs), and the engine's threads by their name (chDB names
 * its pools: inserts and queries run on the main thread's call into the engine or on
 * "QueryPipelineEx"/"TCPHandler"-like pools, merges on "MergeMutate", part moves and cleanup on
 * "BgSchPool"...). Threads that ended are not counted, so it is a lower bound for short-lived ones.
 */
export function threadCpu(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  let tasks: string[] = [];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tasks) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const f = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
      const s = (Number(f[11]) + Number(f[12])) / 100;
      const group = tid === String(pid) ? 'event loop (JS main thread, with the engine calls it makes)' : name.replace(/[0-9]+$/, '');
      out.set(group, (out.get(group) ?? 0) + s);
    } catch {
      /* ended */
    }
  }
  return out;
}
/** `after` minus `before`, largest first, as one line per group above 0.5 s. */
export function threadCpuLines(before: Map<string, number>, after: Map<string, number>): string[] {
  return [...after]
    .map(([k, v]) => [k, v - (before.get(k) ?? 0)] as const)
    .filter(([, v]) => v >= 0.5)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${v.toFixed(1).padStart(6)} s  ${k}`);
}

export async function startService(o: { env?: Record<string, string>; keepDataDir?: boolean } = {}) {
  const dataDir = freshDataDir('bench-ingest');
  const metricsPort = await freePort();
  const service = await startServiceProcess({
    dataDir,
    env: {
      SVC_ADMIN_PASSWORD: 'bench-password',
      SVC_INGEST_RATE_LIMIT: '100000',
      SVC_INGEST_RATE_BURST: '100000',
      // Where memory goes: the service's own metrics give the JS heap and Buffers (external).
      SVC_METRICS_ENABLED: 'true',
      SVC_METRICS_ADDR: `127.0.0.1:${metricsPort}`,
      ...o.env,
    },
    timeoutMs: 120_000, // a busy machine starts the service slowly
  });
  const token = /Ingest token:\s+(svc_ingest_[0-9a-f]{32})/.exec(service.output())![1]!;
  const admin = await signIn(service.base, 'admin', 'bench-password');
  const fractalId = (await admin.get('/api/v1/fractals')).body.data[0].id as string;
  const pid = service.child.pid!;
  let peakRss = 0;
  const rssTimer = setInterval(() => (peakRss = Math.max(peakRss, treePeakRss(pid))), 100);
  // The largest sample of each: RSS, JS heap (total), Buffers and other memory outside the heap.
  const mem = { rss: 0, heap: 0, external: 0 };
  const metric = (text: string, name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
  const memTimer = setInterval(async () => {
    try {
      const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      mem.rss = Math.max(mem.rss, metric(text, 'svc_process_resident_memory_bytes'));
      mem.heap = Math.max(mem.heap, metric(text, 'svc_nodejs_heap_size_total_bytes'));
      mem.external = Math.max(mem.external, metric(text, 'svc_nodejs_external_memory_bytes'));
    } catch {
      /* stopping */
    }
  }, 500);
  return {
    ...service,
    dataDir,
    token,
    admin,
    fractalId,
    peakRss: () => Math.max(peakRss, treePeakRss(pid)),
    cpu: () => cpuSeconds(pid),
    threads: () => threadCpu(pid),
    /** Largest samples (every 500 ms): RSS, JS heap, external; the rest of RSS is mostly the engine's. */
    memory: () => ({ ...mem }),
    async close() {
      clearInterval(rssTimer);
      clearInterval(memTimer);
      await service.stop();
      if (!o.keepDataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
