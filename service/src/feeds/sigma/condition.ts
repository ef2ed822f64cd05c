// A rule's `condition` (Sigma rules specification, "Condition"): search identifiers joined with
// `and`, `or`, `not` and parentheses, and `1 of` / `all of` over `them` or a pattern with `*`
// wildcards. Precedence, least binding first: or, and, not, `x of`, parentheses. Identifiers
// starting with `_` are left out of `them`. A list of conditions is their OR. Aggregations
// (`| count() > 5`) and `near` are Sigma 1 correlation syntax, which has no translation.
import type { Condition } from '../../query/syntax/ast.ts';
import { and, not, or } from './query-ast.ts';
import { SigmaSkip } from './skip.ts';

type Token = { t: '(' | ')' } | { t: 'word'; text: string };

function tokenize(text: string): Token[] {
  const out: Token[] = [];
  const re = /\s*(?:([()])|([^\s()]+))/gy;
  let m: RegExpExecArray | null;
  let end = 0;
  while ((m = re.exec(text)) !== null && m[0] !== '') {
    end = re.lastIndex;
    if (m[1]) out.push({ t: m[1] as '(' | ')' });
    else if (m[2] === '|' || m[2]!.startsWith('|')) throw new SigmaSkip('unsupported_condition', `aggregation in the condition ("${text.slice(m.index).trim()}") is not supported; use a correlation rule`);
    else out.push({ t: 'word', text: m[2]! });
  }
  if (text.slice(end).trim() !== '') throw new SigmaSkip('unsupported_condition', `the condition "${text}" cannot be read`);
  return out;
}

/** Glob of `1 of selection_*` over search identifiers. */
function globMatches(pattern: string, names: string[]): string[] {
  const re = new RegExp(`^${pattern.split('*').map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
  return names.filter((n) => re.test(n));
}

/**
 * The condition text as a query condition, each search identifier standing for the condition
 * its selection translates to.
 */
export function translateCondition(text: string, selections: Map<string, Condition>): Condition {
  const tokens = tokenize(text);
  let i = 0;
  const peekWord = (): string | null => {
    const tok = tokens[i];
    return tok && tok.t === 'word' ? tok.text.toLowerCase() : null;
  };
  const names = [...selections.keys()];
  const selection = (name: string): Condition => {
    const c = selections.get(name);
    if (!c) throw new SigmaSkip('unknown_selection', `the condition names "${name}", which is not a search identifier of the rule`);
    return c;
  };

  const orExpr = (): Condition => {
    const items = [andExpr()];
    while (peekWord() === 'or') {
      i++;
      items.push(andExpr());
    }
    return or(items);
  };
  const andExpr = (): Condition => {
    const items = [notExpr()];
    while (peekWord() === 'and') {
      i++;
      items.push(notExpr());
    }
    return and(items);
  };
  const notExpr = (): Condition => {
    if (peekWord() === 'not') {
      i++;
      return not(notExpr());
    }
    return primary();
  };
  const primary = (): Condition => {
    const tok = tokens[i];
    if (!tok) throw new SigmaSkip('unsupported_condition', `the condition "${text}" ends too early`);
    if (tok.t === '(') {
      i++;
      const inner = orExpr();
      if (tokens[i]?.t !== ')') throw new SigmaSkip('unsupported_condition', `the condition "${text}" has an unclosed parenthesis`);
      i++;
      return inner;
    }
    if (tok.t !== 'word') throw new SigmaSkip('unsupported_condition', `the condition "${text}" has an unexpected ")"`);
    const word = tok.text;
    const lower = word.toLowerCase();
    if (lower === 'near') throw new SigmaSkip('unsupported_condition', '"near" is not supported; use a correlation rule');
    const next = tokens[i + 1];
    if (next?.t === 'word' && next.text.toLowerCase() === 'of') {
      const target = tokens[i + 2];
      if (!target || target.t !== 'word') throw new SigmaSkip('unsupported_condition', `"${word} of" needs "them" or a pattern`);
      i += 3;
      const matched = target.text.toLowerCase() === 'them' ? names.filter((n) => !n.startsWith('_')) : globMatches(target.text, names);
      if (matched.length === 0) throw new SigmaSkip('unknown_selection', `"${word} of ${target.text}" matches no search identifier`);
      const conditions = matched.map(selection);
      if (lower === '1' || lower === 'any') return or(conditions);
      if (lower === 'all') return and(conditions);
      throw new SigmaSkip('unsupported_condition', `"${word} of" is not supported (only "1 of" and "all of")`);
    }
    if (lower === 'and' || lower === 'or' || lower === 'of') throw new SigmaSkip('unsupported_condition', `the condition "${text}" has "${word}" where a search identifier belongs`);
    i++;
    return selection(word);
  };

  const result = orExpr();
  if (i < tokens.length) throw new SigmaSkip('unsupported_condition', `the condition "${text}" has unexpected text after it`);
  return result;
}
