// One open syslog listener (conventions.md "Syslog listeners"): a UDP socket, or a TCP or TLS
// server whose connections are split into messages by framing.ts, all going through the ingest
// pipeline with the listener's token, as HTTP ingest does.
//
// Back-pressure: a TCP connection's socket is paused while what it sent is being handed to the
// pipeline; when the queue is full (429) or the spool cannot be written (503) the delivery waits
// for room and tries again, so the socket stays unread, the kernel's buffers fill and the sender
// waits: nothing read is dropped. UDP cannot wait: datagrams gather up to UDP_PENDING messages
// while the pipeline has no room, and what arrives beyond that is dropped and counted.
//
// With a token whose parser is `syslog` the listener parses each message itself, with its time zone
// (RFC 3164 times carry none). A message that is not syslog at all is still stored, as `message`,
// and counted as a parse error, as RFC 3164 tells a relay to do.
import dgram from 'node:dgram';
import net from 'node:net';
import tls from 'node:tls';
import type { FastifyBaseLogger } from 'fastify';
import { HttpError } from '../http/errors.ts';
import type { ResolvedToken } from '../ingest/pipeline.ts';
import { ParseError } from '../ingest/parsers/parse-error.ts';
import { parseSyslogAt } from '../ingest/parsers/syslog.ts';
import type { TimeZone } from '../ingest/parsers/time-zone.ts';
import type { AcceptResult, IncomingRecord } from '../ingest/types.ts';
import type { Metrics } from '../metrics/metrics.ts';
import { datagramMessage, SyslogFramer } from './framing.ts';

export type SyslogProtocol = 'udp' | 'tcp' | 'tls';

/** Messages handed to the pipeline at once. */
const DELIVERY_MESSAGES = 5_000;
/** UDP messages held while the pipeline has no room; more are dropped. */
const UDP_PENDING = 100_000;
/** The largest message a TCP or TLS frame may carry (bigger ones are skipped and counted as drops). */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
/** The receive buffer asked of the kernel for a UDP socket (it may grant less), for bursts. */
const UDP_RECEIVE_BUFFER = 8 * 1024 * 1024;

/** What a listener needs of the ingest pipeline. */
export interface ListenerIngest {
  /** The enabled token of that value, or null once it is disabled or deleted. */
  tokenFor(value: string): ResolvedToken | null;
  accept(token: ResolvedToken, records: IncomingRecord[]): Promise<AcceptResult>;
  /** Resolves the next time the queue has room again. */
  whenRoom(): Promise<void>;
}

export interface ListenerSettings {
  id: string;
  name: string;
  protocol: SyslogProtocol;
  bindAddress: string;
  port: number;
  /** The ingest token's value. */
  token: string;
  /** RFC 3164 times are read in it (null: UTC). */
  zone: TimeZone | null;
  tls?: { cert: string; key: string };
}

export const noCounts = (): ListenerCounters => ({ messages: 0, bytes: 0, parse_errors: 0, drops: 0, connections: 0 });

export interface ListenerCounters {
  messages: number;
  bytes: number;
  parse_errors: number;
  drops: number;
  connections: number;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());

/** Messages waiting for the pipeline, delivered by one loop at a time. */
class Intake {
  private pending: string[] = [];
  private running: Promise<void> | null = null;

  constructor(
    private readonly listener: SyslogListener,
    private readonly bound: number,
  ) {}

  get empty(): boolean {
    return this.pending.length === 0;
  }

  add(text: string): void {
    if (this.pending.length >= this.bound) this.listener.dropped(1);
    else this.pending.push(text);
  }

  /** Delivers everything pending (also what arrives meanwhile); resolves when it is all handed over. */
  flush(): Promise<void> {
    this.running ??= (async () => {
      try {
        while (this.pending.length > 0) await this.listener.deliver(this.pending.splice(0, DELIVERY_MESSAGES));
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }
}

export class SyslogListener {
  /** The port actually bound (the configured one, or the one the system chose for 0). */
  boundPort = 0;
  private server: net.Server | null = null;
  private udp: dgram.Socket | null = null;
  private readonly sockets = new Set<net.Socket>();
  private readonly flushes = new Set<Promise<void>>();
  private running = true;
  private wakeStopped!: () => void;
  private readonly stopped = new Promise<void>((r) => (this.wakeStopped = r));
  private warnedToken = false;

  constructor(
    readonly settings: ListenerSettings,
    /** Kept by the caller across restarts of the listener (an edit reopens it). */
    readonly counters: ListenerCounters,
    private readonly ingest: ListenerIngest,
    private readonly metrics: Metrics,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** Binds the socket; rejects with the system's error (EADDRINUSE, EACCES, …) when it cannot. */
  async start(): Promise<void> {
    const s = this.settings;
    if (s.protocol === 'udp') {
      const sock = dgram.createSocket({ type: net.isIPv6(s.bindAddress) ? 'udp6' : 'udp4' });
      await new Promise<void>((resolve, reject) => {
        sock.once('error', reject);
        sock.bind({ address: s.bindAddress, port: s.port }, () => {
          sock.off('error', reject);
          resolve();
        });
      });
      try {
        sock.setRecvBufferSize(UDP_RECEIVE_BUFFER);
      } catch {
        // the kernel's limit (net.core.rmem_max) applies; the default buffer still works
      }
      const intake = new Intake(this, UDP_PENDING);
      sock.on('message', (msg) => {
        this.counters.bytes += msg.length;
        this.metrics.syslogBytes.inc({ listener: s.name }, msg.length);
        const text = datagramMessage(msg);
        if (text === null) return;
        this.received();
        intake.add(text);
        this.track(intake.flush());
      });
      sock.on('error', (err) => this.log.warn({ listener: s.name, err: err.message }, 'syslog listener socket error'));
      this.udp = sock;
      this.boundPort = sock.address().port;
      return;
    }
    const server =
      s.protocol === 'tls'
        ? tls.createServer({ cert: s.tls!.cert, key: s.tls!.key }, (sock) => this.connection(sock))
        : net.createServer((sock) => this.connection(sock));
    if (s.protocol === 'tls') server.on('tlsClientError', (err) => this.log.debug({ listener: s.name, err: err.message }, 'TLS handshake failed'));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host: s.bindAddress, port: s.port }, () => {
        server.off('error', reject);
        resolve();
      });
    });
    server.on('error', (err) => this.log.warn({ listener: s.name, err: err.message }, 'syslog listener error'));
    this.server = server;
    this.boundPort = (server.address() as net.AddressInfo).port;
  }

