// The modified z-score window functions (query-language.md §3.9): `modifiedZScore` and
// `madOutlier` add, over all rows of the stage they are written in, `_median` and `_mad` (the
// median of |x − median|) of the field's numeric values, and per row
// `_modified_z` = 0.6745·(x − median)/MAD rounded to 4 decimals (0 when MAD is 0); rows whose
// value is not a number get no score. On events the value itself rides along as `_mz_val`.
import type { Call } from '../syntax/ast.ts';
import { absentColumn, asNumberOrNull, type Column } from '../plan/columns.ts';
import { isNumeric } from '../plan/conditions.ts';
import { QueryCompileError } from '../plan/errors.ts';
import type { Pipeline, Stage } from '../plan/pipeline.ts';
import { madSql } from './aggregate-functions.ts';
import { Args } from './args.ts';

/** The stage a window function over `field` lands in. */
function windowStage(p: Pipeline, field: string): Stage {
  const cur = p.current;
  // A new stage when the window reads a window column of this stage, when the stage already has
  // a window over its groups (one per aggregated stage), or after a table() of aggregated rows.
  if (cur.windowNames.has(field) || (cur.agg && cur.windows.length) || (cur.projection && !cur.isEvents)) return p.newStage();
  return cur;
}

/** A column of the stage's rows, as SQL valid in its SELECT. */
function rowColumn(p: Pipeline, stage: Stage, name: string): Column {
  if (!stage.agg) return p.resolveIn(stage, name);
  return [...stage.agg.keys, ...stage.agg.values].find((c) => c.name === name) ?? absentColumn(name);
}

export function applyModifiedZ(call: Call, p: Pipeline, command: string, threshold?: (args: Args) => number): void {
  const args = new Args(call);
  const field = args.field(['field'], 0, `${command}() requires a field, e.g. ${command}(bytes)`);
  const limit = threshold?.(args);
  const stage = windowStage(p, field);
  const x = asNumberOrNull(rowColumn(p, stage, field));
  const onEvents = stage.isEvents && !stage.agg;
  p.addWindow(stage, {
    inputs: [x],
    statistics: ([v]) => {
      const median = `quantileExactInclusive(0.5)(${v})`;
      return [median, madSql(median, `groupArray(${v})`)];
    },
    columns: (stat) => {
      const z = `if(isNull(${x}), NULL, if(${stat(1)} = 0, 0, round(0.6745 * (${x} - ${stat(0)}) / ${stat(1)}, 4)))`;
      return [
        ...(onEvents ? [{ name: '_mz_val', sql: x, type: 'number' as const, hidden: true }] : []),
        { name: '_median', sql: stat(0), type: 'number' },
        { name: '_mad', sql: stat(1), type: 'number' },
        { name: '_modified_z', sql: z, type: 'number' },
        ...(limit === undefined ? [] : [{ name: '_is_outlier', sql: `if(abs(${z}) > ${p.params.number(limit)}, '1', '0')`, type: 'text' as const }]),
      ];
    },
  });
}

/** madOutlier's threshold: `threshold=` or the second positional argument, a number. */
export function thresholdOf(args: Args): number {
  const t = args.text(['threshold'], 1);
  if (t === undefined) return 3.5;
  if (!isNumeric(t)) {
    throw new QueryCompileError(`madOutlier(): invalid threshold: expected numeric value, got "${t}"`, args.value(['threshold'], 1)?.span);
  }
  return Number(t);
}
