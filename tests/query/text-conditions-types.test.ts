// Text conditions (query-language.md §2) on a field whose values are of every kind the `fields`
// JSON column stores: strings (some looking like numbers, booleans or arrays), integers, floats,
// booleans, arrays, a nested object (its own dotted fields, so the parent name is absent), an
// integer beyond 64 bits (kept as exact text) and absence. A condition compares the value's text,
// whichever way the engine reads it; the expected rows come from the texts written out below.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { queryDataset, type EventLine } from '../support/query.ts';

/** Each event's `v` as stored (undefined: absent) and the text conditions compare it as. */
const VALUES: Array<{ n: string; v: unknown; text: string }> = [
  { n: 's-abc', v: 'abc', text: 'abc' },
  { n: 's-ABC', v: 'ABC', text: 'ABC' },
  { n: 's-xabcx', v: 'xabcx', text: 'xabcx' },
  { n: 's-empty', v: '', text: '' },
  { n: 's-123', v: '123', text: '123' },
  { n: 's-true', v: 'true', text: 'true' },
  { n: 's-array', v: '[1,2]', text: '[1,2]' },
  { n: 's-space', v: 'Abc def', text: 'Abc def' },
  { n: 'i-123', v: 123, text: '123' },
  { n: 'i-neg', v: -7, text: '-7' },
  { n: 'f-1.5', v: 1.5, text: '1.5' },
  { n: 'b-true', v: true, text: 'true' },
  { n: 'b-false', v: false, text: 'false' },
  { n: 'a-str', v: ['abc', 'x'], text: '["abc","x"]' },
  { n: 'a-int', v: [1, 2], text: '[1,2]' },
  { n: 'o-nested', v: { a: 'abc' }, text: '' },
  { n: 'null', v: null, text: '' },
  { n: 'absent', v: undefined, text: '' },
];

const BIG = '99999999999999999999';
const ALL = [...VALUES, { n: 'i-big', text: BIG }];

const data = queryDataset('mixed', () => {
  const t = Date.now() - 60_000;
  const events: EventLine[] = VALUES.map(({ n, v }, i) => ({ timestamp: new Date(t - i * 1000).toISOString(), n, ...(v === undefined ? {} : { v }) }));
  // Written as text: JSON.stringify would round the integer beyond 64 bits the ingest keeps exactly.
  events.push(`{"timestamp":"${new Date(t - 100_000).toISOString()}","n":"i-big","v":${BIG}}`);
  return events;
});

const { run } = data;

const lower = (s: string) => s.toLowerCase();
/** The rows a text condition keeps, by the spec's rules over the texts. */
const CASES: Array<[string, (t: string) => boolean]> = [
  ['v=abc', (t) => t === 'abc'],
  ['v=ABC', (t) => t === 'ABC'],
  ['v!=abc', (t) => t !== 'abc'],
  ['v="Abc def"', (t) => t === 'Abc def'],
  ['v=abc,xabcx', (t) => t === 'abc' || t === 'xabcx'],
  ['v!=abc,xabcx', (t) => t !== 'abc' && t !== 'xabcx'],
  ['v=abc,123', (t) => t === 'abc' || t === '123'],
  ['v=123', (t) => t === '123'],
  ['v!=123', (t) => t !== '123'],
  ['v=-7', (t) => t === '-7'],
  ['v="1.5"', (t) => t === '1.5'],
  ['v=true', (t) => t === 'true'],
  ['v=TRUE', (t) => t === 'TRUE'],
  ['v=false', (t) => t === 'false'],
  ['v!=false', (t) => t !== 'false'],
  ['v="[1,2]"', (t) => t === '[1,2]'],
  ['v="[\\"abc\\",\\"x\\"]"', (t) => t === '["abc","x"]'],
  ['v=~"\\"x\\""', (t) => t.includes('"x"')],
  [`v=${BIG}`, (t) => t === BIG],
  ['v=""', (t) => t === ''],
  ['v!=""', (t) => t !== ''],
  ['v=*', (t) => t !== ''],
  ['v!=*', (t) => t === ''],
  ['v=nothing', () => false],
  ['v!=nothing', () => true],
  ['v=~abc', (t) => t !== '' && lower(t).includes('abc')],
  ['v=~ABC,23', (t) => t !== '' && (lower(t).includes('abc') || t.includes('23'))],
  ['v=~"["', (t) => t.includes('[')],
  ['v=~ru', (t) => lower(t).includes('ru')],
  ['v=^ab', (t) => lower(t).startsWith('ab')],
  ['v=^1,"-"', (t) => t.startsWith('1') || t.startsWith('-')],
  ['v=$C', (t) => lower(t).endsWith('c')],
  ['v=$"]",se', (t) => t.endsWith(']') || lower(t).endsWith('se')],
  ['v=^TR', (t) => lower(t).startsWith('tr')],
  ['v=^Inf,n', (t) => lower(t).startsWith('inf') || lower(t).startsWith('n')],
  ['v=^"[\\"a"', (t) => t.startsWith('["a')],
  ['v=^xab,Ab', (t) => lower(t).startsWith('xab') || lower(t).startsWith('ab')],
  ['NOT v=^ab', (t) => !lower(t).startsWith('ab')],
  ['v=$UE', (t) => lower(t).endsWith('ue')],
  ['v=$E', (t) => lower(t).endsWith('e')],
  ['v=$def,BC', (t) => lower(t).endsWith('def') || lower(t).endsWith('bc')],
  ['v=$"x\\"]"', (t) => t.endsWith('x"]')],
  ['v=$"3",c', (t) => t.endsWith('3') || lower(t).endsWith('c')],
  ['NOT v=$c', (t) => !lower(t).endsWith('c')],
  ['v=/^a/', (t) => /^a/.test(t)],
  ['v=/abc/i', (t) => /abc/i.test(t)],
  ['v=/^[0-9]+$/', (t) => /^[0-9]+$/.test(t)],
  ['v=/^$/', (t) => t === ''],
  ['v!=/a/', (t) => !/a/.test(t)],
  ['NOT v=abc', (t) => t !== 'abc'],
  ['NOT v=~abc', (t) => !(t !== '' && lower(t).includes('abc'))],
  ['v=abc OR v=123', (t) => t === 'abc' || t === '123'],
  ['v!=abc AND v!=123', (t) => t !== 'abc' && t !== '123'],
];

describe('text conditions on a field of mixed types', () => {
  test('every text operator keeps the rows whose value reads as the matching text', async () => {
    for (const [q, keep] of CASES) {
      const r = await run(`${q} | table(n)`);
      const got = r.results.map((x) => String(x.n)).sort();
      const want = ALL.filter((e) => keep(e.text)).map((e) => e.n).sort();
      assert.deepEqual(got, want, q);
    }
  });

  test('bare search reads the record, not the field', async () => {
    const r = await run('"abc" | table(n)');
    assert.deepEqual(r.results.map((x) => String(x.n)).sort(), ['a-str', 'o-nested', 's-abc', 's-ABC', 's-space', 's-xabcx'].sort());
  });
});
