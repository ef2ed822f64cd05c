// Recursive-descent parser from tokens to the syntax tree (query-language.md §1.2–1.8, §6).
import {
  QueryParseError,
  type Arg,
  type ArgValue,
  type AssignmentStage,
  type Block,
  type Branch,
  type Call,
  type Comparison,
  type ComparisonOp,
  type Condition,
  type Expr,
  type Operand,
  type Query,
  type Span,
  type Stage,
} from './ast.ts';
import { tokenize, type Token, type TokenType } from './lexer.ts';

export const TOO_COMPLEX = 'query too complex: parser exceeded maximum iteration limit';
/** Token steps per parse; a 10,000-byte query needs well under a third of this. */
const MAX_STEPS = 100_000;
/** Nesting of groups, calls and blocks; keeps recursion far from the JavaScript stack limit. */
const MAX_DEPTH = 128;

const CONDITION_FUNCTIONS = new Set(['in', 'cidr', 'comment', 'comments']);
const isConditionFunction = (name: string): boolean => CONDITION_FUNCTIONS.has(name.toLowerCase());

const COMPARISON_OPS: Partial<Record<TokenType, ComparisonOp>> = {
  EQUAL: '=',
  NOTEQUAL: '!=',
  GREATER: '>',
  GREATEREQUAL: '>=',
  LESS: '<',
  LESSEQUAL: '<=',
  CONTAINSANY: '=~',
  STARTSWITHANY: '=^',
  ENDSWITHANY: '=$',
};

type BlockKind = 'case' | 'chain' | 'join';
const BLOCK_ERROR_PREFIX: Record<BlockKind, string> = {
  case: 'case branch: ',
  chain: 'chain(): chain step: ',
  join: 'join() subquery parse error: ',
};

/** Parses query text (after @variable substitution). Throws QueryParseError. */
export function parseQuery(text: string): Query {
  const source = Array.from(text);
  const parser = new Parser(tokenize(text), source);
  const stages = parser.parseStages(undefined).stages;
  const query: Query = { stages, span: { start: 0, end: source.length } };
  const rest = parser.current;
  // §1.2: parsing stops silently at the first token that cannot begin a stage.
  if (rest.type !== 'EOF') query.ignored = { start: rest.span.start, end: source.length };
  return query;
}

const cover = (a: Span, b: Span): Span => ({ start: a.start, end: b.end });

class Parser {
  private pos = 0;
  private steps = 0;
  private depth = 0;

  constructor(
    private readonly tokens: Token[],
    private readonly source: string[],
  ) {}

  get current(): Token {
    return this.tokens[this.pos];
  }

  private peek(offset = 1): Token {
    return this.tokens[Math.min(this.pos + offset, this.tokens.length - 1)];
  }

  private tick(): void {
    if (++this.steps > MAX_STEPS) throw new QueryParseError(TOO_COMPLEX);
  }

  private advance(): Token {
    this.tick();
    const t = this.tokens[this.pos];
    if (t.type !== 'EOF') this.pos++;
    return t;
  }

  private enter(): void {
    if (++this.depth > MAX_DEPTH) throw new QueryParseError(TOO_COMPLEX);
  }

  private leave(): void {
    this.depth--;
  }

  /** End of the last consumed token. */
  private get lastEnd(): number {
    return this.pos > 0 ? this.tokens[this.pos - 1].span.end : 0;
  }

  private fail(message: string, token: Token = this.current): never {
    throw new QueryParseError(message, token.span);
  }

  private expect(type: TokenType, message: string): Token {
    if (this.current.type !== type) this.fail(`${message}, got ${this.current.type}`);
    return this.advance();
  }

  // ---- Stages (§1.2) ----

  /**
   * `[ "*" ] { [ "|" ] stage }`, up to the first token that cannot begin a stage. Inside a case
   * block every stage after the branch condition (or after `*`) is a segment, where a bare value
   * is allowed (§3.3).
   */
  parseStages(block: BlockKind | undefined): { stages: Stage[]; star: boolean } {
    const stages: Stage[] = [];
    let star = false;
    if (this.current.type === 'MULTIPLY') {
      star = true;
      this.advance();
    }
    for (;;) {
      this.tick();
      const segment = block === 'case' && (star || stages.length > 0);
      let piped = false;
      if (this.current.type === 'PIPE') {
        this.advance();
        piped = true;
        if (!this.beginsStage(segment)) {
          const t = this.current;
          if (t.type === 'VALUE') this.fail(`unexpected token in pipeline: VALUE ("${t.text}")`);
          this.fail(`expected function name, got ${t.type}`);
        }
      } else if (!this.beginsStage(segment)) {
        break;
      }
      stages.push(this.parseStage(piped, segment));
    }
    return { stages, star };
  }

