// `case { condition | segment | … ; … ; * | … }` (query-language.md §3.3). Every row takes the
// first branch whose condition holds (the `*` branch when none does); conditions, including the
// narrowing ones (a condition function or other filter after the condition), read the rows as
// they were before the case. Each branch is planned on its own from the same starting columns:
// - `field := value`, `field = value` and a bare value (`case_result`) set literal text;
// - per-row transforms (`regex`, …) plan as usual;
// then every field the block sets becomes one column, `multiIf(<cond 1>, <value in branch 1>,
// …, <value when no branch sets it>)`: the value before the case, or empty for a field some
// branch assigns literally ("a field set by other branches but not by the one taken is empty").
// One multiIf per field keeps the SQL linear in the number of branches (mapping tables of
// hundreds of branches fit). Aggregations become conditional aggregates (`-If`) over the rows
// of their branch, all in one pass: the branch number is computed once per row, and the
// aggregates read it in the next stage; they are named after the output without its leading `_`
// plus `_<position among the block's aggregates>`. Errors carry the `case branch: ` prefix and
// a span in whole-query coordinates (§6).
import { asNumberOrNull, asText, type Column } from '../plan/columns.ts';
import { conditionSql } from '../plan/conditions.ts';
import { QueryCompileError } from '../plan/errors.ts';
import { conjunction, type Pipeline, type Stage } from '../plan/pipeline.ts';
import type { Branch, Call, Condition, Expr, Span, Stage as AstStage } from '../syntax/ast.ts';
import { aggregateSpecOf } from './aggregate-command.ts';
import { aggregateColumns, isSubFunction, multiSpecs, type AggregateSpec } from './aggregate-functions.ts';
import { defineCommand } from './command.ts';
// A cycle (the registry lists this command); findCommand is only called while planning, after both loaded.
import { findCommand } from './registry.ts';

const PREFIX = 'case branch: ';

/** Commands that reshape or order the result: not allowed inside a branch (§3.3), by lower-cased name or alias. */
const FORBIDDEN = new Map<string, string>(
  [
    'groupBy', 'sort', 'limit', 'head', 'tail', 'dedup', 'join', 'chain', 'bfs', 'dfs', 'analyzeFields', 'table',
    'piechart', 'barchart', 'heatmap', 'singleval', 'histogram', 'timechart', 'modifiedZScore', 'madOutlier',
    'model_lookup', 'mitre',
  ].map((n) => [n.toLowerCase(), n]),
);
for (const [alias, name] of [['modifiedz', 'modifiedZScore'], ['mzscore', 'modifiedZScore'], ['outlier', 'madOutlier'], ['attack', 'mitre']]) {
  FORBIDDEN.set(alias, name);
}

const forbidden = (name: string, span: Span): QueryCompileError =>
  new QueryCompileError(`${name}() cannot be used inside a case branch; place it after the case`, span);

/** Aggregate commands a branch turns into conditional aggregates, by canonical name → function. */
const AGGREGATES: Record<string, string> = {
  count: 'count', sum: 'sum', avg: 'avg', min: 'min', max: 'max', median: 'median', percentile: 'percentile',
  stddev: 'stddev', skewness: 'skewness', kurtosis: 'kurtosis', iqr: 'iqr', mad: 'mad',
  selectfirst: 'selectfirst', selectlast: 'selectlast', top: 'top',
};

type Segment =
  | { kind: 'literal'; field: string; value: string; span: Span }
  | { kind: 'command'; call: Call; span: Span };

interface BranchPlan {
  branch: Branch;
  conditions: Condition[];
  segments: Segment[];
}

/** Adds the block prefix (once) and a span in whole-query coordinates to errors inside a branch. */
function inBranch<T>(span: Span, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof QueryCompileError && !e.message.startsWith(PREFIX)) throw new QueryCompileError(PREFIX + e.message, e.span ?? span);
    throw e;
  }
}

/** The literal text of a segment's right-hand side: `x := other` stores `other` (§3.3). */
function literalText(target: string, e: Expr): string {
  switch (e.kind) {
    case 'string':
    case 'number':
      return e.text;
    case 'name':
      return e.name;
    case 'paren':
      return `(${literalText(target, e.expr)})`;
    case 'binary':
      return `${literalText(target, e.left)} ${e.op} ${literalText(target, e.right)}`;
    case 'call':
      throw new QueryCompileError(`${target} := ${e.text}: a command's result cannot be assigned in a case branch; write "| ${e.text}" instead`, e.span);
  }
}

