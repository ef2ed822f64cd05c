// Builds query-language syntax trees (query/syntax/ast.ts) for translated rules; the query
// engine's own printer turns them into text, so quoting and escaping are the language's, never
// hand-made here. Spans are empty: these trees were never text.
import type { Condition, ComparisonOp, Operand } from '../../query/syntax/ast.ts';

const NO_SPAN = { start: 0, end: 0 };

const text = (t: string): Operand => ({ kind: 'text', text: t, quoted: true, span: NO_SPAN });

export function compare(field: string, op: ComparisonOp, values: string[]): Condition {
  return { kind: 'compare', field, fieldSpan: NO_SPAN, op, values: values.map(text), span: NO_SPAN };
}

/** `field=*` (a value is present) or `field!=*` (absent or empty). */
export function present(field: string, yes: boolean): Condition {
  return { kind: 'compare', field, fieldSpan: NO_SPAN, op: yes ? '=' : '!=', values: [{ kind: 'wildcard', span: NO_SPAN }], span: NO_SPAN };
}

export function regexCompare(field: string, pattern: string, flags: string): Condition {
  return { kind: 'compare', field, fieldSpan: NO_SPAN, op: '=', values: [{ kind: 'regex', pattern, flags, span: NO_SPAN }], span: NO_SPAN };
}

/** A number comparison (`gt`, `gte`, `lt`, `lte`). */
export function numeric(field: string, op: '>' | '>=' | '<' | '<=', value: string): Condition {
  return { kind: 'compare', field, fieldSpan: NO_SPAN, op, values: [{ kind: 'text', text: value, quoted: false, span: NO_SPAN }], span: NO_SPAN };
}

export function search(t: string): Condition {
  return { kind: 'search', text: t, span: NO_SPAN };
}

export function regexSearch(pattern: string, flags: string): Condition {
  return { kind: 'regexSearch', pattern, flags, span: NO_SPAN };
}

export function cidr(field: string, range: string): Condition {
  return {
    kind: 'call',
    call: {
      name: 'cidr',
      nameSpan: NO_SPAN,
      args: [
        { value: { kind: 'word', text: field, span: NO_SPAN }, span: NO_SPAN },
        { value: { kind: 'string', text: range, span: NO_SPAN }, span: NO_SPAN },
      ],
      span: NO_SPAN,
    },
    span: NO_SPAN,
  };
}

/** AND of the items (nested ANDs merged; one item is itself). */
export function and(items: Condition[]): Condition {
  const flat = items.flatMap((c) => (c.kind === 'and' ? c.items : [c]));
  return flat.length === 1 ? flat[0]! : { kind: 'and', items: flat, span: NO_SPAN };
}

export function or(items: Condition[]): Condition {
  const flat = items.flatMap((c) => (c.kind === 'or' ? c.items : [c]));
  return flat.length === 1 ? flat[0]! : { kind: 'or', items: flat, span: NO_SPAN };
}

export function not(item: Condition): Condition {
  return item.kind === 'not' ? item.item : { kind: 'not', item, span: NO_SPAN };
}
