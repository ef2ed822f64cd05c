// Dictionaries: user-managed lookup tables that match() reads (query-language.md §3.11). The calls of
// /api/v1/dictionaries and the pure helpers behind the Dictionaries page (unit-tested in
// tests/ui/dictionaries.test.ts). Every call throws ApiError with the service's own sentence.
import { del, enc, get, post, put, readEnvelope, send, type Id } from './api.ts';
import type { Scope } from './admin-scope.ts';
import { splitList } from './forms.ts';
import { fileNamePart } from './search/export.ts';
import { quoteString } from './search/query-text.ts';

export interface Dictionary {
  id: string;
  name: string;
  description: string;
  fractal_id: string | null;
  prism_id: string | null;
  is_global: boolean;
  columns: string[];
  /** The first is the row identity (primary key); match(column=) may use any of them. */
  key_columns: string[];
  row_count: number;
  created_by: string;
  created_at: string;
  updated_at: string;
}

export interface DictionaryInput {
  name: string;
  description?: string;
  columns: string[];
  key_columns?: string[];
  fractal_id?: string;
  prism_id?: string;
  is_global?: true;
}

export type DictionaryRow = Record<string, string>;

export interface RowsPage {
  rows: DictionaryRow[];
  /** Rows matching the search before paging (X-Total-Count). */
  total: number;
}

export interface Written {
  written: number;
  row_count: number;
}

/** "?fractal_id=…" or "?prism_id=…" for a page's scope; "" for the session's selection. */
export function scopeParams(scope: Scope | null): { fractal_id: string } | { prism_id: string } | Record<never, never> {
  if (!scope) return {};
  return scope.type === 'fractal' ? { fractal_id: scope.id } : { prism_id: scope.id };
}

function query(params: Record<string, string | number | boolean | undefined>): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') p.set(k, String(v));
  const s = p.toString();
  return s ? `?${s}` : '';
}

export const dictionaries = {
  list: (scope: Scope | null) => get<Dictionary[]>(`/dictionaries${query(scopeParams(scope))}`),
  get: (id: Id) => get<Dictionary>(`/dictionaries/${enc(id)}`),
  create: (body: DictionaryInput) => post<Dictionary>('/dictionaries', body),
  update: (id: Id, body: Partial<Pick<Dictionary, 'name' | 'description' | 'columns' | 'key_columns'>>) =>
    put<Dictionary>(`/dictionaries/${enc(id)}`, body),
  remove: (id: Id) => del(`/dictionaries/${enc(id)}`),

  rows: async (id: Id, opts: { limit: number; offset: number; search?: string; signal?: AbortSignal }): Promise<RowsPage> => {
    const res = await send('GET', `/dictionaries/${enc(id)}/rows${query({ limit: opts.limit, offset: opts.offset, search: opts.search?.trim() })}`, {
      signal: opts.signal,
    });
    const rows = (await readEnvelope<DictionaryRow[]>(res)) ?? [];
    const header = Number(res.headers.get('x-total-count'));
    return { rows, total: Number.isFinite(header) && res.headers.has('x-total-count') ? header : opts.offset + rows.length };
  },
  writeRows: (id: Id, rows: DictionaryRow[], replace = false) =>
    post<Written>(`/dictionaries/${enc(id)}/rows`, replace ? { rows, replace } : { rows }),
  deleteRow: (id: Id, key: string) => del(`/dictionaries/${enc(id)}/rows/${encodeURIComponent(key)}`),
  importCsv: (id: Id, csv: string | Blob, opts: { replace: boolean; addColumns: boolean }) =>
    post<Written>(`/dictionaries/${enc(id)}/import${query({ replace: opts.replace, add_columns: opts.addColumns || undefined })}`, undefined, {
      raw: { type: 'text/csv', data: csv },
    }),
};

/** The dictionary's primary key column (its row identity). */
export const primaryKey = (d: Pick<Dictionary, 'columns' | 'key_columns'>): string => d.key_columns[0] ?? d.columns[0] ?? '';

/** "own" for the scope's own dictionaries, else "global". */
export const scopeLabel = (d: Pick<Dictionary, 'is_global'>): 'own' | 'global' => (d.is_global ? 'global' : 'own');

/**
 * A ready-to-paste query: `* | match(dict="threat_intel", field=src_ip, column=ip, include=[threat_score,category])`.
 * `include` is every column but the lookup key (the key itself when there is no other: match() needs one).
 */
export function usageQuery(d: Pick<Dictionary, 'name' | 'columns' | 'key_columns'>, column: string, field: string): string {
  const others = d.columns.filter((c) => c !== column);
  const include = others.length > 0 ? others : [column];
  const f = field.trim() || column;
  return `* | match(dict=${quoteString(d.name)}, field=${f}, column=${column}, include=[${include.join(',')}])`;
}

/**
 * The create form's columns and key columns: comma- or line-separated names, trimmed, repeats dropped.
 * Key columns default to the first column and must be columns; the first key is the primary key.
 */
export function parseColumns(columnsText: string, keysText: string): { ok: true; columns: string[]; keys: string[] } | { ok: false; error: string } {
  const columns = splitList(columnsText);
  if (columns.length === 0) return { ok: false, error: 'Enter at least one column name.' };
  const keys = splitList(keysText);
  const unknown = keys.filter((k) => !columns.includes(k));
  if (unknown.length > 0) {
    return { ok: false, error: `Key column${unknown.length === 1 ? '' : 's'} ${unknown.join(', ')} must be among the columns.` };
  }
  return { ok: true, columns, keys: keys.length > 0 ? keys : [columns[0]!] };
}

/** The CSV file name of an export: "dictionary-threat_intel.csv", safe on every file system. */
export function exportName(name: string): string {
  return `dictionary-${fileNamePart(name, 'rows')}.csv`;
}
