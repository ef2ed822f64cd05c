// Parser and printer against query-language.md §1–§6: worked examples, precedence, comparisons,
// arguments, blocks, assignments, error messages and spans.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { QueryParseError } from '../../service/src/query/syntax/ast.ts';
import { parseQuery, TOO_COMPLEX } from '../../service/src/query/syntax/parser.ts';
import { printQuery } from '../../service/src/query/syntax/printer.ts';
import { assertParseError, SPEC_QUERIES, stagesOf, withoutSpans } from './syntax-helpers.ts';

// Span-free tree builders.
const text = (t: string, quoted = false) => ({ kind: 'text', text: t, quoted });
const wildcard = { kind: 'wildcard' };
const regex = (pattern: string, flags = '') => ({ kind: 'regex', pattern, flags });
const cmp = (field: string, op: string, ...values: unknown[]) => ({ kind: 'compare', field, op, values });
const eq = (field: string, value: string) => cmp(field, '=', text(value));
const and = (...items: unknown[]) => ({ kind: 'and', items });
const or = (...items: unknown[]) => ({ kind: 'or', items });
const not = (item: unknown) => ({ kind: 'not', item });
const search = (t: string) => ({ kind: 'search', text: t });
const filter = (condition: unknown) => ({ kind: 'filter', condition });
const word = (t: string) => ({ kind: 'word', text: t });
const str = (t: string) => ({ kind: 'string', text: t });
const arg = (value: unknown, key?: string) => (key === undefined ? { value } : { key, value });
const call = (name: string, args: unknown[] = [], block?: unknown) => (block ? { name, args, block } : { name, args });
const command = (name: string, args: unknown[] = [], block?: unknown) => ({ kind: 'command', call: call(name, args, block) });
const num = (t: string) => ({ kind: 'number', text: t });
const name = (n: string) => ({ kind: 'name', name: n });
const bin = (op: string, left: unknown, right: unknown) => ({ kind: 'binary', op, left, right });
const assign = (target: string, expr: unknown) => ({ kind: 'assignment', target, expr });

describe('§6 worked examples', () => {
  test('1. status>= → expected value, got EOF at {8, 8}', () => {
    assertParseError('status>=', 'expected value, got EOF', { start: 8, end: 8 });
  });

  test('2. user="Zoë" | groupBy(host → expected token RPAREN, got EOF at {25, 25} (code points, not bytes)', () => {
    const q = 'user="Zoë" | groupBy(host';
    assert.equal(Array.from(q).length, 25);
    assert.equal(Buffer.byteLength(q), 26);
    assertParseError(q, 'expected token RPAREN, got EOF', { start: 25, end: 25 });
  });

  test('3. message="日本語" | count() ~ → unexpected character "~" at {24, 25}', () => {
    assertParseError('message="日本語" | count() ~', 'unexpected character "~" in query', { start: 24, end: 25 });
  });

  test('4. tag="🔥" | # → unexpected character "#" at {10, 11}, not the UTF-16 index 11', () => {
    const q = 'tag="🔥" | #';
    assert.equal(q.indexOf('#'), 11);
    assertParseError(q, 'unexpected character "#" in query', { start: 10, end: 11 });
  });

  test('5. * | foo(x) parses: an unknown command is a compile error, not a parse error', () => {
    assert.deepEqual(stagesOf('* | foo(x)'), [command('foo', [arg(word('x'))])]);
  });
});

