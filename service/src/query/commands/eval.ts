import { arithmeticSql } from '../plan/expressions.ts';
import { QueryCompileError } from '../plan/errors.ts';
import type { Stage } from '../plan/pipeline.ts';
import type { Pipeline } from '../plan/pipeline.ts';
import { QueryParseError, type Expr, type Span } from '../syntax/ast.ts';
import { parseQuery } from '../syntax/parser.ts';
import { valueText } from './args.ts';
import { defineCommand } from './command.ts';

const NAME = /^[\p{L}_][\p{L}\p{N}_.-]*$/u;
const USAGE = 'eval("name = expression") or eval(name=expression)';

/** §3.3: arithmetic when the expression has an operator or parenthesis, a quoted literal or the name `timestamp`. */
const isArithmetic = (text: string): boolean => /[-+*/()"']/.test(text) || text.split(/\s+/).includes('timestamp');

/** The expression of an assignment's right-hand side, parsed as `:=` parses it (§1.6). */
function parseExpression(text: string, span: Span): Expr {
  let fail = 'not an expression';
  try {
    const q = parseQuery(`_ := ${text}`);
    const stage = q.stages[0];
    if (q.stages.length === 1 && !q.ignored && stage.kind === 'assignment') return stage.expr;
  } catch (e) {
    if (!(e instanceof QueryParseError)) throw e;
    fail = e.message;
  }
  throw new QueryCompileError(`eval(): invalid expression "${text}": ${fail}`, span);
}

function evaluate(p: Pipeline, stage: Stage, name: string, text: string, expr: Expr | undefined, span: Span): void {
  if (!NAME.test(name)) throw new QueryCompileError(`eval(): invalid field name "${name}" (expected ${USAGE})`, span);
  const source = text.trim();
  if (!source) throw new QueryCompileError(`eval(): missing expression for "${name}" (expected ${USAGE})`, span);
  if (!isArithmetic(source)) {
    const c = p.resolveIn(stage, source);
    p.addComputed(name, c.sql, c.type, { stage });
    return;
  }
  const tree = expr ?? parseExpression(source, span);
  p.addComputed(name, arithmeticSql(tree, (n) => p.resolveIn(stage, n), p.params), 'number', { stage });
}

export default defineCommand({
  name: 'eval',
  tier: 'STANDARD',
  category: 'field',
  signature: 'eval("name = expression", …)',
  description:
    'Computes columns per row; also eval(name=expression), several at once. Each is split at the first "=". An expression containing + - * / ( ), a "quoted" literal or timestamp is float arithmetic as for := (a non-numeric operand gives an empty value; timestamp counts as epoch milliseconds); otherwise it copies the named field.',
  outputs: 'the named columns',
  example: '* | eval("rate = requests / duration")',
  apply(call, p) {
    if (call.args.length === 0) throw new QueryCompileError(`eval() requires an assignment, e.g. ${USAGE}`, call.span);
    const stage = p.rowStage();
    for (const a of call.args) {
      if (a.key !== undefined) {
        const v = a.value;
        evaluate(p, stage, a.key, valueText(v), v.kind === 'word' ? v.expr : undefined, a.span);
        continue;
      }
      const text = valueText(a.value);
      const eq = text.indexOf('=');
      if (eq === -1) throw new QueryCompileError(`eval() expects "name = expression", got "${text}"`, a.span);
      evaluate(p, stage, text.slice(0, eq).trim(), text.slice(eq + 1), undefined, a.span);
    }
  },
});