  /** Stops listening and closes connections; what was read is still handed over (or counted as dropped). */
  async stop(): Promise<void> {
    this.running = false;
    this.wakeStopped();
    const closed = this.server ? new Promise<void>((r) => this.server!.close(() => r())) : Promise.resolve();
    for (const sock of this.sockets) sock.destroy();
    if (this.udp) await new Promise<void>((r) => this.udp!.close(() => r()));
    await closed;
    await Promise.all([...this.flushes]);
  }

  private connection(sock: net.Socket): void {
    const name = this.settings.name;
    this.sockets.add(sock);
    this.counters.connections++;
    const intake = new Intake(this, Infinity);
    let ended = false;
    const framer = new SyslogFramer(MAX_MESSAGE_BYTES, {
      message: (text) => {
        this.received();
        intake.add(text);
      },
      oversized: () => {
        this.received();
        this.dropped(1, 'a message over 16 MiB was skipped');
      },
      incomplete: () => {
        this.received();
        this.dropped(1, 'the connection ended inside an octet-counted frame');
      },
    });
    const finish = () => {
      if (ended) return;
      ended = true;
      framer.end();
      this.track(intake.flush());
    };
    sock.on('data', (chunk: Buffer) => {
      this.counters.bytes += chunk.length;
      this.metrics.syslogBytes.inc({ listener: name }, chunk.length);
      framer.push(chunk);
      if (intake.empty) return;
      // Not read again until the pipeline has what came: a full queue holds the sender here.
      sock.pause();
      this.track(
        intake.flush().then(() => {
          if (!sock.destroyed) sock.resume();
        }),
      );
    });
    sock.on('end', () => {
      finish();
      sock.end();
    });
    sock.on('error', () => {}); // a reset peer: what was read is still delivered on close
    sock.on('close', () => {
      finish();
      this.sockets.delete(sock);
      this.counters.connections--;
    });
  }

  private track(p: Promise<void>): void {
    this.flushes.add(p);
    void p.finally(() => this.flushes.delete(p));
  }

  private received(): void {
    this.counters.messages++;
    this.metrics.syslogMessages.inc({ listener: this.settings.name });
  }

  dropped(n: number, why?: string): void {
    this.counters.drops += n;
    this.metrics.syslogDrops.inc({ listener: this.settings.name }, n);
    if (why) this.log.warn({ listener: this.settings.name, messages: n }, `syslog messages dropped: ${why}`);
  }

  private parseErrors(n: number): void {
    if (n === 0) return;
    this.counters.parse_errors += n;
    this.metrics.syslogParseErrors.inc({ listener: this.settings.name }, n);
  }

  /** The records of some messages for a token: parsed here when its parser is syslog (with the zone). */
  private records(token: ResolvedToken, messages: string[]): IncomingRecord[] {
    if (token.row.parser_type !== 'syslog') return messages.map((text) => ({ text }));
    const now = Date.now();
    let unreadable = 0;
    const out = messages.map((text): IncomingRecord => {
      try {
        return { text, fields: parseSyslogAt(text, now, this.settings.zone) };
      } catch (err) {
        if (!(err instanceof ParseError)) throw err;
        unreadable++;
        return { text, fields: { message: text } };
      }
    });
    this.parseErrors(unreadable);
    return out;
  }

  /**
   * Hands messages to the pipeline, waiting for room as long as it is full (or its spool cannot be
   * written); drops them only when the token is gone or the listener stops while waiting.
   */
  async deliver(messages: string[]): Promise<void> {
    let records: IncomingRecord[] | null = null;
    let parsedFor: ResolvedToken | null = null;
    for (;;) {
      const token = this.ingest.tokenFor(this.settings.token);
      if (!token) {
        if (!this.warnedToken) this.log.warn({ listener: this.settings.name }, 'the syslog listener\'s ingest token is disabled or deleted; dropping what arrives');
        this.warnedToken = true;
        this.dropped(messages.length);
        return;
      }
      this.warnedToken = false;
      if (parsedFor !== token) {
        records = this.records(token, messages);
        parsedFor = token;
      }
      try {
        const r = await this.ingest.accept(token, records!);
        this.parseErrors(r.rejected); // json or kv lines their parser refused
        return;
      } catch (err) {
        const busy = err instanceof HttpError && (err.statusCode === 429 || err.statusCode === 503);
        if (!busy || !this.running) {
          this.dropped(messages.length, busy ? 'the listener was closed while the ingest queue was full' : (err as Error).message);
          return;
        }
        const retryS = Number(err.headers['retry-after'] ?? 1);
        await Promise.race([this.ingest.whenRoom(), sleep(Math.max(1, retryS) * 1000), this.stopped]);
      }
    }
  }
}
