// The Windows-event normalizer exactly as docs/normalizers-and-feeds.md shows it (the block after
// its `windows-evtx-normalizer` marker): the tests create this very normalizer.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';

export function documentedWindowsNormalizer(): Record<string, unknown> {
  const doc = readFileSync(path.resolve(import.meta.dirname, '../../docs/normalizers-and-feeds.md'), 'utf8');
  const block = /<!-- windows-evtx-normalizer[^>]*-->\s*```json\n([\s\S]*?)```/.exec(doc);
  assert.ok(block, 'the documentation holds the example');
  return JSON.parse(block[1]!);
}
