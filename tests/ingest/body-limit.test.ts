// A body over SVC_MAX_BODY_SIZE is answered 413 and the rest of it is read and dropped, so the
// sender, still writing, sees the 413 that tells it to split its batch instead of a broken pipe
// (before, Node's client reported EPIPE or ECONNRESET). Seen through Node's own client (a declared
// length and a chunked body, on all three ingest endpoints), curl and the Elasticsearch client; a
// sender that goes on past the drain budget (max(SVC_MAX_BODY_SIZE, 64 MiB)) is cut off.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client as EsClient, errors as esErrors } from '@elastic/elasticsearch';
import { ADMIN_PASSWORD, signIn, startTestAppliance, type TestAppliance } from '../support/appliance.ts';
import { ingestFractal } from '../support/ingest.ts';
import { waitForLogs } from '../support/logs.ts';

const LIMIT = 1024 * 1024;
let a: TestAppliance;
let f: { id: string; token: string };
const tmp = mkdtempSync(path.join(tmpdir(), 'body-limit-'));

before(async () => {
  a = await startTestAppliance({ SVC_MAX_BODY_SIZE: String(LIMIT) });
  f = await ingestFractal(await signIn(a.url, 'admin', ADMIN_PASSWORD), 'body-limit');
});
after(async () => {
  await a.dispose();
  rmSync(tmp, { recursive: true, force: true });
});

/** NDJSON of about `bytes` bytes. */
function ndjson(bytes: number): Buffer {
  const line = `${JSON.stringify({ msg: 'x'.repeat(1000) })}\n`;
  return Buffer.from(line.repeat(Math.ceil(bytes / line.length)));
}

interface Answer {
  status: number;
  body: string;
}

/**
 * Sends `body` with Node's client in 64 KiB writes, as a shipper streams a batch: with its length
 * declared, or chunked. Resolves with the answer; rejects with the client's error (EPIPE...).
 */
function nodeSend(urlPath: string, body: Buffer, opts: { chunked?: boolean; agent?: http.Agent; type?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const u = new URL(a.url + urlPath);
    const req = http.request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: 'POST',
        agent: opts.agent,
        headers: {
          authorization: `Bearer ${f.token}`,
          'content-type': opts.type ?? 'application/x-ndjson',
          ...(opts.chunked ? {} : { 'content-length': String(body.length) }),
        },
      },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (c: Buffer) => parts.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(parts).toString() }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    let at = 0;
    const pump = () => {
      while (at < body.length) {
        const chunk = body.subarray(at, at + 65536);
        at += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      req.end();
    };
    pump();
  });
}

describe("Node's client", () => {
  for (const [endpoint, type] of [
    ['/api/v1/ingest', 'application/x-ndjson'],
    ['/_bulk', 'application/x-ndjson'],
    ['/v1/logs', 'application/json'],
  ] as const) {
    for (const chunked of [false, true]) {
      test(`${endpoint}, ${chunked ? 'chunked' : 'length declared'}: 8 MiB over a 1 MiB limit is a 413 the sender reads`, async () => {
        const r = await nodeSend(endpoint, ndjson(8 * LIMIT), { chunked, type });
        assert.equal(r.status, 413);
        assert.match(r.body, /SVC_MAX_BODY_SIZE|larger than/);
      });
    }
  }

  test('a keep-alive client sends its next batch after a 413 (Node stops sending once it has read the answer: the server lets go of that connection after 5 s without a byte)', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      assert.equal((await nodeSend('/api/v1/ingest', ndjson(4 * LIMIT), { agent })).status, 413);
      const small = Buffer.from('{"msg":"after the refusal"}\n');
      const r = await nodeSend('/api/v1/ingest', small, { agent });
      assert.equal(r.status, 200, r.body);
      const rows = await waitForLogs(a, f.id, 1);
      assert.ok(rows.some((x) => x.fields.msg === 'after the refusal'));
    } finally {
      agent.destroy();
    }
  });
});

test('curl reads the 413', async () => {
  const file = path.join(tmp, 'big.ndjson');
  writeFileSync(file, ndjson(8 * LIMIT));
  const out = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const p = spawn('curl', ['-sS', '-o', '/dev/null', '-w', '%{http_code}', '-H', `authorization: Bearer ${f.token}`, '-H', 'content-type: application/x-ndjson', '--data-binary', `@${file}`, `${a.url}/api/v1/ingest`]);
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (c) => (stdout += c));
    p.stderr.on('data', (c) => (stderr += c));
    p.on('close', (code) => resolve({ code, stdout, stderr }));
  });
  assert.equal(out.stdout, '413', out.stderr);
  assert.equal(out.code, 0, out.stderr);
});

test('the Elasticsearch client gets a 413 response error, not a connection error', async () => {
  const es = new EsClient({ node: a.url, auth: { bearer: f.token }, maxRetries: 0 });
  try {
    const operations = Array.from({ length: 8000 }, (_, i) => [{ index: { _index: 'big' } }, { i, msg: 'y'.repeat(1000) }]).flat();
    await assert.rejects(es.bulk({ operations }), (err: unknown) => {
      assert.ok(err instanceof esErrors.ResponseError, `${(err as Error).name}: ${(err as Error).message}`);
      assert.equal(err.statusCode, 413);
      return true;
    });
  } finally {
    await es.close();
  }
});

test('a sender going on past the drain budget is cut off, and the service keeps serving', async () => {
  // The budget is max(SVC_MAX_BODY_SIZE, 64 MiB): announce 1 GiB and keep writing until the
  // server closes the connection, counting what it took.
  const u = new URL(a.url);
  const sent = await new Promise<{ bytes: number; status: string }>((resolve) => {
    const s = net.connect(Number(u.port), u.hostname);
    let bytes = 0;
    let status = '';
    const zeros = Buffer.alloc(256 * 1024);
    s.on('data', (c) => (status ||= c.toString().split('\r\n')[0]!));
    const finish = () => resolve({ bytes, status });
    s.on('error', finish);
    s.on('close', finish);
    s.write(`POST /api/v1/ingest HTTP/1.1\r\nhost: ${u.host}\r\nauthorization: Bearer ${f.token}\r\ncontent-length: ${2 ** 30}\r\n\r\n`);
    const pump = () => {
      while (!s.destroyed && bytes < 2 ** 30) {
        bytes += zeros.length;
        if (!s.write(zeros)) return void s.once('drain', pump);
      }
    };
    pump();
  });
  assert.match(sent.status, /^HTTP\/1\.1 413/);
  assert.ok(sent.bytes < 2 ** 30, `the server read all ${sent.bytes} bytes`);
  assert.equal((await fetch(`${a.url}/api/v1/health`)).status, 200);
});
