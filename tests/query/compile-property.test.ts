// Property: whatever text reaches the compiler, no exception other than a parse or compile error
// escapes, every failure carries a valid span, and every accepted query produces SQL the engine
// runs. Queries are built from the language's own pieces (with values crafted to break out of
// SQL) and from random mutations of the spec's examples.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { test } from 'node:test';
import { COMMANDS } from '../../service/src/query/commands/registry.ts';
import { compileQuery } from '../../service/src/query/compile.ts';
import { QueryCompileError } from '../../service/src/query/plan/errors.ts';
import { checkRegexes, runQueryRows } from '../../service/src/query/run.ts';
import { QueryParseError } from '../../service/src/query/syntax/ast.ts';
import { queryDataset, sampleEvents } from '../support/query.ts';

const data = queryDataset('prop', sampleEvents);

const fieldName = fc.constantFrom('user', 'host', 'status', 'bytes', 'src_ip', 'msg', 'image', 'timestamp', 'norm_log', '_count', 'a.b', 'src-ip', 'x');
const nasty = fc.constantFrom(
  "x' OR 1=1 --",
  'a"; DROP TABLE svc.logs; --',
  '\\',
  "'",
  '/* c */',
  'SELECT',
  ') UNION ALL SELECT 1 (',
  '{p0:String}',
  '`',
  'Zoë 🔥',
  '',
);
const quoted = fc.oneof(nasty, fc.string({ maxLength: 8 })).map((s) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`);
const value = fc.oneof(fc.constantFrom('200', '1.5', '-3', '10.0.0.1', 'alice', '*', '1e3'), quoted);
const op = fc.constantFrom('=', '!=', '>', '>=', '<', '<=', '=~', '=^', '=$');
const comparison = fc.tuple(fieldName, op, value).map(([f, o, v]) => `${f}${o}${v}`);
const regex = fc.constantFrom('/err/i', '/^a.*b$/', '/[/]x/', '/(?<g>\\w+)/', '/(/');
const condition = fc.oneof(
  comparison,
  quoted,
  regex,
  fc.tuple(fieldName, regex).map(([f, r]) => `${f}=${r}`),
  fc.tuple(fieldName, quoted).map(([f, q]) => `in(${f}, values=[${q}, 2])`),
  fieldName.map((f) => `cidr(${f}, "10.0.0.0/8")`),
);
const conditions = fc.array(fc.tuple(fc.constantFrom('', 'AND ', 'OR ', 'NOT ', '| '), condition), { minLength: 1, maxLength: 3 }).map((xs) =>
  xs.map(([j, c], i) => (i === 0 ? c : `${j}${c}`)).join(' '),
);
const argument = fc.oneof(fieldName, value, fc.tuple(fc.constantFrom('limit', 'as', 'order', 'function', 'span', 'field'), fc.oneof(fieldName, value, fc.constant('count()'), fc.constant('sum(bytes)'))).map(([k, v]) => `${k}=${v}`));
const command = fc
  .tuple(fc.constantFrom(...COMMANDS.map((c) => c.name)), fc.array(argument, { maxLength: 3 }))
  .map(([n, args]) => (n === 'case' ? 'case { status=500 | s := "x" ; * | s := "y" }' : `${n}(${args.join(', ')})`));
const assignment = fc.tuple(fieldName, fc.constantFrom('bytes * 2', '"t"', 'user', '(bytes + 1) / 0', 'f()')).map(([f, e]) => `${f.replace(/[.-]/g, '_')} := ${e}`);
const stage = fc.oneof(conditions, command, command, assignment);
const generated = fc.array(stage, { minLength: 1, maxLength: 5 }).map((xs) => xs.join(' | '));

const corpus = [
  '* | groupBy(user) | sort(_count, order=desc) | limit(10)',
  'status>=500 | groupBy(host) | timechart(span=5m)',
  'user="Zoë" | table(user, host, limit=5)',
  'image=~powershell,"pwsh" | dedup(user) | head(3)',
  'x := bytes * 2 | groupBy(user, function=sum(x))',
  'regex("(?<w>\\\\w+) ok", field=msg) | groupBy(w)',
];
const mutated = fc
  .tuple(fc.constantFrom(...corpus), fc.nat(), fc.nat(3), fc.string({ maxLength: 3 }))
  .map(([q, at, del, ins]) => {
    const cs = Array.from(q);
    const i = at % (cs.length + 1);
    cs.splice(i, del, ...Array.from(ins));
    return cs.join('');
  });

test('no escaping exception, valid spans, and SQL the engine accepts', async () => {
  let accepted = 0;
  await fc.assert(
    fc.asyncProperty(fc.oneof(generated, mutated, fc.string({ maxLength: 30 })), async (text) => {
      let compiled;
      try {
        compiled = compileQuery(text, {
          table: data.a.context.ch.table('logs'),
          fractalIds: [data.fractal],
          start: new Date(Date.now() - 86400_000),
          end: new Date(),
          maxRows: 10_000,
        });
      } catch (err) {
        assert.ok(err instanceof QueryParseError || err instanceof QueryCompileError, `${text}: ${String(err)}`);
        const span = (err as QueryParseError).span;
        if (span) {
          const n = Array.from(text).length;
          assert.ok(span.start >= 0 && span.start <= span.end && span.end <= n, `${text}: span ${JSON.stringify(span)} outside 0..${n}`);
        }
        return;
      }
      try {
        await checkRegexes(data.a.context.ch, compiled.regexes);
      } catch (err) {
        assert.ok(err instanceof QueryCompileError, `${text}: ${String(err)}`);
        return;
      }
      try {
        await runQueryRows(data.a.context.ch, compiled, { timeoutS: 30 });
        accepted++;
      } catch (err) {
        assert.fail(`the engine refused the SQL of ${JSON.stringify(text)}: ${(err as { detail?: string }).detail ?? err}\n${compiled.sql}`);
      }
    }),
    { numRuns: 400 },
  );
  assert.ok(accepted > 50, `only ${accepted} generated queries compiled; the generator is too weak`);
  // The events are still all there: nothing crafted above changed the data.
  const rs = await data.a.context.ch.client.query({ query: `SELECT count() AS n FROM ${data.a.context.ch.table('logs')}`, format: 'JSONEachRow' });
  assert.equal(Number(((await rs.json()) as Array<{ n: string }>)[0].n), 8);
});