  private isBareValue(segment: boolean): boolean {
    const t = this.current.type;
    const next = this.peek().type;
    return (
      segment &&
      (t === 'FIELD' || t === 'VALUE' || t === 'STRING') &&
      (next === 'SEMICOLON' || next === 'RBRACE' || next === 'PIPE')
    );
  }

  private beginsStage(segment: boolean): boolean {
    switch (this.current.type) {
      case 'FUNCTION':
      case 'FIELD':
      case 'STRING':
      case 'REGEX':
      case 'LPAREN':
      case 'NOT':
        return true;
      default:
        return this.isBareValue(segment);
    }
  }

  /** `piped`: the stage follows an explicit `|`, so its condition errors take the HAVING forms (§6). */
  private parseStage(piped: boolean, segment: boolean): Stage {
    const t = this.current;
    if (this.isBareValue(segment)) return this.parseBareValue();
    if (t.type === 'FUNCTION' && !isConditionFunction(t.text)) {
      const call = this.parseCommand();
      return { kind: 'command', call, span: call.span };
    }
    if (t.type === 'FIELD' && this.peek().type === 'ASSIGN') return this.parseAssignment();
    const condition = this.parseOr(piped);
    return { kind: 'filter', condition, span: condition.span };
  }

  /** A bare value in a case segment sets `case_result` (§3.3). */
  private parseBareValue(): AssignmentStage {
    const t = this.advance();
    return { kind: 'assignment', target: 'case_result', targetSpan: t.span, expr: tokenExpr(t), span: t.span };
  }

  // ---- Conditions (§1.3–1.5) ----

  private parseOr(having: boolean): Condition {
    const items = [this.parseAnd(having)];
    while (this.current.type === 'OR') {
      this.advance();
      items.push(this.parseAnd(having));
    }
    return items.length === 1 ? items[0] : { kind: 'or', items, span: cover(items[0].span, items[items.length - 1].span) };
  }

  private parseAnd(having: boolean): Condition {
    const items = [this.parseTerm(having)];
    for (;;) {
      this.tick();
      if (this.current.type === 'AND') {
        this.advance();
        items.push(this.parseTerm(having));
      } else if (this.continuesImplicitly()) {
        items.push(this.parseTerm(having));
      } else {
        break;
      }
    }
    return items.length === 1 ? items[0] : { kind: 'and', items, span: cover(items[0].span, items[items.length - 1].span) };
  }

  /**
   * §1.3: a comparison (possibly negated) right after a condition is an implicit AND at AND
   * precedence; a string, regex, group or function there starts a new stage instead, and
   * `name :=` starts an assignment stage.
   */
  private continuesImplicitly(): boolean {
    let k = this.pos;
    while (this.tokens[k].type === 'NOT') k++;
    return this.tokens[k].type === 'FIELD' && this.tokens[k + 1]?.type !== 'ASSIGN';
  }

  private parseTerm(having: boolean): Condition {
    this.tick();
    const start = this.current.span.start;
    let negations = 0;
    while (this.current.type === 'NOT') {
      this.advance();
      negations++;
    }
    const t = this.current;
    let condition: Condition;
    switch (t.type) {
      case 'FIELD':
        condition = this.parseComparison(having);
        break;
      case 'STRING':
        this.advance();
        condition = { kind: 'search', text: t.text, span: t.span };
        break;
      case 'REGEX':
        this.advance();
        condition = { kind: 'regexSearch', pattern: t.text, flags: t.flags ?? '', span: t.span };
        break;
      case 'LPAREN':
        this.enter();
        this.advance();
        condition = this.parseOr(having);
        this.expect('RPAREN', 'expected token RPAREN');
        this.leave();
        break;
      default: {
        if (t.type === 'FUNCTION' && isConditionFunction(t.text)) {
          const call = this.parseCall();
          condition = { kind: 'call', call, span: call.span };
          break;
        }
        return this.fail(`expected field name${having ? ' in HAVING condition' : ''}, got ${t.type}`);
      }
    }
    // Double negation cancels (§1.3), also across a group: `NOT (NOT a=1)` is `a=1`.
    if (negations % 2 === 1) {
      condition =
        condition.kind === 'not' ? condition.item : { kind: 'not', item: condition, span: { start, end: condition.span.end } };
    }
    return condition;
  }

