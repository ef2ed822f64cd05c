// An open-loop HTTP load for benchmarks: GETs one URL at a fixed rate for a fixed time from a process
// of its own (so it never shares an event loop with the service it measures), whatever the answers
// do. Requests are due on a fixed schedule (request i at i / rate seconds); a pass every few
// milliseconds sends every request that is due, so a late timer (a loaded machine) catches up instead
// of lowering the rate. Latency counts from when a request was due, not when it left: a generator
// that falls behind shows it in the latencies rather than hiding it (coordinated omission), and the
// lateness of the sends is reported on its own. Keep-alive connections, no request timeout but the
// run's end plus a grace period.
//
//   runLoad(url, rate, seconds) from a benchmark; or `tsx scripts/bench/http-load.ts <url> <rate> <seconds>`
import { spawn } from 'node:child_process';
import http from 'node:http';
import { fileURLToPath } from 'node:url';

export interface LoadFigures {
  /** Requests scheduled (rate × seconds) and sent. */
  planned: number;
  sent: number;
  /** Rate the requests actually left at: sent over the time from the first send to the last. */
  offeredPerS: number;
  /** 200 answers over the time from the first send to the last answer. */
  servedPerS: number;
  ok: number;
  /** Answers other than 200, by status. */
  statuses: Record<string, number>;
  /** Connection errors and requests still unanswered at the end of the grace period. */
  errors: number;
  unanswered: number;
  /** Latency from when each request was due (ms) over the 200 answers. */
  p50: number;
  p99: number;
  max: number;
  /** How late sends left after they were due (ms): the generator's own lag. */
  sendLagP99: number;
  seconds: number;
  /** CPU time of the generator process (ms). */
  cpuMs: number;
}

/** Runs the load in a child process and resolves with its figures. */
export function runLoad(url: string, rate: number, seconds: number): Promise<LoadFigures> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), url, String(rate), String(seconds)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as LoadFigures) : reject(new Error(`the load process exited with ${code}`))));
  });
}

const quantile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;

/** The generator itself (in the child). */
function generate(url: string, rate: number, seconds: number): Promise<LoadFigures> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 128 });
  const planned = Math.round(rate * seconds);
  const latencies: number[] = [];
  const lags: number[] = [];
  const statuses: Record<string, number> = {};
  let sent = 0;
  let ok = 0;
  let errors = 0;
  let settled = 0;
  let lastSend = 0;
  let lastAnswer = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  return new Promise((resolve) => {
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      clearInterval(pacer);
      clearTimeout(grace);
      latencies.sort((a, b) => a - b);
      lags.sort((a, b) => a - b);
      const c = process.cpuUsage(cpu0);
      agent.destroy();
      resolve({
        planned,
        sent,
        offeredPerS: sent / Math.max(1e-3, lastSend / 1000),
        servedPerS: ok / Math.max(1e-3, lastAnswer / 1000),
        ok,
        statuses,
        errors,
        unanswered: sent - settled,
        p50: quantile(latencies, 0.5),
        p99: quantile(latencies, 0.99),
        max: latencies[latencies.length - 1] ?? 0,
        sendLagP99: quantile(lags, 0.99),
        seconds: (performance.now() - t0) / 1000,
        cpuMs: (c.user + c.system) / 1000,
      });
    };
    const settle = () => {
      settled++;
      lastAnswer = performance.now() - t0;
      if (sent === planned && settled === planned) finish();
    };
    const send = (i: number) => {
      const due = (i * 1000) / rate;
      const now = performance.now() - t0;
      lags.push(now - due);
      lastSend = now;
      sent++;
      const req = http.get(url, { agent }, (res) => {
        res.resume();
        res.on('end', () => {
          if (finished) return;
          if (res.statusCode === 200) {
            ok++;
            latencies.push(performance.now() - t0 - due);
          } else statuses[res.statusCode ?? 0] = (statuses[res.statusCode ?? 0] ?? 0) + 1;
          settle();
        });
      });
      req.on('error', () => {
        if (finished) return;
        errors++;
        settle();
      });
    };
    // A pass every 2 ms (timers may fire later on a loaded machine): everything due by now leaves.
    const pacer = setInterval(() => {
      const due = Math.min(planned, Math.floor(((performance.now() - t0) * rate) / 1000) + 1);
      while (sent < due) send(sent);
      if (sent === planned) clearInterval(pacer);
    }, 2);
    // Answers still missing 10 s after the last send are counted as unanswered.
    const grace = setTimeout(finish, seconds * 1000 + 10_000);
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [url, rate, seconds] = process.argv.slice(2);
  if (!url || !rate || !seconds) {
    console.error('usage: tsx scripts/bench/http-load.ts <url> <requests per second> <seconds>');
    process.exit(2);
  }
  generate(url, Number(rate), Number(seconds)).then((f) => {
    process.stdout.write(JSON.stringify(f) + '\n');
    process.exit(0);
  });
}
