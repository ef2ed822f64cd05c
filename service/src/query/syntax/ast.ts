// The typed syntax tree of a query (query-language.md §1). The parser builds it, the printer turns
// it back into canonical text, and the planner (query/plan) reads it. Every node carries its span:
// a half-open range of Unicode code point indices into the query after @variable substitution.

export interface Span {
  start: number;
  end: number;
}

/** A whole query: its stages in order. `ignored` is the span of trailing text the parser skipped (§1.2). */
export interface Query {
  stages: Stage[];
  span: Span;
  ignored?: Span;
}

export type Stage = FilterStage | CommandStage | AssignmentStage;

/** A condition written as its own stage (or the leading filter). Conditions in one stage are one tree. */
export interface FilterStage {
  kind: 'filter';
  condition: Condition;
  span: Span;
}

export interface CommandStage {
  kind: 'command';
  call: Call;
  span: Span;
}

/** `name := arith-expr` (§1.6). A bare value segment of a case branch (`a=1 | high`) is parsed as `case_result := high` (§3.3). */
export interface AssignmentStage {
  kind: 'assignment';
  target: string;
  targetSpan: Span;
  expr: Expr;
  span: Span;
}

export type Condition = AndCondition | OrCondition | NotCondition | Comparison | TextSearch | RegexSearch | CallCondition;

export interface AndCondition {
  kind: 'and';
  items: Condition[];
  span: Span;
}
export interface OrCondition {
  kind: 'or';
  items: Condition[];
  span: Span;
}
export interface NotCondition {
  kind: 'not';
  item: Condition;
  span: Span;
}

export type ComparisonOp = '=' | '!=' | '>' | '>=' | '<' | '<=' | '=~' | '=^' | '=$';

/** `field op value[, value…]`. `=`/`!=` with several values is a list; `=~ =^ =$` always are. */
export interface Comparison {
  kind: 'compare';
  field: string;
  fieldSpan: Span;
  op: ComparisonOp;
  values: Operand[];
  span: Span;
}

export type Operand =
  /** An identifier, a value (`200`, `10.0.0.1`, `5m`), a negative number (`-5.5`) or a string. */
  | { kind: 'text'; text: string; quoted: boolean; span: Span }
  /** `*`, quoted or not: the wildcard of `f=*` / `f!=*`. */
  | { kind: 'wildcard'; span: Span }
  | { kind: 'regex'; pattern: string; flags: string; span: Span };

/** A bare string: case-insensitive literal search over the event's full text (§1.5). */
export interface TextSearch {
  kind: 'search';
  text: string;
  span: Span;
}

/** A bare regex: applied to the event's full text (§1.5). */
export interface RegexSearch {
  kind: 'regexSearch';
  pattern: string;
  flags: string;
  span: Span;
}

/** A condition function used as an operand: `in()`, `cidr()`, `comment()`; `!in()` is a NotCondition around it. */
export interface CallCondition {
  kind: 'call';
  call: Call;
  span: Span;
}

/** `name(args) [{ block }]`, or `case { block }` (no arguments). `name` is as written; match case-insensitively. */
export interface Call {
  name: string;
  nameSpan: Span;
  args: Arg[];
  block?: Block;
  span: Span;
}

/** One argument: positional (`key` absent) or `key=value`. */
export interface Arg {
  key?: string;
  keySpan?: Span;
  value: ArgValue;
  span: Span;
}

export type ArgValue =
  /** An identifier or value, unquoted (`user`, `200`, `5m`, `*`). */
  | {
      kind: 'word';
      text: string;
      span: Span;
      /** Added: set when the argument is arithmetic (`eval(rate=requests / duration)`); `text` is then its source as written. */
      expr?: Expr;
    }
  /** A quoted string, quotes removed and escapes applied. */
  | { kind: 'string'; text: string; span: Span }
  /** `[a, b]`. */
  | { kind: 'list'; items: ArgValue[]; span: Span }
  /** A nested call `f(…)`, kept for the command to interpret (`function=count()`); `text` is the source as written. */
  | { kind: 'call'; name: string; args: Arg[]; text: string; span: Span };

/** The `{ … }` of `case`, `chain` and `join`: branches separated by `;`, each a list of stages. */
export interface Block {
  branches: Branch[];
  span: Span;
}

export interface Branch {
  stages: Stage[];
  span: Span;
  /** Added: the branch began with `*` (the default branch of `case`, §3.3); `stages` holds what follows it. */
  star: boolean;
}

/** Arithmetic of assignments (§1.6) and `eval`. */
export type Expr =
  | { kind: 'number'; text: string; span: Span }
  | { kind: 'string'; text: string; span: Span }
  | { kind: 'name'; name: string; span: Span }
  | { kind: 'binary'; op: '+' | '-' | '*' | '/'; left: Expr; right: Expr; span: Span }
  | { kind: 'paren'; expr: Expr; span: Span }
  /** A function call on the right of `:=`: unsupported, yields the text `name()` (§1.6). */
  | { kind: 'call'; name: string; text: string; span: Span };

/** A parse failure: the spec's message (without the `Parse error: ` prefix) and its span (absent only for the iteration limit). */
export class QueryParseError extends Error {
  constructor(
    message: string,
    readonly span?: Span,
    /** Added: 'translate' for an error inside a case/chain/join block, reported as `Query error: ` with the block's prefix already in the message (§6). */
    readonly errorType: 'parse' | 'translate' = 'parse',
  ) {
    super(message);
    this.name = 'QueryParseError';
  }
}
