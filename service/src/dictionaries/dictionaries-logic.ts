// What may be done with a dictionary, and the checks on what is written into one. Reading one
// (listing it, its rows, match() in a query) needs what querying its fractal or prism needs;
// changing one needs the analyst role there (an API key: `alert_manage`, as for alerts, which
// fill dictionaries too). A global dictionary is read by everyone and changed by global admins.
import { enforceScopeRule } from '../auth/access.ts';
import { assertReadable, ownerFor as ownedBy, ownerScope, type Owner } from '../auth/owned.ts';
import type { Principal } from '../auth/principal.ts';
import type { Context } from '../context.ts';
import { badRequest, conflict, forbidden, notFound } from '../http/errors.ts';
import { CsvError, parseCsv } from '../shared/csv.ts';
import type { Dictionary, DictionaryRow } from './dictionaries-store.ts';

export const MAX_COLUMNS = 64;
export const MAX_ROWS = 1_000_000;
/** Rows one JSON write may carry (a CSV import may carry up to MAX_ROWS). */
export const MAX_ROWS_PER_WRITE = 10_000;
const MAX_VALUE_LENGTH = 65_536;
const NAME = /^[\p{L}\p{N}_][\p{L}\p{N}_.-]{0,99}$/u;
/** Column names are field names of the query language: match() adds them under their own names. */
const COLUMN = /^[\p{L}_][\p{L}\p{N}_.-]{0,99}$/u;

export type DictionaryOwner = Owner;

export function view(d: Dictionary, rowCount: number) {
  return {
    id: d.id,
    name: d.name,
    description: d.description,
    fractal_id: d.fractal_id,
    prism_id: d.prism_id,
    is_global: d.fractal_id === null && d.prism_id === null,
    columns: d.columns,
    key_columns: d.key_columns,
    row_count: rowCount,
    created_by: d.created_by,
    created_at: d.created_at,
    updated_at: d.updated_at,
  };
}

/** The dictionary `id` if the caller may read it; otherwise 404, so its existence is not revealed. */
export function readable(ctx: Context, p: Principal | null, id: string): Dictionary {
  const d = ctx.dictionaries.get(id);
  const missing = notFound(`Dictionary ${id} not found.`);
  if (!d) throw missing;
  // Everyone's dictionaries are read as a query reads: an API key needs its `query` permission.
  if (p?.kind === 'api_key' && !p.permissions.query) throw forbidden('This API key lacks the "query" permission.');
  assertReadable(ctx, p, d, missing);
  return d;
}

/** Refuses unless the caller may change dictionaries owned by `owner`. */
export function mayChange(ctx: Context, p: Principal, owner: DictionaryOwner): void {
  const scope = ownerScope(owner);
  if (!scope) {
    if (p.kind !== 'user' || p.user.is_admin !== 1) throw forbidden('Only administrators can change global dictionaries.');
    return;
  }
  enforceScopeRule(p, { scope: scope.type, role: 'analyst', keyPermission: 'alert_manage' }, ctx.roles.resolve(p, scope.type, scope.id), {
    needs: 'Changing dictionaries needs',
  });
}

/** The dictionary `id` if the caller may change it (404 when they may not even read it). */
export function writable(ctx: Context, p: Principal, id: string): Dictionary {
  const d = readable(ctx, p, id);
  mayChange(ctx, p, d);
  return d;
}

/** Where a new dictionary goes: the named fractal or prism, everyone (`is_global`), else the session's selection. */
export function ownerFor(ctx: Context, p: Principal, body: { fractal_id?: string; prism_id?: string; is_global?: boolean }): DictionaryOwner {
  return ownedBy(ctx, p, body, 'A dictionary');
}

export function checkName(ctx: Context, owner: DictionaryOwner, name: string, except?: string): string {
  const n = name.trim();
  if (!NAME.test(n)) {
    throw badRequest('The field "name" must be 1 to 100 letters, digits, "_", "." or "-", starting with a letter, digit or "_" (it is written in queries: match(dict="name")).');
  }
  if (ctx.dictionaries.nameTaken(owner, n, except)) throw conflict(`A dictionary named "${n}" already exists here.`);
  return n;
}

