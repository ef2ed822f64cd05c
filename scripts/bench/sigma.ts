// Sigma feed benchmark (issue 14). Prints figures; asserts nothing.
//
//   npm run bench:sigma [-- --rules 300]
//
// 1. Unpacks SigmaHQ's rules (../shared/data/sigma-rules.tar.gz) and starts an appliance in this
//    process (real embedded engine and SQLite on a fresh data directory).
// 2. A feed on the whole `rules/` folder (a plain local folder, as on an isolated machine): the
//    first sync (every alert created) and a second one (nothing changed) are timed, wall and CPU
//    time; it prints how many rules imported, the skipped ones by reason, and checks that every
//    imported alert's query compiles for the fractal (the sync saved each through the alert checks;
//    here each one is compiled again through the query endpoint's validation).
// 3. Correctness: for `--rules` rules across log sources, a positive event made from the rule's
//    detection and a near-miss (one value changed) go through /api/v1/ingest; a feed of those
//    rules and the alert engine's ticks; it prints how many fired on their positive and how many
//    (wrongly) on their near-miss.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { compileNormalizer } from '../../service/src/normalizers/compile.ts';
import { DEFAULT_NORMALIZER } from '../../service/src/normalizers/default-normalizer.ts';
import { ADMIN_PASSWORD, signIn, startTestAppliance } from '../../tests/support/appliance.ts';
import { sharedData } from '../../tests/support/shared-data.ts';
import { chooseRules, yamlFiles } from '../../tests/support/sigma-events.ts';
import { fmt } from './support.ts';

const { values: args } = parseArgs({ options: { rules: { type: 'string', default: '300' } } });
const SAMPLE = Number(args.rules);

