// What the pages of notebooks and dashboards (documents of a fractal or prism, edited together
// live) share: their time ranges as the service resolves them, variable names, the initials and
// colour of the people in a presence list, and the live events every document has (its variables,
// its fields, its deletion). Pure: tests/ui/notebooks.test.ts, tests/ui/dashboards.test.ts.

import type { Selection } from './api.ts';
import type { Applied } from './live/follow.ts';

/** The fractal or prism a request names, as the API's query strings and bodies take it. */
export interface Scoped {
  fractal_id?: string;
  prism_id?: string;
}

/** A selection (or a document's scope) as request parameters; {} when there is none. */
export const scopeParams = (sel: Pick<Selection, 'type' | 'id'> | null | undefined): Scoped =>
  !sel ? {} : sel.type === 'fractal' ? { fractal_id: String(sel.id) } : { prism_id: String(sel.id) };

export interface Variable {
  name: string;
  value: string;
}

/** A document's stored range: a preset, `all`, or `custom` with RFC 3339 start and end. */
export interface RangeFields {
  time_range: string;
  start: string | null;
  end: string | null;
}

/** The time ranges of a document as the query API takes them (the service resolves them the same way). */
export const TIME_RANGES: Array<{ id: string; label: string }> = [
  { id: '15m', label: 'Last 15 minutes' },
  { id: '1h', label: 'Last hour' },
  { id: '4h', label: 'Last 4 hours' },
  { id: '24h', label: 'Last 24 hours' },
  { id: '7d', label: 'Last 7 days' },
  { id: '30d', label: 'Last 30 days' },
  { id: 'all', label: 'All data' },
  { id: 'custom', label: 'Custom range' },
];

export function rangeLabel(nb: RangeFields): string {
  if (nb.time_range === 'custom' && nb.start && nb.end) return `${nb.start.replace('T', ' ').slice(0, 16)} → ${nb.end.replace('T', ' ').slice(0, 16)} UTC`;
  return TIME_RANGES.find((r) => r.id === nb.time_range)?.label ?? nb.time_range;
}

/** Variables as typed in the bar: "name" must be a name (as @name in a query). */
export const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Initials for a presence avatar: "ana" → "AN", "Jane Doe" → "JD". */
export function initials(name: string): string {
  const words = name.replace(/\(API key\)$/, '').trim().split(/[\s._-]+/).filter(Boolean);
  if (words.length >= 2) return (words[0]![0]! + words[1]![0]!).toUpperCase();
  return (words[0] ?? '?').slice(0, 2).toUpperCase();
}

/** A stable hue per name, so a colleague keeps the same colour across pages and sessions. */
export function hueOf(name: string): number {
  let h = 0;
  for (const c of name) h = (h * 31 + c.codePointAt(0)!) % 360;
  return h;
}

const PRESET_MS: Record<string, number> = { '15m': 900_000, '1h': 3_600_000, '4h': 14_400_000, '24h': 86_400_000, '7d': 604_800_000, '30d': 2_592_000_000 };

/**
 * The window the query editor's help (fields, top values, validation) looks at: the document's range
 * as the service resolves it, except that "all data" looks at the last 30 days (field names, not rows).
 */
export function queryWindow(nb: RangeFields, now = new Date()): { start: string; end: string } {
  if (nb.time_range === 'custom' && nb.start && nb.end) return { start: nb.start, end: nb.end };
  const ms = PRESET_MS[nb.time_range] ?? PRESET_MS['30d']!;
  return { start: new Date(now.getTime() - ms).toISOString(), end: now.toISOString() };
}

/**
 * The events every kind of document ("notebook", "dashboard") has: its variables, its own fields
 * (`<kind>_updated`) and its deletion (`<kind>_deleted`). Variables and fields apply only when newer
 * than the page's version (its own echo and replays change nothing). Null for any other event: the
 * kind's model applies those.
 */
export function applyDocumentEvent<D extends { version: number; variables: Variable[] }>(kind: string, doc: D, type: string, data: any): Applied<D> | null {
  switch (type) {
    case 'variables_updated':
      if (data.version <= doc.version) return { doc };
      return { doc: { ...doc, variables: data.variables, version: data.version } };
    case `${kind}_updated`: {
      if (data.version <= doc.version) return { doc };
      const { id: _id, ...fields } = data;
      return { doc: { ...doc, ...fields } };
    }
    case `${kind}_deleted`:
      return { deleted: true, by: data.by ?? 'someone' };
    default:
      return null;
  }
}
