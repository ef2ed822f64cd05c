// `join(key, type=inner, max=10000, include=[c1, …]) { subquery }` (query-language.md §3.7).
// The block is a complete query over the same time range and scope: it is planned into a pipeline
// of its own over the same options (fractal ids, range, and the same Params, so parameter names
// never collide), capped at `max` rows, wrapped so it exposes only `jN_*` names, and joined to the
// outer rows with a LEFT or INNER JOIN on the key as text:
// - outer rows that are events: the JOIN is added to stage 0 (the events table), and each joined
//   column is a per-event computed column of stage 0, so later filters, sorts and aggregations of
//   the events read it like any other, and the histogram counts the joined events;
// - aggregated outer rows: a new stage reads the previous one's rows JOINed with the subquery; the
//   key must be one of their columns (a group column) and `_join_*` are derived names, so
//   conditions on them apply after the join (§1.9 rule 5; an AND with event names is split).
// Output: the outer columns, then each subquery column except the key (or only `include=`),
// prefixed `_join_`. Unmatched rows of a LEFT join have empty join columns. The subquery gives one
// row per key (the first it returns: for an event search, normally the newest), so each outer row
// is kept or dropped, never repeated. For an event subquery the columns are its event columns
// (timestamp, log_id, fractal_id, norm_log) and computed ones, or any event field named in include=.
import { asText } from '../plan/columns.ts';
import { QueryCompileError } from '../plan/errors.ts';
import { Pipeline, type OutputColumn } from '../plan/pipeline.ts';
import type { Block, Span, Stage as AstStage } from '../syntax/ast.ts';
import { planStage } from '../compile.ts';
import { Args, listOf } from './args.ts';
import { defineCommand } from './command.ts';

const TRANSLATE = 'join() subquery translation error: ';
const DEFAULT_MAX = 10_000;
const MAX_CAP = 100_000;

/** Pipelines planned for a join subquery (a join inside one is refused). */
const subqueries = new WeakSet<Pipeline>();
/** Joins planned so far per outer pipeline: the N of the `jN_*` names. */
const joinCount = new WeakMap<Pipeline, number>();

/** The subquery's stages: one query (`;` separates chain steps and case branches, not subqueries). */
function subqueryStages(block: Block | undefined): AstStage[] {
  const branches = block?.branches ?? [];
  if (branches.length > 1) {
    throw new QueryCompileError(`${TRANSLATE}the subquery is one query; ";" separates nothing here`, branches[1].span);
  }
  const stages = branches[0]?.stages ?? [];
  for (const st of stages) {
    if (st.kind === 'command' && st.call.name.toLowerCase() === 'join') {
      throw new QueryCompileError('join() does not support nested joins', st.call.nameSpan);
    }
  }
  return stages;
}

/** Plans the subquery; its compile errors get the §6 prefix and a span in whole-query coordinates. */
function planSubquery(p: Pipeline, stages: AstStage[]): Pipeline {
  const sub = new Pipeline({ ...p.options });
  subqueries.add(sub);
  for (const st of stages) {
    try {
      planStage(st, sub);
    } catch (e) {
      if (e instanceof QueryCompileError) {
        if (e.message === 'join() does not support nested joins') throw e;
        throw new QueryCompileError(TRANSLATE + e.message, e.span ?? st.span);
      }
      throw e;
    }
  }
  return sub;
}

/** `groupBy(…) | count()` at the end: count() counted the groups and dropped the group columns. */
function endsInBareCountAfterGroupBy(stages: AstStage[]): boolean {
  const last = stages[stages.length - 1];
  if (last?.kind !== 'command' || last.call.name.toLowerCase() !== 'count' || last.call.args.length > 0) return false;
  return stages.slice(0, -1).some((s) => s.kind === 'command' && s.call.name.toLowerCase() === 'groupby');
}

/** Column names as the subquery's result lists them. */
function subqueryColumnNames(sub: Pipeline): string[] {
  const final = sub.current;
  if (final.isEvents && !final.agg) {
    if (final.projection) {
      const order = [...final.projection];
      for (const n of ['timestamp', 'fractal_id']) if (!order.includes(n)) order.push(n);
      return order;
    }
    const computed = final.computedOrder.map((c) => c.name);
    return [...computed, ...['timestamp', 'log_id', 'fractal_id', 'norm_log'].filter((n) => !computed.includes(n))];
  }
  return sub.finalColumns().filter((c) => !c.hidden).map((c) => c.name);
}