/** Validated columns and key columns: unique names, keys among the columns, at least one key. */
export function checkColumns(columns: string[], keyColumns: string[] | undefined): { columns: string[]; key_columns: string[] } {
  const cols = columns.map((c) => c.trim());
  if (cols.length === 0) throw badRequest('The field "columns" must list at least one column.');
  if (cols.length > MAX_COLUMNS) throw badRequest(`The field "columns" lists ${cols.length} columns; a dictionary has at most ${MAX_COLUMNS}.`);
  const seen = new Set<string>();
  for (const c of cols) {
    if (!COLUMN.test(c)) {
      throw badRequest(`The column name "${c}" is not a field name: use letters, digits, "_", "." or "-", starting with a letter or "_" (at most 100).`);
    }
    if (seen.has(c)) throw badRequest(`The column "${c}" is listed twice in "columns".`);
    seen.add(c);
  }
  const keys = (keyColumns ?? [cols[0]]).map((c) => c.trim());
  if (keys.length === 0) throw badRequest('The field "key_columns" must name at least one column (the first identifies a row).');
  for (const k of keys) if (!seen.has(k)) throw badRequest(`The key column "${k}" is not one of the columns (${cols.join(', ')}).`);
  if (new Set(keys).size !== keys.length) throw badRequest('The field "key_columns" names a column twice.');
  return { columns: cols, key_columns: keys };
}

/**
 * Rows as written: every value text, only the columns given (a write keeps the others' stored
 * values, see writeRows). A row needs its primary key; an unknown column is refused unless
 * `addColumns`, which appends it to the returned columns.
 */
export function normalizeRows(
  d: Dictionary,
  input: Array<Record<string, unknown>>,
  opts: { addColumns: boolean; where: (i: number) => string },
): { rows: DictionaryRow[]; columns: string[] } {
  const columns = [...d.columns];
  const known = new Set(columns);
  const key = d.key_columns[0];
  const rows = input.map((r, i) => {
    if (r === null || typeof r !== 'object' || Array.isArray(r)) throw badRequest(`${opts.where(i)} must be an object of column values.`);
    for (const c of Object.keys(r)) {
      if (known.has(c)) continue;
      if (!opts.addColumns) {
        throw badRequest(`${opts.where(i)} has the column "${c}", which the dictionary "${d.name}" does not have (columns: ${columns.join(', ')}).`);
      }
      checkColumns([...columns, c], [key]);
      columns.push(c);
      known.add(c);
    }
    const row: DictionaryRow = {};
    for (const c of Object.keys(r)) {
      const v = r[c];
      if (v === undefined || v === null) row[c] = '';
      else if (typeof v === 'string') row[c] = v;
      else if (typeof v === 'number' || typeof v === 'boolean') row[c] = String(v);
      else throw badRequest(`${opts.where(i)}: the value of "${c}" must be text, a number or true/false.`);
      if (row[c].length > MAX_VALUE_LENGTH) throw badRequest(`${opts.where(i)}: the value of "${c}" is longer than ${MAX_VALUE_LENGTH} characters.`);
    }
    if (!row[key]) throw badRequest(`${opts.where(i)} has no value for the key column "${key}".`);
    return row;
  });
  return { rows, columns };
}

/**
 * Writes rows: added or updated by primary key, or (`replace`) the dictionary becomes exactly
 * these rows, switched to in one step. Rows apply in order; a column a row leaves out keeps the
 * value the key had (empty for a new key or in a replace), so a CSV of `ip,score` updates scores
 * and keeps categories. New columns (CSV `add_columns`) join the definition.
 */
