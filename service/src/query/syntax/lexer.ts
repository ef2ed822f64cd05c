// The query lexer (query-language.md §1.1). Positions are Unicode code point indices: the input is
// split with Array.from, never indexed by UTF-16 unit, so spans match §6 `error_pos`.
import { QueryParseError, type Span } from './ast.ts';

/** Token names exactly as the parse error messages of §6 spell them. */
export type TokenType =
  | 'EOF'
  | 'PIPE'
  | 'FIELD'
  | 'VALUE'
  | 'STRING'
  | 'REGEX'
  | 'EQUAL'
  | 'NOTEQUAL'
  | 'ASSIGN'
  | 'AND'
  | 'OR'
  | 'NOT'
  | 'LPAREN'
  | 'RPAREN'
  | 'LBRACKET'
  | 'RBRACKET'
  | 'LBRACE'
  | 'RBRACE'
  | 'COMMA'
  | 'SEMICOLON'
  | 'FUNCTION'
  | 'GREATER'
  | 'LESS'
  | 'GREATEREQUAL'
  | 'LESSEQUAL'
  | 'PLUS'
  | 'MINUS'
  | 'MULTIPLY'
  | 'DIVIDE'
  | 'CONTAINSANY'
  | 'STARTSWITHANY'
  | 'ENDSWITHANY';

export interface Token {
  type: TokenType;
  /** The source text; for STRING the decoded text (quotes removed, escapes applied); for REGEX the pattern. */
  text: string;
  span: Span;
  /** REGEX only: the flags as written (`i`, `g`, `m`). */
  flags?: string;
}

const LETTER = /^\p{L}$/u;
const DIGIT = /^\p{Nd}$/u;
const SPACE = /^\p{White_Space}$/u;
const KEYWORDS: Record<string, TokenType> = { AND: 'AND', OR: 'OR', NOT: 'NOT' };
/** Names that are FUNCTION tokens when followed by `{` (the block commands; chain/join then report a missing `(`). */
const BLOCK_NAMES = new Set(['case', 'chain', 'join']);

const isLetter = (c: string): boolean => LETTER.test(c);
export const isDigit = (c: string): boolean => DIGIT.test(c);
const isSpace = (c: string): boolean => SPACE.test(c);
const isIdentStart = (c: string): boolean => c === '_' || isLetter(c);
const isIdentPart = (c: string): boolean =>
  c === '_' || c === '-' || c === '.' || c === '*' || isLetter(c) || isDigit(c);

const SINGLE: Record<string, TokenType> = {
  '|': 'PIPE',
  '(': 'LPAREN',
  ')': 'RPAREN',
  '[': 'LBRACKET',
  ']': 'RBRACKET',
  '{': 'LBRACE',
  '}': 'RBRACE',
  ',': 'COMMA',
  ';': 'SEMICOLON',
  '+': 'PLUS',
  '-': 'MINUS',
};

/** Tokens after which `/` divides and `*` multiplies (an operand just ended). */
const OPERAND_END = new Set<TokenType>(['RPAREN', 'RBRACKET', 'FIELD', 'VALUE']);

/**
 * Splits a query into tokens, ending with one EOF token whose zero-width span is at the end.
 * Throws `unexpected character "<c>" in query` for a character that starts no token.
 */
