// The dictionaries a case carries (docs/evidence.md "Case archive"): on export, the fractal's own
// and each global one its notebooks, dashboard widgets and alerts read with match(); on import,
// each becomes a dictionary of the new fractal, whatever it was, so the carried queries resolve
// to the carried copies before any global of the same name. Rows are written to the engine while
// the archive is read, under ids no definition has yet (nothing reads them), and the definitions
// are created in the import's transaction; a failed import deletes those rows.
import type { Context } from '../context.ts';
import { checkColumns, checkName, MAX_ROWS, MAX_ROWS_PER_WRITE, normalizeRows } from '../dictionaries/dictionaries-logic.ts';
import type { Dictionary, DictionaryRow } from '../dictionaries/dictionaries-store.ts';
import { HttpError } from '../http/errors.ts';
import { dictionariesNamed } from '../query/commands/match.ts';
import { substituteVariables, type QueryVariable } from '../query/syntax/variables.ts';
import type { StoredRow } from '../storage/stored-rows.ts';
import { DICTIONARIES, type CaseDictionary } from './archive-layout.ts';
import { BadRecord, isObject, ndjsonLines } from './archive-reader.ts';
import type { RecordFile } from './archive-writer.ts';

/** A line holds at most this many rows (one write of the store), or about this many bytes of them. */
const LINE_ROWS = MAX_ROWS_PER_WRITE;
const LINE_BYTES = 4 * 1024 * 1024;

/** Stored variables (JSON text) as substitution reads them; none when unreadable. */
function variables(stored: unknown): QueryVariable[] {
  try {
    const list = JSON.parse(String(stored ?? '[]')) as unknown;
    return Array.isArray(list) ? list.filter((v): v is QueryVariable => isObject(v) && typeof v.name === 'string' && typeof v.value === 'string') : [];
  } catch {
    return [];
  }
}

/** The dictionary names the case's queries read, noted as its notebooks, dashboards and alerts are written. */
export class QueriedDictionaries {
  private readonly names = new Set<string>();

  /** Query sections run with their notebook's variables. */
  notebook(r: { notebook: StoredRow; sections: StoredRow[] }): void {
    const vars = variables(r.notebook.variables);
    for (const s of r.sections) if (s.section_type === 'query') this.query(String(s.content ?? ''), vars);
  }

  /** Widgets run with their dashboard's variables. */
  dashboard(r: { dashboard: StoredRow; widgets: StoredRow[] }): void {
    const vars = variables(r.dashboard.variables);
    for (const w of r.widgets) this.query(String(w.query_content ?? ''), vars);
  }

  alert(a: StoredRow): void {
    this.query(String(a.query_string ?? ''), []);
  }

  private query(text: string, vars: QueryVariable[]): void {
    for (const name of dictionariesNamed(substituteVariables(text, vars))) this.names.add(name);
  }

  /**
   * What the case carries: every dictionary of the fractal, and each global one a noted name
   * means there (resolved as a query of the fractal resolves it). A prism's dictionaries are not
   * visible to a fractal's queries.
   */
  carried(ctx: Context, fractalId: string): Dictionary[] {
    const globals = new Map<string, Dictionary>();
    for (const name of this.names) {
      const d = ctx.dictionaries.resolve({ type: 'fractal', id: fractalId }, name);
      if (d && d.fractal_id === null && d.prism_id === null) globals.set(d.id, d);
    }
    return [...ctx.dictionaries.ownedBy(fractalId), ...globals.values()];
  }
}

/** Each dictionary as a line with its first rows, its further rows in `{rows}` lines after it; one line in memory at a time. */
export async function writeDictionaries(ctx: Context, f: RecordFile, dictionaries: Dictionary[], signal: AbortSignal): Promise<void> {
  for (const d of dictionaries) {
    const line: CaseDictionary = {
      dictionary: {
        name: d.name,
        description: d.description,
        scope: d.fractal_id === null ? 'global' : 'fractal',
        columns: d.columns,
        key_columns: d.key_columns,
        created_by: d.created_by,
        created_at: d.created_at,
        updated_at: d.updated_at,
      },
      rows: [],
    };
    let first = true;
    let rows: DictionaryRow[] = [];
    let bytes = 0;
    const flush = async () => {
      await f.line(first ? { ...line, rows } : { rows });
      first = false;
      rows = [];
      bytes = 0;
    };
    for await (const page of ctx.dictionaries.allRows(d, signal)) {
      for (const r of page) {
        rows.push(r);
        bytes += JSON.stringify(r).length;
        if (rows.length >= LINE_ROWS || bytes >= LINE_BYTES) await flush();
      }
    }
    if (first || rows.length > 0) await flush();
  }
}

