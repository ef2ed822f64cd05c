// Property tests of the lexer, parser and printer over random text and mutations of spec queries.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { QueryParseError, type Query } from '../../service/src/query/syntax/ast.ts';
import { tokenize } from '../../service/src/query/syntax/lexer.ts';
import { parseQuery, TOO_COMPLEX } from '../../service/src/query/syntax/parser.ts';
import { printQuery } from '../../service/src/query/syntax/printer.ts';
import { SPEC_QUERIES, withoutSpans } from './syntax-helpers.ts';

/** Pieces of query syntax, so random text often gets deep into the grammar. */
const FRAGMENTS = [
  'a', 'x', 'é', '🔥', '日', '1', '5m', '10.0.0.1', '-', '_', '.', '*',
  ' ', ' ', ' ', '\t', '\n',
  '"', "'", '\\', '/', '|', '(', ')', '[', ']', '{', '}', ',', ';',
  '=', '!', '<', '>', ':', '+', '~', '^', '$', '#', '@', '&', '?',
  'AND ', ' OR ', 'NOT ', 'not ', '!=', '=~', '=^', '=$', '>=', ':=',
  'in(', 'cidr(', 'comment(', 'case', 'case {', 'chain(', 'join(', 'count()', 'groupBy(',
  'f=', 'x := ', '"s"', "'t'", '"a\\"b"', '/r/i', '/[/]/', '[a,b]', '=*', 'k=[', 'e(a / b)', '; *',
];

const fragmentText = fc.array(fc.constantFrom(...FRAGMENTS), { maxLength: 40 }).map((parts) => parts.join(''));

type Edit = { kind: 'insert'; at: number; text: string } | { kind: 'delete'; at: number; length: number } | { kind: 'repeat'; at: number; length: number };
const edit: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), text: fc.oneof(fc.constantFrom(...FRAGMENTS), fc.string({ maxLength: 3 })) }),
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), length: fc.integer({ min: 1, max: 6 }) }),
  fc.record({ kind: fc.constant('repeat' as const), at: fc.nat(), length: fc.integer({ min: 1, max: 12 }) }),
);

/** Applies edits at code point positions, so no edit splits a surrogate pair by itself. */
function mutate(query: string, edits: Edit[]): string {
  let cs = Array.from(query);
  for (const e of edits) {
    const at = e.at % (cs.length + 1);
    if (e.kind === 'insert') cs = [...cs.slice(0, at), ...Array.from(e.text), ...cs.slice(at)];
    else if (e.kind === 'delete') cs = [...cs.slice(0, at), ...cs.slice(at + e.length)];
    else cs = [...cs.slice(0, at + e.length), ...cs.slice(at, at + e.length), ...cs.slice(at + e.length)];
  }
  return cs.join('');
}

const mutatedSpecQuery = fc.tuple(fc.constantFrom(...SPEC_QUERIES), fc.array(edit, { minLength: 1, maxLength: 4 })).map(([q, edits]) => mutate(q, edits));

// ---- Valid queries built from random syntax trees (deep nesting the fragments rarely reach) ----

const fieldName = fc.constantFrom('a', 'status', 'src-ip', 'event.name', 'bytes*2', '_count', 'größe', 'x_1');
const bareValue = fc.constantFrom('1', '200', '1.5', '10.0.0.1', '5m', '2026-01-01', 'admin', 'zoë', '*ps*', ':');
/** A string literal of any text, in either quote, with escapes where needed and sometimes where not. */
const stringLiteral = fc
  .tuple(fc.string({ maxLength: 8, unit: 'grapheme' }), fc.constantFrom('"', "'"), fc.boolean())
  .map(([content, q, escapeLetters]) => {
    const body = Array.from(content)
      .map((ch) => (ch === '\\' || ch === q ? '\\' + ch : escapeLetters && /[a-z]/.test(ch) ? '\\' + ch : ch))
      .join('');
    return q + body + q;
  });
