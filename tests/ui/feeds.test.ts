// The pure helpers of the Feeds, Coverage and Normalizers pages (renderer/src/lib/feeds.ts,
// normalizers.ts): how a feed's source and last sync read, the coverage heat scale, the token form's
// normalizer choice, and where a previewed field came from.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeSource, describeSync, heat } from '../../renderer/src/lib/feeds.ts';
import { choiceOf, describeOrigin, parseSources, tokenFieldsOf } from '../../renderer/src/lib/normalizers.ts';

test('a feed source and its last sync, as one line each', () => {
  assert.equal(describeSource({ repo_url: 'https://github.com/SigmaHQ/sigma', branch: 'master', path: 'rules/windows' }), 'rules/windows in https://github.com/SigmaHQ/sigma (master)');
  assert.equal(describeSource({ repo_url: '/srv/sigma', branch: 'main', path: '' }), '/srv/sigma', 'a local folder has no branch to show');
  const base = { last_sync_error: null, imported_count: 3136, skipped_count: 5, syncing: false };
  assert.equal(describeSync({ ...base, last_sync_status: 'ok' }), '3,136 imported, 5 skipped');
  assert.equal(describeSync({ ...base, last_sync_status: null }), 'never synced');
  assert.equal(describeSync({ ...base, last_sync_status: 'failed', last_sync_error: 'The branch does not exist.' }), 'failed: The branch does not exist.');
  assert.equal(describeSync({ ...base, last_sync_status: 'ok', syncing: true }), 'syncing…');
});

test('coverage heat: none, one, a few, several, many enabled alerts', () => {
  assert.deepEqual([0, 1, 2, 3, 4, 9, 10, 50].map(heat), [0, 1, 2, 2, 3, 3, 4, 4]);
});

test("the token form's normalizer choice and the fields it sends", () => {
  assert.equal(choiceOf(null), 'default');
  assert.equal(choiceOf({ normalization: false, normalizer_id: null }), 'none');
  assert.equal(choiceOf({ normalization: true, normalizer_id: null }), 'default');
  assert.equal(choiceOf({ normalization: true, normalizer_id: 'n1' }), 'n1');
  for (const c of ['default', 'none', 'n1']) assert.equal(choiceOf(tokenFieldsOf(c)), c, `${c} round-trips`);
});

test('where a previewed field came from; sources typed as a list', () => {
  assert.equal(describeOrigin('Image', { field: 'Event.EventData.Image' }), 'from Event.EventData.Image');
  assert.equal(describeOrigin('user', { field: 'user' }), 'as it arrived');
  assert.equal(describeOrigin('sigma_category', { valueMapping: 0, from: 'EventID' }), 'value mapping 1, from EventID');
  assert.deepEqual(parseSources(' computer, host_name ,, Computer '), ['computer', 'host_name', 'Computer']);
});
