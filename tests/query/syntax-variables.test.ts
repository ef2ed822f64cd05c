// @variables (query-language.md §1.7) and the query size limit (§5).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseQuery } from '../../service/src/query/syntax/parser.ts';
import { checkQuerySize, substituteVariables } from '../../service/src/query/syntax/variables.ts';
import { assertParseError, stagesOf } from './syntax-helpers.ts';

const vars = (o: Record<string, string>) => Object.entries(o).map(([name, value]) => ({ name, value }));

describe('substituteVariables', () => {
  test('@name is replaced by the value as raw query text', () => {
    assert.equal(substituteVariables('user=@u | count()', vars({ u: 'admin' })), 'user=admin | count()');
    assert.equal(substituteVariables('(@a OR @b_2)', vars({ a: 'x=1', b_2: 'y=2' })), '(x=1 OR y=2)');
  });

  test('the value may hold operators and stages', () => {
    const q = substituteVariables('@filter | @agg', vars({ filter: 'a=1 OR b="x y"', agg: 'groupBy(h) | count()' }));
    assert.equal(q, 'a=1 OR b="x y" | groupBy(h) | count()');
    assert.equal(parseQuery(q).stages.length, 3);
  });

  test('text inside quotes is not replaced; a backslash there protects the next character', () => {
    const v = vars({ u: 'X' });
    assert.equal(substituteVariables(`"@u" '@u' @u`, v), `"@u" '@u' X`);
    assert.equal(substituteVariables(`"a\\"@u" @u`, v), `"a\\"@u" X`);
    assert.equal(substituteVariables(`'it\\'s @u' @u`, v), `'it\\'s @u' X`);
    assert.equal(substituteVariables(`"unterminated @u`, v), `"unterminated @u`);
  });

  test('an @ right after a letter, digit or _ is not a variable', () => {
    const v = vars({ host: 'X', u: 'Y' });
    assert.equal(substituteVariables('user@host a_@u 9@u é@u (@u) =@u', v), 'user@host a_@u 9@u é@u (Y) =Y');
  });

  test('names without a supplied variable are left, and then fail to parse', () => {
    const q = substituteVariables('user=@nope', vars({ no: 'x' }));
    assert.equal(q, 'user=@nope');
    assertParseError(q, 'unexpected character "@" in query', { start: 5, end: 6 });
  });

  test('an empty value becomes *', () => {
    assert.equal(substituteVariables('@f | status=@s', vars({ f: '', s: '' })), '* | status=*');
    assert.deepEqual(stagesOf('status=*'), [{ kind: 'filter', condition: { kind: 'compare', field: 'status', op: '=', values: [{ kind: 'wildcard' }] } }]);
  });

  test('names are the longest match of [A-Za-z_][A-Za-z0-9_]*', () => {
    assert.equal(substituteVariables('@hostname @host', vars({ host: 'H', hostname: 'N' })), 'N H');
    assert.equal(substituteVariables('@hostname @host.x', vars({ host: 'H' })), '@hostname H.x');
    assert.equal(substituteVariables('@1 @ x @', vars({ '1': 'one' })), '@1 @ x @');
  });

  test('values are not substituted again', () => {
    assert.equal(substituteVariables('@a', vars({ a: '@b', b: 'no' })), '@b');
  });

  test('positions refer to the text after substitution', () => {
    const q = substituteVariables('@v | groupBy(host', vars({ v: 'user="Zoë"' }));
    assertParseError(q, 'expected token RPAREN, got EOF', { start: 25, end: 25 });
  });
});

describe('checkQuerySize', () => {
  test('at most 10,000 UTF-8 bytes', () => {
    assert.equal(checkQuerySize('a'.repeat(10_000), 'a'.repeat(10_000)), null);
    assert.equal(checkQuerySize('a'.repeat(10_001), 'a'), 'Query too long (10001 chars, max 10000)');
  });

  test('bytes, not characters, are counted', () => {
    const q = 'é'.repeat(5_001);
    assert.equal(q.length, 5_001);
    assert.equal(checkQuerySize(q, q), 'Query too long (10002 chars, max 10000)');
    const emoji = '🔥'.repeat(2_500);
    assert.equal(checkQuerySize(emoji, emoji), null);
    assert.equal(checkQuerySize(emoji + 'x', emoji), 'Query too long (10001 chars, max 10000)');
  });

  test('checked again after variable expansion', () => {
    const original = 'x=@v';
    const expanded = substituteVariables(original, vars({ v: '1'.repeat(10_000) }));
    assert.equal(checkQuerySize(original, expanded), 'Query too long after variable expansion (10002 chars, max 10000)');
  });
});
