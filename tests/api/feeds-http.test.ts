// A feed over HTTP with an access token, against a real git server made here: Node's HTTP server in
// front of git's own smart-HTTP backend (`git http-backend`, the CGI program git ships), which
// refuses a clone without the right token. The feed's token goes to the server as git sends it
// (Basic, the token as password), never in the URL; a wrong token fails the sync with a sentence
// that names access and not the token.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { ADMIN_PASSWORD, signIn, startTestAppliance, type TestAppliance } from '../support/appliance.ts';
import { createFractal, expectError, expectOk } from '../support/api.ts';

const TOKEN = 'glpat-feed-test-0123456789';
const work = mkdtempSync(path.join(tmpdir(), 'svc-feed-http-'));
let app: TestAppliance;
let server: Server;
let port = 0;
const seenAuth: string[] = [];

/** git's smart-HTTP backend run as CGI for one request, behind a token check. */
function gitHttp(req: IncomingMessage, res: ServerResponse): void {
  const auth = req.headers.authorization ?? '';
  seenAuth.push(auth);
  const expected = `Basic ${Buffer.from(`x-access-token:${TOKEN}`).toString('base64')}`;
  if (auth !== expected) {
    res.writeHead(401, { 'www-authenticate': 'Basic realm="rules"' }).end('token required');
    return;
  }
  const url = new URL(req.url ?? '/', 'http://x');
  const cgi = spawn('git', ['http-backend'], {
    env: {
      PATH: process.env.PATH,
      GIT_PROJECT_ROOT: work,
      GIT_HTTP_EXPORT_ALL: '1',
      REQUEST_METHOD: req.method ?? 'GET',
      PATH_INFO: decodeURIComponent(url.pathname),
      QUERY_STRING: url.search.slice(1),
      CONTENT_TYPE: req.headers['content-type'] ?? '',
      ...(req.headers['content-encoding'] ? { HTTP_CONTENT_ENCODING: String(req.headers['content-encoding']) } : {}),
      ...(req.headers['git-protocol'] ? { GIT_PROTOCOL: String(req.headers['git-protocol']) } : {}),
    },
  });
  req.pipe(cgi.stdin);
  const chunks: Buffer[] = [];
  cgi.stdout.on('data', (d: Buffer) => chunks.push(d));
  cgi.on('close', () => {
    const out = Buffer.concat(chunks);
    const split = out.indexOf('\r\n\r\n');
    const head = out.subarray(0, split).toString('utf8');
    const headers: Record<string, string> = {};
    let status = 200;
    for (const line of head.split('\r\n')) {
      const [k, ...v] = line.split(':');
      if (k!.toLowerCase() === 'status') status = Number.parseInt(v.join(':').trim(), 10);
      else headers[k!.toLowerCase()] = v.join(':').trim();
    }
    res.writeHead(status, headers).end(out.subarray(split + 4));
  });
}

before(async () => {
  const repo = path.join(work, 'detections.git');
  const src = path.join(work, 'src');
  mkdirSync(path.join(src, 'rules'), { recursive: true });
  writeFileSync(
    path.join(src, 'rules', 'whoami.yml'),
    "title: Whoami run\nid: 99999999-9999-4999-8999-999999999999\nstatus: test\nlogsource:\n    category: process_creation\n    product: windows\ndetection:\n    selection:\n        Image|endswith: '\\whoami.exe'\n    condition: selection\nlevel: medium\n",
  );
  const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.org', '-c', 'init.defaultBranch=main', ...args], { cwd });
  git(src, 'init', '-q');
  git(src, 'add', '.');
  git(src, 'commit', '-q', '-m', 'rules');
  git(work, 'clone', '-q', '--bare', src, repo);
  server = createServer(gitHttp);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as { port: number }).port;
  app = await startTestAppliance();
});
after(async () => {
  await app?.dispose();
  server?.closeAllConnections();
  server?.close();
  rmSync(work, { recursive: true, force: true });
});

test('an http feed with an access token clones through the token check; a wrong token fails naming access', async () => {
  const admin = await signIn(app.url, 'admin', ADMIN_PASSWORD);
  const f = await createFractal(admin, 'http-feed');
  const url = `http://127.0.0.1:${port}/detections.git`;
  const feed = expectOk(await admin.post('/api/v1/feeds', { fractal_id: f.id, name: 'private rules', repo_url: url, auth_token: TOKEN, enabled: false, sync_schedule: 'never' }), 201);
  const r = expectOk(await admin.post(`/api/v1/feeds/${feed.id}/sync`));
  assert.equal(r.imported, 1, JSON.stringify([r, expectOk(await admin.get(`/api/v1/feeds/${feed.id}/skipped`))]));
  assert.match(r.commit, /^[0-9a-f]{40}$/);
  assert.deepEqual(expectOk<any[]>(await admin.get(`/api/v1/feeds/${feed.id}/alerts`)).map((a) => a.name), ['Whoami run']);
  assert.ok(seenAuth.every((h) => h === '' || h.startsWith('Basic ')), 'the token travels as an HTTP header');

  expectOk(await admin.put(`/api/v1/feeds/${feed.id}`, { auth_token: 'wrong-token' }));
  const refused = expectError(await admin.post(`/api/v1/feeds/${feed.id}/sync`), 400, 'refused access');
  assert.ok(!refused.includes('wrong-token') && !refused.includes(TOKEN), 'no token in the sentence');
  assert.equal(expectOk<any[]>(await admin.get(`/api/v1/feeds/${feed.id}/alerts`)).length, 1, 'a failed sync keeps the alerts');

  const shown = expectOk(await admin.get(`/api/v1/feeds/${feed.id}`));
  assert.equal(shown.has_auth_token, true);
  assert.ok(!JSON.stringify(shown).includes('wrong-token'));
});
