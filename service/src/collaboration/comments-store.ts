// Comments: analysts' annotations on single logs, with tags. One row per comment in `comments`
// (the log's id and event time copied in, so lists never need ClickHouse), one row per tag in
// `comment_tags`. The store knows nothing about who may do what; comments-logic.ts decides.
//
// Id lists (fractals, comments, tags) are passed as one JSON text and read with json_each(), so
// every statement has a fixed number of bound parameters whatever the list length.
import { randomUUID } from 'node:crypto';
import type { Db } from '../storage/sqlite.ts';
import { insertStoredRow, type StoredRow } from '../storage/stored-rows.ts';

export type AuthorType = 'user' | 'api_key';

export interface CommentRow {
  id: string;
  fractal_id: string;
  log_id: string;
  /** The log's event time, RFC 3339 UTC with milliseconds. */
  log_timestamp: string;
  content: string;
  author: string;
  author_type: AuthorType;
  author_user_id: string | null;
  author_key_id: string | null;
  created_at: string;
  updated_at: string;
}

export interface Comment extends CommentRow {
  /** Sorted, as stored (exact, case-sensitive). */
  tags: string[];
}

export interface CommentFilter {
  /** A comment with any of these tags (exact, case-sensitive); empty or absent: no tag filter. */
  tags?: string[];
  /** Comment text contains this, case-insensitively; empty or absent: no text filter. */
  keyword?: string;
}

export interface Page {
  limit: number;
  offset: number;
}

export interface CommentedLog {
  log_id: string;
  fractal_id: string;
  timestamp: string;
  comment_count: number;
  tags: string[];
  first_commented_at: string;
  last_commented_at: string;
}

const json = (v: unknown) => JSON.stringify(v);
/** Case folding for `keyword`: the same on stored text and on the searched word. */
export const foldCase = (s: string) => s.toLowerCase();

export class CommentsStore {
  constructor(private readonly db: Db) {}

