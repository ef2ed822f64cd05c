// @variable substitution (query-language.md §1.7) and the query size limit (§5).

export interface QueryVariable {
  name: string;
  value: string;
}

const NAME_START = /^[A-Za-z_]$/;
const NAME_PART = /^[A-Za-z0-9_]$/;
/** Characters after which `@` is part of a word (`user@host`), not a variable. */
const WORD_CHAR = /^[\p{L}\p{Nd}_]$/u;

/**
 * Replaces `@name` by the variable's value as raw query text (an empty value becomes `*`). Text in
 * quotes is left alone (a backslash there protects the next character), as are an `@` right after a
 * letter, digit or `_` and names without a supplied variable. The replacement is not rescanned.
 */
export function substituteVariables(query: string, variables: readonly QueryVariable[]): string {
  if (variables.length === 0 || !query.includes('@')) return query;
  const values = new Map<string, string>();
  for (const v of variables) values.set(v.name, v.value);
  const cs = Array.from(query);
  let out = '';
  let quote: string | undefined;
  for (let i = 0; i < cs.length; i++) {
    const c = cs[i];
    if (quote !== undefined) {
      out += c;
      if (c === '\\' && i + 1 < cs.length) out += cs[++i];
      else if (c === quote) quote = undefined;
      continue;
    }
    if (c === '"' || c === "'") {
      quote = c;
    } else if (c === '@' && NAME_START.test(cs[i + 1] ?? '') && !(i > 0 && WORD_CHAR.test(cs[i - 1]))) {
      // The name is the longest match, so `@hostname` never means `@host` followed by `name`.
      let end = i + 2;
      while (end < cs.length && NAME_PART.test(cs[end])) end++;
      const value = values.get(cs.slice(i + 1, end).join(''));
      if (value !== undefined) {
        out += value === '' ? '*' : value;
        i = end - 1;
        continue;
      }
    }
    out += c;
  }
  return out;
}

export const MAX_QUERY_BYTES = 10_000;

/**
 * §5: the query may hold at most 10,000 UTF-8 bytes, before and after substitution. Returns the
 * error message (the count is in bytes, as the limit is), or null when both fit.
 */
export function checkQuerySize(original: string, substituted: string): string | null {
  const before = Buffer.byteLength(original, 'utf8');
  if (before > MAX_QUERY_BYTES) return `Query too long (${before} chars, max ${MAX_QUERY_BYTES})`;
  const after = Buffer.byteLength(substituted, 'utf8');
  if (after > MAX_QUERY_BYTES) return `Query too long after variable expansion (${after} chars, max ${MAX_QUERY_BYTES})`;
  return null;
}