  private parseComparison(having: boolean): Comparison {
    const field = this.advance();
    const opToken = this.current;
    const op = COMPARISON_OPS[opToken.type];
    if (!op) {
      this.fail(
        having
          ? `expected comparison operator in HAVING condition, got ${opToken.type}`
          : `expected comparison operator (=, !=, >, <, >=, <=, =~, =^, =$), got ${opToken.type}`,
      );
    }
    this.advance();
    const values: Operand[] = [];
    if (op === '=~' || op === '=^' || op === '=$') {
      // Always a list of identifiers, values or strings, ending at the first other token (§1.4).
      values.push(this.parseSearchTerm('expected value in list'));
      while (this.current.type === 'COMMA') {
        this.advance();
        values.push(this.parseSearchTerm("expected value after ',' in list"));
      }
    } else {
      const first = this.parseComparisonValue(op, having);
      values.push(first);
      if ((op === '=' || op === '!=') && first.kind !== 'regex') {
        while (this.current.type === 'COMMA') {
          this.advance();
          values.push(this.parseListValue(op, having));
        }
      }
    }
    return { kind: 'compare', field: field.text, fieldSpan: field.span, op, values, span: cover(field.span, values[values.length - 1].span) };
  }

  /** A term of `=~ =^ =$`: an identifier, value or string, always literal. */
  private parseSearchTerm(message: string): Operand {
    const t = this.current;
    if (t.type === 'FIELD' || t.type === 'VALUE' || t.type === 'STRING') {
      this.advance();
      return { kind: 'text', text: t.text, quoted: t.type === 'STRING', span: t.span };
    }
    return this.fail(`${message}, got ${t.type}`);
  }

  /** `-` then a number: the negative number `-5.5` (§1.4). */
  private parseNegative(having: boolean): Operand {
    const minus = this.advance();
    const t = this.current;
    if (t.type !== 'VALUE') this.fail(`expected number after '-'${having ? ' in HAVING condition' : ''}, got ${t.type}`);
    this.advance();
    return { kind: 'text', text: '-' + t.text, quoted: false, span: cover(minus.span, t.span) };
  }

  /** A plain value: identifier, value, string, `*` (quoted or not, under `=`/`!=`) or a negative number. */
  private plainValue(op: ComparisonOp, having: boolean): Operand | undefined {
    const t = this.current;
    switch (t.type) {
      case 'FIELD':
      case 'VALUE':
        this.advance();
        return { kind: 'text', text: t.text, quoted: false, span: t.span };
      case 'STRING':
        this.advance();
        if (t.text === '*' && (op === '=' || op === '!=')) return { kind: 'wildcard', span: t.span };
        return { kind: 'text', text: t.text, quoted: true, span: t.span };
      case 'MULTIPLY':
        this.advance();
        return { kind: 'wildcard', span: t.span };
      case 'MINUS':
        return this.parseNegative(having);
      default:
        return undefined;
    }
  }

  private parseComparisonValue(op: ComparisonOp, having: boolean): Operand {
    const t = this.current;
    if (t.type === 'REGEX' && (op === '=' || op === '!=')) {
      this.advance();
      return { kind: 'regex', pattern: t.text, flags: t.flags ?? '', span: t.span };
    }
    return this.plainValue(op, having) ?? this.fail(`expected value${having ? ' in HAVING condition' : ''}, got ${t.type}`);
  }

  private parseListValue(op: ComparisonOp, having: boolean): Operand {
    const t = this.current;
    return this.plainValue(op, having) ?? this.fail(`expected value after ',' in list, got ${t.type}`);
  }

  // ---- Commands and arguments (§1.8) ----

  private parseCommand(): Call {
    const name = this.current;
    const lower = name.text.toLowerCase();
    if (lower === 'case') {
      this.advance();
      if (this.current.type !== 'LBRACE') this.fail(`expected '{' after case, got ${this.current.type}`);
      const block = this.parseBlock('case');
      return { name: name.text, nameSpan: name.span, args: [], block, span: cover(name.span, block.span) };
    }
    if (lower === 'chain' || lower === 'join') {
      this.advance();
      this.expect('LPAREN', `expected '(' after ${lower}`);
      const args = this.parseArgs();
      this.expect('RPAREN', `expected ')' after ${lower} arguments`);
      if (this.current.type !== 'LBRACE') this.fail(`expected '{' after ${lower}(...), got ${this.current.type}`);
      const block = this.parseBlock(lower);
      return { name: name.text, nameSpan: name.span, args, block, span: cover(name.span, block.span) };
    }
    return this.parseCall();
  }

