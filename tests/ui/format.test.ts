// Pure helpers of the browser UI (renderer/src/lib): formatting, timestamp parsing, hash routes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  formatAge,
  formatBytes,
  formatCount,
  formatUtc,
  maskToken,
  parseTimestamp,
} from '../../renderer/src/lib/format.ts';
import { parseHash } from '../../renderer/src/lib/route.ts';

test('counts and sizes', () => {
  assert.equal(formatCount(0), '0');
  assert.equal(formatCount(1234567), '1,234,567');
  assert.equal(formatCount(null), '—');
  assert.equal(formatBytes(0), '0 B');
  assert.equal(formatBytes(1023), '1023 B');
  assert.equal(formatBytes(1536), '1.50 KiB');
  assert.equal(formatBytes(50 * 1024 * 1024), '50.0 MiB');
  assert.equal(formatBytes(300 * 1024 ** 3), '300 GiB');
  assert.equal(formatBytes(undefined), '—');
  assert.equal(formatBytes(-1), '—');
});

test('timestamps in the forms a log store returns', () => {
  const want = Date.UTC(2024, 4, 1, 12, 34, 56, 789);
  assert.equal(parseTimestamp('2024-05-01T12:34:56.789Z')?.getTime(), want);
  assert.equal(parseTimestamp('2024-05-01 12:34:56.789')?.getTime(), want, 'ClickHouse text, no zone: UTC');
  assert.equal(parseTimestamp('2024-05-01 12:34:56.789123456')?.getTime(), want, 'nanosecond digits');
  assert.equal(parseTimestamp('2024-05-01T14:34:56.789+02:00')?.getTime(), want);
  assert.equal(parseTimestamp(want)?.getTime(), want, 'epoch ms');
  assert.equal(parseTimestamp(want / 1000)?.getTime(), want, 'epoch s');
  assert.equal(parseTimestamp(String(want * 1000))?.getTime(), want, 'epoch µs as text');
  assert.equal(parseTimestamp(null), null);
  assert.equal(parseTimestamp(''), null);
  assert.equal(parseTimestamp('not a time'), null);
  assert.equal(parseTimestamp(0), null, 'zero means no events, not 1970');
});

test('UTC display and age', () => {
  assert.equal(formatUtc(new Date(Date.UTC(2024, 4, 1, 12, 34, 56, 789))), '2024-05-01 12:34:56 UTC');
  assert.equal(formatUtc(null), '—');
  const now = new Date(Date.UTC(2024, 4, 10));
  assert.equal(formatAge(new Date(Date.UTC(2024, 4, 9, 21)), now), '3 h ago');
  assert.equal(formatAge(new Date(Date.UTC(2024, 4, 1)), now), '9 d ago');
  assert.equal(formatAge(new Date(now.getTime() + 5 * 60_000), now), 'in 5 min');
});

test('tokens: masked display', () => {
  assert.equal(maskToken('abcd1234efgh5678'), 'abcd••••••••5678');
  assert.equal(maskToken('short'), '•••••');
});

test('hash routes', () => {
  assert.deepEqual(parseHash(''), { path: '/', query: {} });
  assert.deepEqual(parseHash('#/'), { path: '/', query: {} });
  assert.deepEqual(parseHash('#search'), { path: '/search', query: {} });
  assert.deepEqual(parseHash('#/search/?q=a%20b&x=1'), { path: '/search', query: { q: 'a b', x: '1' } });
  assert.deepEqual(parseHash('#//admin//users/'), { path: '/admin/users', query: {} });
});
