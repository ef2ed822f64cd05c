// The .evtx reader against its oracle, Debian's python3-evtx, on every file of the shared
// EVTX-ATTACK-SAMPLES set: the same records in the same order with the same record ids and
// written times, and every event's fields and values the same once python-evtx's XML is put in
// evtx_dump's JSON shape. Where python-evtx prints a value its own way (README.md lists each
// rule), the comparison accepts exactly that form of the same value and the rules used are printed.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { readEvtx, type EvtxRecord } from '../../service/src/evidence/evtx/index.ts';
import { compareEvent, expandStringArrays, oracleEventJson, parseOracleXml, pythonRecordTime, runOracle, type OracleRecord } from '../support/evtx-oracle.ts';
import { unpackEvtxSamples, type EvtxSamples } from '../support/evtx-samples.ts';

describe('evtx reader against python-evtx on EVTX-ATTACK-SAMPLES', () => {
  let samples: EvtxSamples;
  let oracle: Map<string, OracleRecord[]>;
  before(async () => {
    samples = unpackEvtxSamples();
    oracle = await runOracle(samples.files);
  });
  after(() => samples?.remove());

  it('reads every file as python-evtx does: records, ids, times, fields and values', async (t) => {
    assert.equal(samples.files.length, 277, 'the data set holds 277 .evtx files');
    const rules = new Map<string, number>();
    const problems: string[] = [];
    let events = 0;
    for (const file of samples.files) {
      const name = file.slice(samples.dir.length + 1);
      const reading = readEvtx(file);
      const ours: EvtxRecord[] = [];
      for await (const r of reading) ours.push(r);
      const theirs = oracle.get(file)!;
      assert.deepEqual(reading.warnings, [], `${name}: an undamaged file reads without warnings`);
      assert.equal(ours.length, theirs.length, `${name}: as many records as python-evtx`);
      for (let i = 0; i < theirs.length; i++) {
        const [o, p] = [ours[i]!, theirs[i]!];
        assert.equal(p.error, undefined, `${name}: python-evtx renders record ${p.record}`);
        assert.equal(o.recordId, p.record, `${name}: record ${i} has python-evtx's record id`);
        assert.equal(pythonRecordTime(o.timestamp), p.time, `${name}: record ${o.recordId} was written at python-evtx's time`);
        const xml = parseOracleXml(p.xml!);
        expandStringArrays(xml, rules);
        for (const d of compareEvent(o.event, oracleEventJson(xml), rules)) problems.push(`${name} record ${o.recordId} ${d}`);
      }
      events += ours.length;
    }
    t.diagnostic(`${events} events; values agreeing by rule: ${JSON.stringify(Object.fromEntries(rules))}`);
    assert.deepEqual(problems.slice(0, 30), [], `${problems.length} differences`);
    assert.equal(events, [...oracle.values()].reduce((n, r) => n + r.length, 0));
    // The documented differences the sample set exercises (README.md, "Tested against python-evtx").
    for (const rule of ['integer', 'GUID in braces, lower case', 'hex integer zero-padded', 'FILETIME via float, space, no Z', 'string array as <string> items', 'control characters removed']) {
      assert.ok(rules.get(rule), `rule "${rule}" was needed`);
    }
  });
});
