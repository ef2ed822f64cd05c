// Export of a result: CSV (RFC 4180: CRLF between records, a field holding a comma, quote, CR or LF is
// quoted and its quotes doubled; the header row is the field order) and NDJSON (one JSON object per line).
// Search results are written exactly as the service sent them: evidence is not rewritten. The
// Dictionaries page exports a dictionary's rows with the same toCsv() and fileNamePart(), asking for
// spreadsheet-safe cells (a leading =, +, -, @ gets a `'`, as the service's own export does).
// Pure: unit-tested in tests/ui/search-lib.test.ts.
import { spreadsheetSafe } from '../../../../service/src/shared/csv.ts';

export type ResultRow = Record<string, unknown>;

/** The text of one value as shown and exported: absent → "", strings as they are, other values as JSON. */
export function cellText(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  return JSON.stringify(v);
}

export function csvField(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function toCsv(columns: readonly string[], rows: readonly ResultRow[], opts: { spreadsheetSafe?: boolean } = {}): string {
  const text = opts.spreadsheetSafe ? (v: unknown) => spreadsheetSafe(cellText(v)) : cellText;
  const lines = [columns.map(csvField).join(',')];
  for (const r of rows) lines.push(columns.map((c) => csvField(text(r[c]))).join(','));
  return lines.join('\r\n') + '\r\n';
}

/** One object per line, keys in field order first, then any other key the row carries. */
export function toNdjson(columns: readonly string[], rows: readonly ResultRow[]): string {
  let out = '';
  for (const r of rows) {
    const o: ResultRow = {};
    for (const c of columns) if (c in r) o[c] = r[c];
    for (const k of Object.keys(r)) if (!(k in o)) o[k] = r[k];
    out += JSON.stringify(o) + '\n';
  }
  return out;
}

/** "search-web-2026-01-02T03-04-05Z.csv": a name that sorts by time and is safe on every file system. */
/** A name made safe for every file system: runs of other characters become "-", none at either end; empty: `fallback`. */
export function fileNamePart(name: string, fallback: string): string {
  return name.replace(/[^A-Za-z0-9_.-]+/g, '-').replace(/^-+|-+$/g, '') || fallback;
}

export function exportFileName(scopeName: string, ext: 'csv' | 'ndjson', now: Date = new Date()): string {
  const scope = fileNamePart(scopeName, 'search');
  const stamp = now.toISOString().replace(/\.\d+Z$/, 'Z').replace(/:/g, '-');
  return `search-${scope}-${stamp}.${ext}`;
}
