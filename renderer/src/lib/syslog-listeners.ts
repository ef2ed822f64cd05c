// Syslog listeners (conventions.md "Syslog listeners"): the calls of /api/v1/syslog-listeners and the
// pure helpers of the Admin › Syslog listeners page (unit-tested in tests/ui/syslog-listeners.test.ts).
// Every call throws ApiError with the service's own sentence.
import type { ListenerCounters, SyslogProtocol } from '../../../service/src/syslog/listener.ts';
import { del, enc, get, post, put, type Id } from './api.ts';

// The protocol names and a listener's counters are the service's own types (type-only: nothing of
// the listener's sockets reaches the page).
export type { ListenerCounters, SyslogProtocol };

export interface SyslogListener {
  id: string;
  name: string;
  protocol: SyslogProtocol;
  bind_address: string;
  port: number;
  ingest_token_id: string;
  ingest_token_name: string | null;
  fractal_id: string | null;
  parser_type: 'json' | 'kv' | 'syslog' | null;
  time_zone: string;
  enabled: boolean;
  has_tls_cert: boolean;
  status: 'listening' | 'stopped' | 'failed';
  status_reason: string | null;
  listening_port: number | null;
  counters: ListenerCounters;
  created_at: string;
  updated_at: string;
}

export interface ListenerInput {
  name: string;
  protocol: SyslogProtocol;
  bind_address: string;
  port: number;
  ingest_token_id: string;
  time_zone: string;
  enabled: boolean;
  tls_cert?: string;
  tls_key?: string;
}

export const syslogListeners = {
  list: () => get<SyslogListener[]>('/syslog-listeners'),
  create: (body: ListenerInput) => post<SyslogListener>('/syslog-listeners', body),
  update: (id: Id, body: Partial<ListenerInput>) => put<SyslogListener>(`/syslog-listeners/${enc(id)}`, body),
  remove: (id: Id) => del<{ deleted: boolean }>(`/syslog-listeners/${enc(id)}`),
};

/** What the form holds (text inputs are strings). */
export interface ListenerForm {
  name: string;
  protocol: SyslogProtocol;
  bind_address: string;
  port: string;
  ingest_token_id: string;
  time_zone: string;
  enabled: boolean;
  tls_cert: string;
  tls_key: string;
}

export const emptyForm = (): ListenerForm => ({
  name: '',
  protocol: 'udp',
  bind_address: '0.0.0.0',
  port: '5514',
  ingest_token_id: '',
  time_zone: 'UTC',
  enabled: true,
  tls_cert: '',
  tls_key: '',
});

export const formOf = (l: SyslogListener): ListenerForm => ({
  name: l.name,
  protocol: l.protocol,
  bind_address: l.bind_address,
  port: String(l.port),
  ingest_token_id: l.ingest_token_id,
  time_zone: l.time_zone,
  enabled: l.enabled,
  tls_cert: '',
  tls_key: '',
});

/**
 * The body the form stands for, or the sentence saying what is missing. An edit that leaves the PEM
 * fields empty keeps the stored certificate and key (the service never sends them back).
 */
export function bodyOf(f: ListenerForm, editing: boolean): { ok: true; body: ListenerInput } | { ok: false; error: string } {
  if (!f.name.trim()) return { ok: false, error: 'Give the listener a name.' };
  const port = Number(f.port);
  if (!/^\d+$/.test(f.port.trim()) || port > 65_535) return { ok: false, error: 'The port is a number from 0 to 65535 (514 is the syslog port; ports below 1024 need privileges).' };
  if (!f.ingest_token_id) return { ok: false, error: 'Choose the ingest token whose fractal and parser the messages get.' };
  const body: ListenerInput = {
    name: f.name.trim(),
    protocol: f.protocol,
    bind_address: f.bind_address.trim() || '0.0.0.0',
    port,
    ingest_token_id: f.ingest_token_id,
    time_zone: f.time_zone.trim() || 'UTC',
    enabled: f.enabled,
  };
  if (f.protocol === 'tls') {
    const cert = f.tls_cert.trim();
    const key = f.tls_key.trim();
    if (cert || key || !editing) {
      if (!cert || !key) return { ok: false, error: 'A TLS listener needs its certificate and private key, both in PEM.' };
      body.tls_cert = cert;
      body.tls_key = key;
    }
  }
  return { ok: true, body };
}

/** `0.0.0.0:5514/udp`: where senders point, with the port the system chose for 0. */
export function addressOf(l: SyslogListener): string {
  const host = l.bind_address.includes(':') ? `[${l.bind_address}]` : l.bind_address;
  return `${host}:${l.listening_port ?? l.port}/${l.protocol}`;
}

/** A sender's line to test a UDP or TCP listener with util-linux `logger` (null for TLS, which logger cannot speak). */
export function loggerCommand(l: SyslogListener, host: string): string | null {
  if (l.protocol === 'tls') return null;
  const port = l.listening_port ?? l.port;
  const transport = l.protocol === 'udp' ? '--udp' : '--tcp --octet-count';
  return `logger ${transport} --rfc5424 -n ${host} -P ${port} -t myapp 'hello from logger'`;
}