const regexLiteral = fc
  .tuple(fc.array(fc.constantFrom('a', '\\d', '\\/', '[/]', '[]/]', '[^]x]', '.*', '(?i)', 'x+', '\\\\', ' ', '[[:alpha:]/]'), { maxLength: 5 }), fc.constantFrom('', 'i', 'gim'))
  .map(([parts, flags]) => `/${parts.join('')}/${flags}`);
const value = fc.oneof(bareValue, stringLiteral, fc.constant('*'), fc.constantFrom('-5', '- 2.5'));
const comparison = fc.oneof(
  fc.tuple(fieldName, fc.constantFrom('=', '!=', ' = ', '!= '), fc.array(value, { minLength: 1, maxLength: 3 })).map(([f, op, vs]) => f + op + vs.join(',')),
  fc.tuple(fieldName, fc.constantFrom('=', '!='), regexLiteral).map(([f, op, r]) => f + op + r),
  fc.tuple(fieldName, fc.constantFrom('>', '>=', '<', '<='), value).map(([f, op, v]) => `${f} ${op} ${v}`),
  fc.tuple(fieldName, fc.constantFrom('=~', '=^', '=$'), fc.array(fc.oneof(bareValue.filter((v) => !v.startsWith('*')), stringLiteral), { minLength: 1, maxLength: 3 })).map(
    ([f, op, vs]) => f + op + vs.join(','),
  ),
);
const conditionCall = fc.constantFrom('in(status, values=[200, 404])', 'cidr(ip, "10.0.0.0/8")', 'COMMENT(tags=incident)', 'in(u, "a,b", c)');
const arithmetic: fc.Arbitrary<string> = fc.letrec<{ expr: string }>((tie) => ({
  expr: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    // (No string operands: after a string `/` opens a regex, §1.1.)
    fc.oneof(fieldName, fc.constantFrom('1', '2.5', '-3', 'timestamp', 'f(x)')),
    fc.tuple(tie('expr'), fc.constantFrom('+', '-', '*', '/'), tie('expr')).map(([l, op, r]) => `${l} ${op} ${r}`),
    tie('expr').map((e) => `(${e})`),
  ),
})).expr;
const argument = fc.oneof(
  fieldName.filter((f) => !f.includes('*')),
  bareValue,
  stringLiteral,
  fc.constantFrom('*', '[a, "b", 3]', 'include=[x,y]', 'as=out', 'function=count()', 'function=multi(count(), sum(field=b, as=s))', 'rate=requests / duration', 'x = a + 2 * b'),
);
const command = fc.tuple(fc.constantFrom('groupBy', 'count', 'table', 'eval', 'sort', 'head'), fc.array(argument, { maxLength: 3 })).map(([n, args]) => `${n}(${args.join(', ')})`);

const generated = fc.letrec<{ condition: string; stage: string; query: string }>((tie) => ({
  condition: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.oneof(comparison, stringLiteral, regexLiteral, conditionCall),
    fc.tuple(tie('condition'), fc.constantFrom(' AND ', ' OR ', ' and ', ' or '), tie('condition')).map(([a, op, b]) => a + op + b),
    // Implicit AND joins comparisons only: anything else after a condition starts a new stage (§1.3).
    fc.tuple(tie('condition'), comparison).map(([a, b]) => `${a} ${b}`),
    fc.tuple(fc.constantFrom('NOT ', '!', 'NOT NOT '), tie('condition')).map(([n, c]) => `${n}(${c})`),
    tie('condition').map((c) => `(${c})`),
  ),
  stage: fc.oneof(
    { arbitrary: tie('condition'), weight: 3 },
    { arbitrary: command, weight: 2 },
    { arbitrary: fc.tuple(fieldName.filter((f) => !f.includes('*')), arithmetic).map(([t, e]) => `${t} := ${e}`), weight: 1 },
    {
      arbitrary: fc
        .tuple(fc.constantFrom('case', 'chain(user, within=5m)', 'join(k, type=left)'), fc.array(fc.tuple(fc.boolean(), fc.array(tie('stage'), { minLength: 1, maxLength: 3 })), { maxLength: 3 }))
        .map(([head, branches]) => `${head} { ${branches.map(([star, stages]) => (star ? '* | ' : '') + stages.join(' | ')).join('; ')} }`),
      weight: 1,
    },
  ),
  query: fc.tuple(fc.constantFrom('', '* | ', '| '), fc.array(tie('stage'), { minLength: 1, maxLength: 4 })).map(([lead, stages]) => lead + stages.join(' | ')),
}));

