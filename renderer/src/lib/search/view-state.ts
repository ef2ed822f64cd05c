// The search view in the address: "#/search?q=…&t=15m&scope=fractal:<id>&v.name=value". The query, range,
// scope and variable values are all there, so a copied link or a reload shows the same view. The range is
// `t=<preset>` (15m 1h 4h 24h 7d 30d), `t=all`, or `from=`/`to=` as RFC 3339 UTC. Pure: tests/ui/search-lib.test.ts.
import { DEFAULT_PRESET, isPreset, type RangeSpec } from './time.ts';

export interface ScopeRef {
  type: 'fractal' | 'prism';
  id: string;
}

export interface SearchView {
  q: string;
  range: RangeSpec;
  scope: ScopeRef | null;
  vars: Record<string, string>;
}

export const SEARCH_PATH = '/search';

export function defaultView(): SearchView {
  return { q: '', range: { kind: 'relative', preset: DEFAULT_PRESET }, scope: null, vars: {} };
}

/** Reads the view from the route's query parameters; anything missing or malformed takes its default. */
export function viewFromParams(p: Record<string, string>): SearchView {
  const view = defaultView();
  if (typeof p.q === 'string') view.q = p.q;
  if (p.t === 'all') view.range = { kind: 'all' };
  else if (p.t && isPreset(p.t)) view.range = { kind: 'relative', preset: p.t };
  else if (p.from && p.to) {
    const start = new Date(p.from);
    const end = new Date(p.to);
    if (!Number.isNaN(start.getTime()) && !Number.isNaN(end.getTime()) && start.getTime() <= end.getTime()) {
      view.range = { kind: 'absolute', start, end };
    }
  }
  const m = /^(fractal|prism):(.+)$/.exec(p.scope ?? '');
  if (m) view.scope = { type: m[1] as ScopeRef['type'], id: m[2]! };
  for (const [k, v] of Object.entries(p)) if (/^v\.[A-Za-z_][A-Za-z0-9_]*$/.test(k)) view.vars[k.slice(2)] = v;
  return view;
}

/** The query string of a view (no leading "?"), in a stable order so equal views give equal strings. */
export function viewToParams(view: SearchView): string {
  const p = new URLSearchParams();
  p.set('q', view.q);
  if (view.range.kind === 'relative') p.set('t', view.range.preset);
  else if (view.range.kind === 'all') p.set('t', 'all');
  else {
    p.set('from', view.range.start.toISOString());
    p.set('to', view.range.end.toISOString());
  }
  if (view.scope) p.set('scope', `${view.scope.type}:${view.scope.id}`);
  for (const k of Object.keys(view.vars).sort()) p.set(`v.${k}`, view.vars[k]!);
  // Spaces as %20 rather than "+": the hash is read back by URLSearchParams either way, but %20 is what a
  // person pasting the link into a chat or a ticket expects to see survive.
  return p.toString().replace(/\+/g, '%20');
}

export function viewHash(view: SearchView): string {
  return `#${SEARCH_PATH}?${viewToParams(view)}`;
}

export function sameView(a: SearchView, b: SearchView): boolean {
  return viewToParams(a) === viewToParams(b);
}
