// The aggregate functions shared by the aggregate commands (`sum(f)` …), `groupBy(function=…)`,
// `multi(…)`, inline `table()` aggregates, `timechart(function=…)` and `case` blocks. Output
// names differ by context (query-language.md §3.2): a command writes `_median`, a sub-function of
// multi() writes `median_<f>`; `naming` picks which.
import type { ArgValue, Span } from '../syntax/ast.ts';
import { asNumberOrNull, asText, timeText, type Column } from '../plan/columns.ts';
import { QueryCompileError } from '../plan/errors.ts';
import type { Pipeline, Stage } from '../plan/pipeline.ts';
import { valueText } from './args.ts';

export type Naming = 'command' | 'chained' | 'sub';

export interface AggregateSpec {
  fn: string;
  field?: string;
  distinct?: boolean;
  as?: string;
  percent?: boolean;
  limit?: number;
  span?: Span;
  /** SQL condition: aggregate only the rows where it holds (a `case` branch's rows). */
  where?: string;
}

/** Reads `count(field=id, distinct=true, as=u)` (a nested call argument) into a spec. */
export function subFunctionSpec(v: ArgValue): AggregateSpec {
  if (v.kind !== 'call') {
    return { fn: valueText(v).toLowerCase().replace(/\(\)$/, ''), span: v.span };
  }
  const spec: AggregateSpec = { fn: v.name.toLowerCase(), span: v.span };
  for (const a of v.args) {
    const key = a.key?.toLowerCase();
    const text = valueText(a.value);
    if (key === undefined || key === 'field') spec.field ??= text;
    else if (key === 'distinct' || key === 'unique') spec.distinct = ['true', '1', 'yes'].includes(text.toLowerCase());
    else if (key === 'as') spec.as = text;
    else if (key === 'percent') spec.percent = ['true', '1', 'yes'].includes(text.toLowerCase());
    else if (key === 'limit' && /^\d+$/.test(text)) spec.limit = Number(text);
  }
  return spec;
}

/** `multi(a(), b())` or `multi([a(), b()])` → the sub-function specs. */
export function multiSpecs(values: ArgValue[]): AggregateSpec[] {
  return values.flatMap((v) => (v.kind === 'list' ? v.items : [v])).map(subFunctionSpec);
}

const SUB_FUNCTIONS = new Set([
  'count', 'sum', 'avg', 'min', 'max', 'median', 'percentile', 'stddev', 'skewness', 'skew', 'kurtosis', 'kurt',
  'mad', 'iqr', 'selectfirst', 'selectlast', 'collect', 'top',
]);

export const isSubFunction = (fn: string): boolean => SUB_FUNCTIONS.has(fn.toLowerCase());

/** The median absolute deviation: the median of |v − median| over the values (an array; NULLs left out). */
export const madSql = (median: string, values: string): string =>
  `arrayReduce('quantileExactInclusive(0.5)', arrayMap(v -> abs(v - ${median}), arrayFilter(v -> isNotNull(v), ${values})))`;

/**
 * Columns for one aggregate over `stage`'s input rows. `naming` decides output names:
 * `command` (standalone or after groupBy), `chained` (over aggregated rows), `sub` (multi/function=).
 * `spec.where` (SQL) restricts every aggregate to the rows where it holds (`case` branches), with
 * ClickHouse's `-If` combinator, so several conditional aggregates still take one pass.
 */
