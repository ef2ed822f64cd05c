// The syslog listeners of the appliance (conventions.md "Syslog listeners"): checks of what a global
// admin asks for, and the open sockets kept in step with the stored rows. A listener opens and
// closes without a restart: a change is tried on the socket first (a port that cannot be bound is a
// 400 naming the port and the reason, and nothing is stored), then written. Changes run one at a
// time, so two edits never race for a port. A deleted token (or fractal) takes its listeners with
// it (SQLite cascades); the ingest tokens' change event closes their sockets.
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import tls from 'node:tls';
import type { Context } from '../context.ts';
import { badRequest, conflict, isUniqueViolation, notFound } from '../http/errors.ts';
import { TimeZone } from '../ingest/parsers/time-zone.ts';
import { noCounts, SyslogListener, type ListenerCounters, type ListenerIngest, type SyslogProtocol } from './listener.ts';
import type { ListenerInput, ListenerRow, SyslogListenersStore } from './listeners-store.ts';

/** What a create or edit carries (all optional on an edit). */
export interface ListenerBody {
  name?: string;
  protocol?: SyslogProtocol;
  bind_address?: string;
  port?: number;
  ingest_token_id?: string;
  tls_cert?: string;
  tls_key?: string;
  time_zone?: string;
  enabled?: boolean;
}

const BIND_REASONS: Record<string, string> = {
  EADDRINUSE: 'it is already in use',
  EACCES: 'permission denied (ports below 1024 need privileges the service does not have)',
  EADDRNOTAVAIL: 'the address is not one of this machine\'s',
};

