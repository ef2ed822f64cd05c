// Go text/template's lexical rules: text between actions, `{{`/`}}` with the trim markers
// `{{- ` and ` -}}` (a dash and a space: `{{-3}}` is the number -3), comments `{{/* … */}}`, and
// inside an action the tokens of Go's template lexer (fields, variables, strings, raw strings,
// characters, numbers, keywords, `:=`, `=`, `|`, parentheses, commas).
import { TemplateError, type Source } from './errors.ts';

export type TokenKind =
  | 'field' // .Name
  | 'variable' // $ or $name
  | 'identifier' // a function name
  | 'keyword' // if else end range with define template block break continue
  | 'dot' // .
  | 'string' // "…" (value unquoted)
  | 'raw' // `…`
  | 'char' // 'x' (value: the character)
  | 'number'
  | 'bool'
  | 'nil'
  | 'declare' // :=
  | 'assign' // =
  | 'pipe' // |
  | 'lparen'
  | 'rparen'
  | 'comma'
  | 'space';

export interface Token {
  kind: TokenKind;
  /** The token's text as written; for strings and characters, the value. */
  text: string;
  pos: number;
}

export type Segment =
  | { kind: 'text'; text: string; pos: number }
  /** One action: its tokens (spaces kept where they separate operands) and where it ends. */
  | { kind: 'action'; tokens: Token[]; pos: number; end: number }
  | { kind: 'comment'; pos: number };

const KEYWORDS = new Set(['if', 'else', 'end', 'range', 'with', 'define', 'template', 'block', 'break', 'continue']);
const isSpace = (c: string | undefined) => c === ' ' || c === '\t' || c === '\r' || c === '\n';
const isAlnum = (c: string | undefined) => c !== undefined && /[\p{L}\p{N}_]/u.test(c);
const LEFT = '{{';
const RIGHT = '}}';

/** Splits a template into text, comments and tokenized actions, applying the trim markers. */
export function lex(src: Source): Segment[] {
  const t = src.text;
  const out: Segment[] = [];
  let i = 0;
  let trimNext = false;
  while (i < t.length) {
    const open = t.indexOf(LEFT, i);
    let text = t.slice(i, open === -1 ? t.length : open);
    const textPos = i;
    if (trimNext) {
      text = text.replace(/^[ \t\r\n]+/, '');
      trimNext = false;
    }
    if (open === -1) {
      if (text) out.push({ kind: 'text', text, pos: textPos });
      break;
    }
    let p = open + LEFT.length;
    // `{{- ` trims the whitespace before the action.
    if (t[p] === '-' && isSpace(t[p + 1])) {
      text = text.replace(/[ \t\r\n]+$/, '');
      p += 2;
    }
    if (text) out.push({ kind: 'text', text, pos: textPos });
    // A comment: `/*` right after the delimiter, `*/` right before the closing one.
    if (t.startsWith('/*', p)) {
      const close = t.indexOf('*/', p + 2);
      if (close === -1) throw new TemplateError(src, open, 'unclosed comment');
      let r = close + 2;
      if (t[r] === ' ' && t[r + 1] === '-' && t.startsWith(RIGHT, r + 2)) {
        trimNext = true;
        r += 2;
      }
      if (!t.startsWith(RIGHT, r)) throw new TemplateError(src, open, 'comment ends before closing delimiter');
      out.push({ kind: 'comment', pos: open });
      i = r + RIGHT.length;
      continue;
    }
    const { tokens, end, trim } = lexAction(src, p, open);
    out.push({ kind: 'action', tokens, pos: open, end });
    trimNext = trim;
    i = end;
  }
  return out;
}

