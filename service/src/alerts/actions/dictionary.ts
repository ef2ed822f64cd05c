// The dictionary action: a firing's results upserted into a dictionary of the alert's fractal (or
// prism) through the dictionaries domain's writeRows, so match() sees them on the next query. The
// dictionary is created on first write; value columns it lacks are added.
import type { Context } from '../../context.ts';
import { checkColumns, writeRows } from '../../dictionaries/dictionaries-logic.ts';
import type { DictionaryRow } from '../../dictionaries/dictionaries-store.ts';
import type { FiringPayload } from '../executions-store.ts';
import type { Action } from './actions-store.ts';
import type { WriteOutcome } from './fractal.ts';

const RESERVED = new Set(['norm_log', 'timestamp', 'log_id', 'fractal_id']);
const MAX_VALUE = 65_536;

/**
 * The result's columns in order: the query's field_order (without norm_log); for plain event rows
 * (whose order is only the reserved columns), the fields of the first row.
 */
function resultColumns(p: FiringPayload): string[] {
  const listed = p.field_order.filter((c) => c !== 'norm_log');
  if (listed.some((c) => !RESERVED.has(c))) return listed;
  const first = p.results[0] ?? {};
  return [...Object.keys(first).filter((k) => !RESERVED.has(k)), ...listed];
}

const text = (v: unknown): string => (v === null || v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v)).slice(0, MAX_VALUE);

export async function upsertDictionary(ctx: Context, a: Action<'dictionary'>, p: FiringPayload): Promise<WriteOutcome> {
  const scope = p.fractal_id ? { type: 'fractal' as const, id: p.fractal_id } : { type: 'prism' as const, id: p.prism_id! };
  const cols = resultColumns(p);
  const key = a.key_field || cols[0];
  if (!key) return { ok: false, retryable: false, error: 'the results have no column to key the dictionary by; set key_field', detail: '' };
  const values = a.value_fields.length ? a.value_fields : cols.filter((c) => c !== key);
  const wanted = [key, ...values.filter((v) => v !== key)];
  let d = ctx.dictionaries.visibleTo(scope).find((x) => x.name.toLowerCase() === a.dictionary_name.toLowerCase() && (x.fractal_id ?? x.prism_id) === scope.id);
  try {
    if (!d) {
      const checked = checkColumns(wanted, [key]);
      d = ctx.dictionaries.create({
        name: a.dictionary_name,
        description: `Filled by the alert action "${a.name}".`,
        fractal_id: scope.type === 'fractal' ? scope.id : null,
        prism_id: scope.type === 'prism' ? scope.id : null,
        ...checked,
        created_by: `alert action ${a.name}`,
      });
    }
    if (d.key_columns[0] !== key) {
      return { ok: false, retryable: false, error: `the dictionary "${d.name}" is keyed by "${d.key_columns[0]}", not "${key}"`, detail: '' };
    }
    const columns = [...d.columns, ...wanted.filter((c) => !d!.columns.includes(c))];
    if (columns.length !== d.columns.length) checkColumns(columns, [key]);
    const rows: DictionaryRow[] = [];
    for (const r of p.results.slice(0, a.max_logs_per_trigger)) {
      const k = text(r[key]);
      if (!k) continue;
      const row: DictionaryRow = { [key]: k };
      for (const v of wanted.slice(1)) if (r[v] !== undefined) row[v] = text(r[v]);
      rows.push(row);
    }
    if (rows.length === 0) return { ok: true, retryable: false, error: '', detail: `no result had a value for "${key}"` };
    const out = await writeRows(ctx, d, rows, { replace: false, columns });
    return { ok: true, retryable: false, error: '', detail: `${out.written} rows upserted into ${d.name} (${out.row_count} rows)` };
  } catch (err) {
    const status = (err as { statusCode?: number }).statusCode;
    // A 400 from the dictionaries domain (too many rows, a bad column) will not pass on retry.
    return { ok: false, retryable: status === undefined || status >= 500, error: `writing the dictionary "${a.dictionary_name}" failed: ${(err as Error).message}`, detail: '' };
  }
}
