// SigmaHQ's real rules (../shared/data/sigma-rules.tar.gz, 3,141 rules) through a feed of a real
// appliance:
// - the whole `rules/` folder syncs, at least 97 % of the rules import (each translation compiled
//   by the query engine, regexes by the engine's RE2, when the sync saved it as an alert), and
//   every rule not imported is listed with a reason;
// - for 120 rules chosen across log sources, a positive event made from the rule's own detection
//   and a near-miss (one value changed) go through /api/v1/ingest; a feed of those rules and the
//   alert engine must fire each rule on its positive event and never on its near-miss.
// (The sync's time is measured by scripts/bench/sigma.ts, not here.)
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { compileNormalizer } from '../../service/src/normalizers/compile.ts';
import { DEFAULT_NORMALIZER } from '../../service/src/normalizers/default-normalizer.ts';
import { ADMIN_PASSWORD, signIn, startTestAppliance, type Client, type TestAppliance } from '../support/appliance.ts';
import { createFractal, expectOk } from '../support/api.ts';
import { waitForLogs } from '../support/logs.ts';
import { sharedData } from '../support/shared-data.ts';
import { chooseRules, yamlFiles } from '../support/sigma-events.ts';

const TARBALL = sharedData('sigma-rules.tar.gz');
const work = mkdtempSync(path.join(tmpdir(), 'svc-sigmahq-'));
let app: TestAppliance;
let admin: Client;
let picked: ReturnType<typeof chooseRules>;
const rulesRoot = () => path.join(work, 'sigma');

before(async () => {
  execFileSync('tar', ['xzf', TARBALL, '-C', work]);
  // Choosing rules is synchronous and takes tens of seconds on a loaded machine: done before the
  // appliance (which shares this process) holds any connection, a keep-alive socket cannot time
  // out on the server while the client still counts it idle (ECONNRESET on the next request).
  picked = chooseRules(path.join(rulesRoot(), 'rules'), 120, compileNormalizer(DEFAULT_NORMALIZER).fieldName);
  app = await startTestAppliance();
  admin = await signIn(app.url, 'admin', ADMIN_PASSWORD);
});
after(async () => {
  await app?.dispose();
  rmSync(work, { recursive: true, force: true });
});


async function feedOf(fractalId: string, name: string, repo: string, sub: string) {
  const f = expectOk(
    await admin.post('/api/v1/feeds', { fractal_id: fractalId, name, repo_url: repo, path: sub, min_severity: 'informational', min_status: 'unsupported', enabled: false, sync_schedule: 'never' }),
    201,
  );
  expectOk(await admin.put(`/api/v1/feeds/${f.id}`, { enabled: true }));
  return f.id as string;
}

