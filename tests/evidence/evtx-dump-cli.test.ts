// scripts/evtx-dump.ts, the command-line dump: one event per NDJSON line (exact big integers), the
// record-header form, warnings and refusals on standard error, and its exit status.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { T, Template, V, buildEvtx, el, sub } from '../support/evtx-builder.ts';

const root = path.resolve(import.meta.dirname, '../..');
const dump = (...args: string[]) =>
  spawnSync(process.execPath, ['--import', 'tsx', 'scripts/evtx-dump.ts', ...args], { cwd: root, encoding: 'utf8', timeout: 60_000 });

describe('evtx-dump command', () => {
  let dir: string;
  let file: string;
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'evtx-dump-'));
    file = path.join(dir, 'two.evtx');
    const template = new Template(el('Event', {}, el('EventData', {}, el('Data', { Name: 'Big' }, sub(0, T.UInt64)), el('Data', { Name: 'User' }, sub(1, T.String)))));
    writeFileSync(
      file,
      buildEvtx([
        [
          { id: 41, time: '2024-05-06T07:08:09.1234567Z', instance: { template, values: [V.uint64(18446744073709551615n), V.string('alice')] } },
          { id: 42, time: '2024-05-06T07:08:10Z', instance: { template, values: [V.uint64(7n), V.string('bob')] } },
        ],
      ]),
    );
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('prints one event per line, big integers with every digit', () => {
    const r = dump(file);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(
      r.stdout,
      '{"Event":{"EventData":{"Big":18446744073709551615,"User":"alice"}}}\n{"Event":{"EventData":{"Big":7,"User":"bob"}}}\n',
    );
    assert.equal(r.stderr, `${file}: 2 events, 1 chunks\n`);
  });

  it('adds the record id, written time and file with --records', () => {
    const r = dump('--records', file);
    assert.equal(r.status, 0, r.stderr);
    const first = r.stdout.split('\n')[0]!;
    assert.equal(first, `{"record_id":41,"timestamp":"2024-05-06T07:08:09.1234567Z","file":${JSON.stringify(file)},"event":{"Event":{"EventData":{"Big":18446744073709551615,"User":"alice"}}}}`);
  });

  it('names damaged parts on standard error and a file that is no event log in its exit status', () => {
    const damaged = path.join(dir, 'damaged.evtx');
    const bytes = readFileSync(file);
    bytes[100] ^= 1; // inside the file header's checksummed bytes
    writeFileSync(damaged, bytes);
    const notLog = path.join(dir, 'notes.txt');
    writeFileSync(notLog, 'just some text\n');
    const r = dump(damaged, notLog);
    assert.equal(r.status, 1);
    assert.equal(r.stdout.split('\n').length, 3, 'the damaged file still gives its two events');
    assert.match(r.stderr, /damaged\.evtx: warning: file header: checksum mismatch/);
    assert.match(r.stderr, /notes\.txt: not a Windows event log \(\.evtx\)/);
    assert.equal(dump().status, 2);
  });
});
