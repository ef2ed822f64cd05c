// Notebooks in SQLite (`notebooks`, `notebook_sections`; migration 4). The store keeps rows and
// their order and counts versions; who may do what, and whether a write's version is current, is
// decided by notebooks-logic.ts before it calls here (better-sqlite3 is synchronous, so a check and
// the write after it are never interleaved with another request).
import { randomUUID } from 'node:crypto';
import type { Scope, Variable } from '../shared/documents.ts';
import type { Db } from '../storage/sqlite.ts';
import { insertStoredRow, type StoredRow } from '../storage/stored-rows.ts';

export type { Scope, Variable };

export const SECTION_TYPES = ['markdown', 'query', 'ai_summary', 'comment_context'] as const;
export type SectionType = (typeof SECTION_TYPES)[number];

export interface Notebook {
  id: string;
  name: string;
  description: string;
  fractal_id: string | null;
  prism_id: string | null;
  tags: string[];
  variables: Variable[];
  /** A preset (15m 1h 4h 24h 7d 30d), `all`, or `custom` with time_start and time_end. */
  time_range: string;
  time_start: string | null;
  time_end: string | null;
  version: number;
  created_by: string;
  updated_by: string;
  created_at: string;
  updated_at: string;
}

export interface NotebookListed extends Notebook {
  section_count: number;
}

export interface Section {
  id: string;
  notebook_id: string;
  position: number;
  section_type: SectionType;
  title: string;
  content: string;
  tags: string[];
  version: number;
  results_version: number;
  created_by: string;
  updated_by: string;
  created_at: string;
  updated_at: string;
  /** The stored snapshot as JSON text; absent when not read, null when none. */
  results?: string | null;
  /** The snapshot without its rows and comments (plus `comment_count`) as JSON text; absent when not read, null when none. */
  results_summary?: string | null;
}

/**
 * What of a section's stored results a read brings: nothing, the summary (what the notebook's answer
 * shows: a few hundred bytes), or the whole snapshot (up to 10,000 rows; export, prompts, the results
 * endpoint).
 */
export type ResultsRead = 'none' | 'summary' | 'full';

export interface NewSection {
  section_type: SectionType;
  title: string;
  content: string;
  tags: string[];
  /** JSON text of a snapshot to store with it (import, generation). */
  results?: string | null;
}

export interface NotebookFields {
  name: string;
  description: string;
  tags: string[];
  variables: Variable[];
  time_range: string;
  time_start: string | null;
  time_end: string | null;
}

interface NotebookRow extends Omit<Notebook, 'tags' | 'variables'> {
  tags: string;
  variables: string;
}

interface SectionRow extends Omit<Section, 'tags'> {
  tags: string;
}

const NB_COLUMNS = `id, name, description, fractal_id, prism_id, tags, variables, time_range, time_start, time_end, version,
  created_by, updated_by, created_at, updated_at`;
const SECTION_COLUMNS = `id, notebook_id, position, section_type, title, content, tags, version, results_version,
  created_by, updated_by, created_at, updated_at`;

// SQLite's JSON functions cut the rows out of the stored text without the text entering JS: the
// summary of ten results of 1,000 rows is read in a few ms, where parsing them took ~100 ms.
const SUMMARY_COLUMN = `CASE WHEN results IS NULL THEN NULL
  WHEN json_type(results, '$.comments') = 'array'
    THEN json_set(json_remove(results, '$.results', '$.comments'), '$.comment_count', json_array_length(results, '$.comments'))
  ELSE json_remove(results, '$.results', '$.comments') END AS results_summary`;
const columnsFor = (read: ResultsRead) => (read === 'full' ? `${SECTION_COLUMNS}, results` : read === 'summary' ? `${SECTION_COLUMNS}, ${SUMMARY_COLUMN}` : SECTION_COLUMNS);