describe('§1.2 query structure', () => {
  test('an empty or blank query has no stages', () => {
    assert.deepEqual(parseQuery(''), { stages: [], span: { start: 0, end: 0 } });
    assert.deepEqual(parseQuery(' \n\t'), { stages: [], span: { start: 0, end: 3 } });
  });

  test('count(), * | count() and | count() are equivalent; * alone selects everything', () => {
    const expected = [command('count')];
    assert.deepEqual(stagesOf('count()'), expected);
    assert.deepEqual(stagesOf('* | count()'), expected);
    assert.deepEqual(stagesOf('| count()'), expected);
    assert.deepEqual(stagesOf('*'), []);
  });

  test('"|" may be omitted between stages', () => {
    assert.deepEqual(stagesOf('a=1 count()'), [filter(eq('a', '1')), command('count')]);
    assert.deepEqual(stagesOf('a=1 x := 2 b=3'), [filter(eq('a', '1')), assign('x', num('2')), filter(eq('b', '3'))]);
  });

  test('parsing stops silently at the first token that cannot begin a stage', () => {
    const q = parseQuery('a=1 ) | count()');
    assert.deepEqual(withoutSpans(q.stages), [filter(eq('a', '1'))]);
    assert.deepEqual(q.ignored, { start: 4, end: 15 });
    assert.deepEqual(parseQuery('a=1 count()').ignored, undefined);
    // A query starting with such a token selects everything.
    assert.deepEqual(parseQuery('200 | count()'), { stages: [], span: { start: 0, end: 13 }, ignored: { start: 0, end: 13 } });
    // Division is not a stage: `status=200 /error/` is just `status=200`.
    assert.deepEqual(parseQuery('status=200 /error/').ignored, { start: 11, end: 18 });
  });

  test('"*" is meaningful only as the first token', () => {
    assertParseError('a=1 | *', 'expected function name, got MULTIPLY', { start: 6, end: 7 });
    assert.deepEqual(parseQuery('* *').ignored, { start: 2, end: 3 });
  });

  test('after "|" a stage must follow', () => {
    assertParseError('a=1 |', 'expected function name, got EOF', { start: 5, end: 5 });
    assertParseError('a=1 || b=2', 'expected function name, got PIPE', { start: 5, end: 6 });
    assertParseError('a=1 | )', 'expected function name, got RPAREN', { start: 6, end: 7 });
    assertParseError('a=1 | 200', 'unexpected token in pipeline: VALUE ("200")', { start: 6, end: 9 });
  });

  test('stage spans exclude the pipe; the query span is the whole text', () => {
    const q = parseQuery('a=1 | count() ');
    assert.deepEqual(q.span, { start: 0, end: 14 });
    assert.deepEqual(
      q.stages.map((s) => s.span),
      [
        { start: 0, end: 3 },
        { start: 6, end: 13 },
      ],
    );
  });
});

