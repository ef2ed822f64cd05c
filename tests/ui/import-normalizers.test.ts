// Which normalizer each dropped file is imported with (renderer/src/lib/import-groups.ts): a drop
// of Windows event logs gets the shipped Windows normalizer unless the analyst chose one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { normalizerParts } from '../../renderer/src/lib/import-groups.ts';

const drop = ['Security.evtx', 'auth.log', 'sysmon.EVTX', 'export.ndjson.gz', 'old/System.evtx.gz'];

test('with no normalizer chosen, .evtx files (gzipped too) go with the Windows one and the rest with the fractal\'s', () => {
  assert.deepEqual(normalizerParts(drop, '', 'win-id'), [
    { normalizerId: 'win-id', files: [0, 2, 4] },
    { normalizerId: '', files: [1, 3] },
  ]);
});

test('a chosen normalizer applies to every file, and without the shipped one nothing changes', () => {
  assert.deepEqual(normalizerParts(drop, 'mine', 'win-id'), [{ normalizerId: 'mine', files: [0, 1, 2, 3, 4] }]);
  assert.deepEqual(normalizerParts(drop, '', null), [{ normalizerId: '', files: [0, 1, 2, 3, 4] }]);
  assert.deepEqual(normalizerParts(['a.evtx'], '', 'win-id'), [{ normalizerId: 'win-id', files: [0] }]);
  assert.deepEqual(normalizerParts([], '', 'win-id'), []);
});
