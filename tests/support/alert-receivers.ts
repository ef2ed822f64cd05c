// Real destinations for alert actions, on loopback: a webhook receiver (node:http on port 0) that
// records every request and answers as each path is told to, and an SMTP server (smtp-server, plain,
// implicit TLS or STARTTLS) that records every message.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface Received {
  path: string;
  method: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** performance.now() when the request ended. */
  at: number;
}

/** How a path answers: a status (and body, or where it redirects), or `hang` (never answers), `reset` (drops the socket). */
export type Reply = { status: number; body?: string; location?: string } | 'hang' | 'reset';

export class WebhookReceiver {
  readonly received: Received[] = [];
  private replies = new Map<string, Reply[]>();
  private server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      this.received.push({ path, method: req.method ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: performance.now() });
      const queue = this.replies.get(path);
      const reply: Reply = (queue && queue.length > 1 ? queue.shift() : queue?.[0]) ?? { status: 200, body: '{"ok":true}' };
      if (reply === 'hang') return; // never answers
      if (reply === 'reset') return void req.socket.destroy();
      res.writeHead(reply.status, { 'content-type': 'application/json', ...(reply.location ? { location: reply.location } : {}) });
      res.end(reply.body ?? '');
    });
  });
  url = '';

  async start(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** Answers on `path` with these replies in turn, the last one from then on. */
  answer(path: string, ...replies: Reply[]): void {
    this.replies.set(path, replies);
  }

  on(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}

export interface Mail {
  from: string;
  to: string[];
  raw: string;
  user?: string;
  /** The message came over TLS (implicit, or after STARTTLS). */
  secure: boolean;
}

export interface MailReceiverOptions {
  user?: string;
  password?: string;
  /** A key and certificate: with `tls: 'implicit'` TLS from the first byte (port 465 style), with 'starttls' offered as an upgrade. */
  key?: string;
  cert?: string;
  tls?: 'implicit' | 'starttls';
}

export class MailReceiver {
  readonly mails: Mail[] = [];
  readonly errors: Error[] = [];
  port = 0;
  private server: SMTPServer;

  constructor(opts: MailReceiverOptions = {}) {
    this.server = new SMTPServer({
      secure: opts.tls === 'implicit',
      ...(opts.tls ? { key: opts.key, cert: opts.cert } : {}),
      disabledCommands: opts.tls === 'starttls' ? [] : ['STARTTLS'],
      authOptional: !opts.user,
      allowInsecureAuth: true,
      onAuth: (auth, _session, cb) => {
        if (auth.username === opts.user && auth.password === opts.password) cb(null, { user: auth.username });
        else cb(new Error('Invalid username or password'));
      },
      onData: (stream, session, cb) => {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          this.mails.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            raw: Buffer.concat(chunks).toString('utf8'),
            user: session.user as string | undefined,
            secure: session.secure,
          });
          cb();
        });
      },
      logger: false,
    });
  }

  async start(): Promise<this> {
    // A client that gives up mid-handshake (an untrusted certificate) is its business, not an error here.
    this.server.on('error', (err) => this.errors.push(err));
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()));
    this.port = (this.server.server.address() as AddressInfo).port;
    return this;
  }

  async stop(): Promise<void> {
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

export { waitFor } from './wait.ts';
