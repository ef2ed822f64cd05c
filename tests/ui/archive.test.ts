// Pure helpers behind the archive pages (renderer/src/lib/archive.ts): the restore window typed in
// UTC, the form's default end, what a settings save sends (the secret only when replaced), a job's line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { jobSummary, parseWindow, settingsPatch, windowEndText, windowText, type ArchiveSettings, type RestoreJob } from '../../renderer/src/lib/archive.ts';

test('the restore window: UTC without a zone, a zone when given, refusals that say how to write it', () => {
  assert.deepEqual(parseWindow('2024-03-01 10:00', ' 2024-03-01T18:30 '), { ok: true, value: { start: '2024-03-01T10:00:00.000Z', end: '2024-03-01T18:30:00.000Z' } });
  assert.deepEqual(parseWindow('2024-03-01 10:00+02:00', '2024-03-02'), { ok: true, value: { start: '2024-03-01T08:00:00.000Z', end: '2024-03-02T00:00:00.000Z' } });
  assert.deepEqual(parseWindow('yesterday', '2024-03-01 10:00'), { ok: false, error: '"yesterday" is not a time: write it as 2024-03-01 10:00 (UTC).' });
  assert.deepEqual(parseWindow('2024-03-01 10:00', ''), { ok: false, error: '"(empty)" is not a time: write it as 2024-03-01 18:00 (UTC).' });
  assert.deepEqual(parseWindow('2024-03-01 10:00', '2024-03-01 10:00'), { ok: false, error: 'The end must be after the start.' });
});

test('the form shows minutes; its default end is past the newest log', () => {
  assert.equal(windowText('2024-03-01T10:07:59.999Z'), '2024-03-01 10:07');
  assert.equal(windowText(null), '');
  assert.equal(windowEndText('2024-03-03T10:09:00.000Z'), '2024-03-03 10:10');
  assert.equal(windowEndText('2024-12-31T23:59:30.5Z'), '2025-01-01 00:00');
  assert.equal(windowEndText(null), '');
});

const saved: ArchiveSettings = {
  enabled: false,
  backend: 'local',
  path: '/data/archive',
  s3_endpoint: null,
  s3_bucket: null,
  s3_prefix: '',
  s3_region: null,
  s3_access_key: null,
  s3_secret_key_set: true,
};
const { s3_secret_key_set: _, ...form } = saved;

test('a settings save sends what changed; empty text is null; the secret only when a new one is typed', () => {
  assert.deepEqual(settingsPatch(saved, { ...form, s3_endpoint: '', s3_region: '' }, ''), {}, 'untouched: nothing to send');
  assert.deepEqual(settingsPatch(saved, { ...form, enabled: true }, ''), { enabled: true });
  assert.deepEqual(settingsPatch(saved, { ...form, path: '  ' }, ''), { path: null }, 'an empty folder is the default one');
  assert.deepEqual(settingsPatch(saved, { ...form, backend: 's3', s3_endpoint: ' http://10.0.0.5:9000 ', s3_bucket: 'logs', s3_prefix: 'box-1/' }, 'new-secret'), {
    backend: 's3',
    s3_endpoint: 'http://10.0.0.5:9000',
    s3_bucket: 'logs',
    s3_prefix: 'box-1/',
    s3_secret_key: 'new-secret',
  });
});

test("a job's line: restored and skipped, files read", () => {
  const job = { status: 'running', restored: 12345, skipped: 7, files_done: 1, files_total: 3 } as RestoreJob;
  assert.equal(jobSummary(job), '12,345 restored, 7 already there · 1 of 3 files');
  assert.equal(jobSummary({ ...job, status: 'done', files_done: 1, files_total: 1 }), '12,345 restored, 7 already there · 1 of 1 file');
  assert.equal(jobSummary({ ...job, status: 'done', restored: 0, skipped: 0, files_done: 0, files_total: 0 }), '0 restored, 0 already there · no archived file in this window');
});