  /** `name(args)`; the current token is the FUNCTION name. */
  private parseCall(): Call {
    const name = this.advance();
    this.enter();
    this.expect('LPAREN', 'expected token LPAREN');
    const args = this.parseArgs();
    const close = this.expect('RPAREN', 'expected token RPAREN');
    this.leave();
    return { name: name.text, nameSpan: name.span, args, span: cover(name.span, close.span) };
  }

  /** Comma-separated arguments up to (not including) the closing `)`. */
  private parseArgs(): Arg[] {
    const args: Arg[] = [];
    if (this.current.type === 'RPAREN') return args;
    for (;;) {
      this.tick();
      args.push(this.parseArg());
      if (this.current.type !== 'COMMA') return args;
      this.advance();
    }
  }

  private parseArg(): Arg {
    const t = this.current;
    if (t.type === 'FIELD' && this.peek().type === 'EQUAL') {
      this.advance();
      this.advance();
      const value = this.parseArgValue(true);
      return { key: t.text, keySpan: t.span, value, span: cover(t.span, value.span) };
    }
    const value = this.parseArgValue(false);
    return { value, span: value.span };
  }

  private parseArgValue(keyed: boolean): ArgValue {
    const t = this.current;
    switch (t.type) {
      case 'LBRACKET':
        return this.parseList(keyed);
      case 'FUNCTION':
        return this.parseNestedCall();
      case 'MULTIPLY':
        this.advance();
        return { kind: 'word', text: '*', span: t.span };
      case 'FIELD':
      case 'VALUE':
      case 'STRING': {
        this.advance();
        if (isArithmetic(this.current.type)) return this.parseArgExpression(t);
        return t.type === 'STRING' ? { kind: 'string', text: t.text, span: t.span } : { kind: 'word', text: t.text, span: t.span };
      }
      default:
        // Regex literals, parenthesised expressions and a leading `-` are not arguments (§1.8).
        return this.fail(`unexpected token in function arguments: ${t.type}`);
    }
  }

  /** `[a, b]`; `key=[…]` items report `array parameter` errors. */
  private parseList(keyed: boolean): ArgValue {
    const open = this.advance();
    const message = keyed ? 'unexpected token in array parameter' : 'unexpected token in array';
    const items: ArgValue[] = [];
    if (this.current.type !== 'RBRACKET') {
      for (;;) {
        this.tick();
        const t = this.current;
        if (t.type === 'FIELD' || t.type === 'VALUE' || t.type === 'MULTIPLY') {
          this.advance();
          items.push({ kind: 'word', text: t.text, span: t.span });
        } else if (t.type === 'STRING') {
          this.advance();
          items.push({ kind: 'string', text: t.text, span: t.span });
        } else if (t.type === 'FUNCTION') {
          items.push(this.parseNestedCall());
        } else {
          this.fail(`${message}: ${t.type}`);
        }
        if (this.current.type !== 'COMMA') break;
        this.advance();
      }
    }
    if (this.current.type !== 'RBRACKET') this.fail(`${message}: ${this.current.type}`);
    const close = this.advance();
    return { kind: 'list', items, span: cover(open.span, close.span) };
  }

  /** `f(…)` inside arguments, kept with its source text for the command to interpret. */
  private parseNestedCall(): ArgValue {
    const call = this.parseCall();
    return { kind: 'call', name: call.name, args: call.args, text: this.sourceText(call.span), span: call.span };
  }

  /**
   * An arithmetic argument (`eval(rate=requests / duration)`) whose first operand has been read:
   * operands and `+ - * /` with the usual precedence; no parentheses or leading `-` (§1.8).
   */
  private parseArgExpression(first: Token): ArgValue {
    let expr = this.parseArgProduct(tokenExpr(first));
    while (this.current.type === 'PLUS' || this.current.type === 'MINUS') {
      const op = this.advance().type === 'PLUS' ? '+' : '-';
      const right = this.parseArgProduct(this.parseArgOperand());
      expr = { kind: 'binary', op, left: expr, right, span: cover(expr.span, right.span) };
    }
    return { kind: 'word', text: this.sourceText(expr.span), expr, span: expr.span };
  }

  private parseArgProduct(first: Expr): Expr {
    let left = first;
    while (this.current.type === 'MULTIPLY' || this.current.type === 'DIVIDE') {
      const op = this.advance().type === 'MULTIPLY' ? '*' : '/';
      const right = this.parseArgOperand();
      left = { kind: 'binary', op, left, right, span: cover(left.span, right.span) };
    }
    return left;
  }