export function writeRows(
  ctx: Context,
  d: Dictionary,
  rows: DictionaryRow[],
  opts: { replace: boolean; columns?: string[] },
): Promise<{ written: number; row_count: number }> {
  // One write at a time per dictionary: two replaces must not fill the same new generation.
  const previous = writing.get(d.id) ?? Promise.resolve();
  const run = previous.then(() => writeNow(ctx, ctx.dictionaries.get(d.id) ?? d, rows, opts));
  const settled = run.catch(() => undefined);
  writing.set(d.id, settled);
  void settled.then(() => {
    if (writing.get(d.id) === settled) writing.delete(d.id);
  });
  return run;
}

const writing = new Map<string, Promise<unknown>>();

async function writeNow(
  ctx: Context,
  d: Dictionary,
  rows: DictionaryRow[],
  opts: { replace: boolean; columns?: string[] },
): Promise<{ written: number; row_count: number }> {
  const key = d.key_columns[0];
  const columns = opts.columns ?? d.columns;
  const keys = [...new Set(rows.map((r) => r[key]))];
  const existing = opts.replace ? 0 : ((await ctx.dictionaries.rowCounts([d])).get(d.id) ?? 0);
  if (existing + keys.length > MAX_ROWS) {
    throw badRequest(`The dictionary "${d.name}" would hold more than ${MAX_ROWS.toLocaleString('en-US')} rows; remove some first or replace its rows.`);
  }
  const generation = opts.replace ? d.generation + 1 : d.generation;
  // Left-out columns keep what the key held: read those keys' rows only when some row leaves one out.
  const partial = !opts.replace && rows.some((r) => Object.keys(r).length < columns.length);
  const merged = new Map<string, DictionaryRow>(partial ? await ctx.dictionaries.rowsByKey(d, keys) : []);
  for (const r of rows) merged.set(r[key], { ...merged.get(r[key]), ...r });
  const full = [...merged.values()].map((r) => Object.fromEntries(columns.map((c) => [c, r[c] ?? ''])));
  await ctx.dictionaries.write(d, generation, full);
  const grown = columns.length !== d.columns.length ? { columns } : {};
  const updated = ctx.dictionaries.update(d.id, { ...grown, generation });
  // The old generation is unreadable from here on; removing its rows is housekeeping.
  if (opts.replace) void ctx.dictionaries.purgeOrphanRows().catch((err) => ctx.log.warn({ err: (err as Error).message }, 'could not remove replaced dictionary rows'));
  const row_count = (await ctx.dictionaries.rowCounts([updated])).get(d.id) ?? 0;
  return { written: rows.length, row_count };
}

/** A CSV upload as rows: its first record names the columns. */
export function rowsFromCsv(d: Dictionary, text: string, addColumns: boolean): { rows: DictionaryRow[]; columns: string[] } {
  let records: string[][];
  try {
    records = parseCsv(text);
  } catch (err) {
    if (err instanceof CsvError) throw badRequest(err.message);
    throw err;
  }
  const [header, ...body] = records;
  if (!header) throw badRequest('The CSV is empty: its first line must name the columns.');
  const names = header.map((h) => h.trim());
  if (!names.includes(d.key_columns[0])) {
    throw badRequest(`The CSV header (${names.join(', ')}) lacks the key column "${d.key_columns[0]}" of the dictionary "${d.name}".`);
  }
  if (new Set(names).size !== names.length) throw badRequest('The CSV header names a column twice.');
  if (body.length > MAX_ROWS) throw badRequest(`The CSV holds ${body.length.toLocaleString('en-US')} rows; a dictionary holds at most ${MAX_ROWS.toLocaleString('en-US')}.`);
  const objects = body.map((rec, i) => {
    if (rec.length !== names.length) {
      throw badRequest(`CSV row ${i + 2} has ${rec.length} fields; the header has ${names.length}.`);
    }
    return Object.fromEntries(names.map((n, j) => [n, rec[j]]));
  });
  return normalizeRows(d, objects, { addColumns, where: (i) => `CSV row ${i + 2}` });
}