export function tokenize(query: string): Token[] {
  const cs = Array.from(query);
  const n = cs.length;
  const tokens: Token[] = [];
  const push = (type: TokenType, text: string, start: number, end: number): void => {
    tokens.push({ type, text, span: { start, end } });
  };
  const slice = (start: number, end: number): string => cs.slice(start, end).join('');
  const afterOperand = (): boolean => tokens.length > 0 && OPERAND_END.has(tokens[tokens.length - 1].type);
  const identEnd = (from: number): number => {
    let j = from;
    while (j < n && isIdentPart(cs[j])) j++;
    return j;
  };

  let i = 0;
  while (i < n) {
    const c = cs[i];
    const start = i;
    if (isSpace(c)) {
      i++;
    } else if (isIdentStart(c)) {
      i = identEnd(i + 1);
      const word = slice(start, i);
      const keyword = KEYWORDS[word.toUpperCase()];
      if (keyword) {
        push(keyword, word, start, i);
      } else {
        let j = i;
        while (j < n && isSpace(cs[j])) j++;
        const isCall = cs[j] === '(' || (cs[j] === '{' && BLOCK_NAMES.has(word.toLowerCase()));
        push(isCall ? 'FUNCTION' : 'FIELD', word, start, i);
      }
    } else if (isDigit(c)) {
      i = identEnd(i + 1);
      push('VALUE', slice(start, i), start, i);
    } else if (c === '"' || c === "'") {
      let text = '';
      i++;
      while (i < n && cs[i] !== c) {
        // A backslash makes the next character literal; a final lone backslash stays as written.
        if (cs[i] === '\\' && i + 1 < n) {
          text += cs[i + 1];
          i += 2;
        } else {
          text += cs[i];
          i++;
        }
      }
      if (i < n) i++; // the closing quote; an unterminated string runs to the end
      push('STRING', text, start, i);
    } else if (c === '/') {
      if (afterOperand()) {
        push('DIVIDE', '/', start, ++i);
      } else {
        const body = scanRegexBody(cs, i + 1);
        i = body.end;
        let flags = '';
        if (body.closed) {
          // Flags are a run of i/g/m standing alone: `/x/in(…)` is the regex then the call `in(…)`.
          const j = identEnd(i);
          const run = slice(i, j);
          if (/^[igm]+$/.test(run)) {
            flags = run;
            i = j;
          }
        }
        tokens.push({ type: 'REGEX', text: body.pattern, span: { start, end: i }, flags });
      }
    } else if (c === '*') {
      // `f=*powershell*` compares with that literal text (§2), so a `*` glued to identifier
      // characters is a value, unless it multiplies an operand that just ended (`(a)*b`).
      if (!afterOperand() && i + 1 < n && isIdentPart(cs[i + 1])) {
        i = identEnd(i + 1);
        push('VALUE', slice(start, i), start, i);
      } else {
        push('MULTIPLY', '*', start, ++i);
      }
    } else if (c === '=') {
      const next = cs[i + 1];
      const op: TokenType | undefined =
        next === '~' ? 'CONTAINSANY' : next === '^' ? 'STARTSWITHANY' : next === '$' ? 'ENDSWITHANY' : undefined;
      if (op) push(op, '=' + next, start, (i += 2));
      else push('EQUAL', '=', start, ++i);
    } else if (c === '!') {
      if (cs[i + 1] === '=') push('NOTEQUAL', '!=', start, (i += 2));
      else push('NOT', '!', start, ++i);
    } else if (c === '>' || c === '<') {
      if (cs[i + 1] === '=') push(c === '>' ? 'GREATEREQUAL' : 'LESSEQUAL', c + '=', start, (i += 2));
      else push(c === '>' ? 'GREATER' : 'LESS', c, start, ++i);
    } else if (c === ':') {
      // `:=` assigns; a lone `:` is the value `:`.
      if (cs[i + 1] === '=') push('ASSIGN', ':=', start, (i += 2));
      else push('VALUE', ':', start, ++i);
    } else if (SINGLE[c]) {
      push(SINGLE[c], c, start, ++i);
    } else {
      throw new QueryParseError(`unexpected character "${c}" in query`, { start: i, end: i + 1 });
    }
  }
  push('EOF', '', n, n);
  return tokens;
}

/**
 * Reads a regex body starting after its opening `/`: backslashes are kept with the character they
 * escape, and a `/` inside a character class (`[…]`, where a leading `]` and `[:alpha:]` are
 * literal parts, as in RE2) does not close it. Unterminated bodies run to the end.
 */
function scanRegexBody(cs: string[], from: number): { pattern: string; end: number; closed: boolean } {
  const n = cs.length;
  let i = from;
  let pattern = '';
  let inClass = false;
  while (i < n) {
    const ch = cs[i];
    if (ch === '\\') {
      pattern += i + 1 < n ? ch + cs[i + 1] : ch;
      i += i + 1 < n ? 2 : 1;
    } else if (inClass) {
      if (ch === '[' && cs[i + 1] === ':') {
        const close = findPosixClassEnd(cs, i + 2);
        if (close > 0) {
          pattern += cs.slice(i, close).join('');
          i = close;
          continue;
        }
      }
      if (ch === ']') inClass = false;
      pattern += ch;
      i++;
    } else if (ch === '[') {
      inClass = true;
      pattern += ch;
      i++;
      if (cs[i] === '^') pattern += cs[i++];
      if (cs[i] === ']') pattern += cs[i++];
    } else if (ch === '/') {
      return { pattern, end: i + 1, closed: true };
    } else {
      pattern += ch;
      i++;
    }
  }
  return { pattern, end: n, closed: false };
}

/** Index just after the `:]` closing a `[:name:]` (or `[:^name:]`) class whose name starts at `from`, or -1. */
function findPosixClassEnd(cs: string[], from: number): number {
  if (cs[from] === '^') from++;
  let j = from;
  while (j < cs.length && /^[a-z]$/.test(cs[j])) j++;
  return j > from && cs[j] === ':' && cs[j + 1] === ']' ? j + 2 : -1;
}
