// An appliance upgraded in place keeps showing the logs it stored before: here, logs stored before
// ClickHouse schema version 3 (the kept fields text) read the same after the upgrade as new ones.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { loadConfig } from '../../service/src/config.ts';
import { openAnalytics } from '../../service/src/storage/clickhouse.ts';
import { ADMIN_PASSWORD, signIn, startTestAppliance } from '../support/appliance.ts';
import { ingestFractal } from '../support/ingest.ts';
import { waitForLogs } from '../support/logs.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'svc-upgrade-'));
after(() => rmSync(dir, { recursive: true, force: true }));

async function send(url: string, token: string, body: string, contentType: string): Promise<void> {
  const r = await fetch(`${url}/api/v1/ingest`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': contentType }, body });
  assert.equal(r.status, 200, await r.text());
}

/** Puts the engine's schema back to version 2: no `fields_text` column, version 3 not recorded. */
async function downgradeToVersion2(): Promise<void> {
  const ch = await openAnalytics(loadConfig({ SVC_DATA_DIR: dir, SVC_ADMIN_PASSWORD: ADMIN_PASSWORD }));
  try {
    await ch.client.command({ query: `ALTER TABLE ${ch.table('logs')} DROP COLUMN fields_text` });
    await ch.client.command({
      query: `ALTER TABLE ${ch.table('schema_migrations')} DELETE WHERE version = 3`,
      clickhouse_settings: { mutations_sync: '2' },
    });
  } finally {
    await ch.close();
  }
}

test('logs stored before schema version 3 show the same fields and norm_log after the upgrade', async () => {
  let a = await startTestAppliance({}, dir);
  let admin = await signIn(a.url, 'admin', ADMIN_PASSWORD);
  const json = await ingestFractal(admin, 'old-json');
  const kv = await ingestFractal(admin, 'old-kv', { parser_type: 'kv' });
  await send(a.url, json.token, '{"user":"alice","n":1}\n{"http":{"status":503},"user":"bob"}', 'application/x-ndjson');
  await send(a.url, kv.token, 'user=carol action="log in"', 'text/plain');
  await waitForLogs(a, json.id, 2);
  await waitForLogs(a, kv.id, 1);
  await a.dispose();

  await downgradeToVersion2();

  a = await startTestAppliance({}, dir);
  try {
    admin = await signIn(a.url, 'admin', ADMIN_PASSWORD);
    const rows = async (fractal_id: string, query = '*') => {
      const r = await admin.post('/api/v1/query', { query, fractal_id });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.results as Array<Record<string, string>>;
    };
    const old = await rows(json.id, 'sort(user, order=asc)');
    assert.deepEqual(
      old.map((r) => [r.user, r.n, r['http.status']]),
      [
        ['alice', '1', undefined],
        ['bob', undefined, '503'],
      ],
    );
    assert.deepEqual(JSON.parse(old[0]!.norm_log!), { n: 1, user: 'alice' }, 'an old row reads its fields text rebuilt from the JSON');
    const [carol] = await rows(kv.id);
    assert.deepEqual([carol!.user, carol!.action], ['carol', 'log in']);

    // New logs after the upgrade: the record's own text.
    await send(a.url, json.token, '{"user":"dave","n":2}', 'application/x-ndjson');
    await waitForLogs(a, json.id, 3);
    const [dave] = await rows(json.id, 'user=dave');
    assert.equal(dave!.norm_log, '{"user":"dave","n":2}');
  } finally {
    await a.dispose();
  }
});
