// Unit tests of the bulk-format reader: pairing of action and document lines, per-item refusals,
// whole-body syntax errors, and exact big numbers.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BulkSyntaxError, parseBulk, type BulkItem } from '../../service/src/ingest/bulk/parse.ts';
import { BigNumberText, parseJson } from '../../service/src/shared/exact-json.ts';

const nd = (...lines: unknown[]) => lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + '\n';
const okItems = (items: BulkItem[]) => items.filter((i): i is Extract<BulkItem, { ok: true }> => i.ok);

describe('parseBulk', () => {
  it('pairs index and create actions with their documents, with and without _index', () => {
    const items = parseBulk(
      nd({ index: { _index: 'web' } }, { msg: 'a' }, { index: {} }, { msg: 'b' }, { create: { _index: 'logs-x', _id: '7' } }, { msg: 'c' }),
    );
    assert.equal(items.length, 3);
    const [a, b, c] = okItems(items);
    assert.deepEqual(a!.doc, { msg: 'a', _index: 'web' });
    assert.equal(a!.action, 'index');
    assert.equal(a!.source, '{"msg":"a"}');
    assert.deepEqual(b!.doc, { msg: 'b' });
    assert.equal(b!.index, undefined);
    assert.equal(c!.action, 'create');
    assert.deepEqual(c!.doc, { msg: 'c', _index: 'logs-x' });
  });

  it('uses the path index as the default and lets the action line override it', () => {
    const [a, b] = okItems(parseBulk(nd({ index: {} }, { m: 1 }, { index: { _index: 'own' } }, { m: 2 }), 'from-path'));
    assert.equal(a!.doc._index, 'from-path');
    assert.equal(b!.doc._index, 'own');
  });

  it('refuses update and delete per item; delete has no document line', () => {
    const items = parseBulk(
      nd({ delete: { _index: 'x', _id: '1' } }, { index: {} }, { m: 1 }, { update: { _id: '2' } }, { doc: { m: 2 } }, { create: {} }, { m: 3 }),
    );
    assert.deepEqual(
      items.map((i) => [i.action, i.ok]),
      [['delete', false], ['index', true], ['update', false], ['create', true]],
    );
    const del = items[0] as Extract<BulkItem, { ok: false }>;
    assert.equal(del.status, 400);
    assert.equal(del.id, '1');
    assert.equal(del.index, 'x');
    assert.equal(del.error.type, 'illegal_argument_exception');
    assert.match(del.error.reason, /delete/);
  });

  it('refuses a document that is not a JSON object but keeps the others', () => {
    const items = parseBulk(nd({ index: {} }, '[1,2]', { index: {} }, 'not json', { index: {} }, '"str"', { index: {} }, { ok: true }));
    assert.deepEqual(items.map((i) => i.ok), [false, false, false, true]);
    for (const i of items.slice(0, 3)) {
      assert.ok(!i.ok);
      assert.equal(i.status, 400);
      assert.equal(i.error.type, 'mapper_parsing_exception');
    }
    assert.match((items[0] as { error: { reason: string } }).error.reason, /must be a JSON object, not an array/);
  });

  it('tolerates CRLF, blank lines between requests, a BOM and a missing final newline', () => {
    const body = '\ufeff{"index":{}}\r\n{"a":1}\r\n\r\n\n{"create":{}}\n{"b":2}';
    const items = okItems(parseBulk(Buffer.from(body, 'utf8')));
    assert.deepEqual(items.map((i) => i.doc), [{ a: 1 }, { b: 2 }]);
    assert.equal(items[0]!.source, '{"a":1}');
  });

  it('reports a missing or empty document as an item error', () => {
    const items = parseBulk('{"index":{}}\n\n{"index":{}}');
    assert.equal(items.length, 2);
    assert.ok(!items[0]!.ok && /empty/.test(items[0]!.error.reason));
    assert.ok(!items[1]!.ok && /no document line/.test(items[1]!.error.reason));
  });

  it('fails the whole body when an action line cannot be read', () => {
    for (const body of ['this is not json\n', nd('[1]', { a: 1 }), nd({ frobnicate: {} }, { a: 1 }), nd({ index: {}, create: {} }, { a: 1 }), nd({ index: 'x' }, { a: 1 })]) {
      assert.throws(() => parseBulk(body), BulkSyntaxError, body);
    }
    // The error names the line, as the format's errors do.
    assert.throws(() => parseBulk(nd({ index: {} }, { a: 1 }, 'garbage')), /line \[3\]/);
  });

  it('fails an empty body', () => {
    assert.throws(() => parseBulk(''), (e: unknown) => e instanceof BulkSyntaxError && e.type === 'action_request_validation_exception');
    assert.throws(() => parseBulk('\n\n  \n'), BulkSyntaxError);
  });

  it('ignores other metadata such as _type, routing and pipeline', () => {
    const [a] = okItems(parseBulk(nd({ index: { _index: 'i', _type: '_doc', routing: 'r', pipeline: 'p', _id: 5 } }, { m: 1 })));
    assert.deepEqual(a!.doc, { m: 1, _index: 'i' });
  });

  it('keeps a document key named __proto__ as data', () => {
    const [a] = okItems(parseBulk(nd({ index: {} }, '{"__proto__":{"x":1},"n":12345678901234567890}')));
    assert.equal(Object.getPrototypeOf(a!.doc), Object.prototype);
    assert.deepEqual(Object.keys(a!.doc), ['__proto__', 'n']);
  });

  it('keeps integers beyond 2^63 exactly', () => {
    const [a] = okItems(parseBulk(nd({ index: {} }, '{"big":18446744073709551617,"nested":{"neg":-9223372036854775809},"small":42}')));
    assert.ok(a!.doc.big instanceof BigNumberText);
    assert.equal((a!.doc.big as BigNumberText).text, '18446744073709551617');
    assert.equal(((a!.doc.nested as Record<string, unknown>).neg as BigNumberText).text, '-9223372036854775809');
    assert.equal(a!.doc.small, 42);
  });
});