describe('§1.3 conditions and precedence', () => {
  test('a=1 b=2 OR c=3 is (a=1 AND b=2) OR c=3', () => {
    assert.deepEqual(stagesOf('a=1 b=2 OR c=3'), [filter(or(and(eq('a', '1'), eq('b', '2')), eq('c', '3')))]);
    assert.deepEqual(stagesOf('a=1 b=2 OR c=3'), stagesOf('(a=1 AND b=2) OR c=3'));
  });

  test('a=1 "x" OR c=3 is a=1 AND ("x" OR c=3): the string starts a new stage', () => {
    assert.deepEqual(stagesOf('a=1 "x" OR c=3'), [filter(eq('a', '1')), filter(or(search('x'), eq('c', '3')))]);
  });

  test('a=1 | b=2 OR c=3 is a=1 AND (b=2 OR c=3)', () => {
    assert.deepEqual(stagesOf('a=1 | b=2 OR c=3'), [filter(eq('a', '1')), filter(or(eq('b', '2'), eq('c', '3')))]);
  });

  test('NOT a=1 OR b=2 is (NOT a=1) OR b=2', () => {
    assert.deepEqual(stagesOf('NOT a=1 OR b=2'), [filter(or(not(eq('a', '1')), eq('b', '2')))]);
  });

  test('AND binds tighter than OR; explicit and implicit AND are the same', () => {
    assert.deepEqual(stagesOf('a=1 OR b=2 AND c=3 OR d=4'), [filter(or(eq('a', '1'), and(eq('b', '2'), eq('c', '3')), eq('d', '4')))]);
    assert.deepEqual(stagesOf('a=1 OR b=2 c=3'), stagesOf('a=1 OR b=2 AND c=3'));
  });

  test('keywords in any case', () => {
    assert.deepEqual(stagesOf('a=1 and b=2 or not c=3'), stagesOf('a=1 AND b=2 OR NOT c=3'));
  });

  test('a regex, group or function after a condition starts a new stage; a negated comparison does not', () => {
    // (After a value `/` divides, so the regex follows a string here.)
    assert.deepEqual(stagesOf('a="1" /x/'), [filter(cmp('a', '=', text('1', true))), filter({ kind: 'regexSearch', pattern: 'x', flags: '' })]);
    assert.deepEqual(stagesOf('a=1 (b=2 OR c=3)'), [filter(eq('a', '1')), filter(or(eq('b', '2'), eq('c', '3')))]);
    assert.deepEqual(stagesOf('a=1 in(x, y)'), [filter(eq('a', '1')), filter({ kind: 'call', call: call('in', [arg(word('x')), arg(word('y'))]) })]);
    assert.deepEqual(stagesOf('a=1 NOT b=2 OR c=3'), [filter(or(and(eq('a', '1'), not(eq('b', '2'))), eq('c', '3')))]);
    assert.deepEqual(stagesOf('a=1 NOT "x" OR c=3'), [filter(eq('a', '1')), filter(or(not(search('x')), eq('c', '3')))]);
    assert.deepEqual(stagesOf('"x" b=2 OR c=3'), [filter(or(and(search('x'), eq('b', '2')), eq('c', '3')))]);
  });

  test('NOT and ! negate one term; double negation cancels, also across a group', () => {
    assert.deepEqual(stagesOf('!a=1'), stagesOf('NOT a=1'));
    assert.deepEqual(stagesOf('NOT NOT a=1'), [filter(eq('a', '1'))]);
    assert.deepEqual(stagesOf('! !a=1'), [filter(eq('a', '1'))]);
    assert.deepEqual(stagesOf('NOT (NOT a=1)'), [filter(eq('a', '1'))]);
    assert.deepEqual(stagesOf('NOT (a=1 OR b=2)'), [filter(not(or(eq('a', '1'), eq('b', '2'))))]);
    assert.deepEqual(parseQuery('x=1 OR NOT  a=1').stages[0].span, { start: 0, end: 15 });
  });

  test('groups nest freely', () => {
    assert.deepEqual(stagesOf('((a=1 OR (b=2)) AND ((c=3)))'), [filter(and(or(eq('a', '1'), eq('b', '2')), eq('c', '3')))]);
  });

  test('condition functions are operands in any stage, any case, optionally negated', () => {
    const cidr = (range: string) => ({ kind: 'call', call: call('cidr', [arg(word('ip')), arg(str(range))]) });
    assert.deepEqual(stagesOf('cidr(ip, "10.0.0.0/8") OR cidr(ip, "192.168.0.0/16")'), [filter(or(cidr('10.0.0.0/8'), cidr('192.168.0.0/16')))]);
    assert.deepEqual(stagesOf('* | !cidr(ip, "a") AND x=1'), [filter(and(not(cidr('a')), eq('x', '1')))]);
    const stages = parseQuery('a=1 | IN(status, values=[200, 404]) OR Comment(tags=x) OR comments(tag=y)').stages;
    assert.equal(stages[1].kind, 'filter');
    assert.deepEqual(
      withoutSpans(stages[1]),
      filter(
        or(
          { kind: 'call', call: call('IN', [arg(word('status')), arg({ kind: 'list', items: [word('200'), word('404')] }, 'values')]) },
          { kind: 'call', call: call('Comment', [arg(word('x'), 'tags')]) },
          { kind: 'call', call: call('comments', [arg(word('y'), 'tag')]) },
        ),
      ),
    );
  });

  test('other functions are commands, not operands', () => {
    assertParseError('a=1 AND count()', 'expected field name, got FUNCTION', { start: 8, end: 13 });
  });

  test('&& and || do not exist', () => {
    assertParseError('a=1 && b=2', 'unexpected character "&" in query', { start: 4, end: 5 });
    assertParseError('a=1 || b=2', 'expected function name, got PIPE', { start: 5, end: 6 });
  });
});