const anyQuery = fc.oneof(
  { arbitrary: mutatedSpecQuery, weight: 4 },
  { arbitrary: fragmentText, weight: 3 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 30 }), weight: 1 },
  { arbitrary: fc.constantFrom(...SPEC_QUERIES), weight: 1 },
);

function parseOrCheckError(q: string): Query | undefined {
  const length = Array.from(q).length;
  try {
    return parseQuery(q);
  } catch (e) {
    assert.ok(e instanceof QueryParseError, `threw ${String(e)} for ${JSON.stringify(q)}`);
    if (e.span === undefined) {
      assert.equal(e.message, TOO_COMPLEX);
    } else {
      assert.ok(e.span.start >= 0 && e.span.start <= e.span.end && e.span.end <= length, `span ${JSON.stringify(e.span)} of ${JSON.stringify(q)}`);
    }
    return undefined;
  }
}

/** Every span in the tree lies within the text and is not reversed. */
function assertSpansWithin(node: unknown, length: number): void {
  if (Array.isArray(node)) {
    for (const item of node) assertSpansWithin(item, length);
  } else if (node && typeof node === 'object') {
    const record = node as Record<string, unknown>;
    if (typeof record.start === 'number' && typeof record.end === 'number') {
      assert.ok(record.start >= 0 && record.start <= record.end && record.end <= length, JSON.stringify(record));
    }
    for (const v of Object.values(record)) assertSpansWithin(v, length);
  }
}

test('random and mutated text only ever throws QueryParseError, with spans inside the text', () => {
  fc.assert(
    fc.property(anyQuery, (q) => {
      parseOrCheckError(q);
    }),
    { numRuns: 3000 },
  );
});

test('token spans are ordered, non-overlapping and inside the text', () => {
  fc.assert(
    fc.property(anyQuery, (q) => {
      let tokens;
      try {
        tokens = tokenize(q);
      } catch (e) {
        assert.ok(e instanceof QueryParseError);
        return;
      }
      const length = Array.from(q).length;
      let previousEnd = 0;
      for (const t of tokens) {
        assert.ok(t.span.start >= previousEnd && t.span.start <= t.span.end && t.span.end <= length, JSON.stringify(t));
        previousEnd = t.span.end;
      }
      assert.deepEqual(tokens[tokens.length - 1].span, { start: length, end: length });
    }),
    { numRuns: 2000 },
  );
});

/** The round-trip property for one query; returns whether it parsed. */
function assertRoundTrip(q: string): boolean {
  const ast = parseOrCheckError(q);
  if (!ast) return false;
  assertSpansWithin(ast, Array.from(q).length);
  const printed = printQuery(ast);
  let again: Query;
  try {
    again = parseQuery(printed);
  } catch (e) {
    assert.fail(`${JSON.stringify(q)} printed as ${JSON.stringify(printed)} fails: ${String(e)}`);
  }
  assert.deepEqual(withoutSpans(again.stages), withoutSpans(ast.stages), `${JSON.stringify(q)} printed as ${JSON.stringify(printed)}`);
  assert.equal(again.ignored, undefined, printed);
  assert.equal(printQuery(again), printed);
  return true;
}

test('generated valid queries parse, and round-trip through the printer', () => {
  fc.assert(
    fc.property(generated.query, (q) => {
      const ast = parseQuery(q);
      assert.equal(ast.ignored, undefined, q);
      assertRoundTrip(q);
    }),
    { numRuns: 1500 },
  );
});

test('parse → print → parse gives the same tree, and printing is stable', () => {
  let parsed = 0;
  fc.assert(
    fc.property(anyQuery, (q) => {
      if (assertRoundTrip(q)) parsed++;
    }),
    { numRuns: 4000 },
  );
  // Guards the generator: most runs must reach the printer for the property to mean anything.
  assert.ok(parsed > 1000, `only ${parsed} generated queries parsed`);
});

