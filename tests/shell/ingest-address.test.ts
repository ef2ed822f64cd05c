import assert from 'node:assert/strict';
import os, { type NetworkInterfaceInfo } from 'node:os';
import { test } from 'node:test';
import { firstLanIPv4, ingestAddress } from '../../main/src/ingest-address.ts';

function nic(address: string, family: 'IPv4' | 'IPv6' | 4, internal = false): NetworkInterfaceInfo {
  return { address, family, internal, netmask: '', mac: '00:00:00:00:00:00', cidr: null } as NetworkInterfaceInfo;
}

const LAN = {
  lo: [nic('127.0.0.1', 'IPv4', true)],
  docker0: [nic('fe80::42', 'IPv6')],
  wlan0: [nic('169.254.10.3', 'IPv4'), nic('10.0.0.7', 'IPv4')],
  eth1: [nic('192.168.5.5', 'IPv4')],
};

test('wildcard host: the first non-internal, routable IPv4, in interface order', () => {
  assert.equal(ingestAddress({ host: '0.0.0.0', port: 8080 }, LAN), 'http://10.0.0.7:8080/api/v1/ingest');
  assert.equal(ingestAddress({ host: '::', port: 9000 }, LAN), 'http://10.0.0.7:9000/api/v1/ingest');
});

test('wildcard host with no LAN address falls back to 127.0.0.1', () => {
  const onlyLoopback = { lo: [nic('127.0.0.1', 'IPv4', true), nic('::1', 'IPv6', true)] };
  assert.equal(ingestAddress({ host: '0.0.0.0', port: 8080 }, onlyLoopback), 'http://127.0.0.1:8080/api/v1/ingest');
  assert.equal(firstLanIPv4({}), null);
});

test('loopback host gives 127.0.0.1 even when a LAN address exists', () => {
  for (const host of ['127.0.0.1', 'localhost', '::1', '127.1.2.3']) {
    assert.equal(ingestAddress({ host, port: 8080 }, LAN), 'http://127.0.0.1:8080/api/v1/ingest', host);
  }
});

test('a specific bind address is used as is (IPv6 in brackets)', () => {
  assert.equal(ingestAddress({ host: '192.168.5.5', port: 8080 }, LAN), 'http://192.168.5.5:8080/api/v1/ingest');
  assert.equal(ingestAddress({ host: 'fd00::5', port: 8080 }, LAN), 'http://[fd00::5]:8080/api/v1/ingest');
});

test('SVC_BASE_URL wins over any guess', () => {
  assert.equal(
    ingestAddress({ host: '0.0.0.0', port: 8080, baseUrl: 'https://logs.example.com/' }, LAN),
    'https://logs.example.com/api/v1/ingest',
  );
});

test('numeric family (Node 18.0-18.3) is understood', () => {
  assert.equal(firstLanIPv4({ eth0: [nic('172.16.0.9', 4)] }), '172.16.0.9');
});

test('works on the real interfaces of this machine', () => {
  const a = ingestAddress({ host: '0.0.0.0', port: 8080 }, os.networkInterfaces());
  assert.match(a, /^http:\/\/\d+\.\d+\.\d+\.\d+:8080\/api\/v1\/ingest$/);
  assert.ok(!a.startsWith('http://0.0.0.0'));
});