describe('§1.4 comparisons', () => {
  test('every operator, spaces allowed around it', () => {
    for (const op of ['=', '!=', '>', '>=', '<', '<=', '=~', '=^', '=$']) {
      assert.deepEqual(stagesOf(`f${op}v`), [filter(cmp('f', op, text('v')))], op);
      assert.deepEqual(stagesOf(`f ${op} v`), [filter(cmp('f', op, text('v')))], op);
    }
  });

  test('values: identifier, value, string, *, negative number, regex', () => {
    assert.deepEqual(stagesOf('a=x b=10.0.0.1 c="Zoë" d=* e>-5.5 f=/p[/]/i g!=/q/'), [
      filter(
        and(
          eq('a', 'x'),
          eq('b', '10.0.0.1'),
          cmp('c', '=', text('Zoë', true)),
          cmp('d', '=', wildcard),
          cmp('e', '>', text('-5.5')),
          cmp('f', '=', regex('p[/]', 'i')),
          cmp('g', '!=', regex('q')),
        ),
      ),
    ]);
    assert.deepEqual(stagesOf('x < - 5'), [filter(cmp('x', '<', text('-5')))]);
  });

  test('only a value that is exactly * (quoted or not) is a wildcard', () => {
    assert.deepEqual(stagesOf('f!="*"'), [filter(cmp('f', '!=', wildcard))]);
    assert.deepEqual(stagesOf('image=*powershell*'), [filter(eq('image', '*powershell*'))]);
    assert.deepEqual(stagesOf('image="*powershell*"'), [filter(cmp('image', '=', text('*powershell*', true)))]);
    assert.deepEqual(stagesOf('f=~"*"'), [filter(cmp('f', '=~', text('*', true)))]);
  });

  test('= and != take a comma list of plain values', () => {
    assert.deepEqual(stagesOf('status=200,301'), [filter(cmp('status', '=', text('200'), text('301')))]);
    assert.deepEqual(stagesOf('user!="a","b" x=1,-2,*'), [
      filter(and(cmp('user', '!=', text('a', true), text('b', true)), cmp('x', '=', text('1'), text('-2'), wildcard))),
    ]);
  });

  test('=~ =^ =$ take a list of identifiers, values or strings, ending at the first other token', () => {
    assert.deepEqual(stagesOf('image=~powershell,"pwsh" x=^a,1 y=$b z=1'), [
      filter(
        and(
          cmp('image', '=~', text('powershell'), text('pwsh', true)),
          cmp('x', '=^', text('a'), text('1')),
          cmp('y', '=$', text('b')),
          eq('z', '1'),
        ),
      ),
    ]);
  });

  test('the comparison span runs from the field to the last value', () => {
    const c = parseQuery('  src-ip = "10.0.0.1",x').stages[0];
    assert.deepEqual(c.span, { start: 2, end: 23 });
    assert.ok(c.kind === 'filter' && c.condition.kind === 'compare');
    assert.deepEqual(c.condition.fieldSpan, { start: 2, end: 8 });
    assert.deepEqual(
      c.condition.values.map((v) => v.span),
      [
        { start: 11, end: 21 },
        { start: 22, end: 23 },
      ],
    );
  });

  test('errors in the leading condition', () => {
    assertParseError('a', 'expected comparison operator (=, !=, >, <, >=, <=, =~, =^, =$), got EOF', { start: 1, end: 1 });
    assertParseError('a b', 'expected comparison operator (=, !=, >, <, >=, <=, =~, =^, =$), got FIELD', { start: 2, end: 3 });
    assertParseError('a=', 'expected value, got EOF', { start: 2, end: 2 });
    assertParseError('a= )', 'expected value, got RPAREN', { start: 3, end: 4 });
    assertParseError('a>/x/', 'expected value, got REGEX', { start: 2, end: 5 });
    assertParseError('a=-x', "expected number after '-', got FIELD", { start: 3, end: 4 });
    assertParseError('a=1 AND )', 'expected field name, got RPAREN', { start: 8, end: 9 });
    assertParseError('a=1 OR', 'expected field name, got EOF', { start: 6, end: 6 });
    assertParseError('NOT 5', 'expected field name, got VALUE', { start: 4, end: 5 });
    assertParseError('(a=1', 'expected token RPAREN, got EOF', { start: 4, end: 4 });
    assertParseError('a=1,', "expected value after ',' in list, got EOF", { start: 4, end: 4 });
    assertParseError('a=1,/x/', "expected value after ',' in list, got REGEX", { start: 4, end: 7 });
    assertParseError('a=~', 'expected value in list, got EOF', { start: 3, end: 3 });
    assertParseError('a=~*', 'expected value in list, got MULTIPLY', { start: 3, end: 4 });
    assertParseError('a=~x,', "expected value after ',' in list, got EOF", { start: 5, end: 5 });
  });

  test('conditions after "|" report the HAVING forms', () => {
    assertParseError('x=1 | a', 'expected comparison operator in HAVING condition, got EOF', { start: 7, end: 7 });
    assertParseError('x=1 | a=', 'expected value in HAVING condition, got EOF', { start: 8, end: 8 });
    assertParseError('x=1 | a=-x', "expected number after '-' in HAVING condition, got FIELD", { start: 9, end: 10 });
    assertParseError('x=1 | a=1 AND )', 'expected field name in HAVING condition, got RPAREN', { start: 14, end: 15 });
    assertParseError('| (a=1 OR 5)', 'expected field name in HAVING condition, got VALUE', { start: 10, end: 11 });
    // A stage begun without "|" keeps the plain forms.
    assertParseError('x=1 "s" AND a', 'expected comparison operator (=, !=, >, <, >=, <=, =~, =^, =$), got EOF', { start: 13, end: 13 });
  });
});