/** Splits a branch into its condition(s) and segments. */
function planBranch(branch: Branch): BranchPlan {
  const plan: BranchPlan = { branch, conditions: [], segments: [] };
  branch.stages.forEach((stage: AstStage, i) => {
    const first = i === 0 && !branch.star;
    if (stage.kind === 'filter') {
      const c = stage.condition;
      // After the condition, `field = value` is a segment setting the field.
      if (!first && c.kind === 'compare' && c.op === '=' && c.values.length === 1 && c.values[0].kind !== 'regex') {
        const v = c.values[0];
        plan.segments.push({ kind: 'literal', field: c.field, value: v.kind === 'text' ? v.text : '*', span: stage.span });
      } else {
        plan.conditions.push(c);
      }
      return;
    }
    if (first) {
      throw new QueryCompileError(`${PREFIX}a branch starts with a condition or *, e.g. status>=500 | severity := "critical"`, stage.span);
    }
    if (stage.kind === 'assignment') {
      const value = inBranch(stage.span, () => literalText(stage.target, stage.expr));
      plan.segments.push({ kind: 'literal', field: stage.target, value, span: stage.span });
      return;
    }
    const def = findCommand(stage.call.name);
    if (def?.condition && !def.apply) plan.conditions.push({ kind: 'call', call: stage.call, span: stage.span });
    else plan.segments.push({ kind: 'command', call: stage.call, span: stage.span });
  });
  return plan;
}

/** Whether a value can take a type: anything becomes a number (or null) or text; empty becomes an empty list. */
function convertible(c: Pick<Column, 'sql' | 'type'>, type: Column['type']): boolean {
  return c.type === type || type === 'number' || type === 'text' || (type === 'list' && c.sql === "''");
}

/** A column as SQL of a given type (a default taking the type of the branch values). */
function asType(c: Pick<Column, 'sql' | 'type'>, type: Column['type']): string {
  if (c.type === type) return c.sql;
  if (type === 'number') return asNumberOrNull(c);
  if (type === 'list' && c.sql === "''") return 'emptyArrayString()';
  return asText(c);
}

/** What a per-row transform may change: only computed columns of the case's stage. */
function shapeOf(p: Pipeline, stage: Stage): string {
  return JSON.stringify([
    p.stages.length, stage.where.length, stage.post.length, stage.qualify.length, stage.sort.length, stage.limit,
    stage.edge, stage.dedup, stage.projection, !!stage.agg, stage.defaultSort, p.chartType, p.ownCap, p.hasOwnLimit,
  ]);
}

/** Reserved columns every event row carries into the next stage. */
const EVENT_OUTPUTS = ['timestamp', 'log_id', 'fractal_id', 'norm_log'];
/** The number of the branch a row takes, computed once when the block aggregates. */
const CASE_BRANCH = '_case_branch';

