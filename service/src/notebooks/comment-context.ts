// What a comment_context section shows: the analysts' comments of a tag (or on chosen logs) in the
// notebook's fractal or prism, with the logs they are about. The comments come from the comments
// store; the logs from the query service, as the query `comment(tags="…")` (or `in(log_id, …)`)
// over the span of the comments' log times, so they arrive as the workspace shows event rows.
import type { Principal } from '../auth/principal.ts';
import { readableMembers } from '../auth/read-scope.ts';
import type { Comment } from '../collaboration/comments-store.ts';
import type { Context } from '../context.ts';
import { runQuery } from '../query/query-service.ts';
import { actorName, scopeParams } from '../shared/documents.ts';
import type { ContextSpec } from './notebooks-logic.ts';
import type { Scope } from './notebooks-store.ts';
import type { Snapshot } from './results.ts';

/** Comments one section gathers at most (the oldest logs first). */
export const MAX_CONTEXT_COMMENTS = 1_000;

/** A comment as a snapshot keeps it. */
export interface ContextComment {
  id: string;
  log_id: string;
  fractal_id: string;
  /** The log's event time (RFC 3339). */
  timestamp: string;
  content: string;
  tags: string[];
  author: string;
  created_at: string;
}

/** The fractals a notebook's scope shows `p`: a prism's members only as far as `p` may read them now. */
export function scopeFractals(ctx: Context, p: Principal, scope: Scope): string[] {
  return scope.type === 'fractal' ? [scope.id] : readableMembers(ctx, p, scope.id);
}

/** The comments a spec names in these fractals, oldest log first. */
export function contextComments(ctx: Context, fractalIds: string[], spec: ContextSpec): Comment[] {
  let found: Comment[];
  if ('tag' in spec) {
    found = [];
    // The store pages by 1,000; newest log first.
    for (let offset = 0; found.length < MAX_CONTEXT_COMMENTS; offset += 1000) {
      const { rows } = ctx.comments.list(fractalIds, { tags: [spec.tag] }, { limit: 1000, offset });
      found.push(...rows);
      if (rows.length < 1000) break;
    }
  } else {
    found = spec.log_ids.flatMap((id) => ctx.comments.forLog(fractalIds, id));
  }
  return found
    .slice(0, MAX_CONTEXT_COMMENTS)
    .sort((a, b) => a.log_timestamp.localeCompare(b.log_timestamp) || a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
}

export const contextComment = (c: Comment): ContextComment => ({
  id: c.id,
  log_id: c.log_id,
  fractal_id: c.fractal_id,
  timestamp: c.log_timestamp,
  content: c.content,
  tags: c.tags,
  author: c.author,
  created_at: c.created_at,
});

/** The query that finds a spec's logs (tags hold no quotes or commas: comments refuse them). */
export function contextQuery(spec: ContextSpec): string {
  return 'tag' in spec ? `comment(tags="${spec.tag}")` : `in(log_id, values=[${spec.log_ids.join(', ')}])`;
}

/** Gathers the comments and their logs into a snapshot. */
export async function gatherContext(ctx: Context, p: Principal, scope: Scope, spec: ContextSpec, signal?: AbortSignal): Promise<Snapshot> {
  const started = performance.now();
  const comments = contextComments(ctx, scopeFractals(ctx, p, scope), spec);
  const query = contextQuery(spec);
  let logs: Snapshot['results'] = [];
  let fieldOrder: string[] = [];
  let range: { start: string; end: string } | null = null;
  if (comments.length) {
    const first = comments[0]!.log_timestamp;
    const last = new Date(Date.parse(comments[comments.length - 1]!.log_timestamp) + 1).toISOString();
    range = { start: first, end: last };
    const run = await runQuery(
      ctx,
      p,
      { query, ...scopeParams(scope), start: range.start, end: range.end },
      { signal },
    );
    logs = run.rows;
    fieldOrder = run.prepared.compiled.fieldOrder;
  }
  return {
    results: logs,
    count: logs.length,
    field_order: fieldOrder,
    is_aggregated: false,
    chart_type: '',
    chart_config: {},
    limit_hit: '',
    execution_ms: Math.round(performance.now() - started),
    query,
    start: range?.start ?? null,
    end: range?.end ?? null,
    executed_at: new Date().toISOString(),
    executed_by: actorName(p),
    truncated: false,
    comments: comments.map(contextComment),
  };
}