describe('§1.5 bare search', () => {
  test('strings and regexes as operands, negated and combined in any stage', () => {
    assert.deepEqual(stagesOf('* | "a\\"b" OR NOT /x\\d+/i'), [filter(or(search('a"b'), not({ kind: 'regexSearch', pattern: 'x\\d+', flags: 'i' })))]);
  });
});

describe('§1.6 assignments', () => {
  test('right-hand sides: string, number, name, call', () => {
    assert.deepEqual(stagesOf('a := "x" | b := 5 | c := timestamp | d := f(x, "y")'), [
      assign('a', str('x')),
      assign('b', num('5')),
      assign('c', name('timestamp')),
      assign('d', { kind: 'call', name: 'f', text: 'f(x, "y")' }),
    ]);
  });

  test('* and / bind tighter than + and -, all left-associative; parentheses are kept', () => {
    assert.deepEqual(stagesOf('x := a + b * c - d / 2'), [assign('x', bin('-', bin('+', name('a'), bin('*', name('b'), name('c'))), bin('/', name('d'), num('2'))))]);
    assert.deepEqual(stagesOf('x := a - b - c'), [assign('x', bin('-', bin('-', name('a'), name('b')), name('c')))]);
    assert.deepEqual(stagesOf('x := (a + b) * -2'), [assign('x', bin('*', { kind: 'paren', expr: bin('+', name('a'), name('b')) }, num('-2')))]);
  });

  test('the spec example after an aggregation', () => {
    const stages = stagesOf('* | multi(count(field=id, distinct=true, as=u), count(field=id, as=t)) | c := ((t - u) / t) * 0.95') as unknown[];
    assert.deepEqual(stages[1], assign('c', bin('*', { kind: 'paren', expr: bin('/', { kind: 'paren', expr: bin('-', name('t'), name('u')) }, name('t')) }, num('0.95'))));
  });

  test('bytes*2 and a-b are single names: arithmetic needs spaces', () => {
    assert.deepEqual(stagesOf('x := bytes*2 | y := a-b | z := bytes * 2'), [
      assign('x', name('bytes*2')),
      assign('y', name('a-b')),
      assign('z', bin('*', name('bytes'), num('2'))),
    ]);
  });

  test('spans', () => {
    const s = parseQuery('x := (a + 1)').stages[0];
    assert.deepEqual(s.span, { start: 0, end: 12 });
    assert.ok(s.kind === 'assignment');
    assert.deepEqual(s.targetSpan, { start: 0, end: 1 });
    assert.deepEqual(s.expr.span, { start: 5, end: 12 });
  });

  test('errors', () => {
    assertParseError('x := (a + b', "expected ')' in expression, got EOF", { start: 11, end: 11 });
    assertParseError('x := (a b)', "expected ')' in expression, got FIELD", { start: 8, end: 9 });
    assertParseError('x :=', 'expected value, field, string or function in expression, got EOF', { start: 4, end: 4 });
    assertParseError('x := *', 'expected value, field, string or function in expression, got MULTIPLY', { start: 5, end: 6 });
    assertParseError('x := a + ', 'expected value, field, string or function in expression, got EOF', { start: 9, end: 9 });
    assertParseError('x := -a', 'expected value, field, string or function in expression, got MINUS', { start: 5, end: 6 });
  });
});