export default defineCommand({
  name: 'case',
  tier: 'STANDARD',
  category: 'field',
  signature: 'case { condition | segment | … ; … ; * | … }',
  description:
    'Each row takes the first branch whose condition holds (* when none does). Segments: field := value (or field = value) sets literal text; a bare value sets case_result; a per-row transform applies only on the rows taking the branch; an aggregation becomes a conditional aggregate over them, named <output without leading _>_<position>; a condition function narrows the branch. After a case with assignments, count() groups by the assigned fields.',
  outputs: 'the assigned fields, transform outputs, or <aggregate>_<n>',
  example: '* | case { status_code>=500 | severity := "critical" ; status_code>=400 | severity := "warning" ; * | severity := "info" } | groupBy(severity)',
  apply(call, p) {
    const branches = call.block?.branches ?? [];
    if (branches.length === 0) {
      throw new QueryCompileError(`${PREFIX}case needs at least one branch, e.g. case { status>=500 | severity := "critical" ; * | severity := "info" }`, call.span);
    }
    const plans = branches.map(planBranch);
    const stage = p.rowStage();
    // Condition functions read the same stage.
    const scope = p.scopeFor(stage, stage.isEvents);

    // Conditions read the rows as they were before the case; the `*` branches come last.
    const conditions = plans.map((plan) =>
      plan.conditions.length === 0
        ? '1'
        : conjunction(plan.conditions.map((c) => inBranch(c.span, () => conditionSql(c, scope)))),
    );
    let priority = [...plans.keys()].sort((x, y) => Number(plans[x].branch.star) - Number(plans[y].branch.star) || x - y);
    const always = priority.findIndex((i) => conditions[i] === '1');
    if (always !== -1) priority = priority.slice(0, always + 1);

    // Each branch is planned on its own, from the same starting columns: what it leaves in the
    // stage's computed columns is its value of each field for the rows taking it.
    const values = new Map<string, Map<number, Column & { arithmetic: boolean }>>();
    const literal = new Set<string>();
    const aggregates: Array<{ branch: number; spec: AggregateSpec; position: number; sub: boolean }> = [];
    let position = 0;
    const baseline = new Map(stage.computed);
    const baselineOrder = stage.computedOrder.map((c) => ({ ...c }));
    const restore = () => {
      stage.computed.clear();
      for (const [k, v] of baseline) stage.computed.set(k, v);
      stage.computedOrder.splice(0, stage.computedOrder.length, ...baselineOrder.map((c) => ({ ...c })));
    };
    plans.forEach((plan, i) => {
      try {
        for (const seg of plan.segments) {
          inBranch(seg.span, () => {
            if (seg.kind === 'literal') {
              p.addComputed(seg.field, p.params.text(seg.value), 'text', { stage });
              literal.add(seg.field);
              return;
            }
            const c = seg.call;
            const lower = c.name.toLowerCase();
            const banned = FORBIDDEN.get(lower);
            if (banned) throw forbidden(banned, c.span);
            const def = findCommand(c.name);
            if (!def) throw new QueryCompileError(`unsupported command: ${lower}`, c.nameSpan);
            const fn = AGGREGATES[def.name.toLowerCase()];
            if (fn || def.name === 'multi') {
              position++;
              let specs: AggregateSpec[];
              if (fn) specs = [aggregateSpecOf(c, fn)];
              else {
                specs = multiSpecs(c.args.map((a) => a.value));
                if (specs.length === 0) throw new QueryCompileError('multi() requires at least one aggregation, e.g. multi(count(), sum(bytes))', c.span);
                const unknown = specs.find((sp) => !isSubFunction(sp.fn));
                if (unknown) throw new QueryCompileError(`unknown aggregation function in multi(): "${unknown.fn}"`, unknown.span);
              }
              // Checked now, in this branch's scope; planned after the case (below).
              for (const spec of specs) aggregateColumns(p, stage, spec, fn ? 'command' : 'sub');
              for (const spec of specs) aggregates.push({ branch: i, spec, position, sub: !fn });
              return;
            }
            if (!def.apply || def.aggregates) throw forbidden(def.name, c.span);
            const before = shapeOf(p, stage);
            def.apply(c, p);
            if (shapeOf(p, stage) !== before) throw forbidden(def.name, c.span);
          });
        }
        for (const { name, arithmetic } of stage.computedOrder) {
          const col = stage.computed.get(name)!;
          if (baseline.get(name) === col) continue;
          if (!values.has(name)) values.set(name, new Map());
          values.get(name)!.set(i, { ...col, arithmetic });
        }
      } finally {
        restore();
      }
    });

    // One column per field the case sets: multiIf over the branches in priority order. A branch
    // that does not set it gives the value before the case, or empty when another branch assigns
    // it literally (§3.3).
    for (const [name, byBranch] of values) {
      const before = p.resolveIn(stage, name);
      const none: Pick<Column, 'sql' | 'type'> = literal.has(name) ? { sql: "''", type: 'text' } : before;
      const types = new Set([...byBranch.values()].map((c) => c.type));
      let type: Column['type'] = types.size === 1 ? [...types][0] : 'text';
      if (!convertible(none, type)) type = 'text';
      let last = priority.length - 1;
      while (last >= 0 && !byBranch.has(priority[last])) last--;
      const arms = priority.slice(0, last + 1).map((b) => `${conditions[b]}, ${asType(byBranch.get(b) ?? none, type)}`);
      let sql: string;
      if (arms.length === 0) sql = asType(none, type);
      else if (arms.length === 1 && conditions[priority[last]] === '1') sql = asType(byBranch.get(priority[last])!, type);
      else sql = `multiIf(${[...arms, asType(none, type)].join(', ')})`;
      const arithmetic = [...byBranch.values()].some((c) => c.arithmetic);
      p.addComputed(name, sql, type, { stage, arithmetic });
    }

    if (aggregates.length) {
      // The branch each row takes, once per row; the conditional aggregates read it in the next
      // stage, together with the fields they aggregate.
      p.addComputed(CASE_BRANCH, `multiIf(${priority.map((b) => `${conditions[b]}, ${b + 1}`).join(', ')}, 0)`, 'number', { stage });
      if (stage.isEvents) {
        const read = new Set(aggregates.map((a) => a.spec.field).filter((f): f is string => !!f));
        for (const f of read) {
          if (EVENT_OUTPUTS.includes(f) || stage.computed.has(f)) continue;
          const c = p.resolveIn(stage, f);
          p.addComputed(f, c.sql, c.type, { stage });
        }
      }
      const naming = stage.isEvents ? 'command' : 'chained';
      const agg = p.newStage();
      const branchCol = p.resolveIn(agg, CASE_BRANCH).sql;
      for (const { branch, spec, position: pos, sub } of aggregates) {
        for (const col of aggregateColumns(p, agg, { ...spec, where: `${branchCol} = ${branch + 1}` }, sub ? 'sub' : naming)) {
          const name = spec.as !== undefined && col.name === spec.as ? col.name : `${col.name.replace(/^_/, '')}_${pos}`;
          p.addAggregate(agg, { ...col, name });
        }
      }
    } else if (literal.size) {
      stage.caseKeys = [...values.keys()].filter((n) => literal.has(n));
    }
  },
});
