// Feeds against a real git repository made here (git init, commits, a branch) and a real
// appliance: CRUD, the sync that creates, updates and deletes the feed's alerts to match the
// repository, native alert files imported as they are, skipped rules with their reasons, the
// token never shown, bad input, a failed sync that changes nothing, a feed alert edited into a
// manual copy, the feed-alert switches, and a real scheduled sync (node-schedule).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ADMIN_PASSWORD, Client, makeUser, signIn, startTestAppliance, type TestAppliance } from '../support/appliance.ts';
import { createFractal, expectError, expectOk, grant, metadataFilesContain } from '../support/api.ts';
import { WAIT_MS } from '../support/wait.ts';

let app: TestAppliance;
let admin: Client;
let viewer: Client;
let fractal: { id: string };
const work = mkdtempSync(path.join(tmpdir(), 'svc-feed-repo-'));
const repo = path.join(work, 'detections');

const git = (...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.org', '-c', 'init.defaultBranch=main', ...args], { cwd: repo, encoding: 'utf8' });
function write(rel: string, text: string): void {
  mkdirSync(path.dirname(path.join(repo, rel)), { recursive: true });
  writeFileSync(path.join(repo, rel), text);
}

const sigma = (o: { id: string; title: string; level?: string; status?: string; detection: string; category?: string; tags?: string[] }) => `title: ${o.title}
id: ${o.id}
status: ${o.status ?? 'test'}
description: ${o.title} (test rule)
references:
    - https://example.org/${o.id}
tags:
${(o.tags ?? ['attack.execution', 'attack.t1059.001']).map((t) => `    - ${t}`).join('\n')}
logsource:
    product: windows
${o.category ? `    category: ${o.category}\n` : ''}detection:
${o.detection}
level: ${o.level ?? 'high'}
`;

const ENCODED = sigma({
  id: '11111111-1111-4111-8111-111111111111',
  title: 'Encoded PowerShell',
  category: 'process_creation',
  detection: `    selection:
        Image|endswith: '\\powershell.exe'
        CommandLine|contains: ' -enc '
    condition: selection`,
});
const WHOAMI = sigma({
  id: '22222222-2222-4222-8222-222222222222',
  title: 'Whoami run',
  category: 'process_creation',
  tags: ['attack.discovery', 'attack.t1033'],
  detection: `    selection:
        Image|endswith: '\\whoami.exe'
    condition: selection`,
});
const LOW = sigma({ id: '33333333-3333-4333-8333-333333333333', title: 'Low noise', level: 'low', detection: '    selection:\n        EventID: 4624\n    condition: selection' });
const NATIVE = `name: Many failed logins
description: A native alert in the feed's repository
query_string: 'event_id=4625 | groupBy(user) | _count > 20'
alert_type: compound
severity: medium
labels: [attack.credential-access, attack.t1110]
`;

before(async () => {
  mkdirSync(repo, { recursive: true });
  git('init', '-q');
  write('rules/windows/encoded.yml', ENCODED);
  write('rules/windows/whoami.yml', WHOAMI);
  write('rules/windows/low.yml', LOW);
  write('rules/native/failed-logins.yml', NATIVE);
  write('rules/broken/not-yaml.yml', 'title: [unclosed\n  - : :\n');
  write('rules/broken/bad-modifier.yml', sigma({ id: '44444444-4444-4444-8444-444444444444', title: 'Bad modifier', detection: '    selection:\n        Image|sideways: x\n    condition: selection' }));
  write('rules/broken/no-selection.yml', sigma({ id: '55555555-5555-4555-8555-555555555555', title: 'No selection', detection: '    selection:\n        Image: x\n    condition: selection and filter' }));
  write('rules/broken/lookahead.yml', sigma({ id: '66666666-6666-4666-8666-666666666666', title: 'Look-ahead', detection: "    selection:\n        CommandLine|re: 'a(?=b)'\n    condition: selection" }));
  write('README.md', 'not a rule');
  git('add', '.');
  git('commit', '-q', '-m', 'first rules');

  app = await startTestAppliance();
  admin = await signIn(app.url, 'admin', ADMIN_PASSWORD);
  fractal = await createFractal(admin, 'feeds-main');
  viewer = await makeUser(admin, 'vera');
  await grant(admin, fractal.id, { username: 'vera' }, 'viewer');
});
after(async () => {
  await app?.dispose();
  rmSync(work, { recursive: true, force: true });
});

/** A feed made with the first sync left to the test (created disabled, then switched on). */
async function newFeed(body: Record<string, unknown>) {
  const f = expectOk(await admin.post('/api/v1/feeds', { fractal_id: fractal.id, sync_schedule: 'never', enabled: false, ...body }), 201);
  return expectOk(await admin.put(`/api/v1/feeds/${f.id}`, { enabled: true }));
}
const sync = async (id: string) => expectOk(await admin.post(`/api/v1/feeds/${id}/sync`));
const alertsOf = async (id: string) => expectOk<any[]>(await admin.get(`/api/v1/feeds/${id}/alerts`));

describe('a feed from a local git repository', () => {
  let feed: any;

  test('create: fields echoed, the token sealed and never returned', async () => {
    feed = await newFeed({ name: 'local sigma', repo_url: repo, path: 'rules', min_severity: 'medium', auth_token: 'ghp_secret-token-value' });
    assert.equal(feed.repo_url, repo);
    assert.equal(feed.branch, 'main');
    assert.equal(feed.path, 'rules');
    assert.equal(feed.min_severity, 'medium');
    assert.equal(feed.min_status, 'experimental');
    assert.equal(feed.has_auth_token, true);
    assert.equal(JSON.stringify(feed).includes('ghp_secret'), false);
    assert.equal(JSON.stringify(expectOk(await admin.get(`/api/v1/feeds/${feed.id}`))).includes('ghp_secret'), false);
    assert.equal(metadataFilesContain(app, 'ghp_secret-token-value'), false, 'the token is stored encrypted');
  });

  test('sync: translatable rules and native alerts become alerts; the rest are listed with true reasons', async () => {
    const r = await sync(feed.id);
    assert.equal(r.status, 'ok');
    assert.equal(r.created, 3);
    assert.match(r.commit, /^[0-9a-f]{40}$/);
    const alerts = await alertsOf(feed.id);
    const byPath = Object.fromEntries(alerts.map((a) => [a.source_path, a]));
    const encoded = byPath['rules/windows/encoded.yml'];
    assert.equal(encoded.name, 'Encoded PowerShell');
    assert.equal(encoded.severity, 'high');
    assert.equal(encoded.source_rule_id, '11111111-1111-4111-8111-111111111111');
    assert.deepEqual(encoded.labels, ['attack.execution', 'attack.t1059.001']);
    assert.deepEqual(encoded.references, ['https://example.org/11111111-1111-4111-8111-111111111111']);
    assert.equal(encoded.enabled, true);
    assert.equal(encoded.feed_id, feed.id);
    assert.equal(encoded.query_string, 'sigma_category="process_creation" AND Image=$"\\\\powershell.exe" AND CommandLine=~" -enc "');
    const native = byPath['rules/native/failed-logins.yml'];
    assert.equal(native.query_string, 'event_id=4625 | groupBy(user) | _count > 20', 'a native alert is imported unchanged');
    assert.equal(native.alert_type, 'compound');

    const skipped = expectOk<any[]>(await admin.get(`/api/v1/feeds/${feed.id}/skipped`));
    const reasons = Object.fromEntries(skipped.map((s) => [s.source_path, s]));
    assert.equal(reasons['rules/windows/low.yml'].reason_code, 'below_min_severity');
    assert.match(reasons['rules/windows/low.yml'].reason, /level low is below the feed's minimum severity medium/);
    assert.equal(reasons['rules/broken/not-yaml.yml'].reason_code, 'bad_yaml');
    assert.equal(reasons['rules/broken/bad-modifier.yml'].reason_code, 'unsupported_modifier');
    assert.match(reasons['rules/broken/bad-modifier.yml'].reason, /unknown modifier "sideways"/);
    assert.equal(reasons['rules/broken/no-selection.yml'].reason_code, 'unknown_selection');
    assert.match(reasons['rules/broken/no-selection.yml'].reason, /"filter"/);
    assert.equal(reasons['rules/broken/lookahead.yml'].reason_code, 'unsupported_regex');
    assert.equal(skipped.length, 5, 'README.md is no rule file; the native alert is imported');
    const filtered = expectOk<any[]>(await admin.get(`/api/v1/feeds/${feed.id}/skipped?reason=bad_yaml`));
    assert.deepEqual(filtered.map((s) => s.source_path), ['rules/broken/not-yaml.yml']);
    assert.deepEqual(expectOk<any[]>(await admin.get(`/api/v1/feeds/${feed.id}/skipped?q=look-ahead`)).map((s) => s.title), ['Look-ahead']);
    expectError(await admin.get(`/api/v1/feeds/${feed.id}/skipped?reason=nope`), 400, 'reason');
    const shown = expectOk(await admin.get(`/api/v1/feeds/${feed.id}`));
    assert.equal(shown.imported_count, 3);
    assert.equal(shown.skipped_count, 5);
    assert.equal(shown.last_sync_status, 'ok');
  });

  test('a second commit that changes and removes rules: the next sync updates and deletes to match', async () => {
    const before = Object.fromEntries((await alertsOf(feed.id)).map((a) => [a.source_path, a]));
    // A person switched one off: that stays through syncs.
    expectOk(await admin.post(`/api/v1/alerts/${before['rules/windows/encoded.yml'].id}/toggle-feed`));
    write('rules/windows/encoded.yml', ENCODED.replace("' -enc '", "' -EncodedCommand '").replace('level: high', 'level: critical'));
    git('rm', '-q', 'rules/windows/whoami.yml');
    git('add', '.');
    git('commit', '-q', '-m', 'change and remove');
    const r = await sync(feed.id);
    assert.deepEqual([r.created, r.updated, r.deleted], [0, 1, 1]);
    const after = Object.fromEntries((await alertsOf(feed.id)).map((a) => [a.source_path, a]));
    assert.equal(after['rules/windows/whoami.yml'], undefined);
    const encoded = after['rules/windows/encoded.yml'];
    assert.equal(encoded.id, before['rules/windows/encoded.yml'].id, 'updated in place');
    assert.equal(encoded.severity, 'critical');
    assert.match(encoded.query_string, /CommandLine=~" -EncodedCommand "/);
    assert.equal(encoded.enabled, false, 'switched off by a person, it stays off');
  });

  test('editing a feed alert makes a manual copy; the feed keeps its version', async () => {
    const a = (await alertsOf(feed.id)).find((x) => x.source_path === 'rules/native/failed-logins.yml');
    const copy = expectOk(await admin.put(`/api/v1/alerts/${a.id}`, { severity: 'high', name: 'Many failed logins (tuned)' }));
    assert.notEqual(copy.id, a.id);
    assert.equal(copy.feed_id, null);
    assert.equal(copy.severity, 'high');
    const still = expectOk(await admin.get(`/api/v1/alerts/${a.id}`));
    assert.equal(still.severity, 'medium');
    assert.equal(still.feed_id, feed.id);
    await sync(feed.id);
    assert.equal(expectOk(await admin.get(`/api/v1/alerts/${copy.id}`)).name, 'Many failed logins (tuned)', 'a sync leaves the copy alone');
  });

  test('enable-all, disable-all, batch-toggle and the scope list of feed alerts', async () => {
    expectOk(await admin.post(`/api/v1/feeds/${feed.id}/alerts/disable-all`));
    assert.ok((await alertsOf(feed.id)).every((a) => !a.enabled));
    expectOk(await admin.post(`/api/v1/feeds/${feed.id}/alerts/enable-all`));
    const all = await alertsOf(feed.id);
    assert.ok(all.every((a) => a.enabled));
    const listed = expectOk<any[]>(await admin.get(`/api/v1/alerts/feed?fractal_id=${fractal.id}`));
    assert.deepEqual(listed.map((a) => a.id).sort(), all.map((a) => a.id).sort(), 'manual copies are not feed alerts');
    assert.ok(listed.every((a) => a.feed_name === 'local sigma'));
    expectOk(await admin.post('/api/v1/alerts/feed/batch-toggle', { alert_ids: all.map((a) => a.id), enabled: false }));
    assert.ok((await alertsOf(feed.id)).every((a) => !a.enabled));
    const manual = expectOk<any[]>(await admin.get(`/api/v1/alerts?fractal_id=${fractal.id}`)).find((a) => !a.feed_id);
    expectError(await admin.post('/api/v1/alerts/feed/batch-toggle', { alert_ids: [manual.id], enabled: true }), 400, 'does not come from a feed');
    expectError(await admin.post(`/api/v1/alerts/${manual.id}/toggle-feed`), 400, 'does not come from a feed');
  });

  test('a viewer reads the feed, its alerts and skipped rules, and changes nothing', async () => {
    assert.equal(expectOk<any[]>(await viewer.get(`/api/v1/feeds?fractal_id=${fractal.id}`)).length >= 1, true);
    expectOk(await viewer.get(`/api/v1/feeds/${feed.id}/skipped`));
    expectError(await viewer.post(`/api/v1/feeds/${feed.id}/sync`), 403, 'admin');
    expectError(await viewer.put(`/api/v1/feeds/${feed.id}`, { name: 'x' }), 403);
    expectError(await viewer.del(`/api/v1/feeds/${feed.id}`), 403);
    expectError(await new Client(app.url).get(`/api/v1/feeds/${feed.id}`), 401);
  });
});

describe('sources and bad input', () => {
  test('a file:// URL and a branch; a plain folder; a branch or path that does not exist', async () => {
    git('checkout', '-q', '-b', 'staging');
    write('rules/windows/staging-only.yml', sigma({ id: '77777777-7777-4777-8777-777777777777', title: 'Staging only', detection: '    selection:\n        Image: x.exe\n    condition: selection' }));
    git('add', '.');
    git('commit', '-q', '-m', 'staging rule');
    git('checkout', '-q', 'main');
    const f = await newFeed({ name: 'staging', repo_url: `file://${repo}`, branch: 'staging', path: 'rules/windows' });
    await sync(f.id);
    assert.ok((await alertsOf(f.id)).some((a) => a.name === 'Staging only'));

    const folder = path.join(work, 'plain-folder');
    mkdirSync(folder, { recursive: true });
    writeFileSync(path.join(folder, 'whoami.yml'), WHOAMI);
    const plain = await newFeed({ name: 'plain folder', repo_url: folder });
    const r = await sync(plain.id);
    assert.equal(r.commit, null, 'a folder has no commit');
    assert.deepEqual((await alertsOf(plain.id)).map((a) => a.name), ['Whoami run']);

    const nobranch = await newFeed({ name: 'no branch', repo_url: repo, branch: 'does-not-exist' });
    expectError(await admin.post(`/api/v1/feeds/${nobranch.id}/sync`), 400, 'does-not-exist');
    const nopath = await newFeed({ name: 'no path', repo_url: repo, path: 'nothing/here' });
    expectError(await admin.post(`/api/v1/feeds/${nopath.id}/sync`), 400, 'path "nothing/here" does not exist');
    const shown = expectOk(await admin.get(`/api/v1/feeds/${nopath.id}`));
    assert.equal(shown.last_sync_status, 'failed');
    assert.match(shown.last_sync_error, /nothing\/here/);
  });

  test('a repository URL with another scheme, a relative path, credentials in the URL: 400 naming repo_url', async () => {
    for (const [url, what] of [
      ['ssh://git@example.org/rules.git', 'not supported'],
      ['git@example.org:rules.git', 'not supported'],
      ['ftp://example.org/rules', 'not supported'],
      ['relative/folder', 'absolute folder path'],
      ['https://user:pass@example.org/rules.git', 'must not carry credentials'],
    ]) {
      expectError(await admin.post('/api/v1/feeds', { fractal_id: fractal.id, name: `bad ${url}`, repo_url: url }), 400, 'repo_url', what);
    }
    expectError(await admin.post('/api/v1/feeds', { fractal_id: fractal.id, name: 'bad branch', repo_url: repo, branch: '--upload-pack=x' }), 400, 'branch');
    expectError(await admin.post('/api/v1/feeds', { fractal_id: fractal.id, name: 'bad sched', repo_url: repo, sync_schedule: 'sometimes' }), 400, 'sync_schedule');
  });

  test('a failed sync after a good one leaves every alert as it was', async () => {
    const f = await newFeed({ name: 'will break', repo_url: repo, path: 'rules/windows' });
    await sync(f.id);
    const before = (await alertsOf(f.id)).map((a) => `${a.id} ${a.query_string}`).sort();
    assert.ok(before.length > 0);
    expectOk(await admin.put(`/api/v1/feeds/${f.id}`, { branch: 'gone' }));
    expectError(await admin.post(`/api/v1/feeds/${f.id}/sync`), 400, 'gone');
    assert.deepEqual((await alertsOf(f.id)).map((a) => `${a.id} ${a.query_string}`).sort(), before);
  });

  test('deleting a feed deletes its alerts; a normalizer a feed uses cannot be deleted', async () => {
    const n = expectOk(await admin.post('/api/v1/normalizers', { name: 'feed names' }), 201);
    const f = await newFeed({ name: 'short lived', repo_url: repo, path: 'rules/windows', normalizer_id: n.id });
    await sync(f.id);
    const ids = (await alertsOf(f.id)).map((a) => a.id);
    expectError(await admin.del(`/api/v1/normalizers/${n.id}`), 409, 'feed "short lived"');
    const d = expectOk(await admin.del(`/api/v1/feeds/${f.id}`));
    assert.equal(d.alerts_deleted, ids.length);
    for (const id of ids) expectError(await admin.get(`/api/v1/alerts/${id}`), 404);
    expectOk(await admin.del(`/api/v1/normalizers/${n.id}`));
  });
});

test('a scheduled sync runs on its own (node-schedule), at the last sync plus the period', async () => {
  const f = await newFeed({ name: 'hourly', repo_url: repo, path: 'rules/windows', sync_schedule: 'hourly' });
  await sync(f.id);
  const first = expectOk(await admin.get(`/api/v1/feeds/${f.id}`));
  const next = Date.parse(first.next_sync_at);
  assert.ok(Math.abs(next - (Date.parse(first.last_sync_at) + 3_600_000)) < 5_000, 'due an hour after the last sync');
  // Make the last sync an hour (less two seconds) ago: the scheduler plans the next one two seconds out.
  const backdated = new Date(Date.now() - 3_600_000 + 2_000).toISOString();
  app.context.db.prepare('UPDATE feeds SET last_sync_at = ? WHERE id = ?').run(backdated, f.id);
  app.context.feedScheduler.plan(f.id);
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const now = expectOk(await admin.get(`/api/v1/feeds/${f.id}`));
    if (now.last_sync_at !== backdated && now.last_sync_status === 'ok') break;
    assert.ok(Date.now() < deadline, 'the scheduled sync did not run');
    await new Promise((r) => setTimeout(r, 200));
  }
});
