// Talking to the appliance's syslog listeners as network gear and forwarders do: datagrams, TCP and
// TLS streams (certificates from certificates.ts), and a listener made through
// the API.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import net from 'node:net';
import tls from 'node:tls';
import type { Client, TestAppliance } from './appliance.ts';

/** The id of the ingest token of that value. */
export const tokenIdOf = (a: TestAppliance, token: string): string => a.context.ingestTokens.byValue(token)!.id;

/** A listener on 127.0.0.1 and a port the system picks, for the token; its API view. */
export async function makeListener(admin: Client, body: Record<string, unknown>): Promise<any> {
  const r = await admin.post('/api/v1/syslog-listeners', { bind_address: '127.0.0.1', port: 0, ...body });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  assert.equal(r.body.data.status, 'listening');
  return r.body.data;
}

/** Sends each message as one datagram, one after another. */
export async function sendUdp(port: number, messages: string[]): Promise<void> {
  const sock = dgram.createSocket('udp4');
  try {
    for (const m of messages) await new Promise<void>((resolve, reject) => sock.send(m, port, '127.0.0.1', (err) => (err ? reject(err) : resolve())));
  } finally {
    sock.close();
  }
}

/** A connected TCP socket, or a TLS one (any certificate accepted). */
export async function connect(port: number, opts: { tls?: boolean } = {}): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const sock = opts.tls
      ? tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => resolve(sock))
      : net.connect({ host: '127.0.0.1', port }, () => resolve(sock));
    sock.once('error', reject);
  });
}

/** Writes the bytes and ends the stream; resolves once the peer has closed it too. */
export async function sendStream(sock: net.Socket, data: string | Buffer): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    sock.once('error', reject);
    sock.on('close', () => resolve());
    sock.resume(); // the appliance writes nothing back; read its end of the stream
    sock.end(data);
  });
}

/** An RFC 6587 octet-counted frame. */
export const octetFrame = (message: string): string => `${Buffer.byteLength(message)} ${message}`;

/** True when nothing accepts TCP connections on the port any more. */
export async function refusesConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect({ host: '127.0.0.1', port });
    sock.once('connect', () => {
      sock.destroy();
      resolve(false);
    });
    sock.once('error', () => resolve(true));
  });
}

export { selfSignedCert } from './certificates.ts';
