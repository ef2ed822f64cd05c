// Canonical query text for a syntax tree: stages joined by ` | `, explicit AND/OR, parentheses
// only where the tree needs them, strings re-quoted. Parsing the output gives the same tree.
import type { ArgValue, Block, Branch, Call, Condition, Expr, Operand, Query, Stage } from './ast.ts';
import { tokenize } from './lexer.ts';

export function printQuery(q: Query): string {
  return printStages(q.stages);
}

function printStages(stages: Stage[]): string {
  return stages.map(printStage).join(' | ');
}

export function printStage(stage: Stage): string {
  switch (stage.kind) {
    case 'filter':
      return printCondition(stage.condition);
    case 'command':
      return printCall(stage.call);
    case 'assignment':
      return `${stage.target} := ${printExpr(stage.expr)}`;
  }
}

export function printCondition(c: Condition): string {
  switch (c.kind) {
    case 'and':
      // An AND or OR inside an AND came from parentheses: keep them so the tree survives.
      return c.items.map((i) => (i.kind === 'and' || i.kind === 'or' ? `(${printCondition(i)})` : printCondition(i))).join(' AND ');
    case 'or':
      return c.items.map((i) => (i.kind === 'or' ? `(${printCondition(i)})` : printCondition(i))).join(' OR ');
    case 'not': {
      const inner = printCondition(c.item);
      return c.item.kind === 'and' || c.item.kind === 'or' || c.item.kind === 'not' ? `NOT (${inner})` : `NOT ${inner}`;
    }
    case 'compare':
      return `${c.field}${c.op}${c.values.map(printOperand).join(',')}`;
    case 'search':
      return quote(c.text);
    case 'regexSearch':
      return printRegex(c.pattern, c.flags);
    case 'call':
      return printCall(c.call);
  }
}

function printOperand(o: Operand): string {
  switch (o.kind) {
    case 'text':
      return o.quoted ? quote(o.text) : o.text;
    case 'wildcard':
      return '*';
    case 'regex':
      return printRegex(o.pattern, o.flags);
  }
}

function printCall(call: Call): string {
  const isCase = call.name.toLowerCase() === 'case';
  const block = call.block ? ` ${printBlock(call.block, isCase)}` : '';
  if (call.block && call.args.length === 0 && isCase) return `${call.name}${block}`;
  const args = call.args.map((a) => (a.key !== undefined ? `${a.key}=${printArgValue(a.value)}` : printArgValue(a.value)));
  return `${call.name}(${args.join(', ')})${block}`;
}

function printArgValue(v: ArgValue): string {
  switch (v.kind) {
    // Arithmetic words and nested calls keep their source text (the tree records it as written).
    case 'word':
      return v.text;
    case 'string':
      return quote(v.text);
    case 'list':
      return `[${v.items.map(printArgValue).join(', ')}]`;
    case 'call':
      return v.text;
  }
}

function printBlock(block: Block, isCase: boolean): string {
  if (block.branches.length === 0) return '{ }';
  return `{ ${block.branches.map((b) => printBranch(b, isCase)).join('; ')} }`;
}

function printBranch(b: Branch, isCase: boolean): string {
  const stages = b.stages.map((stage, i) => {
    // In a case segment a lone string is a bare value (`case_result`); a search there keeps its parentheses.
    const segment = isCase && (b.star || i > 0);
    if (segment && stage.kind === 'filter' && stage.condition.kind === 'search') return `(${printStage(stage)})`;
    return printStage(stage);
  });
  if (!b.star) return stages.join(' | ');
  return stages.length > 0 ? `* | ${stages.join(' | ')}` : '*';
}

export function printExpr(e: Expr): string {
  switch (e.kind) {
    case 'number':
      return e.text;
    case 'string':
      return quote(e.text);
    case 'name':
      return e.name;
    case 'binary':
      // Spaces matter: `a-b` and `a*b` would lex as single identifiers (§1.1).
      return `${printExpr(e.left)} ${e.op} ${printExpr(e.right)}`;
    case 'paren':
      return `(${printExpr(e.expr)})`;
    case 'call':
      return e.text;
  }
}

/** A string literal the lexer decodes back to `text`: only `\` and `"` need a backslash. */
export function quote(text: string): string {
  return `"${text.replace(/[\\"]/g, (ch) => '\\' + ch)}"`;
}

/**
 * `/pattern/flags`. A pattern taken from an unterminated regex may end inside a class or in a lone
 * backslash, where a closing `/` would join the pattern; it is printed unterminated, as it was
 * written (such a regex ran to the end of the query, so nothing follows it).
 */
function printRegex(pattern: string, flags: string): string {
  const closed = `/${pattern}/${flags}`;
  const tokens = tokenize(closed);
  const ok = tokens.length === 2 && tokens[0].type === 'REGEX' && tokens[0].text === pattern && tokens[0].flags === flags;
  return ok ? closed : `/${pattern}`;
}