  private parseArgOperand(): Expr {
    const t = this.current;
    if (t.type !== 'FIELD' && t.type !== 'VALUE' && t.type !== 'STRING') this.fail(`unexpected token in function arguments: ${t.type}`);
    this.advance();
    return tokenExpr(t);
  }

  private sourceText(span: Span): string {
    return this.source.slice(span.start, span.end).join('');
  }

  // ---- Blocks: case { … }, chain(…) { … }, join(…) { … } ----

  private parseBlock(kind: BlockKind): Block {
    const open = this.advance();
    this.enter();
    const branches: Branch[] = [];
    for (;;) {
      this.tick();
      const branch = this.parseBranch(kind);
      if (branch) branches.push(branch);
      if (this.current.type === 'SEMICOLON') {
        this.advance();
        continue;
      }
      if (this.current.type !== 'RBRACE') this.fail(`expected '}' to close ${kind} block, got ${this.current.type}`);
      break;
    }
    const close = this.advance();
    this.leave();
    return { branches, span: cover(open.span, close.span) };
  }

  /** One `;`-separated branch; empty ones (`a=1 | x:=1;` trailing `;`) yield nothing. */
  private parseBranch(kind: BlockKind): Branch | undefined {
    const start = this.current.span.start;
    const before = this.pos;
    let parsed: { stages: Stage[]; star: boolean };
    try {
      parsed = this.parseStages(kind);
    } catch (e) {
      // §6: errors inside a block are translate errors carrying the block's prefix.
      if (e instanceof QueryParseError && e.message !== TOO_COMPLEX) {
        throw new QueryParseError(BLOCK_ERROR_PREFIX[kind] + e.message, e.span, 'translate');
      }
      throw e;
    }
    if (this.pos === before) return undefined;
    return { stages: parsed.stages, star: parsed.star, span: { start, end: this.lastEnd } };
  }

  // ---- Assignments (§1.6) ----

  private parseAssignment(): AssignmentStage {
    const target = this.advance();
    this.advance(); // :=
    const expr = this.parseExpr();
    return { kind: 'assignment', target: target.text, targetSpan: target.span, expr, span: cover(target.span, expr.span) };
  }

  private parseExpr(): Expr {
    let left = this.parseProduct();
    while (this.current.type === 'PLUS' || this.current.type === 'MINUS') {
      const op = this.advance().type === 'PLUS' ? '+' : '-';
      const right = this.parseProduct();
      left = { kind: 'binary', op, left, right, span: cover(left.span, right.span) };
    }
    return left;
  }

  private parseProduct(): Expr {
    let left = this.parseFactor();
    while (this.current.type === 'MULTIPLY' || this.current.type === 'DIVIDE') {
      const op = this.advance().type === 'MULTIPLY' ? '*' : '/';
      const right = this.parseFactor();
      left = { kind: 'binary', op, left, right, span: cover(left.span, right.span) };
    }
    return left;
  }

  private parseFactor(): Expr {
    this.tick();
    const t = this.current;
    switch (t.type) {
      case 'VALUE':
      case 'STRING':
      case 'FIELD':
        this.advance();
        return tokenExpr(t);
      case 'MINUS':
        // A negative number literal; `-name` or `-(…)` has no meaning here.
        if (this.peek().type === 'VALUE') {
          this.advance();
          const number = this.advance();
          return { kind: 'number', text: '-' + number.text, span: cover(t.span, number.span) };
        }
        break;
      case 'LPAREN': {
        this.enter();
        this.advance();
        const expr = this.parseExpr();
        const close = this.expect('RPAREN', "expected ')' in expression");
        this.leave();
        return { kind: 'paren', expr, span: cover(t.span, close.span) };
      }
      case 'FUNCTION':
        if (this.peek().type === 'LPAREN') {
          const call = this.parseCall();
          return { kind: 'call', name: call.name, text: this.sourceText(call.span), span: call.span };
        }
        break;
    }
    return this.fail(`expected value, field, string or function in expression, got ${t.type}`);
  }
}

const isArithmetic = (t: TokenType): boolean => t === 'PLUS' || t === 'MINUS' || t === 'MULTIPLY' || t === 'DIVIDE';

function tokenExpr(t: Token): Expr {
  if (t.type === 'VALUE') return { kind: 'number', text: t.text, span: t.span };
  if (t.type === 'STRING') return { kind: 'string', text: t.text, span: t.span };
  return { kind: 'name', name: t.text, span: t.span };
}