describe('parseJson', () => {
  it('agrees with JSON.parse where JSON.parse is exact', () => {
    const samples = [
      '{"a":1,"b":[true,false,null],"c":{"d":"e\\n\\u00e9\\"q"},"f":-1.5e3,"g":0,"h":""}',
      '[]',
      '{}',
      ' 12 ',
      '"\\ud83d\\ude00 emoji"',
      '{"s":"digits 12345678901234567890 in a string"}',
      '{"x":9007199254740991,"y":-9007199254740991,"z":0.1234567890123456789}',
      '{"e":1e308,"w":"  ","u":"\\/"}',
    ];
    for (const s of samples) assert.deepEqual(parseJson(s), JSON.parse(s), s);
  });

  it('keeps unsafe integers and overflowing numbers as text', () => {
    const v = parseJson('[9007199254740993, 123456789012345678901234567890, 1e400, -0, 9007199254740991]') as unknown[];
    assert.deepEqual(
      v.map((x) => (x instanceof BigNumberText ? `big:${x.text}` : x)),
      ['big:9007199254740993', 'big:123456789012345678901234567890', 'big:1e400', -0, 9007199254740991],
    );
    assert.equal(JSON.stringify(v[1]), '"123456789012345678901234567890"');
  });

  it('rejects what JSON.parse rejects, also on the exact path', () => {
    const bad = [
      '{"a":12345678901234567890,}',
      '{"a":12345678901234567890',
      '[12345678901234567890 1]',
      '{"a":01234567890123456789}',
      '{"a":12345678901234567890} x',
      '{"a":"unterminated 12345678901234567890',
      '{a:12345678901234567890}',
      '[12345678901234567890, tru]',
      '["12345678901234567890\u0001"]',
      '[-]',
      '[1.]',
      '[1e]',
      '',
    ];
    for (const s of bad) {
      assert.throws(() => JSON.parse(s), SyntaxError, `JSON.parse should reject ${s}`);
      assert.throws(() => parseJson(s), SyntaxError, s);
    }
  });
});