test('the whole SigmaHQ rules folder: at least 97 % import, every other rule listed with its reason', async () => {
  const total = yamlFiles(path.join(rulesRoot(), 'rules')).length;
  assert.ok(total >= 3000, `the corpus holds ${total} rules`);
  const f = await createFractal(admin, 'sigmahq');
  const feedId = await feedOf(f.id, 'SigmaHQ', rulesRoot(), 'rules');
  const r = expectOk(await admin.post(`/api/v1/feeds/${feedId}/sync`));
  assert.equal(r.imported + r.skipped, total, 'every rule file is accounted for');
  const share = r.imported / total;
  console.log(`SigmaHQ: ${r.imported} of ${total} rules imported (${(share * 100).toFixed(2)} %), sync ${r.ms} ms`);
  assert.ok(share >= 0.97, `only ${(share * 100).toFixed(2)} % imported`);

  const skipped = expectOk<any[]>(await admin.get(`/api/v1/feeds/${feedId}/skipped`));
  assert.equal(skipped.length, r.skipped);
  for (const s of skipped) {
    assert.ok(s.reason_code && s.reason && s.reason_label, `${s.source_path} has a reason`);
    // The one kind of skip this corpus has: a translation longer than a query may be. True?
    if (s.reason_code === 'query_too_long') {
      const chars = Number(/\((\d+) chars/.exec(s.reason)?.[1]);
      assert.ok(chars > 10_000, `${s.source_path}: ${s.reason}`);
    }
  }
  const alerts = expectOk<any[]>(await admin.get(`/api/v1/feeds/${feedId}/alerts`));
  assert.equal(alerts.length, r.imported);
  // Each saved translation runs: a sample across the corpus, through the query endpoint.
  for (const a of alerts.filter((_, i) => i % 150 === 0)) {
    const q = await admin.post('/api/v1/query', { query: a.query_string, fractal_id: f.id });
    assert.equal(q.status, 200, `${a.source_path}: ${JSON.stringify(q.body)}`);
  }
});

test('120 rules across log sources: each fires on its positive event and never on its near-miss (ingest → feed → alert engine)', async () => {
  const { chosen, sources } = picked;
  assert.ok(chosen.length >= 100, `${chosen.length} rules`);
  assert.ok(sources >= 40, `${sources} log sources`);
  const repo = path.join(work, 'chosen');
  for (const c of chosen) {
    const to = path.join(repo, path.relative(rulesRoot(), c.file));
    mkdirSync(path.dirname(to), { recursive: true });
    cpSync(c.file, to);
  }
  const f = await createFractal(admin, 'sigma-events');
  const feedId = await feedOf(f.id, 'chosen rules', repo, '');
  const synced = expectOk(await admin.post(`/api/v1/feeds/${feedId}/sync`));
  assert.equal(synced.imported, chosen.length, JSON.stringify(expectOk(await admin.get(`/api/v1/feeds/${feedId}/skipped`))));
  const alerts = expectOk<any[]>(await admin.get(`/api/v1/feeds/${feedId}/alerts`));
  const alertOf = new Map(alerts.map((a) => [a.source_rule_id, a]));

  // Send the events as a shipper would: NDJSON to the fractal's default token (default normalizer).
  const token = app.context.ingestTokens.reveal(app.context.ingestTokens.list(f.id)[0]!);
  const lines = chosen.flatMap((c) => [
    JSON.stringify({ ...c.events.positive, sigma_case: `${c.rule.id}:positive` }),
    JSON.stringify({ ...c.events.nearMiss, sigma_case: `${c.rule.id}:near-miss` }),
  ]);
  const r = await fetch(`${app.url}/api/v1/ingest`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: lines.join('\n') });
  assert.equal(r.status, 200, await r.text());
  await waitForLogs(app, f.id, lines.length);

  // The engine's own ticks, until every alert has evaluated a window past the events' arrival.
  const arrived = Date.now();
  const deadline = Date.now() + 120_000;
  for (;;) {
    await app.alertEngine.tick();
    const behind = alerts.filter((a) => {
      const cur = app.context.alerts.get(a.id)!.cursor;
      return !cur || Date.parse(cur) < arrived;
    });
    if (behind.length === 0) break;
    assert.ok(Date.now() < deadline, `${behind.length} alerts never evaluated past the events`);
    await new Promise((res) => setTimeout(res, 250));
  }

  const failures: string[] = [];
  for (const c of chosen) {
    const a = alertOf.get(c.rule.id)!;
    const cases = new Set<string>();
    for (const e of app.context.alertExecutions.recent([a.id], new Date(0).toISOString(), 1000)) {
      for (const row of app.context.alertExecutions.payload(e.id)?.results ?? []) cases.add(String(row.sigma_case));
    }
    if (!cases.has(`${c.rule.id}:positive`)) failures.push(`${path.relative(rulesRoot(), c.file)} did not fire on ${JSON.stringify(c.events.positive)} (query ${a.query_string})`);
    if (cases.has(`${c.rule.id}:near-miss`)) failures.push(`${path.relative(rulesRoot(), c.file)} fired on its near-miss (${c.events.changed} changed) (query ${a.query_string})`);
  }
  assert.deepEqual(failures, []);
});