export default defineCommand({
  name: 'join',
  tier: 'STANDARD',
  category: 'join',
  signature: 'join(key, type=inner, max=10000, include=[c1, …]) { subquery }',
  description:
    'Runs the block as a complete query over the same time range and scope and joins its rows to the outer rows on key (a group column if the outer query aggregates). type=inner keeps matched outer rows, type=left all of them (unmatched join columns empty). max caps the subquery rows (at most 100000). Each subquery column except the key (or only include=) is added prefixed _join_; conditions on them apply after the join.',
  outputs: 'the outer columns, then _join_<column> for each subquery column (_count → _join__count)',
  example: 'action="denied" | join(src_ip) { action="login_success" | groupBy(src_ip) } | _join__count > 10',
  apply(call, p) {
    if (subqueries.has(p)) throw new QueryCompileError('join() does not support nested joins', call.nameSpan);
    const args = new Args(call);
    args.allowOnly(['key', 'field', 'type', 'max', 'include']);
    const key = args.text(['key', 'field'], 0);
    if (!key) throw new QueryCompileError('join() requires a join key field, e.g. join(user) { ... }', call.nameSpan);

    const typeArg = args.named.get('type');
    const typeText = args.text(['type']) ?? 'inner';
    const type = typeText.toLowerCase();
    if (type !== 'inner' && type !== 'left') {
      throw new QueryCompileError(`join() type must be 'inner' or 'left', got '${typeText}'`, typeArg?.span);
    }

    let max = DEFAULT_MAX;
    const maxArg = args.named.get('max');
    if (maxArg) {
      const text = args.text(['max']) ?? '';
      if (!/^\+?\d+$/.test(text.trim()) || Number(text) <= 0) {
        throw new QueryCompileError(`join() max must be a positive integer, got '${text}'`, maxArg.span);
      }
      max = Math.min(Number(text), MAX_CAP);
    }
    const includeArg = args.named.get('include');
    const include = includeArg ? listOf(includeArg.value) : undefined;

    // ---- the subquery ----
    const stages = subqueryStages(call.block);
    const sub = planSubquery(p, stages);
    const blockSpan: Span | undefined = call.block?.span;
    const names = subqueryColumnNames(sub);
    const final = sub.current;
    const subEvents = final.isEvents && !final.agg;
    // Event rows carry every field of their events; with table() only the listed ones.
    const available = (n: string) => names.includes(n) || (subEvents && !final.projection);
    if (!available(key)) {
      const hint = endsInBareCountAfterGroupBy(stages)
        ? ' (its count() after groupBy() counts the groups and drops the group columns; remove count(): groupBy() already adds _count)'
        : '';
      throw new QueryCompileError(`join() subquery must output the join key "${key}", but returns [${names.join(', ')}]${hint}`, blockSpan);
    }
    let wanted: string[];
    if (include) {
      for (const n of include) {
        if (!available(n)) {
          throw new QueryCompileError(`join() include: "${n}" is not a column of the subquery, which returns [${names.join(', ')}]`, includeArg!.span);
        }
      }
      wanted = [...new Set(include)];
    } else {
      wanted = names.filter((n) => n !== key);
    }
    // Fields of event rows are not SQL columns of the subquery yet: select them.
    if (subEvents) {
      const have = new Set(sub.finalColumns().map((c) => c.name));
      for (const n of [key, ...wanted]) {
        if (have.has(n)) continue;
        const col = sub.resolveIn(sub.events, n);
        sub.addComputed(n, col.sql, col.type, { stage: sub.events });
        have.add(n);
      }
    }
    const outs = sub.finalColumns();
    const byName = (n: string): OutputColumn => outs.find((c) => c.name === n)!;
    p.regexes.push(...sub.regexes);

    const n = joinCount.get(p) ?? 0;
    joinCount.set(p, n + 1);
    const j = `j${n}`;
    const keyCol = byName(key);
    const select = [
      `${asText({ sql: keyCol.alias, type: keyCol.type })} AS ${j}_k`,
      `1 AS ${j}_m`,
      ...wanted.map((name, i) => `${byName(name).alias} AS ${j}_${i}`),
    ];
    // One subquery row per key: the first it returns.
    p.joinLookup({
      alias: j,
      sql: `SELECT ${select.join(', ')} FROM (${sub.toSql(max)}) LIMIT 1 BY ${j}_k`,
      inner: type === 'inner',
      key,
      columns: wanted.map((name) => ({ name: `_join_${name}`, type: byName(name).type })),
      missingKey: (cols) =>
        new QueryCompileError(
          `join(): the outer rows have no column "${key}" (they have [${cols.join(', ')}]); after an aggregation, join on one of its group columns`,
          call.args[0]?.span ?? call.nameSpan,
        ),
    });
  },
});
