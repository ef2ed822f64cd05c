// The address log shippers on the LAN should send to, shown in the tray and copied by
// "Copy ingest address". The service listens on SVC_HOST (default 0.0.0.0 = every
// interface), so "127.0.0.1" would be useless to another machine: pick a LAN address.
import type { NetworkInterfaceInfo } from 'node:os';

export type Interfaces = NodeJS.Dict<NetworkInterfaceInfo[]>;

export const INGEST_PATH = '/api/v1/ingest';

const WILDCARD = new Set(['', '0.0.0.0', '::', '[::]']);

function isLoopback(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
}

/** First non-internal, non-link-local IPv4 in the order the OS reports interfaces. */
export function firstLanIPv4(interfaces: Interfaces): string | null {
  for (const list of Object.values(interfaces)) {
    for (const a of list ?? []) {
      // Node 18.0-18.3 reported family as the number 4; accept both spellings.
      const v4 = a.family === 'IPv4' || (a.family as unknown) === 4;
      // 169.254/16 is a self-assigned address when DHCP failed: no shipper can route to it.
      if (v4 && !a.internal && !a.address.startsWith('169.254.')) return a.address;
    }
  }
  return null;
}

export function ingestAddress(
  listen: { host: string; port: number; baseUrl?: string | null },
  interfaces: Interfaces,
): string {
  // An operator-set public address (reverse proxy, DNS name) beats anything we can guess.
  if (listen.baseUrl) return `${listen.baseUrl.replace(/\/+$/, '')}${INGEST_PATH}`;
  let host: string;
  if (isLoopback(listen.host)) host = '127.0.0.1'; // only this machine can reach it anyway
  else if (WILDCARD.has(listen.host)) host = firstLanIPv4(interfaces) ?? '127.0.0.1';
  else host = listen.host; // bound to one specific address: that is the one that works
  if (host.includes(':') && !host.startsWith('[')) host = `[${host}]`; // IPv6 literal in a URL
  return `http://${host}:${listen.port}${INGEST_PATH}`;
}