describe('§1.8 command arguments', () => {
  test('identifier, value, string, key=value, key=[a,b], bare list, *', () => {
    assert.deepEqual(stagesOf('f(user, 200, "x y", dict="d", include=[a, "b", 5], [c,d], *, k = v)'), [
      command('f', [
        arg(word('user')),
        arg(word('200')),
        arg(str('x y')),
        arg(str('d'), 'dict'),
        arg({ kind: 'list', items: [word('a'), str('b'), word('5')] }, 'include'),
        arg({ kind: 'list', items: [word('c'), word('d')] }),
        arg(word('*')),
        arg(word('v'), 'k'),
      ]),
    ]);
    assert.deepEqual(stagesOf('f([], x=[])'), [command('f', [arg({ kind: 'list', items: [] }), arg({ kind: 'list', items: [] }, 'x')])]);
  });

  test('nested calls keep their source text', () => {
    const q = parseQuery('groupBy(user, function=multi( count(), sum(field=b,as=x) ))');
    const stage = q.stages[0];
    assert.ok(stage.kind === 'command');
    const fn = stage.call.args[1].value;
    assert.ok(fn.kind === 'call');
    assert.equal(fn.name, 'multi');
    assert.equal(fn.text, 'multi( count(), sum(field=b,as=x) )');
    assert.deepEqual(fn.span, { start: 23, end: 58 });
    assert.deepEqual(
      fn.args.map((a) => (a.value.kind === 'call' ? a.value.text : '')),
      ['count()', 'sum(field=b,as=x)'],
    );
    assert.deepEqual(stagesOf('multi([count(), sum(x)])'), [
      command('multi', [
        arg({
          kind: 'list',
          items: [
            { kind: 'call', name: 'count', args: [], text: 'count()' },
            { kind: 'call', name: 'sum', args: [arg(word('x'))], text: 'sum(x)' },
          ],
        }),
      ]),
    ]);
  });

  test('patterns are strings: "\\\\d+" is the RE2 \\d+', () => {
    assert.deepEqual(stagesOf('regex("\\\\d+")'), [command('regex', [arg(str('\\d+'))])]);
  });

  test('an arithmetic argument keeps its source text and its tree (eval(name=expression))', () => {
    assert.deepEqual(stagesOf('eval(rate=requests / duration, b = x + 2 * y)'), [
      command('eval', [
        arg({ kind: 'word', text: 'requests / duration', expr: bin('/', name('requests'), name('duration')) }, 'rate'),
        arg({ kind: 'word', text: 'x + 2 * y', expr: bin('+', name('x'), bin('*', num('2'), name('y'))) }, 'b'),
      ]),
    ]);
  });

  test('regex literals, parenthesised expressions and a leading "-" are not arguments', () => {
    assertParseError('split(x, "/", -1)', 'unexpected token in function arguments: MINUS', { start: 14, end: 15 });
    assertParseError('regex(/\\d+/)', 'unexpected token in function arguments: REGEX', { start: 6, end: 11 });
    assertParseError('eval(x=(a + b))', 'unexpected token in function arguments: LPAREN', { start: 7, end: 8 });
    assertParseError('eval(x=a * (b))', 'unexpected token in function arguments: LPAREN', { start: 11, end: 12 });
    assertParseError('f(,a)', 'unexpected token in function arguments: COMMA', { start: 2, end: 3 });
    assertParseError('f(a,)', 'unexpected token in function arguments: RPAREN', { start: 4, end: 5 });
  });

  test('list and call errors', () => {
    assertParseError('concat([a, /x/])', 'unexpected token in array: REGEX', { start: 11, end: 14 });
    assertParseError('concat([a b])', 'unexpected token in array: FIELD', { start: 10, end: 11 });
    assertParseError('concat([a', 'unexpected token in array: EOF', { start: 9, end: 9 });
    assertParseError('match(include=[a,])', 'unexpected token in array parameter: RBRACKET', { start: 17, end: 18 });
    assertParseError('match(include=[[a]])', 'unexpected token in array parameter: LBRACKET', { start: 15, end: 16 });
    assertParseError('table(a b)', 'expected token RPAREN, got FIELD', { start: 8, end: 9 });
    assertParseError('f(g(x)', 'expected token RPAREN, got EOF', { start: 6, end: 6 });
    assertParseError('f(case { a=1 })', 'expected token LPAREN, got LBRACE', { start: 7, end: 8 });
  });
});

