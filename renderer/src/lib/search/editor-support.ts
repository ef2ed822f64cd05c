// What the query editor needs from the service, for any page that hosts it (the search workspace, the
// alert editor): completion (commands, the scope's fields, a field's top values; cached a minute per
// scope) and validation, both for the scope and time window the page gives.
import type { CompletionData } from './language.ts';
import { loadFieldStats, loadFields, loadReference, validateQuery, type ScopeParams, type Validation } from './query-client.ts';

export interface EditorContext {
  scope: () => ScopeParams;
  /** The time window fields and top values are read over. */
  window: () => { start: string; end: string };
  /** @variables the query uses, with their values (none on pages without variables). */
  variables?: (query: string) => Array<{ name: string; value: string }>;
}

const key = (s: ScopeParams) => JSON.stringify(s);

export function editorSupport(c: EditorContext): {
  completion: CompletionData;
  validate: (q: string, signal: AbortSignal) => Promise<Validation>;
  refreshFields: () => void;
} {
  let fieldsCache: { key: string; at: number; p: Promise<Array<{ name: string; type?: string; count?: number }>> } | null = null;
  const topCache = new Map<string, { at: number; p: Promise<Array<{ value: string; count: number }>> }>();
  const completion: CompletionData = {
    commands: async () => (await loadReference()).commands,
    fields: () => {
      const k = key(c.scope());
      if (!fieldsCache || fieldsCache.key !== k || Date.now() - fieldsCache.at > 60_000) {
        const w = c.window();
        const p = loadFields(c.scope(), w.start, w.end).then(
          (d) => [...d.fields, ...d.reserved.filter((r) => !d.fields.some((f) => f.name === r)).map((name) => ({ name, type: 'reserved' }))],
          (err) => {
            fieldsCache = null;
            throw err;
          },
        );
        fieldsCache = { key: k, at: Date.now(), p };
      }
      return fieldsCache.p;
    },
    topValues: (field: string) => {
      const k = `${key(c.scope())}|${field}`;
      const hit = topCache.get(k);
      if (hit && Date.now() - hit.at < 60_000) return hit.p;
      const w = c.window();
      const p = loadFieldStats({ query: '', field, limit: 20, ...w, ...c.scope() }).then(
        (s) => s.top ?? [],
        (err) => {
          topCache.delete(k);
          throw err;
        },
      );
      topCache.set(k, { at: Date.now(), p });
      return p;
    },
  };
  const validate = (q: string, signal: AbortSignal) => {
    const vars = c.variables?.(q) ?? [];
    return validateQuery({ query: q, ...c.window(), ...c.scope(), ...(vars.length ? { variables: vars } : {}) }, signal);
  };
  return { completion, validate, refreshFields: () => (fieldsCache = null) };
}