/** The tokens of one action from `p` (after the left delimiter) to its right delimiter. */
function lexAction(src: Source, start: number, open: number): { tokens: Token[]; end: number; trim: boolean } {
  const t = src.text;
  const tokens: Token[] = [];
  let p = start;
  const parens: number[] = [];
  for (;;) {
    // The right delimiter, optionally with the trim marker ` -}}`.
    if (isSpace(t[p]) && t[p + 1] === '-' && t.startsWith(RIGHT, p + 2)) {
      if (parens.length) throw new TemplateError(src, parens[parens.length - 1]!, 'unclosed left paren');
      return { tokens, end: p + 2 + RIGHT.length, trim: true };
    }
    if (t.startsWith(RIGHT, p)) {
      if (parens.length) throw new TemplateError(src, parens[parens.length - 1]!, 'unclosed left paren');
      return { tokens, end: p + RIGHT.length, trim: false };
    }
    const c = t[p];
    if (c === undefined) throw new TemplateError(src, open, 'unclosed action');
    if (isSpace(c)) {
      let q = p;
      // Stop before ` -}}` so the right delimiter's trim marker is seen.
      while (isSpace(t[q]) && !(t[q + 1] === '-' && t.startsWith(RIGHT, q + 2))) q++;
      tokens.push({ kind: 'space', text: t.slice(p, q), pos: p });
      p = q === p ? p + 1 : q;
      continue;
    }
    if (c === ':') {
      if (t[p + 1] !== '=') throw new TemplateError(src, p, 'expected :=');
      tokens.push({ kind: 'declare', text: ':=', pos: p });
      p += 2;
      continue;
    }
    if (c === '=') {
      tokens.push({ kind: 'assign', text: '=', pos: p });
      p++;
      continue;
    }
    if (c === '|') {
      tokens.push({ kind: 'pipe', text: '|', pos: p });
      p++;
      continue;
    }
    if (c === ',') {
      tokens.push({ kind: 'comma', text: ',', pos: p });
      p++;
      continue;
    }
    if (c === '(') {
      parens.push(p);
      tokens.push({ kind: 'lparen', text: '(', pos: p });
      p++;
      continue;
    }
    if (c === ')') {
      if (parens.pop() === undefined) throw new TemplateError(src, p, 'unexpected right paren');
      tokens.push({ kind: 'rparen', text: ')', pos: p });
      p++;
      continue;
    }
    if (c === '"') {
      const { value, end } = quoted(src, p);
      tokens.push({ kind: 'string', text: value, pos: p });
      p = end;
      continue;
    }
    if (c === '`') {
      const close = t.indexOf('`', p + 1);
      if (close === -1) throw new TemplateError(src, p, 'unterminated raw quoted string');
      tokens.push({ kind: 'raw', text: t.slice(p + 1, close), pos: p });
      p = close + 1;
      continue;
    }
    if (c === "'") {
      const { value, end } = charConstant(src, p);
      tokens.push({ kind: 'char', text: value, pos: p });
      p = end;
      continue;
    }
    if (c === '$') {
      let q = p + 1;
      while (isAlnum(t[q])) q++;
      tokens.push({ kind: 'variable', text: t.slice(p, q), pos: p });
      p = q;
      continue;
    }
    if (c === '.') {
      // A number such as .5, a field .Name, or the dot itself.
      if (/[0-9]/.test(t[p + 1] ?? '')) {
        const end = numberEnd(src, p);
        tokens.push({ kind: 'number', text: t.slice(p, end), pos: p });
        p = end;
        continue;
      }
      let q = p + 1;
      while (isAlnum(t[q])) q++;
      if (q === p + 1) {
        tokens.push({ kind: 'dot', text: '.', pos: p });
        p++;
      } else {
        tokens.push({ kind: 'field', text: t.slice(p, q), pos: p });
        p = q;
      }
      continue;
    }
    if (/[0-9+-]/.test(c)) {
      const end = numberEnd(src, p);
      tokens.push({ kind: 'number', text: t.slice(p, end), pos: p });
      p = end;
      continue;
    }
    if (isAlnum(c)) {
      let q = p;
      while (isAlnum(t[q])) q++;
      const word = t.slice(p, q);
      const kind: TokenKind = KEYWORDS.has(word) ? 'keyword' : word === 'true' || word === 'false' ? 'bool' : word === 'nil' ? 'nil' : 'identifier';
      tokens.push({ kind, text: word, pos: p });
      p = q;
      continue;
    }
    throw new TemplateError(src, p, `unrecognized character in action: ${JSON.stringify(c)}`);
  }
}