async function main() {
  const work = mkdtempSync(path.join(tmpdir(), 'bench-sigma-'));
  execFileSync('tar', ['xzf', sharedData('sigma-rules.tar.gz'), '-C', work]);
  const root = path.join(work, 'sigma');
  const total = yamlFiles(path.join(root, 'rules')).length;
  const app = await startTestAppliance();
  try {
    const admin = await signIn(app.url, 'admin', ADMIN_PASSWORD);
    const fractalId = (await admin.post('/api/v1/fractals', { name: 'sigmahq' })).body.data.id as string;
    const feedOf = async (fid: string, name: string, repo: string, sub: string) => {
      const f = (await admin.post('/api/v1/feeds', { fractal_id: fid, name, repo_url: repo, path: sub, min_status: 'unsupported', enabled: false, sync_schedule: 'never' })).body.data;
      await admin.put(`/api/v1/feeds/${f.id}`, { enabled: true });
      return f.id as string;
    };
    // The appliance runs in this process (the engine's threads too), so the process's CPU time
    // during a sync is the sync's own work, which a busy shared machine does not inflate.
    const sync = async (id: string) => {
      const t0 = performance.now();
      const c0 = process.cpuUsage();
      const r = await admin.post(`/api/v1/feeds/${id}/sync`);
      if (r.status !== 200) throw new Error(JSON.stringify(r.body));
      const cpu = process.cpuUsage(c0);
      return { ...r.body.data, wall: performance.now() - t0, cpu: (cpu.user + cpu.system) / 1000 };
    };

    console.log(`SigmaHQ rules folder: ${fmt(total)} rule files`);
    const feedId = await feedOf(fractalId, 'SigmaHQ', root, 'rules');
    const first = await sync(feedId);
    const second = await sync(feedId);
    console.log(`  imported ${fmt(first.imported)} of ${fmt(total)} (${((first.imported / total) * 100).toFixed(2)} %), skipped ${first.skipped}`);
    const skipped = (await admin.get(`/api/v1/feeds/${feedId}/skipped`)).body.data as Array<{ reason_code: string; source_path: string; reason: string }>;
    const byReason = new Map<string, number>();
    for (const s of skipped) byReason.set(s.reason_code, (byReason.get(s.reason_code) ?? 0) + 1);
    for (const [code, n] of byReason) console.log(`    ${code}: ${n}`);
    for (const s of skipped.slice(0, 10)) console.log(`      ${s.source_path}: ${s.reason.slice(0, 110)}`);
    console.log(
      `  first sync (${fmt(first.created)} alerts created): ${fmt(first.wall)} ms (CPU ${fmt(first.cpu)} ms); ` +
        `second sync (nothing changed): ${fmt(second.wall)} ms (CPU ${fmt(second.cpu)} ms); load average ${loadavg()[0]!.toFixed(1)} on ${availableParallelism()} cores`,
    );

    const alerts = (await admin.get(`/api/v1/feeds/${feedId}/alerts`)).body.data as Array<{ query_string: string; source_path: string }>;
    let compiles = 0;
    const failures: string[] = [];
    for (const a of alerts) {
      const v = await admin.post('/api/v1/query/validate', { query: a.query_string, fractal_id: fractalId });
      if (v.status === 200 && v.body.valid !== false) compiles++;
      else failures.push(`${a.source_path}: ${JSON.stringify(v.body).slice(0, 200)}`);
    }
    console.log(`  translations that compile in the query engine: ${fmt(compiles)} of ${fmt(alerts.length)}`);
    for (const f of failures.slice(0, 5)) console.log(`    ${f}`);

    // ---- correctness through ingest, a feed and the alert engine ----
    const fieldName = compileNormalizer(DEFAULT_NORMALIZER).fieldName;
    const { chosen, sources, unsupported } = chooseRules(path.join(root, 'rules'), SAMPLE, fieldName);
    const repo = path.join(work, 'chosen');
    for (const c of chosen) {
      const to = path.join(repo, path.relative(root, c.file));
      mkdirSync(path.dirname(to), { recursive: true });
      cpSync(c.file, to);
    }
    const eventsFractal = (await admin.post('/api/v1/fractals', { name: 'sigma-events' })).body.data;
    const chosenFeed = await feedOf(eventsFractal.id, 'chosen', repo, '');
    await sync(chosenFeed);
    const feedAlerts = (await admin.get(`/api/v1/feeds/${chosenFeed}/alerts`)).body.data as Array<{ id: string; source_rule_id: string }>;
    const lines = chosen.flatMap((c) => [JSON.stringify({ ...c.events.positive, sigma_case: `${c.rule.id}:positive` }), JSON.stringify({ ...c.events.nearMiss, sigma_case: `${c.rule.id}:near-miss` })]);
    const r = await fetch(`${app.url}/api/v1/ingest`, { method: 'POST', headers: { authorization: `Bearer ${eventsFractal.default_ingest_token}` }, body: lines.join('\n') });
    if (r.status !== 200) throw new Error(await r.text());
    const arrived = Date.now();
    const t0 = performance.now();
    for (;;) {
      await app.alertEngine.tick();
      const behind = feedAlerts.filter((a) => {
        const cur = app.context.alerts.get(a.id)!.cursor;
        return !cur || Date.parse(cur) < arrived;
      });
      if (behind.length === 0) break;
      await new Promise((res) => setTimeout(res, 250));
    }
    let fired = 0;
    let nearMissFired = 0;
    const byRule = new Map(feedAlerts.map((a) => [a.source_rule_id, a.id]));
    for (const c of chosen) {
      const cases = new Set<string>();
      for (const e of app.context.alertExecutions.recent([byRule.get(c.rule.id!)!], new Date(0).toISOString(), 1000)) {
        for (const row of app.context.alertExecutions.payload(e.id)?.results ?? []) cases.add(String(row.sigma_case));
      }
      if (cases.has(`${c.rule.id}:positive`)) fired++;
      if (cases.has(`${c.rule.id}:near-miss`)) nearMissFired++;
    }
    console.log(`Correctness: ${chosen.length} rules over ${sources} log sources (${unsupported} rules had no events this script can make)`);
    console.log(`  fired on their positive event: ${fired} of ${chosen.length}; fired on their near-miss: ${nearMissFired}; engine ticks took ${fmt(performance.now() - t0)} ms`);
  } finally {
    await app.dispose();
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