/** A refusal of the dictionaries' checks as a bad record of the archive, named by its line. */
function asBadRecord<T>(where: string, check: () => T): T {
  try {
    return check();
  } catch (err) {
    if (err instanceof HttpError) throw new BadRecord(where ? `${where}: ${err.message}` : err.message);
    throw err;
  }
}

/** The dictionaries an import restores: rows stored as the archive is read, definitions created in its transaction. */
export class CarriedDictionaries {
  private readonly defined: Dictionary[] = [];
  private readonly names = new Set<string>();

  constructor(
    private readonly ctx: Context,
    private readonly fractalId: string,
  ) {}

  /** Checks each line of dictionaries.ndjson and writes its rows under an id nothing reads until restore(). */
  async read(content: AsyncIterable<Buffer>): Promise<void> {
    let n = 0;
    let current: Dictionary | null = null;
    let count = 0;
    for await (const v of ndjsonLines(DICTIONARIES, content)) {
      const where = `${DICTIONARIES} line ${++n}`;
      if (!isObject(v) || !Array.isArray(v.rows) || (v.dictionary === undefined && !current)) {
        throw new BadRecord(`${where} is not a dictionary ({dictionary, rows}), nor more rows ({rows}) of the dictionary before it.`);
      }
      if (v.dictionary !== undefined) {
        current = this.definition(v.dictionary, where);
        count = 0;
      }
      const d = current!;
      const { rows } = asBadRecord('', () => normalizeRows(d, v.rows as Array<Record<string, unknown>>, { addColumns: false, where: (i) => `${where}, row ${i + 1}` }));
      count += rows.length;
      if (count > MAX_ROWS) throw new BadRecord(`${where}: the dictionary "${d.name}" holds more than ${MAX_ROWS.toLocaleString('en-US')} rows.`);
      // Whole rows, as a write of the dictionaries domain stores them: a column left out is empty.
      await this.ctx.dictionaries.write(d, d.generation, rows.map((r) => Object.fromEntries(d.columns.map((c) => [c, r[c] ?? '']))));
    }
  }

  private definition(v: unknown, where: string): Dictionary {
    const text = (x: unknown, fallback: string) => (typeof x === 'string' ? x : fallback);
    const strings = (x: unknown) => Array.isArray(x) && x.every((c) => typeof c === 'string');
    if (!isObject(v) || typeof v.name !== 'string' || !strings(v.columns) || !strings(v.key_columns)) {
      throw new BadRecord(`${where} is not a dictionary: "dictionary" needs a name, columns and key_columns.`);
    }
    const owner = { fractal_id: this.fractalId, prism_id: null };
    const name = asBadRecord(where, () => checkName(this.ctx, owner, v.name as string));
    if (this.names.has(name.toLowerCase())) throw new BadRecord(`${where}: the dictionary "${name}" is carried twice.`);
    this.names.add(name.toLowerCase());
    const { columns, key_columns } = asBadRecord(where, () => checkColumns(v.columns as string[], v.key_columns as string[]));
    const now = new Date().toISOString();
    const d: Dictionary = {
      id: this.ctx.dictionaries.holdNewId(),
      name,
      description: text(v.description, ''),
      ...owner,
      columns,
      key_columns,
      generation: 1,
      created_by: text(v.created_by, ''),
      created_at: text(v.created_at, now),
      updated_at: text(v.updated_at, now),
    };
    this.defined.push(d);
    return d;
  }

  /** Creates the definitions, so their rows become readable with the fractal. Inside the import's transaction. */
  restore(): void {
    for (const d of this.defined) this.ctx.dictionaries.restoreCaseRecord(d);
  }

  /** Deletes the rows written so far (the import failed). */
  async remove(): Promise<void> {
    await this.ctx.dictionaries.deleteRowsOf(this.defined.map((d) => d.id));
  }

  /** The ids are no longer held: their definitions exist, or their rows are gone (or left to the next purge). */
  release(): void {
    this.ctx.dictionaries.release(this.defined.map((d) => d.id));
  }
}
