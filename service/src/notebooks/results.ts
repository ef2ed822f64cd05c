// A section's stored results: the snapshot kept as evidence. It holds the rows and everything
// needed to show them again (columns, chart) and to say where they came from (the query as run,
// after @variables, the range, who ran it and when), so it stays meaningful after the logs age out.
// Executing a query section runs it through the query service with the notebook's scope, range and
// variables and stores the snapshot; a comment_context section gathers its comments and their logs.
import type { Context } from '../context.ts';
import { badRequest } from '../http/errors.ts';
import { runQuery } from '../query/query-service.ts';
import type { Row } from '../query/run.ts';
import { gatherContext, type ContextComment } from './comment-context.ts';
import { actorName, rangeOf, scopeOf, scopeParams, type Actor } from '../shared/documents.ts';
import { parseContextSpec, storeResults } from './notebooks-logic.ts';
import type { Notebook, Section } from './notebooks-store.ts';

/** Rows a snapshot keeps at most; a larger result keeps the first ones and says `truncated`. */
export const MAX_SNAPSHOT_ROWS = 10_000;

export interface Snapshot {
  results: Row[];
  count: number;
  field_order: string[];
  is_aggregated: boolean;
  chart_type: string;
  chart_config: Record<string, unknown>;
  /** `search` when the query stopped at its row cap, else empty. */
  limit_hit: string;
  execution_ms: number;
  /** The query as run (after @variables); for comment_context, the filter that found the logs. */
  query: string;
  start: string | null;
  end: string | null;
  executed_at: string;
  executed_by: string;
  /** More rows than MAX_SNAPSHOT_ROWS came back; the first ones were kept. */
  truncated: boolean;
  /** comment_context: the comments shown, oldest log first. */
  comments?: ContextComment[];
}

/** A snapshot sent with PUT …/results (or in an import): the rows are required, the rest optional. */
export interface SnapshotInput {
  results: unknown[];
  count?: number;
  field_order?: string[];
  is_aggregated?: boolean;
  chart_type?: string;
  chart_config?: Record<string, unknown>;
  limit_hit?: string;
  execution_ms?: number;
  query?: string;
  start?: string | null;
  end?: string | null;
  executed_at?: string;
  executed_by?: string;
  truncated?: boolean;
  comments?: unknown[];
}

/** Checks a snapshot given by a client and returns it complete, as JSON text to store. */
export function snapshotText(input: SnapshotInput, by: string, field = 'results'): string {
  if (!Array.isArray(input.results)) throw badRequest(`The field "${field}.results" must be an array of rows.`);
  if (input.results.length > MAX_SNAPSHOT_ROWS) throw badRequest(`The field "${field}.results" may hold at most ${MAX_SNAPSHOT_ROWS} rows.`);
  const badRow = input.results.findIndex((r) => typeof r !== 'object' || r === null || Array.isArray(r));
  if (badRow >= 0) throw badRequest(`The field "${field}.results[${badRow}]" must be an object (a row of fields).`);
  const types: Array<[keyof SnapshotInput, string]> = [
    ['count', 'number'],
    ['is_aggregated', 'boolean'],
    ['chart_type', 'string'],
    ['limit_hit', 'string'],
    ['execution_ms', 'number'],
    ['query', 'string'],
    ['executed_at', 'string'],
    ['executed_by', 'string'],
    ['truncated', 'boolean'],
  ];
  for (const [k, t] of types) {
    if (input[k] !== undefined && typeof input[k] !== t) throw badRequest(`The field "${field}.${k}" must be a ${t}.`);
  }
  for (const k of ['start', 'end'] as const) {
    if (input[k] != null && typeof input[k] !== 'string') throw badRequest(`The field "${field}.${k}" must be a string or null.`);
  }
  if (input.field_order !== undefined && !(Array.isArray(input.field_order) && input.field_order.every((f) => typeof f === 'string'))) {
    throw badRequest(`The field "${field}.field_order" must be an array of field names.`);
  }
  if (input.chart_config !== undefined && (typeof input.chart_config !== 'object' || input.chart_config === null || Array.isArray(input.chart_config))) {
    throw badRequest(`The field "${field}.chart_config" must be an object.`);
  }
  const snap: Snapshot = {
    results: input.results as Row[],
    count: input.count ?? input.results.length,
    field_order: input.field_order ?? [...new Set(input.results.flatMap((r) => Object.keys(r as Row)))],
    is_aggregated: input.is_aggregated ?? false,
    chart_type: input.chart_type ?? '',
    chart_config: input.chart_config ?? {},
    limit_hit: input.limit_hit ?? '',
    execution_ms: input.execution_ms ?? 0,
    query: input.query ?? '',
    start: input.start ?? null,
    end: input.end ?? null,
    executed_at: input.executed_at ?? new Date().toISOString(),
    executed_by: input.executed_by ?? by,
    truncated: input.truncated ?? false,
  };
  if (input.comments !== undefined) {
    if (!Array.isArray(input.comments)) throw badRequest(`The field "${field}.comments" must be an array.`);
    snap.comments = input.comments as ContextComment[];
  }
  return JSON.stringify(snap);
}

export interface ExecuteInput {
  start?: string;
  end?: string;
  /** false: run and answer, but keep the stored snapshot as it is. */
  store?: boolean;
}

/** Runs a query or comment_context section; stores the snapshot unless told not to. */
export async function executeSection(ctx: Context, a: Actor, nb: Notebook, s: Section, input: ExecuteInput, signal?: AbortSignal): Promise<{ section: Section; result: Snapshot }> {
  const scope = scopeOf(nb);
  const range = rangeOf(nb, input);
  const by = actorName(a.p);
  let snap: Snapshot;
  if (s.section_type === 'query') {
    if (s.content.trim() === '') throw badRequest('This query section has no query yet; write one and save it before running it.');
    const run = await runQuery(
      ctx,
      a.p,
      { query: s.content, ...scopeParams(scope), start: range.start, end: range.end, variables: nb.variables },
      { signal },
    );
    const c = run.prepared.compiled;
    snap = {
      results: run.rows.slice(0, MAX_SNAPSHOT_ROWS),
      count: Math.min(run.rows.length, MAX_SNAPSHOT_ROWS),
      field_order: c.fieldOrder,
      is_aggregated: c.isAggregated,
      chart_type: c.chartType,
      chart_config: c.chartConfig,
      limit_hit: run.limitHit ? 'search' : '',
      execution_ms: run.executionMs,
      query: run.prepared.text,
      start: range.start,
      end: range.end,
      executed_at: new Date().toISOString(),
      executed_by: by,
      truncated: run.rows.length > MAX_SNAPSHOT_ROWS,
    };
  } else if (s.section_type === 'comment_context') {
    snap = await gatherContext(ctx, a.p, scope, parseContextSpec(s.content), signal);
  } else {
    throw badRequest(`Only query and comment_context sections run; section "${s.title || s.id}" is ${s.section_type}.`);
  }
  const section = input.store === false ? s : storeResults(ctx, a, nb, s, JSON.stringify(snap));
  return { section, result: snap };
}
