// Rows of the metadata store copied as they are stored: what a case archive carries, so an
// imported notebook, dashboard or alert equals the exported one column for column. Each domain's
// store decides which rows of its tables belong to a fractal and how their ids are remapped; this
// only writes a row whose keys it has checked against the table's own columns (a row may come
// from an archive, so neither a key nor a value ever reaches the SQL text).
import type { Db } from './sqlite.ts';

/** One row as `SELECT *` reads it: SQLite's own value types. */
export type StoredRow = Record<string, string | number | null>;

const columnsOf = new WeakMap<Db, Map<string, Set<string>>>();

function columns(db: Db, table: string): Set<string> {
  let byTable = columnsOf.get(db);
  if (!byTable) columnsOf.set(db, (byTable = new Map()));
  let cols = byTable.get(table);
  if (!cols) {
    cols = new Set((db.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string }>).map((c) => c.name));
    byTable.set(table, cols);
  }
  return cols;
}

/**
 * Inserts `row` into `table` (a name from our own code). A key that is not a column of the table,
 * or a value SQLite cannot hold as it is, throws with a sentence naming it.
 */
export function insertStoredRow(db: Db, table: string, row: StoredRow): void {
  const known = columns(db, table);
  const keys = Object.keys(row);
  for (const k of keys) {
    if (!known.has(k)) throw new Error(`"${k}" is not a column of ${table}.`);
    const v = row[k];
    if (v !== null && typeof v !== 'string' && typeof v !== 'number') throw new Error(`The value of ${table}.${k} is not text, a number or null.`);
  }
  db.prepare(`INSERT INTO ${table} (${keys.map((k) => `"${k}"`).join(', ')}) VALUES (${keys.map(() => '?').join(', ')})`).run(...keys.map((k) => row[k]));
}