describe('blocks', () => {
  test('case: branches split on ";", each a list of stages; * marks the default branch', () => {
    const c = stagesOf('case { a=1 | t:="x"; * | t:="y"; } | count()');
    const branch = (star: boolean, ...stages: unknown[]) => ({ stages, star });
    assert.deepEqual(c, [
      command('case', [], {
        branches: [branch(false, filter(eq('a', '1')), assign('t', str('x'))), branch(true, assign('t', str('y')))],
      }),
      command('count'),
    ]);
  });

  test('case: a bare value segment sets case_result; the condition position is still a condition', () => {
    assert.deepEqual(stagesOf('case { a=1 | high; "x" | "mid" | 5; * }'), [
      command('case', [], {
        branches: [
          { stages: [filter(eq('a', '1')), assign('case_result', name('high'))], star: false },
          { stages: [filter(search('x')), assign('case_result', str('mid')), assign('case_result', num('5'))], star: false },
          { stages: [], star: true },
        ],
      }),
    ]);
    assertParseError('case { high }', 'case branch: expected comparison operator (=, !=, >, <, >=, <=, =~, =^, =$), got RBRACE', { start: 12, end: 13 }, 'translate');
  });

  test('case: spans of the block, its branches and the call', () => {
    const s = parseQuery('CASE  { a=1 | count() ; *|x:=1 }').stages[0];
    assert.ok(s.kind === 'command' && s.call.block);
    assert.equal(s.call.name, 'CASE');
    assert.deepEqual(s.span, { start: 0, end: 32 });
    assert.deepEqual(s.call.block.span, { start: 6, end: 32 });
    assert.deepEqual(
      s.call.block.branches.map((b) => b.span),
      [
        { start: 8, end: 21 },
        { start: 24, end: 30 },
      ],
    );
  });

  test('chain and join carry arguments and a block', () => {
    assert.deepEqual(stagesOf('chain(user, within=5m) { event_id=4624; event_id=1 | image=/powershell/i }'), [
      command('chain', [arg(word('user')), arg(word('5m'), 'within')], {
        branches: [
          { stages: [filter(eq('event_id', '4624'))], star: false },
          { stages: [filter(eq('event_id', '1')), filter(cmp('image', '=', regex('powershell', 'i')))], star: false },
        ],
      }),
    ]);
    assert.deepEqual(stagesOf('join(src_ip, type=left) { * | groupBy(src_ip) } | _join__count > 10'), [
      command('join', [arg(word('src_ip')), arg(word('left'), 'type')], {
        branches: [{ stages: [command('groupBy', [arg(word('src_ip'))])], star: true }],
      }),
      filter(cmp('_join__count', '>', text('10'))),
    ]);
  });

  test('block syntax errors are parse errors', () => {
    assertParseError('case(x)', "expected '{' after case, got LPAREN", { start: 4, end: 5 });
    assertParseError('case { a=1 | t:="x"', "expected '}' to close case block, got EOF", { start: 19, end: 19 });
    assertParseError('case { a=1 ) }', "expected '}' to close case block, got RPAREN", { start: 11, end: 12 });
    assertParseError('chain {', "expected '(' after chain, got LBRACE", { start: 6, end: 7 });
    assertParseError('chain(user {', "expected ')' after chain arguments, got LBRACE", { start: 11, end: 12 });
    assertParseError('chain(user) a', "expected '{' after chain(...), got FIELD", { start: 12, end: 13 });
    assertParseError('chain(user) { a=1; b=2', "expected '}' to close chain block, got EOF", { start: 22, end: 22 });
    assertParseError('join {', "expected '(' after join, got LBRACE", { start: 5, end: 6 });
    assertParseError('join(x y', "expected ')' after join arguments, got FIELD", { start: 7, end: 8 });
    assertParseError('join(x) | a=1', "expected '{' after join(...), got PIPE", { start: 8, end: 9 });
    assertParseError('join(x) { a=1 ; b=2', "expected '}' to close join block, got EOF", { start: 19, end: 19 });
  });

  test('errors inside a block are translate errors with the block prefix, spans in whole-query coordinates', () => {
    assertParseError('x=1 | case { a= }', 'case branch: expected value, got RBRACE', { start: 16, end: 17 }, 'translate');
    assertParseError('chain(u) { a=1; b=2 | }', 'chain(): chain step: expected function name, got RBRACE', { start: 22, end: 23 }, 'translate');
    assertParseError('join(u) { "🔥" | groupBy(u }', 'join() subquery parse error: expected token RPAREN, got RBRACE', { start: 26, end: 27 }, 'translate');
    assertParseError(
      'join(u) { case { a=1 | t := ( } }',
      "join() subquery parse error: case branch: expected value, field, string or function in expression, got RBRACE",
      { start: 30, end: 31 },
      'translate',
    );
    // An unexpected character is found by the lexer before any block is parsed.
    assertParseError('case { a=1 # }', 'unexpected character "#" in query', { start: 11, end: 12 });
  });
});

