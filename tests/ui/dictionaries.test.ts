// Pure helpers behind the Dictionaries page (renderer/src/lib/dictionaries.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { exportName, parseColumns, primaryKey, scopeParams, usageQuery } from '../../renderer/src/lib/dictionaries.ts';

const intel = { name: 'threat_intel', columns: ['ip', 'threat_score', 'category'], key_columns: ['ip'] };

test('the ready-made match() query names every other column', () => {
  assert.equal(usageQuery(intel, 'ip', 'src_ip'), '* | match(dict="threat_intel", field=src_ip, column=ip, include=[threat_score,category])');
  assert.equal(usageQuery(intel, 'ip', '  '), '* | match(dict="threat_intel", field=ip, column=ip, include=[threat_score,category])', 'no field: the column');
  const hosts = { name: 'hosts', columns: ['host', 'ip', 'owner'], key_columns: ['host', 'ip'] };
  assert.equal(usageQuery(hosts, 'ip', 'dst_ip'), '* | match(dict="hosts", field=dst_ip, column=ip, include=[host,owner])', 'by another key column');
  assert.equal(usageQuery({ name: 'allow', columns: ['user'], key_columns: ['user'] }, 'user', ''), '* | match(dict="allow", field=user, column=user, include=[user])');
  assert.equal(usageQuery({ ...intel, name: 'a"b' }, 'ip', 'x'), '* | match(dict="a\\"b", field=x, column=ip, include=[threat_score,category])');
});

test('columns and key columns of the create form', () => {
  assert.deepEqual(parseColumns(' ip, threat_score ,category,ip', ''), { ok: true, columns: ['ip', 'threat_score', 'category'], keys: ['ip'] });
  assert.deepEqual(parseColumns('host, ip, owner', 'ip, host'), { ok: true, columns: ['host', 'ip', 'owner'], keys: ['ip', 'host'] });
  assert.deepEqual(parseColumns(' , ', ''), { ok: false, error: 'Enter at least one column name.' });
  assert.deepEqual(parseColumns('a, b', 'c'), { ok: false, error: 'Key column c must be among the columns.' });
  assert.deepEqual(parseColumns('a, b', 'c, d'), { ok: false, error: 'Key columns c, d must be among the columns.' });
});

test('primary key, scope parameters, export name', () => {
  assert.equal(primaryKey({ columns: ['a', 'b'], key_columns: ['b', 'a'] }), 'b');
  assert.deepEqual(scopeParams({ type: 'fractal', id: 'f1' }), { fractal_id: 'f1' });
  assert.deepEqual(scopeParams({ type: 'prism', id: 'p1' }), { prism_id: 'p1' });
  assert.deepEqual(scopeParams(null), {});
  assert.equal(exportName('threat_intel'), 'dictionary-threat_intel.csv');
  assert.equal(exportName('a b/c'), 'dictionary-a-b-c.csv');
  assert.equal(exportName('///'), 'dictionary-rows.csv');
});