  create(c: {
    fractalId: string;
    logId: string;
    logTimestamp: string;
    content: string;
    tags: string[];
    author: string;
    authorType: AuthorType;
    authorUserId: string | null;
    authorKeyId: string | null;
  }): Comment {
    const id = randomUUID();
    const now = new Date().toISOString();
    this.db.transaction(() => {
      this.db
        .prepare(
          `INSERT INTO comments (id, fractal_id, log_id, log_timestamp, content, content_folded, author, author_type,
             author_user_id, author_key_id, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(id, c.fractalId, c.logId, c.logTimestamp, c.content, foldCase(c.content), c.author, c.authorType, c.authorUserId, c.authorKeyId, now, now);
      this.insertTags(id, c.fractalId, c.tags);
    })();
    return this.get(id)!;
  }

  get(id: string): Comment | undefined {
    return this.getMany([id])[0];
  }

  /** The comments with these ids that exist, in no particular order. */
  getMany(ids: string[]): Comment[] {
    if (ids.length === 0) return [];
    const rows = this.db.prepare(`SELECT ${COLUMNS} FROM comments WHERE id IN (SELECT value FROM json_each(?))`).all(json(ids)) as CommentRow[];
    return this.withTags(rows);
  }

  /** Replaces the content and/or the whole tag set. */
  update(id: string, patch: { content?: string; tags?: string[] }): Comment {
    this.db.transaction(() => {
      const cur = this.db.prepare('SELECT fractal_id FROM comments WHERE id = ?').get(id) as { fractal_id: string } | undefined;
      if (!cur) return;
      if (patch.content !== undefined) {
        this.db.prepare('UPDATE comments SET content = ?, content_folded = ? WHERE id = ?').run(patch.content, foldCase(patch.content), id);
      }
      if (patch.tags !== undefined) {
        this.db.prepare('DELETE FROM comment_tags WHERE comment_id = ?').run(id);
        this.insertTags(id, cur.fractal_id, patch.tags);
      }
      this.touch([id]);
    })();
    return this.get(id)!;
  }

  deleteMany(ids: string[]): number {
    if (ids.length === 0) return 0;
    return this.db.prepare('DELETE FROM comments WHERE id IN (SELECT value FROM json_each(?))').run(json(ids)).changes;
  }

  /** Adds `tag` to each of these comments that lacks it; returns how many changed. */
  addTag(ids: string[], tag: string): number {
    return this.db.transaction(() => {
      const has = new Set(this.commentIdsWithTag(ids, tag));
      const lacking = this.getMany(ids).filter((c) => !has.has(c.id));
      for (const c of lacking) this.insertTags(c.id, c.fractal_id, [tag]);
      this.touch(lacking.map((c) => c.id));
      return lacking.length;
    })();
  }

  /** Removes `tag` from each of these comments that has it; returns how many changed. */
  removeTag(ids: string[], tag: string): number {
    return this.db.transaction(() => {
      const having = this.commentIdsWithTag(ids, tag);
      this.db.prepare('DELETE FROM comment_tags WHERE tag = ? AND comment_id IN (SELECT value FROM json_each(?))').run(tag, json(having));
      this.touch(having);
      return having.length;
    })();
  }

  /** The comments on one log within these fractals, oldest first. */
  forLog(fractalIds: string[], logId: string): Comment[] {
    const rows = this.db
      .prepare(
        `SELECT ${COLUMNS} FROM comments
         WHERE log_id = ? AND fractal_id IN (SELECT value FROM json_each(?))
         ORDER BY created_at, id`,
      )
      .all(logId, json(fractalIds)) as CommentRow[];
    return this.withTags(rows);
  }

  /** Comments in these fractals, newest log first (then newest comment), with the total before paging. */
  list(fractalIds: string[], filter: CommentFilter, page: Page): { rows: Comment[]; total: number } {
    const { where, params } = this.filterSql(fractalIds, filter);
    const total = (this.db.prepare(`SELECT count(*) AS n FROM comments c WHERE ${where}`).get(...params) as { n: number }).n;
    const rows = this.db
      .prepare(
        `SELECT ${COLUMNS} FROM comments c WHERE ${where}
         ORDER BY c.log_timestamp DESC, c.created_at DESC, c.id LIMIT ? OFFSET ?`,
      )
      .all(...params, page.limit, page.offset) as CommentRow[];
    return { rows: this.withTags(rows), total };
  }

  /** The commented logs in these fractals (one entry per log), newest log first. */
  commentedLogs(fractalIds: string[], filter: CommentFilter, page: Page): { rows: CommentedLog[]; total: number } {
    const { where, params } = this.filterSql(fractalIds, filter);
    const total = (
      this.db.prepare(`SELECT count(*) AS n FROM (SELECT 1 FROM comments c WHERE ${where} GROUP BY c.fractal_id, c.log_id)`).get(...params) as {
        n: number;
      }
    ).n;
    // Counts and tags cover every comment on the log, not only those matching the filter.
    const logs = this.db
      .prepare(
        `WITH matched AS (SELECT DISTINCT c.fractal_id, c.log_id FROM comments c WHERE ${where})
         SELECT c.log_id, c.fractal_id, max(c.log_timestamp) AS timestamp, count(*) AS comment_count,
           min(c.created_at) AS first_commented_at, max(c.created_at) AS last_commented_at
         FROM comments c JOIN matched m ON m.fractal_id = c.fractal_id AND m.log_id = c.log_id
         GROUP BY c.fractal_id, c.log_id
         ORDER BY timestamp DESC, c.log_id LIMIT ? OFFSET ?`,
      )
      .all(...params, page.limit, page.offset) as Array<Omit<CommentedLog, 'tags'>>;
    const tagRows = logs.length
      ? (this.db
          .prepare(
            `SELECT DISTINCT c.fractal_id, c.log_id, t.tag FROM comment_tags t JOIN comments c ON c.id = t.comment_id
             WHERE c.log_id IN (SELECT value FROM json_each(?)) AND c.fractal_id IN (SELECT value FROM json_each(?))
             ORDER BY t.tag`,
          )
          .all(json(logs.map((l) => l.log_id)), json(fractalIds)) as Array<{ fractal_id: string; log_id: string; tag: string }>)
      : [];
    const tags = new Map<string, string[]>();
    for (const r of tagRows) {
      const k = `${r.fractal_id}/${r.log_id}`;
      tags.set(k, [...(tags.get(k) ?? []), r.tag]);
    }
    return { rows: logs.map((l) => ({ ...l, tags: tags.get(`${l.fractal_id}/${l.log_id}`) ?? [] })), total };
  }

  /** Each tag used in these fractals with the number of comments carrying it, most used first. */
  tagCounts(fractalIds: string[]): Array<{ tag: string; count: number }> {
    return this.db
      .prepare(
        `SELECT tag, count(*) AS count FROM comment_tags WHERE fractal_id IN (SELECT value FROM json_each(?))
         GROUP BY tag ORDER BY count DESC, tag`,
      )
      .all(json(fractalIds)) as Array<{ tag: string; count: number }>;
  }

  /** Distinct ids of the logs in these fractals carrying at least one comment that matches. */
  commentedLogIds(fractalIds: string[], filter: CommentFilter): string[] {
    const { where, params } = this.filterSql(fractalIds, filter);
    return (this.db.prepare(`SELECT DISTINCT c.log_id FROM comments c WHERE ${where}`).all(...params) as Array<{ log_id: string }>).map(
      (r) => r.log_id,
    );
  }

  // ---- case archives (cases/) ------------------------------------------------------------------

  /** Every comment of a fractal as stored, with its tags, oldest first: a case export reads them in pages. */
  caseRecords(fractalId: string, after: { created_at: string; id: string } | null, limit: number): Array<StoredRow & { tags: string[] }> {
    const rows = this.db
      .prepare(
        `SELECT ${COLUMNS} FROM comments WHERE fractal_id = ? AND (created_at, id) > (?, ?) ORDER BY created_at, id LIMIT ?`,
      )
      .all(fractalId, after?.created_at ?? '', after?.id ?? '', limit) as CommentRow[];
    return this.withTags(rows) as unknown as Array<StoredRow & { tags: string[] }>;
  }

  /**
   * Recreates an exported comment in `fractalId` under a new id, times and author name as they
   * were; the author's user or key id is left empty (they belong to the other appliance). Call
   * inside the import's transaction.
   */
  restoreCaseRecord(fractalId: string, record: StoredRow & { tags: unknown }): void {
    const { tags, ...row } = record;
    if (!Array.isArray(tags) || !tags.every((t) => typeof t === 'string')) throw new Error('A comment\'s tags are not a list of text.');
    const id = randomUUID();
    const content = String(row.content ?? '');
    insertStoredRow(this.db, 'comments', { ...row, id, fractal_id: fractalId, content_folded: foldCase(content), author_user_id: null, author_key_id: null });
    this.insertTags(id, fractalId, tags as string[]);
  }

  private filterSql(fractalIds: string[], filter: CommentFilter): { where: string; params: unknown[] } {
    const where = ['c.fractal_id IN (SELECT value FROM json_each(?))'];
    const params: unknown[] = [json(fractalIds)];
    if (filter.tags?.length) {
      where.push('EXISTS (SELECT 1 FROM comment_tags t WHERE t.comment_id = c.id AND t.tag IN (SELECT value FROM json_each(?)))');
      params.push(json(filter.tags));
    }
    if (filter.keyword) {
      // instr, not LIKE: the keyword is a literal (no % or _ wildcards).
      where.push('instr(c.content_folded, ?) > 0');
      params.push(foldCase(filter.keyword));
    }
    return { where: where.join(' AND '), params };
  }

  private insertTags(id: string, fractalId: string, tags: string[]): void {
    const ins = this.db.prepare('INSERT OR IGNORE INTO comment_tags (comment_id, fractal_id, tag) VALUES (?, ?, ?)');
    for (const t of tags) ins.run(id, fractalId, t);
  }

  private commentIdsWithTag(ids: string[], tag: string): string[] {
    return (
      this.db
        .prepare('SELECT comment_id FROM comment_tags WHERE tag = ? AND comment_id IN (SELECT value FROM json_each(?))')
        .all(tag, json(ids)) as Array<{ comment_id: string }>
    ).map((r) => r.comment_id);
  }

  private touch(ids: string[]): void {
    if (ids.length === 0) return;
    this.db.prepare('UPDATE comments SET updated_at = ? WHERE id IN (SELECT value FROM json_each(?))').run(new Date().toISOString(), json(ids));
  }

  private withTags(rows: CommentRow[]): Comment[] {
    if (rows.length === 0) return [];
    const tagRows = this.db
      .prepare('SELECT comment_id, tag FROM comment_tags WHERE comment_id IN (SELECT value FROM json_each(?)) ORDER BY tag')
      .all(json(rows.map((r) => r.id))) as Array<{ comment_id: string; tag: string }>;
    const tags = new Map<string, string[]>();
    for (const r of tagRows) tags.set(r.comment_id, [...(tags.get(r.comment_id) ?? []), r.tag]);
    return rows.map((r) => ({ ...r, tags: tags.get(r.id) ?? [] }));
  }
}

const COLUMNS = `id, fractal_id, log_id, log_timestamp, content, author, author_type, author_user_id, author_key_id, created_at, updated_at`;