export function aggregateColumns(p: Pipeline, stage: Stage, spec: AggregateSpec, naming: Naming): Column[] {
  const fn = spec.fn.toLowerCase();
  const f = spec.field;
  const need = (): string => {
    if (!f) throw new QueryCompileError(`${fn}() requires a field`, spec.span);
    return f;
  };
  const col = (name: string) => p.resolveIn(stage, name);
  const num = (name: string) => asNumberOrNull(col(name));
  const named = (fallback: string) => spec.as ?? fallback;
  const sub = naming === 'sub';
  const chained = naming === 'chained';
  const isTime = (name: string) => col(name).type === 'time';
  const where = spec.where;
  /** `fn[If][OrNull][(params)](args[, where])`: the aggregate, conditional when `where` is set. */
  const agg = (name: string, args: string[], opts: { params?: string; orNull?: boolean } = {}): string =>
    `${name}${where ? 'If' : ''}${opts.orNull ? 'OrNull' : ''}${opts.params !== undefined ? `(${opts.params})` : ''}(${[...args, ...(where ? [where] : [])].join(', ')})`;
  /** A `-If` aggregate's own condition, ANDed with `where`. */
  const when = (cond: string): string => (where ? `(${cond}) AND (${where})` : cond);
  const rows = where ? `countIf(${where})` : 'count()';
  const quantile = (q: number, x: string) => agg('quantileExactInclusive', [x], { params: String(q) });
  switch (fn) {
    case 'count': {
      if (!f) return [{ name: named('_count'), sql: rows, type: 'number' }];
      const text = asText(col(f));
      if (spec.distinct) {
        return [{ name: named(sub ? `unique_${f}` : '_count'), sql: `uniqExactIf(${text}, ${when(`${text} != ''`)})`, type: 'number' }];
      }
      return [{ name: named(sub ? 'total' : '_count'), sql: `countIf(${when(`${text} != ''`)})`, type: 'number' }];
    }
    case 'sum':
      return [{ name: named('_sum'), sql: agg('sum', [num(need())]), type: 'number' }];
    case 'avg':
      return [{ name: named('_avg'), sql: agg('avg', [num(need())], { orNull: true }), type: 'number' }];
    case 'min':
    case 'max': {
      const field = need();
      if (isTime(field)) return [{ name: named(`${fn}_timestamp`), sql: timeText(agg(fn, [col(field).sql], { orNull: !!where })), type: 'text' }];
      return [{ name: named(`_${fn}`), sql: agg(fn, [num(field)], { orNull: true }), type: 'number' }];
    }
    case 'median': {
      const field = need();
      return [{ name: named(sub ? `median_${field}` : '_median'), sql: quantile(0.5, num(field)), type: 'number' }];
    }
    case 'percentile': {
      const field = need();
      const name = named(chained ? '_percentile' : `percentile_${field}`);
      return [{ name, sql: agg('quantilesExactInclusive', [num(field)], { params: '0.5, 0.75, 0.99' }), type: 'list' }];
    }
    case 'stddev': {
      const field = need();
      return [{ name: named(chained ? '_stddev' : `stddev_${field}`), sql: agg('stddevPop', [num(field)], { orNull: true }), type: 'number' }];
    }
    case 'skewness':
    case 'skew': {
      const field = need();
      return [{ name: named(sub ? `skewness_${field}` : '_skewness'), sql: agg('skewPop', [num(field)], { orNull: true }), type: 'number' }];
    }
    case 'kurtosis':
    case 'kurt': {
      const field = need();
      // ClickHouse's kurtPop is m4/m2²; the spec asks for excess kurtosis.
      return [{ name: named(sub ? `kurtosis_${field}` : '_kurtosis'), sql: `${agg('kurtPop', [num(field)], { orNull: true })} - 3`, type: 'number' }];
    }
    case 'iqr': {
      const field = need();
      const x = num(field);
      const [q1, q3, iqr] = sub ? [`iqr_q1_${field}`, `iqr_q3_${field}`, `iqr_${field}`] : ['_q1', '_q3', '_iqr'];
      return [
        { name: q1, sql: quantile(0.25, x), type: 'number' },
        { name: q3, sql: quantile(0.75, x), type: 'number' },
        { name: iqr, sql: `${quantile(0.75, x)} - ${quantile(0.25, x)}`, type: 'number' },
      ];
    }
    case 'mad': {
      const field = need();
      const x = num(field);
      const med = quantile(0.5, x);
      const mad = madSql(med, agg('groupArray', [x]));
      if (sub) return [{ name: named(`mad_${field}`), sql: mad, type: 'number' }];
      return [
        { name: '_median', sql: med, type: 'number' },
        { name: '_mad', sql: mad, type: 'number' },
      ];
    }
    case 'selectfirst':
    case 'selectlast': {
      const field = need();
      const which = fn === 'selectfirst' ? 'first' : 'last';
      const time = col('timestamp');
      if (isTime(field)) {
        return [{ name: named(`${which}_timestamp`), sql: timeText(agg(which === 'first' ? 'min' : 'max', [time.sql], { orNull: !!where })), type: 'text' }];
      }
      const pick = which === 'first' ? 'argMin' : 'argMax';
      return [{ name: named(`${which}_${field}`), sql: agg(pick, [asText(col(field)), time.sql]), type: 'text' }];
    }
    case 'collect': {
      if (!sub) throw new QueryCompileError('collect() is only available inside multi()', spec.span);
      const field = need();
      const text = asText(col(field));
      return [{ name: named(`collect_${field}`), sql: `groupArrayIf(${text}, ${when(`${text} != ''`)})`, type: 'list' }];
    }
    case 'top': {
      const field = need();
      const n = spec.limit ?? 10;
      const text = asText(col(field));
      const name = named(`top_${field}`);
      // Absent (empty) values are not values: they are left out of the list, but still rows.
      const present = when(`${text} != ''`);
      if (spec.percent) {
        const sql = `arrayMap(t -> (t.1, round(100 * t.2 / ${rows}, 2)), topKIf(${n}, 3, 'counts')(${text}, ${present}))`;
        return [{ name, sql, type: 'list' }];
      }
      return [{ name, sql: `topKIf(${n})(${text}, ${present})`, type: 'list' }];
    }
    default:
      throw new QueryCompileError(`unknown aggregation function: "${fn}" (did you mean multi([...])?)`, spec.span);
  }
}
