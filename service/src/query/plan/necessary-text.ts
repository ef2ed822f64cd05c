// Texts every event a query keeps must contain: read from the query's leading filters, before any
// command can rename or compute a field. Search in place uses them to drop archived rows by a
// cheap substring test on the stored text before the engine parses the rest into the `fields`
// JSON (parsing is what reading an archive costs: 1.4 million rows took about 6 s of CPU to parse,
// 0.3 s to test for a user name first).
import type { Condition, Query } from '../syntax/ast.ts';

/** One conjunct: the event's stored text (`record`: raw; `fields`: the fields' JSON text) contains one of `anyOf`, compared case-insensitively. */
export interface NecessaryText {
  on: 'record' | 'fields';
  anyOf: string[];
}

/** Names whose values are not in the stored text (§1.7). */
const RESERVED = new Set(['timestamp', 'log_id', 'fractal_id', 'norm_log', 'raw_log', 'normalizer']);

/**
 * A value is used only when any JSON writer prints it as itself: printable ASCII without quote,
 * backslash, slash or `< > &` (which writers may escape), and not a signed or decimal number (a
 * number may print another way: `1.50`, `1e3`); at least two characters, or it selects nothing.
 */
const PLAIN = /^[A-Za-z0-9_@:%#=+,;!?()[\]{}|~^$' .-]{2,}$/;
const NUMBER_WITH_FORM = /^[-+]|^[\d.]*[.eE][\d.eE+-]*$/;
const plain = (s: string): boolean => PLAIN.test(s) && !NUMBER_WITH_FORM.test(s);

export function necessaryTexts(ast: Query): NecessaryText[] {
  const out: NecessaryText[] = [];
  for (const stage of ast.stages) {
    if (stage.kind !== 'filter') break;
    out.push(...ofCondition(stage.condition));
  }
  return out;
}

function ofCondition(c: Condition): NecessaryText[] {
  switch (c.kind) {
    case 'and':
      return c.items.flatMap(ofCondition);
    case 'search':
      return plain(c.text) ? [{ on: 'record', anyOf: [c.text] }] : [];
    case 'compare': {
      if (!['=', '=~', '=^', '=$'].includes(c.op) || RESERVED.has(c.field.toLowerCase())) return [];
      const texts = c.values.map((v) => (v.kind === 'text' ? v.text : null));
      if (texts.length === 0 || texts.some((t) => t === null || !plain(t))) return [];
      return [{ on: 'fields', anyOf: texts as string[] }];
    }
    default:
      return [];
  }
}
