// Dictionaries: user-managed lookup tables that match() joins to query rows (query-language.md
// §3.11). The definition (name, scope, columns, key columns) is a SQLite row; the rows live in the
// engine's `dictionary_rows` so a query joins them where the logs are. Every value is text.
import { randomUUID } from 'node:crypto';
import type { Analytics } from '../storage/clickhouse.ts';
import type { Db } from '../storage/sqlite.ts';

export interface Dictionary {
  id: string;
  name: string;
  description: string;
  /** The owning fractal or prism; both null for a global dictionary. */
  fractal_id: string | null;
  prism_id: string | null;
  /** Every column, in the order shown; includes the key columns. */
  columns: string[];
  /** Columns match(column=) may look up by; the first is the row's identity (its primary key). */
  key_columns: string[];
  /** The row set readers use (see the SQLite migration). */
  generation: number;
  created_by: string;
  created_at: string;
  updated_at: string;
}

interface DictionaryRecord extends Omit<Dictionary, 'columns' | 'key_columns'> {
  columns: string;
  key_columns: string;
}

export type DictionaryRow = Record<string, string>;

/** Binds a value as a query parameter and returns its placeholder (a query's own Params.bind fits). */
export type Bind = (value: unknown, type: 'UUID' | 'UInt32' | 'UInt64' | 'String' | 'Array(String)' | 'Array(UUID)' | 'Array(UInt32)') => string;

/** A statement built with bound values: its text and its parameters. */
function bound(build: (bind: Bind) => string): { query: string; query_params: Record<string, unknown> } {
  const params: Record<string, unknown> = {};
  const query = build((value, type) => {
    const name = `p${Object.keys(params).length}`;
    params[name] = value;
    return `{${name}:${type}}`;
  });
  return { query, query_params: params };
}

const fromRecord = (r: DictionaryRecord): Dictionary => ({ ...r, columns: JSON.parse(r.columns), key_columns: JSON.parse(r.key_columns) });

/** Version numbers of written rows: increasing within the process, so the last write of a key wins. */
let lastVersion = 0;
const nextVersion = (): number => (lastVersion = Math.max(lastVersion + 1, Date.now() * 1000));

export class DictionariesStore {
  /**
   * Ids whose rows are written before their definition exists (a case import stores them first and
   * creates the definitions in its transaction): purgeOrphanRows leaves their rows. Held in this
   * process only, so after a crash the next start's purge removes what such an import left.
   */
  private readonly held = new Set<string>();

  constructor(
    private readonly db: Db,
    private readonly ch: Analytics,
  ) {}

  // ---- definitions (SQLite) ---------------------------------------------------------------------

  get(id: string): Dictionary | undefined {
    const r = this.db.prepare('SELECT * FROM dictionaries WHERE id = ?').get(id) as DictionaryRecord | undefined;
    return r && fromRecord(r);
  }

  /** The dictionaries a query in this scope reads: the scope's own, then the global ones; by name. */
  visibleTo(scope: { type: 'fractal' | 'prism'; id: string }): Dictionary[] {
    const column = scope.type === 'fractal' ? 'fractal_id' : 'prism_id';
    const rows = this.db
      .prepare(
        `SELECT * FROM dictionaries WHERE ${column} = ? OR (fractal_id IS NULL AND prism_id IS NULL)
         ORDER BY (fractal_id IS NULL AND prism_id IS NULL), name COLLATE NOCASE`,
      )
      .all(scope.id) as DictionaryRecord[];
    return rows.map(fromRecord);
  }

  /** The dictionary `name` (any case) means in this scope: its own of that name first, else the global one. */
  resolve(scope: { type: 'fractal' | 'prism'; id: string }, name: string): Dictionary | undefined {
    const wanted = name.toLowerCase();
    return this.visibleTo(scope).find((d) => d.name.toLowerCase() === wanted);
  }

  /** A dictionary of the same name (case-insensitive) in the same scope, if any. */
  nameTaken(owner: { fractal_id: string | null; prism_id: string | null }, name: string, except?: string): boolean {
    const r = this.db
      .prepare(
        `SELECT id FROM dictionaries WHERE coalesce(fractal_id, '') = ? AND coalesce(prism_id, '') = ? AND name = ? COLLATE NOCASE AND id != ?`,
      )
      .get(owner.fractal_id ?? '', owner.prism_id ?? '', name, except ?? '');
    return r !== undefined;
  }

  create(d: Pick<Dictionary, 'name' | 'description' | 'fractal_id' | 'prism_id' | 'columns' | 'key_columns' | 'created_by'>): Dictionary {
    const now = new Date().toISOString();
    return this.insert({ ...d, id: randomUUID(), generation: 1, created_at: now, updated_at: now });
  }

  /** The dictionaries a fractal owns (not the global ones it also reads), by name. */
  ownedBy(fractalId: string): Dictionary[] {
    const rows = this.db.prepare('SELECT * FROM dictionaries WHERE fractal_id = ? ORDER BY name COLLATE NOCASE').all(fractalId) as DictionaryRecord[];
    return rows.map(fromRecord);
  }

