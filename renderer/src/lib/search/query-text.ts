// Pieces of query text the workspace writes or reads (query-language.md §1): value quoting, the filters
// added by clicking a value, @variables (detection and the service's substitution, so that positions the
// service reports after substitution can be mapped back onto what the user typed), and the conversion of
// the service's code point positions to the UTF-16 offsets of the editor. Pure: tests/ui/search-lib.test.ts.

const KEYWORDS = new Set(['and', 'or', 'not']);

/** `"…"` with backslash and double quote escaped (a backslash makes the next character literal, §1.1). */
export function quoteString(s: string): string {
  return `"${s.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/**
 * A value as query text: bare when it reads back as exactly one identifier or value token with the same
 * text (`web1`, `200`, `10.0.0.1`, `2026-01-01`), quoted otherwise. `*` is always quoted: bare `*` is the
 * wildcard, and a quoted one is too (§2), so a literal star cannot be matched by `=` at all.
 */
export function valueLiteral(v: string): string {
  if (/^[A-Za-z_][A-Za-z0-9_.-]*$/.test(v) && !KEYWORDS.has(v.toLowerCase())) return v;
  if (/^[0-9][A-Za-z0-9_.-]*$/.test(v)) return v;
  return quoteString(v);
}

/** True when `name` can be written as a field in a condition (an identifier of §1.1, not a keyword). */
export function isFieldName(name: string): boolean {
  return /^[\p{L}_][\p{L}\p{N}_.*-]*$/u.test(name) && !KEYWORDS.has(name.toLowerCase());
}

/**
 * The condition that keeps (or, negated, drops) rows whose `field` has this value, or null when the field
 * cannot be named in the language. An empty value means absent or empty: `f!=*` keeps those, `f=*` drops them.
 */
export function filterClause(field: string, value: string, negate = false): string | null {
  if (!isFieldName(field)) return null;
  if (value === '') return `${field}${negate ? '=' : '!='}*`;
  return `${field}${negate ? '!=' : '='}${valueLiteral(value)}`;
}

/**
 * Adds a condition to a query as a new stage: ` | clause` at the end. Every `|` starts a new conjunct and
 * event conditions apply before aggregation wherever they are written (§1.3, §1.9), so this narrows any
 * query, including `a=1 OR b=2` and `… | groupBy(x)`. An empty query or a lone `*` becomes the clause.
 */
export function appendFilter(query: string, clause: string): string {
  const q = query.trim();
  if (q === '' || q === '*') return clause;
  return `${q.replace(/\s*\|\s*$/, '')} | ${clause}`;
}

// ---- @variables (§1.7) --------------------------------------------------------------------------------

const NAME_START = /^[A-Za-z_]$/;
const NAME_PART = /^[A-Za-z0-9_]$/;
const WORD_CHAR = /^[\p{L}\p{Nd}_]$/u;

interface VarToken {
  name: string;
  /** Code point span of `@name` in the query. */
  start: number;
  end: number;
}

function scanVariables(cs: string[]): VarToken[] {
  const out: VarToken[] = [];
  let quote: string | undefined;
  for (let i = 0; i < cs.length; i++) {
    const c = cs[i]!;
    if (quote !== undefined) {
      if (c === '\\') i++;
      else if (c === quote) quote = undefined;
      continue;
    }
    if (c === '"' || c === "'") quote = c;
    else if (c === '@' && NAME_START.test(cs[i + 1] ?? '') && !(i > 0 && WORD_CHAR.test(cs[i - 1]!))) {
      let end = i + 2;
      while (end < cs.length && NAME_PART.test(cs[end]!)) end++;
      out.push({ name: cs.slice(i + 1, end).join(''), start: i, end });
      i = end - 1;
    }
  }
  return out;
}

/** The distinct `@names` of a query, in order of first use (the same rules as the service's substitution). */
export function findVariables(query: string): string[] {
  if (!query.includes('@')) return [];
  return [...new Set(scanVariables(Array.from(query)).map((t) => t.name))];
}

export interface Substitution {
  text: string;
  /**
   * Maps a code point position in `text` to one in the original query. A position inside a substituted
   * value maps to the start of its `@name` (or, with `asEnd`, to its end), so a span covers the whole name.
   */
  toOriginal(pos: number, asEnd?: boolean): number;
}

/**
 * What the service does with `variables` before parsing (an empty value becomes `*`; names without a
 * value stay), plus the position map back to the original text.
 */
export function substituteVariables(query: string, values: ReadonlyMap<string, string>): Substitution {
  const cs = Array.from(query);
  const pieces: Array<{ at: number; origStart: number; origEnd: number; len: number }> = [];
  let text = '';
  let last = 0;
  let outLen = 0;
  for (const t of scanVariables(cs)) {
    const v = values.get(t.name);
    if (v === undefined) continue;
    const repl = v === '' ? '*' : v;
    const before = cs.slice(last, t.start).join('');
    text += before;
    outLen += t.start - last;
    const len = Array.from(repl).length;
    pieces.push({ at: outLen, origStart: t.start, origEnd: t.end, len });
    text += repl;
    outLen += len;
    last = t.end;
  }
  text += cs.slice(last).join('');
  return {
    text,
    toOriginal(pos: number, asEnd = false): number {
      let shift = 0;
      for (const p of pieces) {
        if (pos <= p.at) break;
        if (pos < p.at + p.len) return asEnd ? p.origEnd : p.origStart;
        shift += p.origEnd - p.origStart - p.len;
      }
      return pos + shift;
    },
  };
}

// ---- positions ------------------------------------------------------------------------------------------

/** The UTF-16 offset (what JavaScript strings and CodeMirror count) of a code point index (what the service reports). */
export function codePointToOffset(text: string, cp: number): number {
  let off = 0;
  for (let i = 0; i < cp && off < text.length; i++) {
    const c = text.charCodeAt(off);
    off += c >= 0xd800 && c <= 0xdbff && off + 1 < text.length ? 2 : 1;
  }
  return off;
}

/** The code point index of a UTF-16 offset. */
export function offsetToCodePoint(text: string, off: number): number {
  return Array.from(text.slice(0, off)).length;
}

/**
 * Where to underline an error the service reported: its code point span in the substituted text, mapped
 * back onto the query as typed and converted to UTF-16 offsets. A zero-width span stays zero-width.
 */
export function errorRange(query: string, values: ReadonlyMap<string, string>, pos: { start: number; end: number }): { from: number; to: number } {
  const sub = substituteVariables(query, values);
  const a = sub.toOriginal(pos.start);
  const b = pos.end === pos.start ? a : Math.max(a, sub.toOriginal(pos.end, true));
  const from = codePointToOffset(query, a);
  return { from, to: Math.max(from, codePointToOffset(query, b)) };
}
