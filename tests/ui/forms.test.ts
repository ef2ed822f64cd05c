// Pure helpers behind the admin forms (renderer/src/lib/forms.ts) and the admin page scope.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  expiryToIso,
  formatValueMap,
  parseQuota,
  parseValueMap,
  parseWhole,
  splitList,
  splitQuota,
} from '../../renderer/src/lib/forms.ts';
import { scopeFromQuery, scopeQuery } from '../../renderer/src/lib/admin-scope.ts';
import { definitionProblem } from '../../service/src/normalizers/definition.ts';

test('lists of field names', () => {
  assert.deepEqual(splitList(' event_time, ts ,\n\nEventTime,ts '), ['event_time', 'ts', 'EventTime']);
  assert.deepEqual(splitList(''), []);
});

test('whole numbers with limits and an optional empty value', () => {
  assert.deepEqual(parseWhole('30', { min: 1, what: 'days' }), { ok: true, value: 30 });
  assert.deepEqual(parseWhole(' ', { min: 1, allowEmpty: true, what: 'days' }), { ok: true, value: null });
  assert.deepEqual(parseWhole('', { min: 1, what: 'the number of days' }), { ok: false, error: 'Enter the number of days.' });
  assert.deepEqual(parseWhole('1.5', { min: 1, what: 'days' }), { ok: false, error: 'Days must be a whole number.' });
  assert.deepEqual(parseWhole('0', { min: 1, what: 'days' }), { ok: false, error: 'Days must be at least 1.' });
  assert.deepEqual(parseWhole('40000', { min: 1, max: 36500, what: 'days' }), { ok: false, error: 'Days must be at most 36,500.' });
});

test('disk quotas in binary units, and back', () => {
  assert.deepEqual(parseQuota('50', 'GiB'), { ok: true, value: 50 * 1024 ** 3 });
  assert.deepEqual(parseQuota('1.5', 'TiB'), { ok: true, value: 1.5 * 1024 ** 4 });
  assert.deepEqual(parseQuota('', 'GiB'), { ok: true, value: null });
  assert.equal(parseQuota('ten', 'GiB').ok, false);
  assert.equal(parseQuota('0', 'MiB').ok, false);
  assert.deepEqual(splitQuota(50 * 1024 ** 3), { amount: '50', unit: 'GiB' });
  assert.deepEqual(splitQuota(1.5 * 1024 ** 4), { amount: '1.5', unit: 'TiB' });
  assert.deepEqual(splitQuota(512 * 1024 ** 2), { amount: '512', unit: 'MiB' });
  assert.deepEqual(splitQuota(null), { amount: '', unit: 'GiB' });
  for (const bytes of [1024 ** 2, 3 * 1024 ** 3, 2.25 * 1024 ** 4]) {
    const { amount, unit } = splitQuota(bytes);
    assert.deepEqual(parseQuota(amount, unit), { ok: true, value: bytes }, `${bytes} round-trips`);
  }
});

test('value maps typed one pair per line, accepted by the service as a normalizer\'s value mapping', () => {
  const r = parseValueMap('4=warning\n\n 3 = error \nurl=a=b');
  assert.deepEqual(r, { ok: true, value: { '4': 'warning', '3': 'error', url: 'a=b' } });
  assert.equal(formatValueMap({ low: 'info', high: 'error' }), 'low=info\nhigh=error');
  assert.deepEqual(parseValueMap(formatValueMap({ '4': 'warning', '3': 'error' })), { ok: true, value: { '3': 'error', '4': 'warning' } });
  assert.deepEqual(parseValueMap('4=warning\nbad'), { ok: false, error: 'Line 2 needs the form value=replacement.' });
  assert.deepEqual(parseValueMap('=x'), { ok: false, error: 'Line 1 needs the form value=replacement.' });
  assert.equal(parseValueMap('  ').ok, false);
  if (r.ok) {
    const def = { transforms: [], field_mappings: [], value_mappings: [{ from_field: 'severity', to_field: 'severity', map: r.value }], timestamp_fields: [] };
    assert.equal(definitionProblem(def), null);
  }
});

test('API key expiry: never, in N days, or through the end of a chosen day', () => {
  const now = new Date('2026-03-01T12:00:00Z');
  assert.deepEqual(expiryToIso('never', '', now), { ok: true, value: null });
  assert.deepEqual(expiryToIso('30', '', now), { ok: true, value: '2026-03-31T12:00:00.000Z' });
  assert.deepEqual(expiryToIso('custom', '2026-04-15', now), { ok: true, value: '2026-04-15T23:59:59.000Z' });
  assert.equal(expiryToIso('custom', '', now).ok, false);
  assert.deepEqual(expiryToIso('custom', '2026-02-01', now), { ok: false, error: 'The expiry date must be in the future.' });
});

test('admin scope in the address', () => {
  assert.deepEqual(scopeFromQuery({ fractal: 'f1' }, false), { type: 'fractal', id: 'f1' });
  assert.equal(scopeFromQuery({ prism: 'p1' }, false), null, 'a fractal-only page ignores prisms');
  assert.deepEqual(scopeFromQuery({ prism: 'p1' }, true), { type: 'prism', id: 'p1' });
  assert.equal(scopeQuery({ type: 'prism', id: 'a b' }), '?prism=a%20b');
  assert.equal(scopeQuery(null), '');
});
