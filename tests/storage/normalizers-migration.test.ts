// Upgrading a data directory made before normalizers existed: each ingest token's rule list moves
// into a normalizer of its own that the token applies, and logs sent after the upgrade get exactly
// the names the old rules gave them (what the old rules made of each record is written out below);
// tokens without rules apply the default (normalization on) or nothing (off).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import Database from 'better-sqlite3';
import { SQLITE_MIGRATIONS } from '../../service/src/storage/sqlite-migrations.ts';
import { sha256 } from '../../service/src/storage/secret-box.ts';
import { startTestAppliance } from '../support/appliance.ts';
import { waitForLogs } from '../support/logs.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'svc-norm-upgrade-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const NORMALIZERS_VERSION = SQLITE_MIGRATIONS.find((m) => m.name === 'normalizers and feeds')!.version;

/** A metadata file at the version before normalizers, with a fractal and tokens carrying rule lists. */
function oldDatabase(): string {
  const db = new Database(path.join(dir, 'metadata.sqlite'));
  db.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
  for (const m of SQLITE_MIGRATIONS.filter((x) => x.version < NORMALIZERS_VERSION)) {
    db.exec(m.sql);
    db.prepare('INSERT INTO schema_migrations VALUES (?, ?, ?)').run(m.version, m.name, new Date().toISOString());
  }
  const now = new Date().toISOString();
  const fractal = randomUUID();
  db.prepare("INSERT INTO fractals (id, name, description, is_default, created_at, updated_at) VALUES (?, 'legacy', '', 0, ?, ?)").run(fractal, now, now);
  return fractal;
}

test('token rule lists become normalizers that name fields exactly as the rules did', async () => {
  const fractal = oldDatabase();
  // Tokens as the old schema held them (their values are set after the upgrade, below).
  const db = new Database(path.join(dir, 'metadata.sqlite'));
  const tokens = [
    {
      name: 'windows',
      normalization: 1,
      rules: [
        { type: 'rename', from: 'Computer', to: 'host' },
        { type: 'copy', from: 'host', to: 'host_copy' },
        { type: 'case', style: 'snake' },
        { type: 'value_map', field: 'level', values: { W: 'warning' } },
      ],
    },
    { name: 'plain', normalization: 0, rules: [{ type: 'case', style: 'kebab' }] },
    { name: 'no-rules-on', normalization: 1, rules: [] },
    { name: 'no-rules-off', normalization: 0, rules: [] },
  ];
  const now = new Date().toISOString();
  for (const t of tokens) {
    db.prepare(
      `INSERT INTO ingest_tokens (id, fractal_id, name, token_hash, token_encrypted, parser_type, normalization, normalizers, timestamp_fields, enabled, is_default, created_at, updated_at)
       VALUES (?, ?, ?, ?, 'sealed-later', 'json', ?, ?, '[]', 1, 0, ?, ?)`,
    ).run(randomUUID(), fractal, t.name, randomUUID(), t.normalization, JSON.stringify(t.rules), now, now);
  }
  db.close();

  const a = await startTestAppliance({}, dir);
  try {
    const rows = a.context.ingestTokens.list(fractal);
    const byName = Object.fromEntries(rows.map((r) => [r.name, r]));
    assert.equal(byName['no-rules-on']!.normalizer_id, null);
    assert.equal(byName['no-rules-on']!.normalization, 1, 'the default applies');
    assert.equal(byName['no-rules-off']!.normalization, 0, 'nothing applies');
    const own = (name: string) => a.context.normalizers.get(byName[name]!.normalizer_id!)!;
    assert.equal(own('windows').name, 'legacy / windows');
    assert.equal(own('plain').name, 'legacy / plain');
    assert.deepEqual(own('plain').transforms, ['kebab_case']);
    assert.deepEqual(own('plain').field_mappings, [], 'normalization was off: no built-in aliases');

    // Send through the migrated tokens (new token values: the old ones were stand-ins here).
    const send = async (tokenName: string, record: object) => {
      const row = a.context.ingestTokens.list(fractal).find((t) => t.name === tokenName)!;
      const value = `svc_ingest_${randomUUID().replace(/-/g, '')}`;
      a.context.db.prepare('UPDATE ingest_tokens SET token_hash = ? WHERE id = ?').run(sha256(value), row.id);
      a.context.ingestTokens.notifyChanged();
      const r = await fetch(`${a.url}/api/v1/ingest`, { method: 'POST', headers: { authorization: `Bearer ${value}` }, body: JSON.stringify(record) });
      assert.equal(r.status, 200, await r.text());
    };
    await send('windows', { Computer: 'ws1', SourceIP: '10.0.0.1', level: 'W', UserAgent: 'x' });
    await send('plain', { UserAgent: 'y', SourceIP: '10.0.0.2' });
    const logs = await waitForLogs(a, fractal, 2);
    const win = logs.find((l) => l.fields.host === 'ws1')!;
    // The old rules: built-in alias SourceIP → src_ip; Computer → host; snake case; copy host → host_copy; level W → warning.
    assert.deepEqual(win.fields, { host: 'ws1', src_ip: '10.0.0.1', level: 'warning', user_agent: 'x', host_copy: 'ws1' });
    const plain = logs.find((l) => l.fields['user-agent'] === 'y')!;
    assert.deepEqual(plain.fields, { 'user-agent': 'y', 'source-ip': '10.0.0.2' });
  } finally {
    await a.dispose();
  }
});

test("an install made before the default mapped syslog-ng's numeric macros gets them, where the admin has not mapped those names already", async () => {
  const before = mkdtempSync(path.join(tmpdir(), 'svc-norm-syslog-ng-'));
  const version = SQLITE_MIGRATIONS.find((m) => m.name === 'default normalizer: syslog-ng numeric names')!.version;
  const db = new Database(path.join(before, 'metadata.sqlite'));
  db.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
  for (const m of SQLITE_MIGRATIONS.filter((x) => x.version < version)) {
    db.exec(m.sql);
    m.run?.(db);
    db.prepare('INSERT INTO schema_migrations VALUES (?, ?, ?)').run(m.version, m.name, new Date().toISOString());
  }
  // The default as it shipped before, with one change of the admin's own: PRI kept under its name.
  const old = JSON.parse((db.prepare("SELECT field_mappings FROM normalizers WHERE name = 'Default'").get() as { field_mappings: string }).field_mappings) as Array<{ sources: string[]; target: string }>;
  for (const m of old) m.sources = m.sources.filter((x) => !['LEVEL_NUM', 'FACILITY_NUM', 'PRI'].includes(x));
  old.push({ sources: ['PRI'], target: 'pri_number' });
  db.prepare("UPDATE normalizers SET field_mappings = ?, version = 3 WHERE name = 'Default'").run(JSON.stringify(old));
  db.close();

  const a = await startTestAppliance({}, before);
  try {
    const def = a.context.normalizers.list().find((n) => n.name === 'Default')!;
    const sourcesOf = (target: string) => def.field_mappings.filter((m) => m.target === target).flatMap((m) => m.sources);
    assert.ok(sourcesOf('severity').includes('LEVEL_NUM'));
    assert.ok(sourcesOf('facility').includes('FACILITY_NUM'));
    assert.ok(!sourcesOf('priority').includes('PRI'), "the admin's own mapping of PRI stands");
    assert.deepEqual(sourcesOf('pri_number'), ['PRI']);
    assert.equal(def.version, 4, 'an edit of the normalizer: its version moves on');
  } finally {
    await a.dispose();
  }
});