const toNotebook = (r: NotebookRow): Notebook => ({ ...r, tags: JSON.parse(r.tags), variables: JSON.parse(r.variables) });
const toSection = (r: SectionRow): Section => ({ ...r, tags: JSON.parse(r.tags) });
const now = () => new Date().toISOString();

/** `fractal_id = ?` or `prism_id = ?`: the column is chosen from a fixed pair, never from input. */
const scopeColumn = (s: Scope) => (s.type === 'fractal' ? 'fractal_id' : 'prism_id');

export class NotebooksStore {
  constructor(private readonly db: Db) {}

  /** A notebook with its sections (and their results), all or nothing. */
  create(scope: Scope, fields: NotebookFields, sections: NewSection[], by: string): Notebook {
    const id = randomUUID();
    const t = now();
    this.db.transaction(() => {
      this.db
        .prepare(
          `INSERT INTO notebooks (id, name, description, fractal_id, prism_id, tags, variables, time_range, time_start, time_end,
             created_by, updated_by, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          id,
          fields.name,
          fields.description,
          scope.type === 'fractal' ? scope.id : null,
          scope.type === 'prism' ? scope.id : null,
          JSON.stringify(fields.tags),
          JSON.stringify(fields.variables),
          fields.time_range,
          fields.time_start,
          fields.time_end,
          by,
          by,
          t,
          t,
        );
      this.insertSections(id, 0, sections, by, t);
    })();
    return this.get(id)!;
  }

  get(id: string): Notebook | undefined {
    const r = this.db.prepare(`SELECT ${NB_COLUMNS} FROM notebooks WHERE id = ?`).get(id) as NotebookRow | undefined;
    return r && toNotebook(r);
  }

  findByName(scope: Scope, name: string): Notebook | undefined {
    const r = this.db.prepare(`SELECT ${NB_COLUMNS} FROM notebooks WHERE ${scopeColumn(scope)} = ? AND name = ? COLLATE NOCASE`).get(scope.id, name) as
      | NotebookRow
      | undefined;
    return r && toNotebook(r);
  }

  /** Names of the scope's notebooks that start with `prefix` (case-insensitive), for picking a free one. */
  namesLike(scope: Scope, prefix: string): string[] {
    const rows = this.db.prepare(`SELECT name FROM notebooks WHERE ${scopeColumn(scope)} = ?`).all(scope.id) as Array<{ name: string }>;
    const p = prefix.toLowerCase();
    return rows.map((r) => r.name).filter((n) => n.toLowerCase().startsWith(p));
  }

  /** The scope's notebooks, last edited first, with the total before paging. */
  list(scope: Scope, filter: { tag?: string; text?: string }, page: { limit: number; offset: number }): { rows: NotebookListed[]; total: number } {
    const where = [`n.${scopeColumn(scope)} = ?`];
    const params: unknown[] = [scope.id];
    if (filter.tag) {
      where.push('EXISTS (SELECT 1 FROM json_each(n.tags) WHERE value = ?)');
      params.push(filter.tag);
    }
    if (filter.text) {
      // instr on lower(): a literal, no LIKE wildcards.
      where.push('(instr(lower(n.name), ?) > 0 OR instr(lower(n.description), ?) > 0)');
      params.push(filter.text.toLowerCase(), filter.text.toLowerCase());
    }
    const w = where.join(' AND ');
    const total = (this.db.prepare(`SELECT count(*) AS n FROM notebooks n WHERE ${w}`).get(...params) as { n: number }).n;
    const rows = this.db
      .prepare(
        `SELECT ${NB_COLUMNS.replace(/(\w+)/g, 'n.$1')},
           (SELECT count(*) FROM notebook_sections s WHERE s.notebook_id = n.id) AS section_count
         FROM notebooks n WHERE ${w} ORDER BY n.updated_at DESC, n.id LIMIT ? OFFSET ?`,
      )
      .all(...params, page.limit, page.offset) as Array<NotebookRow & { section_count: number }>;
    return { rows: rows.map((r) => ({ ...toNotebook(r), section_count: r.section_count })), total };
  }

  /** Changes the notebook's own fields and counts a version. */
  update(id: string, patch: Partial<NotebookFields>, by: string): Notebook {
    const cur = this.get(id)!;
    const next = { ...cur, ...patch };
    this.db
      .prepare(
        `UPDATE notebooks SET name = ?, description = ?, tags = ?, variables = ?, time_range = ?, time_start = ?, time_end = ?,
           version = version + 1, updated_by = ?, updated_at = ? WHERE id = ?`,
      )
      .run(next.name, next.description, JSON.stringify(next.tags), JSON.stringify(next.variables), next.time_range, next.time_start, next.time_end, by, now(), id);
    return this.get(id)!;
  }

  delete(id: string): boolean {
    return this.db.prepare('DELETE FROM notebooks WHERE id = ?').run(id).changes > 0;
  }

  /** The notebook's sections in order, with as much of their stored results as `read` says. */
  sections(notebookId: string, read: ResultsRead = 'none'): Section[] {
    const rows = this.db.prepare(`SELECT ${columnsFor(read)} FROM notebook_sections WHERE notebook_id = ? ORDER BY position`).all(notebookId) as SectionRow[];
    return rows.map(toSection);
  }

  section(id: string, read: ResultsRead = 'none'): Section | undefined {
    const r = this.db.prepare(`SELECT ${columnsFor(read)} FROM notebook_sections WHERE id = ?`).get(id) as SectionRow | undefined;
    return r && toSection(r);
  }

  /** Inserts at `position` (0 = first; past the end = last); later sections move down one. */
  addSection(notebookId: string, position: number, s: NewSection, by: string): Section {
    let id = '';
    this.db.transaction(() => {
      const count = this.countSections(notebookId);
      const at = Math.max(0, Math.min(position, count));
      this.db.prepare('UPDATE notebook_sections SET position = position + 1 WHERE notebook_id = ? AND position >= ?').run(notebookId, at);
      [id] = this.insertSections(notebookId, at, [s], by, now());
      this.bump(notebookId, by);
    })();
    return this.section(id, 'summary')!;
  }

  countSections(notebookId: string): number {
    return (this.db.prepare('SELECT count(*) AS n FROM notebook_sections WHERE notebook_id = ?').get(notebookId) as { n: number }).n;
  }

  /** Changes what people edit in a section and counts its version; the notebook records the edit. */
  updateSection(id: string, patch: { title?: string; content?: string; tags?: string[] }, by: string): Section {
    const cur = this.section(id)!;
    const t = now();
    this.db.transaction(() => {
      this.db
        .prepare('UPDATE notebook_sections SET title = ?, content = ?, tags = ?, version = version + 1, updated_by = ?, updated_at = ? WHERE id = ?')
        .run(patch.title ?? cur.title, patch.content ?? cur.content, JSON.stringify(patch.tags ?? cur.tags), by, t, id);
      this.touch(cur.notebook_id, by, t);
    })();
    return this.section(id, 'summary')!;
  }

  /** Replaces (or with null clears) a section's stored results and counts their version. */
  storeResults(id: string, results: string | null, by: string): Section {
    const cur = this.section(id)!;
    const t = now();
    this.db.transaction(() => {
      this.db
        .prepare('UPDATE notebook_sections SET results = ?, results_version = results_version + 1, updated_by = ?, updated_at = ? WHERE id = ?')
        .run(results, by, t, id);
      this.touch(cur.notebook_id, by, t);
    })();
    return this.section(id, 'summary')!;
  }

  deleteSection(id: string, by: string): void {
    const cur = this.section(id);
    if (!cur) return;
    this.db.transaction(() => {
      this.db.prepare('DELETE FROM notebook_sections WHERE id = ?').run(id);
      this.db.prepare('UPDATE notebook_sections SET position = position - 1 WHERE notebook_id = ? AND position > ?').run(cur.notebook_id, cur.position);
      this.bump(cur.notebook_id, by);
    })();
  }

  /** `ids` is every section of the notebook exactly once (the logic checked it), in the new order. */
  reorder(notebookId: string, ids: string[], by: string): void {
    this.db.transaction(() => {
      const set = this.db.prepare('UPDATE notebook_sections SET position = ? WHERE id = ? AND notebook_id = ?');
      ids.forEach((sid, i) => set.run(i, sid, notebookId));
      this.bump(notebookId, by);
    })();
  }

  /** Replaces the notebook's fields and all its sections at once (generation of an existing one). */
  replace(id: string, fields: NotebookFields, sections: NewSection[], by: string): Notebook {
    this.db.transaction(() => {
      this.db.prepare('DELETE FROM notebook_sections WHERE notebook_id = ?').run(id);
      this.update(id, fields, by);
      this.insertSections(id, 0, sections, by, now());
    })();
    return this.get(id)!;
  }

  /** The tags of the notebook's sections with the number of sections carrying each, most used first. */
  sectionTags(notebookId: string): Array<{ tag: string; count: number }> {
    return this.db
      .prepare(
        `SELECT j.value AS tag, count(*) AS count FROM notebook_sections s, json_each(s.tags) j
         WHERE s.notebook_id = ? GROUP BY j.value ORDER BY count DESC, tag`,
      )
      .all(notebookId) as Array<{ tag: string; count: number }>;
  }

  // ---- case archives (cases/) ------------------------------------------------------------------

  /** The ids of a fractal's notebooks, oldest first: a case export reads them one at a time. */
  caseIds(fractalId: string): string[] {
    return (this.db.prepare('SELECT id FROM notebooks WHERE fractal_id = ? ORDER BY created_at, id').all(fractalId) as Array<{ id: string }>).map((r) => r.id);
  }

  /** A notebook and its sections (with their stored results) exactly as stored. */
  caseRecord(id: string): { notebook: StoredRow; sections: StoredRow[] } | undefined {
    const notebook = this.db.prepare('SELECT * FROM notebooks WHERE id = ?').get(id) as StoredRow | undefined;
    if (!notebook) return undefined;
    const sections = this.db.prepare('SELECT * FROM notebook_sections WHERE notebook_id = ? ORDER BY position').all(id) as StoredRow[];
    return { notebook, sections };
  }

  /** Recreates an exported notebook in `fractalId`, new ids for it and its sections, everything else as it was. Inside the import's transaction. */
  restoreCaseRecord(fractalId: string, record: { notebook: StoredRow; sections: StoredRow[] }): string {
    const id = randomUUID();
    insertStoredRow(this.db, 'notebooks', { ...record.notebook, id, fractal_id: fractalId, prism_id: null });
    for (const s of record.sections) insertStoredRow(this.db, 'notebook_sections', { ...s, id: randomUUID(), notebook_id: id });
    return id;
  }

  private insertSections(notebookId: string, from: number, sections: NewSection[], by: string, t: string): string[] {
    const ins = this.db.prepare(
      `INSERT INTO notebook_sections (id, notebook_id, position, section_type, title, content, tags, results, results_version,
         created_by, updated_by, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    return sections.map((s, i) => {
      const id = randomUUID();
      const results = s.results ?? null;
      ins.run(id, notebookId, from + i, s.section_type, s.title, s.content, JSON.stringify(s.tags), results, results === null ? 0 : 1, by, by, t, t);
      return id;
    });
  }

  /** A structural change: the notebook's version counts it. */
  private bump(notebookId: string, by: string): void {
    this.db.prepare('UPDATE notebooks SET version = version + 1, updated_by = ?, updated_at = ? WHERE id = ?').run(by, now(), notebookId);
  }

  /** A section changed: the notebook was last edited now, by them (its own version stays). */
  private touch(notebookId: string, by: string, t: string): void {
    this.db.prepare('UPDATE notebooks SET updated_by = ?, updated_at = ? WHERE id = ?').run(by, t, notebookId);
  }
}
