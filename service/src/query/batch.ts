// Many filter-only event queries over the same fractals and time range in one scan: the alert
// engine evaluates every alert of a fractal whose window is the same at each tick. Each query's
// stage-0 conditions become one element of a per-row array, the rows any of them keeps are read
// once (newest first), and each row goes to the queries its array marks. Rows are exactly what
// each query alone returns, up to its own row cap. Queries that do more than filter events run
// alone (the caller's choice: `combinable`).
import type { Analytics } from '../storage/clickhouse.ts';
import type { CompiledQuery } from './compile.ts';
import { conjunction } from './plan/pipeline.ts';
import { engineFailure, executableSql, ResultBudget, rowShaper, type Row } from './run.ts';

/** Rows the combined statement reads at most; past it the caller splits the batch. */
export const BATCH_ROW_LIMIT = 100_000;
/** Queries one statement combines at most (a statement of thousands of conditions is slow to plan). */
export const BATCH_MAX_QUERIES = 100;

/**
 * A query one scan can answer with others: its final rows are the events its conditions keep,
 * from stage 0 alone (no join, transform, projection, row hook), and it has conditions.
 */
export function combinable(q: CompiledQuery): boolean {
  const p = q.pipeline;
  const s = p.events;
  return (
    q.eventRows &&
    p.stages.length === 1 &&
    p.rowsAreFilteredEvents() &&
    s.joins.length === 0 &&
    p.rowHooks.length === 0 &&
    s.computed.size === 0 &&
    !s.projection &&
    s.where.length > 0 &&
    !q.paged
  );
}

export interface BatchResult {
  rows: Row[];
  /** The query's own row cap was reached. */
  limitHit: boolean;
}

/**
 * Runs combinable queries compiled with one shared `Params` and the same scope and range. Returns
 * null when more than BATCH_ROW_LIMIT rows matched, or more than one query's result budget of
 * bytes (run them one by one instead, each under its own budget). Throws QueryTimeoutError /
 * QueryLimitError / QueryExecutionError like a single query.
 */
export async function runBatch(ch: Analytics, queries: CompiledQuery[], opts: { timeoutS: number; signal?: AbortSignal; background?: boolean }): Promise<BatchResult[] | null> {
  const first = queries[0]!;
  const p = first.pipeline;
  const outs = p.outputsOf(p.events);
  const conds = queries.map((q) => conjunction(q.pipeline.events.where));
  const sql =
    `SELECT ${outs.map((c) => `${c.sql} AS ${c.alias}`).join(', ')}, [${conds.map((c) => `toUInt8(${c})`).join(', ')}] AS hits` +
    ` FROM ${p.eventsFrom()} WHERE ${conjunction([...p.rangeWhere(), conds.map((c) => `(${c})`).join(' OR ')])}` +
    ` ORDER BY timestamp DESC, log_id DESC LIMIT ${BATCH_ROW_LIMIT + 1}`;
  const shape = rowShaper(first);
  const results: BatchResult[] = queries.map(() => ({ rows: [], limitHit: false }));
  const caps = queries.map((q) => q.rowCap ?? Infinity);
  const budget = new ResultBudget();
  let read = 0;
  try {
    for await (const chunk of ch.streamRows(executableSql(sql, opts.timeoutS), p.params.values, { signal: opts.signal, background: opts.background })) {
      for (const raw of chunk) {
        if (++read > BATCH_ROW_LIMIT) return null;
        const hits = raw[outs.length] as Array<number | string>;
        let row: Row | undefined;
        for (let i = 0; i < hits.length; i++) {
          if (Number(hits[i]) !== 1) continue;
          const r = results[i]!;
          if (r.rows.length >= caps[i]!) {
            r.limitHit = true;
            continue;
          }
          // Each query gets its own object: actions may change the rows they are handed.
          if (!row) {
            row = shape(raw);
            budget.fit([row]);
            if (budget.exceeded) return null;
          } else row = { ...row };
          r.rows.push(row);
        }
      }
    }
  } catch (err) {
    if (opts.signal?.aborted) throw err;
    throw engineFailure(err);
  }
  return results;
}