export class SyslogListeners {
  private readonly open = new Map<string, SyslogListener>();
  /** Why an enabled listener is not listening (its port could not be bound at start). */
  private readonly failed = new Map<string, string>();
  private readonly counts = new Map<string, ListenerCounters>();
  private serial: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly ctx: Context,
    private readonly store: SyslogListenersStore,
    private readonly ingest: ListenerIngest,
  ) {
    ctx.ingestTokens.onChange(() => void this.one(() => this.closeOrphans()));
  }

  /** Opens every enabled listener; one that cannot bind is logged and shown as failed. */
  async startAll(): Promise<void> {
    await this.one(async () => {
      for (const row of this.store.list()) {
        if (!row.enabled) continue;
        try {
          await this.openRow(row);
        } catch (err) {
          this.failed.set(row.id, (err as Error).message);
          this.ctx.log.error({ listener: row.name, err: (err as Error).message }, 'syslog listener could not be opened');
        }
      }
    });
  }

  async stopAll(): Promise<void> {
    await this.one(async () => {
      await Promise.all([...this.open.values()].map((l) => l.stop()));
      this.open.clear();
    });
  }

  list() {
    return this.store.list().map((r) => this.view(r));
  }

  get(id: string) {
    return this.view(this.rowOr404(id));
  }

  create(body: Required<Pick<ListenerBody, 'name' | 'protocol' | 'port' | 'ingest_token_id'>> & ListenerBody) {
    return this.one(async () => {
      const input = this.checked(body, null);
      const id = randomUUID();
      let opened: SyslogListener | null = null;
      if (input.enabled) opened = await this.bind(id, input);
      try {
        const row = this.store.save(id, input, true);
        return this.view(row);
      } catch (err) {
        if (opened) {
          await opened.stop();
          this.open.delete(id);
        }
        if (isUniqueViolation(err)) throw conflict(`A syslog listener named "${input.name}" already exists.`);
        throw err;
      }
    });
  }

  update(id: string, body: ListenerBody) {
    return this.one(async () => {
      const row = this.rowOr404(id);
      const input = this.checked(body, row);
      // The old socket is closed first (an edit may keep the port); it is opened again if the new one cannot be.
      const old = this.open.get(id);
      if (old) {
        await old.stop();
        this.open.delete(id);
      }
      try {
        if (input.enabled) await this.bind(id, input);
      } catch (err) {
        if (old) await this.openRow(row).catch(() => this.failed.set(id, 'closed by a failed edit'));
        throw err;
      }
      this.failed.delete(id);
      try {
        return this.view(this.store.save(id, input, false));
      } catch (err) {
        if (isUniqueViolation(err)) {
          await this.open.get(id)?.stop();
          this.open.delete(id);
          if (row.enabled) await this.openRow(row).catch(() => this.failed.set(id, 'closed by a failed edit'));
          throw conflict(`A syslog listener named "${input.name}" already exists.`);
        }
        throw err;
      }
    });
  }

  remove(id: string) {
    return this.one(async () => {
      this.rowOr404(id);
      await this.open.get(id)?.stop();
      this.open.delete(id);
      this.failed.delete(id);
      this.counts.delete(id);
      this.store.delete(id);
    });
  }

  private view(r: ListenerRow) {
    const token = this.ctx.ingestTokens.byId(r.ingest_token_id);
    const live = this.open.get(r.id);
    const failed = this.failed.get(r.id);
    return {
      id: r.id,
      name: r.name,
      protocol: r.protocol,
      bind_address: r.bind_address,
      port: r.port,
      ingest_token_id: r.ingest_token_id,
      ingest_token_name: token?.name ?? null,
      fractal_id: token?.fractal_id ?? null,
      parser_type: token?.parser_type ?? null,
      time_zone: r.time_zone,
      enabled: r.enabled === 1,
      has_tls_cert: r.tls_cert_sealed !== null,
      status: live ? 'listening' : failed ? 'failed' : 'stopped',
      status_reason: live ? null : (failed ?? null),
      /** The port bound (the system's choice when `port` is 0). */
      listening_port: live ? live.boundPort : null,
      counters: { ...(this.counts.get(r.id) ?? noCounts()) },
      created_at: r.created_at,
      updated_at: r.updated_at,
    };
  }

  /** Runs changes one at a time. */
  private one<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.serial.then(fn, fn);
    this.serial = run.catch(() => {});
    return run;
  }

  private rowOr404(id: string): ListenerRow {
    const row = this.store.get(id);
    if (!row) throw notFound('No syslog listener has this id.');
    return row;
  }

  /** A body checked and merged over the stored row (null: a new listener). */
  private checked(b: ListenerBody, row: ListenerRow | null): ListenerInput {
    const protocol = b.protocol ?? row!.protocol;
    const bindAddress = b.bind_address ?? row?.bind_address ?? '0.0.0.0';
    if (!net.isIP(bindAddress)) throw badRequest(`"bind_address" must be an IP address of this machine, such as 0.0.0.0 or ::; "${bindAddress}" is not one.`);
    const tokenId = b.ingest_token_id ?? row!.ingest_token_id;
    if (!this.ctx.ingestTokens.byId(tokenId)) throw badRequest(`No ingest token has the id "${tokenId}" given as "ingest_token_id".`);
    const zone = b.time_zone ?? row?.time_zone ?? 'UTC';
    if (!TimeZone.of(zone)) throw badRequest(`"time_zone" must be an IANA time zone such as UTC or Europe/Berlin; "${zone}" is not one.`);
    let certs: { cert: string; key: string } | null = null;
    if (protocol === 'tls') {
      if ((b.tls_cert === undefined) !== (b.tls_key === undefined)) throw badRequest('Send "tls_cert" and "tls_key" together.');
      certs = b.tls_cert !== undefined ? { cert: b.tls_cert, key: b.tls_key! } : row ? this.store.tlsOf(row) : null;
      if (!certs) throw badRequest('A tls listener needs "tls_cert" and "tls_key": its certificate and private key in PEM.');
      try {
        tls.createSecureContext(certs);
      } catch (err) {
        throw badRequest(`"tls_cert" and "tls_key" are not a PEM certificate and its private key: ${(err as Error).message}.`);
      }
    } else if (b.tls_cert !== undefined || b.tls_key !== undefined) {
      throw badRequest('"tls_cert" and "tls_key" apply only to protocol tls.');
    }
    return {
      name: (b.name ?? row!.name).trim(),
      protocol,
      bind_address: bindAddress,
      port: b.port ?? row!.port,
      ingest_token_id: tokenId,
      tls: certs,
      time_zone: zone,
      enabled: b.enabled ?? (row ? row.enabled === 1 : true),
    };
  }

  /** Opens a listener's socket; a 400 naming the port and the reason when it cannot be bound. */
  private async bind(id: string, l: ListenerInput): Promise<SyslogListener> {
    const token = this.ctx.ingestTokens.byId(l.ingest_token_id)!;
    const zone = TimeZone.of(l.time_zone);
    let counters = this.counts.get(id);
    if (!counters) this.counts.set(id, (counters = noCounts()));
    const listener = new SyslogListener(
      {
        id,
        name: l.name,
        protocol: l.protocol,
        bindAddress: l.bind_address,
        port: l.port,
        token: this.ctx.ingestTokens.reveal(token),
        zone: zone && !zone.isUtc ? zone : null,
        tls: l.tls ?? undefined,
      },
      counters,
      this.ingest,
      this.ctx.metrics,
      this.ctx.log,
    );
    try {
      await listener.start();
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      const reason = (e.code && BIND_REASONS[e.code]) ?? e.message;
      throw badRequest(`Port ${l.port}/${l.protocol === 'udp' ? 'udp' : 'tcp'} on ${l.bind_address} cannot be opened: ${reason}${e.code ? ` (${e.code})` : ''}.`);
    }
    this.open.set(id, listener);
    this.failed.delete(id);
    return listener;
  }

  private async openRow(row: ListenerRow): Promise<void> {
    await this.bind(row.id, {
      name: row.name,
      protocol: row.protocol,
      bind_address: row.bind_address,
      port: row.port,
      ingest_token_id: row.ingest_token_id,
      tls: this.store.tlsOf(row),
      time_zone: row.time_zone,
      enabled: true,
    });
  }

  /** Closes the sockets of listeners deleted with their token or fractal. */
  private async closeOrphans(): Promise<void> {
    for (const [id, l] of this.open) {
      if (this.store.get(id)) continue;
      await l.stop();
      this.open.delete(id);
      this.counts.delete(id);
    }
  }
}