const NUMBER = /^[+-]?(?:0[xX](?:[0-9a-fA-F_]*\.?[0-9a-fA-F_]*)(?:[pP][+-]?[0-9_]+)?|0[oO][0-7_]+|0[bB][01_]+|(?:[0-9][0-9_]*)?\.?[0-9_]*(?:[eE][+-]?[0-9_]+)?)i?/;

function numberEnd(src: Source, p: number): number {
  const m = NUMBER.exec(src.text.slice(p, p + 400));
  const len = m?.[0].length ?? 0;
  const end = p + len;
  if (len === 0 || /^[+-]$/.test(m![0]) || isAlnum(src.text[end]) || src.text[end] === '.') {
    let q = p + Math.max(1, len);
    while (isAlnum(src.text[q]) || src.text[q] === '.') q++;
    throw new TemplateError(src, p, `bad number syntax: "${src.text.slice(p, q)}"`);
  }
  return end;
}

const ESCAPES: Record<string, string> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\', '"': '"', "'": "'" };

/** One escape sequence of a Go interpreted string or character at t[p] === '\\'. */
function escape(src: Source, p: number, quote: string): { value: string; end: number } {
  const t = src.text;
  const c = t[p + 1];
  if (c === undefined) throw new TemplateError(src, p, 'unterminated quoted string');
  if (c in ESCAPES && (c !== "'" || quote === "'") && (c !== '"' || quote === '"')) return { value: ESCAPES[c]!, end: p + 2 };
  const hex = (n: number, from: number) => {
    const h = t.slice(from, from + n);
    if (!new RegExp(`^[0-9a-fA-F]{${n}}$`).test(h)) throw new TemplateError(src, p, 'invalid syntax in escape sequence');
    return parseInt(h, 16);
  };
  if (c === 'x') return { value: String.fromCharCode(hex(2, p + 2)), end: p + 4 };
  if (c === 'u') return { value: String.fromCodePoint(hex(4, p + 2)), end: p + 6 };
  if (c === 'U') return { value: String.fromCodePoint(hex(8, p + 2)), end: p + 10 };
  if (/[0-7]/.test(c)) {
    const o = t.slice(p + 1, p + 4);
    if (!/^[0-7]{3}$/.test(o)) throw new TemplateError(src, p, 'invalid syntax in escape sequence');
    return { value: String.fromCharCode(parseInt(o, 8)), end: p + 4 };
  }
  throw new TemplateError(src, p, 'invalid syntax in escape sequence');
}

function quoted(src: Source, p: number): { value: string; end: number } {
  const t = src.text;
  let value = '';
  let q = p + 1;
  for (;;) {
    const c = t[q];
    if (c === undefined || c === '\n') throw new TemplateError(src, p, 'unterminated quoted string');
    if (c === '"') return { value, end: q + 1 };
    if (c === '\\') {
      const e = escape(src, q, '"');
      value += e.value;
      q = e.end;
      continue;
    }
    value += c;
    q++;
  }
}

function charConstant(src: Source, p: number): { value: string; end: number } {
  const t = src.text;
  let value: string;
  let q: number;
  if (t[p + 1] === '\\') {
    const e = escape(src, p + 1, "'");
    value = e.value;
    q = e.end;
  } else {
    const cp = t.codePointAt(p + 1);
    if (cp === undefined || t[p + 1] === "'" || t[p + 1] === '\n') throw new TemplateError(src, p, 'unterminated character constant');
    value = String.fromCodePoint(cp);
    q = p + 1 + value.length;
  }
  if (t[q] !== "'") throw new TemplateError(src, p, 'unterminated character constant');
  return { value, end: q + 1 };
}