  /** Recreates a dictionary a case archive carried, under the id its rows were written with. Inside the import's transaction. */
  restoreCaseRecord(d: Dictionary): Dictionary {
    return this.insert(d);
  }

  private insert(d: Dictionary): Dictionary {
    this.db
      .prepare(
        `INSERT INTO dictionaries (id, name, description, fractal_id, prism_id, columns, key_columns, generation, created_by, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(d.id, d.name, d.description, d.fractal_id, d.prism_id, JSON.stringify(d.columns), JSON.stringify(d.key_columns), d.generation, d.created_by, d.created_at, d.updated_at);
    return this.get(d.id)!;
  }

  update(id: string, patch: Partial<Pick<Dictionary, 'name' | 'description' | 'columns' | 'key_columns' | 'generation'>>): Dictionary {
    const cur = this.get(id)!;
    const next = { ...cur, ...patch };
    this.db
      .prepare('UPDATE dictionaries SET name = ?, description = ?, columns = ?, key_columns = ?, generation = ?, updated_at = ? WHERE id = ?')
      .run(next.name, next.description, JSON.stringify(next.columns), JSON.stringify(next.key_columns), next.generation, new Date().toISOString(), id);
    return this.get(id)!;
  }

  /** Removes the definition; its rows go with purgeOrphanRows. */
  delete(id: string): boolean {
    return this.db.prepare('DELETE FROM dictionaries WHERE id = ?').run(id).changes > 0;
  }

  // ---- rows (engine) ----------------------------------------------------------------------------

  /** Each key's newest version in the dictionary's current generation, tombstones dropped: `row_key`, `v` (the columns), `ver`. */
  private currentRowsSql(bind: Bind, d: Dictionary): string {
    return `SELECT row_key, argMax(values, version) AS v, max(version) AS ver FROM ${this.ch.table('dictionary_rows')}
      WHERE dictionary_id = ${bind(d.id, 'UUID')} AND generation = ${bind(d.generation, 'UInt32')}
      GROUP BY row_key HAVING argMax(deleted, version) = 0`;
  }

  /**
   * The rows match() joins: one per value of `keyColumn` (the newest row holding it), as
   * `k` and then `x0, x1, …` for `include`. Binds its values through the query's own parameters.
   */
  lookupSql(bind: Bind, d: Dictionary, keyColumn: string, include: string[]): string {
    const cols = include.map((c, i) => `v[${bind(c, 'String')}] AS x${i}`);
    const key = keyColumn === d.key_columns[0] ? 'row_key' : `v[${bind(keyColumn, 'String')}]`;
    return `SELECT ${key} AS k, ${cols.join(', ')} FROM (${this.currentRowsSql(bind, d)})
      WHERE k != '' ORDER BY ver DESC LIMIT 1 BY k`;
  }

  /** A new dictionary id whose rows may be written before its definition (release it once defined, or its rows deleted). */
  holdNewId(): string {
    const id = randomUUID();
    this.held.add(id);
    return id;
  }

  release(ids: Iterable<string>): void {
    for (const id of ids) this.held.delete(id);
  }

  /** Deletes every row written under these dictionary ids (a case import that failed), waiting for the engine to finish. */
  async deleteRowsOf(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.ch.client.command({
      ...bound((bind) => `ALTER TABLE ${this.ch.table('dictionary_rows')} DELETE WHERE has(${bind(ids, 'Array(UUID)')}, dictionary_id)`),
      clickhouse_settings: { mutations_sync: '2' },
    });
  }

  private async select<T>(build: (bind: Bind) => string): Promise<T[]> {
    const rs = await this.ch.client.query({ ...bound(build), format: 'JSONEachRow' });
    return (await rs.json()) as T[];
  }

  /** Rows in each dictionary's current generation. */
  async rowCounts(ds: Dictionary[]): Promise<Map<string, number>> {
    const counts = new Map<string, number>(ds.map((d) => [d.id, 0]));
    if (ds.length === 0) return counts;
    const rows = await this.select<{ id: string; n: string }>(
      (bind) => `SELECT toString(dictionary_id) AS id, count() AS n FROM (
        SELECT dictionary_id, row_key FROM ${this.ch.table('dictionary_rows')}
        WHERE concat(toString(dictionary_id), ':', toString(generation)) IN ${bind(
          ds.map((d) => `${d.id}:${d.generation}`),
          'Array(String)',
        )}
        GROUP BY dictionary_id, generation, row_key HAVING argMax(deleted, version) = 0
      ) GROUP BY dictionary_id`,
    );
    for (const r of rows) counts.set(r.id, Number(r.n));
    return counts;
  }

  /**
   * Rows ordered by primary key, a page of them (with the total before paging) or all (export);
   * `search` keeps rows where any value contains it (case-insensitive).
   */
  async rows(d: Dictionary, opts: { page?: { limit: number; offset: number }; search?: string }): Promise<{ rows: DictionaryRow[]; total: number }> {
    const matching = (bind: Bind) => {
      const where = opts.search ? ` WHERE arrayExists(x -> positionCaseInsensitiveUTF8(x, ${bind(opts.search, 'String')}) > 0, mapValues(v))` : '';
      return `SELECT row_key, v FROM (${this.currentRowsSql(bind, d)})${where}`;
    };
    const page = opts.page;
    const [rows, total] = await Promise.all([
      this.select<{ v: Record<string, string> }>(
        (bind) => `${matching(bind)} ORDER BY row_key${page ? ` LIMIT ${bind(page.limit, 'UInt32')} OFFSET ${bind(page.offset, 'UInt64')}` : ''}`,
      ),
      page ? this.select<{ n: string }>((bind) => `SELECT count() AS n FROM (${matching(bind)})`) : undefined,
    ]);
    const shaped = rows.map((r) => Object.fromEntries(d.columns.map((c) => [c, r.v[c] ?? ''])));
    return { rows: shaped, total: total ? Number(total[0]?.n ?? 0) : shaped.length };
  }

  /**
   * Every row readers see, ordered by primary key, as the engine streams them (a case export:
   * a dictionary may hold MAX_ROWS rows, so they are never collected whole here).
   */
  async *allRows(d: Dictionary, signal?: AbortSignal): AsyncGenerator<DictionaryRow[]> {
    const { query, query_params } = bound((bind) => `SELECT v FROM (${this.currentRowsSql(bind, d)}) ORDER BY row_key`);
    for await (const rows of this.ch.streamRows(query, query_params, { signal, background: true })) {
      yield rows.map(([v]) => Object.fromEntries(d.columns.map((c) => [c, (v as DictionaryRow)[c] ?? ''])));
    }
  }

  /** The stored rows of these primary key values, by key. */
  async rowsByKey(d: Dictionary, keys: string[]): Promise<Array<[string, DictionaryRow]>> {
    if (keys.length === 0) return [];
    const rows = await this.select<{ row_key: string; v: DictionaryRow }>(
      (bind) => `SELECT row_key, v FROM (${this.currentRowsSql(bind, d)}) WHERE row_key IN ${bind(keys, 'Array(String)')}`,
    );
    return rows.map((r) => [r.row_key, r.v]);
  }

  /** Writes rows (keyed by the primary key column) into `generation`; a later row of the same key wins. */
  async write(d: Dictionary, generation: number, rows: DictionaryRow[]): Promise<void> {
    if (rows.length === 0) return;
    const key = d.key_columns[0];
    const values = rows.map((r) => ({ dictionary_id: d.id, generation, row_key: r[key], values: r, version: nextVersion(), deleted: 0 }));
    await this.ch.client.insert({ table: this.ch.table('dictionary_rows'), values, format: 'JSONEachRow' });
  }

  /** Deletes one row by its primary key value; false when no such row exists. */
  async deleteRow(d: Dictionary, key: string): Promise<boolean> {
    const found = await this.select<{ n: string }>(
      (bind) => `SELECT count() AS n FROM (${this.currentRowsSql(bind, d)}) WHERE row_key = ${bind(key, 'String')}`,
    );
    if (Number(found[0]?.n ?? 0) === 0) return false;
    await this.ch.client.insert({
      table: this.ch.table('dictionary_rows'),
      values: [{ dictionary_id: d.id, generation: d.generation, row_key: key, values: {}, version: nextVersion(), deleted: 1 }],
      format: 'JSONEachRow',
    });
    return true;
  }

  /**
   * Drops the engine rows no reader can see: of deleted dictionaries and of replaced generations.
   * A generation newer than the current one is a replace being written: it stays. So do rows
   * written after this purge read the definitions (a version from `begun` on): a dictionary created
   * meanwhile is not in the list read, and the delete, a while later, would take its new rows too.
   */
  async purgeOrphanRows(): Promise<void> {
    const begun = nextVersion();
    const live = this.db.prepare('SELECT id, generation FROM dictionaries').all() as Array<{ id: string; generation: number }>;
    for (const id of this.held) live.push({ id, generation: 0 });
    const orphans = (bind: Bind) => {
      const ids = bind(live.map((r) => r.id), 'Array(UUID)');
      const generations = bind(live.map((r) => r.generation), 'Array(UInt32)');
      return `version < ${bind(begun, 'UInt64')} AND NOT (has(${ids}, dictionary_id) AND generation >= arrayElement(${generations}, indexOf(${ids}, dictionary_id)))`;
    };
    // A mutation rewrites parts: only start one (at every start-up, replace and delete) when there is something to remove.
    const [found] = await this.select<{ n: string }>((bind) => `SELECT count() AS n FROM ${this.ch.table('dictionary_rows')} WHERE ${orphans(bind)}`);
    if (Number(found?.n ?? 0) === 0) return;
    await this.ch.client.command(bound((bind) => `ALTER TABLE ${this.ch.table('dictionary_rows')} DELETE WHERE ${orphans(bind)}`));
  }

}
