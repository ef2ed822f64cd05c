// Debian's real rsyslog and syslog-ng, started in the foreground with a private configuration,
// pid, state and socket files in a temporary folder, fed RFC 5424 lines over TCP at a given pace.
// scripts/install-test-shippers.sh (run by .ci/run) puts them in place: rsyslog installed,
// syslog-ng unpacked into SVC_TEST_SYSLOG_NG_DIR when the package is not installed. shipperSuite is
// the frame of the tests under tests/shippers/.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before } from 'node:test';
import { ADMIN_PASSWORD, signIn, startTestAppliance, type Client, type TestAppliance } from './appliance.ts';

export interface Daemon {
  /** Where the daemon takes RFC 5424 lines (TCP, one per line). */
  inputPort: number;
  dir: string;
  output(): string;
  stop(): Promise<void>;
}

/** A port free right now on loopback (the daemon binds it a moment later). */
async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv, dir: string): Daemon & { child: ChildProcess } {
  const child = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  return {
    child,
    inputPort: 0,
    dir,
    output: () => out,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        const t = setTimeout(() => child.kill('SIGKILL'), 30_000);
        await exited;
        clearTimeout(t);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Waits until the daemon accepts connections on its input port (or fails with its output). */
async function ready(d: Daemon & { child: ChildProcess }, timeoutMs = 60_000): Promise<Daemon> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (d.child.exitCode !== null) throw new Error(`the daemon exited (${d.child.exitCode}):\n${d.output()}`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect({ host: '127.0.0.1', port: d.inputPort }, () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return d;
    if (Date.now() > until) throw new Error(`the daemon did not open port ${d.inputPort}:\n${d.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** rsyslogd -n with a TCP input (imptcp) feeding the default ruleset, then `config` (a recipe). */
export async function startRsyslog(config: string): Promise<Daemon> {
  if (!existsSync('/usr/sbin/rsyslogd')) throw new Error('rsyslogd is missing: run scripts/install-test-shippers.sh');
  const dir = mkdtempSync(path.join(tmpdir(), 'rsyslog-'));
  const inputPort = await freePort();
  writeFileSync(
    path.join(dir, 'rsyslog.conf'),
    [
      `global(workDirectory="${dir}" maxMessageSize="64k")`,
      'module(load="imptcp")',
      `input(type="imptcp" address="127.0.0.1" port="${inputPort}")`,
      '',
      config,
      '',
    ].join('\n'),
  );
  const d = run('/usr/sbin/rsyslogd', ['-n', '-f', path.join(dir, 'rsyslog.conf'), '-i', path.join(dir, 'rsyslogd.pid')], {}, dir);
  d.inputPort = inputPort;
  return ready(d);
}

/** The root syslog-ng runs from: / when Debian's package is installed, else the unpacked folder. */
function syslogNgRoot(): string {
  if (existsSync('/usr/sbin/syslog-ng')) return '/';
  const dir = process.env.SVC_TEST_SYSLOG_NG_DIR || '/opt/log-appliance-test/syslog-ng';
  if (!existsSync(path.join(dir, 'usr/sbin/syslog-ng'))) throw new Error('syslog-ng is missing: run scripts/install-test-shippers.sh');
  return dir;
}

/**
 * syslog-ng -F with `s_src` (the name Debian's default configuration gives its source) a TCP
 * network source of RFC 5424 lines, the SCL's elasticsearch-http() driver, then `config` (a recipe).
 */
export async function startSyslogNg(config: string): Promise<Daemon> {
  const root = syslogNgRoot();
  const dir = mkdtempSync(path.join(tmpdir(), 'syslog-ng-'));
  const inputPort = await freePort();
  const version = readdirSync(path.join(root, 'usr/lib/syslog-ng')).find((n) => /^\d+\.\d+$/.test(n)) ?? '3.38';
  writeFileSync(
    path.join(dir, 'syslog-ng.conf'),
    [
      `@version: ${version}`,
      `@include "${path.join(root, 'usr/share/syslog-ng/include/scl/elasticsearch/elastic-http.conf')}"`,
      // Debian's default syslog-ng.conf keeps the hostname a message names (the recipes rely on it).
      'options { stats-freq(0); keep-hostname(yes); use-dns(no); };',
      `source s_src { network(ip("127.0.0.1") port(${inputPort}) transport("tcp") flags(syslog-protocol)); };`,
      '',
      config,
      '',
    ].join('\n'),
  );
  const usrLib = path.join(root, 'usr/lib');
  const lib = [...readdirSync(usrLib).filter((n) => n.endsWith('-linux-gnu')).map((n) => path.join(usrLib, n)), path.join(usrLib, 'syslog-ng')].join(':');
  const d = run(
    path.join(root, 'usr/sbin/syslog-ng'),
    [
      '-F',
      '-f', path.join(dir, 'syslog-ng.conf'),
      '-R', path.join(dir, 'syslog-ng.persist'),
      '-c', path.join(dir, 'syslog-ng.ctl'),
      '-p', path.join(dir, 'syslog-ng.pid'),
      `--module-path=${path.join(root, 'usr/lib/syslog-ng', version)}`,
    ],
    root === '/' ? {} : { LD_LIBRARY_PATH: lib },
    dir,
  );
  d.inputPort = inputPort;
  return ready(d);
}

/**
 * Writes `lines` to the daemon's input at `perSecond` lines a second (in 10 ms steps), then closes
 * the connection.
 */
export async function feed(port: number, lines: string[], perSecond: number): Promise<void> {
  const sock = net.connect({ host: '127.0.0.1', port });
  await new Promise<void>((resolve, reject) => {
    sock.once('connect', () => resolve());
    sock.once('error', reject);
  });
  const started = Date.now();
  let sent = 0;
  while (sent < lines.length) {
    const due = Math.min(lines.length, Math.ceil(((Date.now() - started + 10) / 1000) * perSecond));
    if (due > sent) {
      const chunk = lines.slice(sent, due).join('\n') + '\n';
      sent = due;
      if (!sock.write(chunk)) await new Promise((r) => sock.once('drain', r));
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  await new Promise<void>((r) => sock.end(() => r()));
}

/**
 * The shipper tests' common frame: one appliance and its admin for the file, and the daemons each
 * test starts (with `startDaemon`), all stopped after the last test.
 */
export function shipperSuite(startDaemon: (config: string) => Promise<Daemon>) {
  const daemons: Daemon[] = [];
  const suite = {
    a: undefined as unknown as TestAppliance,
    admin: undefined as unknown as Client,
    async start(config: string): Promise<Daemon> {
      const d = await startDaemon(config);
      daemons.push(d);
      return d;
    },
  };
  before(async () => {
    suite.a = await startTestAppliance();
    suite.admin = await signIn(suite.a.url, 'admin', ADMIN_PASSWORD);
  });
  after(async () => {
    for (const d of daemons) await d.stop();
    await suite.a?.dispose();
  });
  return suite;
}