describe('complexity limit', () => {
  test('deep nesting fails with the complexity error, without a span', () => {
    for (const q of ['('.repeat(5000) + 'a=1', 'x := ' + '('.repeat(5000) + '1', 'f(' + 'g('.repeat(5000), 'case {'.repeat(2000)]) {
      assert.throws(
        () => parseQuery(q),
        (e: unknown) => e instanceof QueryParseError && e.message === TOO_COMPLEX && e.span === undefined,
      );
    }
  });

  test('a pathologically long query fails with the complexity error', () => {
    assert.throws(
      () => parseQuery('a=1 '.repeat(60_000)),
      (e: unknown) => e instanceof QueryParseError && e.message === TOO_COMPLEX && e.span === undefined,
    );
  });

  test('a maximal 10,000-byte query of one-character values still parses', () => {
    const q = ('a=' + '1,'.repeat(4998) + '1').padEnd(10_000, ' ');
    assert.equal(Buffer.byteLength(q), 10_000);
    const stage = parseQuery(q).stages[0];
    assert.ok(stage.kind === 'filter' && stage.condition.kind === 'compare');
    assert.equal(stage.condition.values.length, 4999);
    const ors = Array.from({ length: 1250 }, () => 'a=1').join(' OR ');
    assert.ok(Buffer.byteLength(ors) <= 10_000);
    assert.equal(parseQuery(ors).stages.length, 1);
    const nested = '('.repeat(100) + 'a=1' + ')'.repeat(100);
    assert.deepEqual(stagesOf(nested), [filter(eq('a', '1'))]);
  });
});

describe('printer', () => {
  test('canonical text: stages joined by " | ", explicit AND, parentheses only where needed', () => {
    const cases: Array<[string, string]> = [
      ['* | count()', 'count()'],
      ['a=1 b=2 OR c=3', 'a=1 AND b=2 OR c=3'],
      ['a=1 "x" OR c=3', 'a=1 | "x" OR c=3'],
      ['(a=1 OR b=2) c=3', '(a=1 OR b=2) AND c=3'],
      ['(a=1 AND b=2) AND c=3', '(a=1 AND b=2) AND c=3'],
      ['!(a=1 b=2)', 'NOT (a=1 AND b=2)'],
      ['!in(x, values=[1,2])', 'NOT in(x, values=[1, 2])'],
      ["f='it\\'s' g=\"a\\\\b\"", 'f="it\'s" AND g="a\\\\b"'],
      ['x = - 5 y=/a\\/b/gi', 'x=-5 AND y=/a\\/b/gi'],
      ['x:=(a+b)*2', 'x := (a + b) * 2'],
      ['case{a=1|t:="x";*}', 'case { a=1 | t := "x"; * }'],
      // In a case segment a lone string is a value; a search written in parentheses stays a search.
      ['case { * | "x" }', 'case { * | case_result := "x" }'],
      ['case { * | ("x") | NOT NOT ("y") }', 'case { * | ("x") | ("y") }'],
      ['chain ( u ) { a=1 ; b=2 }', 'chain(u) { a=1; b=2 }'],
      ['f( a , k = [ x,y ] , g (1) )', 'f(a, k=[x, y], g (1))'],
      ['eval(x=a/b)', 'eval(x=a/b)'],
      ['"unterminated', '"unterminated"'],
      ['/unterminated[/', '/unterminated[/'],
      ['x=1 | /a\\', 'x=1 | /a\\'],
    ];
    for (const [input, printed] of cases) {
      assert.equal(printQuery(parseQuery(input)), printed, input);
      assert.deepEqual(stagesOf(printed), stagesOf(input), input);
    }
  });

  test('every spec query round-trips', () => {
    for (const q of SPEC_QUERIES) {
      assert.deepEqual(stagesOf(printQuery(parseQuery(q))), stagesOf(q), q);
    }
  });
});
