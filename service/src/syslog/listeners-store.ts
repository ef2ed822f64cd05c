// Syslog listeners in SQLite (`syslog_listeners`). The TLS certificate and key are kept sealed
// and opened only to start a listener.
import type { Db } from '../storage/sqlite.ts';
import type { SecretBox } from '../storage/secret-box.ts';
import type { SyslogProtocol } from './listener.ts';

export interface ListenerRow {
  id: string;
  name: string;
  protocol: SyslogProtocol;
  bind_address: string;
  port: number;
  ingest_token_id: string;
  tls_cert_sealed: string | null;
  tls_key_sealed: string | null;
  time_zone: string;
  enabled: number;
  created_at: string;
  updated_at: string;
}

export interface ListenerInput {
  name: string;
  protocol: SyslogProtocol;
  bind_address: string;
  port: number;
  ingest_token_id: string;
  tls: { cert: string; key: string } | null;
  time_zone: string;
  enabled: boolean;
}

export class SyslogListenersStore {
  constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
  ) {}

  list(): ListenerRow[] {
    return this.db.prepare('SELECT * FROM syslog_listeners ORDER BY name').all() as ListenerRow[];
  }

  get(id: string): ListenerRow | undefined {
    return this.db.prepare('SELECT * FROM syslog_listeners WHERE id = ?').get(id) as ListenerRow | undefined;
  }

  /** The certificate and key of a TLS listener, opened. */
  tlsOf(row: ListenerRow): { cert: string; key: string } | null {
    if (!row.tls_cert_sealed || !row.tls_key_sealed) return null;
    return { cert: this.box.open(row.tls_cert_sealed), key: this.box.open(row.tls_key_sealed) };
  }

  /** Writes a listener's fields, as a new row or over the row of that id. */
  save(id: string, l: ListenerInput, isNew: boolean): ListenerRow {
    const now = new Date().toISOString();
    const cert = l.tls ? this.box.seal(l.tls.cert) : null;
    const key = l.tls ? this.box.seal(l.tls.key) : null;
    if (isNew) {
      this.db
        .prepare(
          `INSERT INTO syslog_listeners (id, name, protocol, bind_address, port, ingest_token_id, tls_cert_sealed, tls_key_sealed,
             time_zone, enabled, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(id, l.name, l.protocol, l.bind_address, l.port, l.ingest_token_id, cert, key, l.time_zone, l.enabled ? 1 : 0, now, now);
    } else {
      this.db
        .prepare(
          `UPDATE syslog_listeners SET name = ?, protocol = ?, bind_address = ?, port = ?, ingest_token_id = ?, tls_cert_sealed = ?,
             tls_key_sealed = ?, time_zone = ?, enabled = ?, updated_at = ? WHERE id = ?`,
        )
        .run(l.name, l.protocol, l.bind_address, l.port, l.ingest_token_id, cert, key, l.time_zone, l.enabled ? 1 : 0, now, id);
    }
    return this.get(id)!;
  }

  delete(id: string): void {
    this.db.prepare('DELETE FROM syslog_listeners WHERE id = ?').run(id);
  }
}
