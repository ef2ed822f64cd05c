// The planner's model of a query (query-language.md §1.9): a list of stages, each one SELECT.
// Stage 0 reads events; an aggregation collapses a stage's rows; a second aggregation, a
// projection or a per-row transform after an aggregation starts the next stage, which reads only
// the previous stage's output columns. Commands (one file each under ../commands) drive it
// through the methods below; `toSql` turns it into one statement of nested subqueries. A stage
// may also carry window functions (`addWindow`): columns read from statistics over all its rows.
import type { Condition } from '../syntax/ast.ts';
import {
  absentColumn,
  asText,
  eventField,
  NORM_LOG_SQL,
  RECORD_SQL,
  reservedEventColumn,
  type Column,
  type ColumnType,
} from './columns.ts';
import { conditionSql, type ConditionScope } from './conditions.ts';
import type { Params } from './params.ts';

export interface SortKey {
  name: string;
  desc: boolean;
}

export interface Aggregation {
  kind: 'group' | 'standalone';
  keys: Column[];
  /** Hidden ones are in the rows but never in field_order (`chain`'s `_chain_ts`, `_chain_done`). */
  values: Array<Column & { hidden?: boolean }>;
}

/** A column a stage outputs: its name, type and SQL alias. Hidden columns ride along unlisted. */
export interface OutputColumn {
  name: string;
  type: ColumnType;
  alias: string;
  sql: string;
  hidden?: boolean;
}

export type ChartConfig = Record<string, unknown>;

/**
 * Window functions over a whole stage (query-language.md §3.9, §1.9 rule 5), e.g. madOutlier's
 * median and MAD. Each row's window columns depend on statistics over all rows of the stage, so
 * the statistics are one scalar subquery over those rows, as the stage has them before any
 * condition on a window column (and before its order and limits):
 *   WITH (SELECT tuple(<statistics>) FROM (<the stage's rows, selecting `inputs`>)) AS <alias>
 *   SELECT …, <window columns reading tupleElement(<alias>, n)> FROM … WHERE/HAVING …
 * The window columns are then ordinary columns of the stage: computed columns on rows that are
 * not aggregated (so later per-row commands, filters and aggregations of the stage read them),
 * aggregate outputs on aggregated rows (`overGroups`: the statistics are over the groups).
 * Conditions written after the window that name a column of the stage (`_is_outlier = 1`) go to
 * `windowWhere`: the stage applies them with its WHERE (HAVING over groups), the statistics never
 * see them; event conditions ANDed with them are split off and filter events first (rule 1).
 */
export interface StageWindow {
  /** Alias of the statistics tuple in the stage's WITH clause. */
  alias: string;
  /** Per-row SQL the statistics read (valid in the stage's SELECT), named `<alias>_in<i>`. */
  inputs: string[];
  /** Aggregates over the inputs: the elements of the statistics tuple. */
  statistics: string[];
  /** Over aggregated rows (the stage aggregates) rather than its input rows. */
  overGroups: boolean;
}

export interface WindowSpec {
  inputs: string[];
  /** The statistics, given the names of the inputs in the statistics subquery. */
  statistics(inputs: string[]): string[];
  /** The window columns, given SQL reading statistic `i` (0-based). Hidden ones ride along unlisted. */
  columns(stat: (i: number) => string): Array<Column & { hidden?: boolean }>;
}

export class Stage {
  readonly computed = new Map<string, Column>();
  /** Names of computed columns in command order (field_order), assignments flagged. */
  readonly computedOrder: Array<{ name: string; arithmetic: boolean }> = [];
  readonly where: string[] = [];
  agg: Aggregation | null = null;
  /** Conditions on this stage's output rows (aggregate outputs, computed after aggregation). */
  readonly post: string[] = [];
  readonly sort: SortKey[] = [];
  limit?: number;
  /** `head`/`tail` on events: earliest or latest n. */
  edge?: { which: 'head' | 'tail'; n: number };
  dedup?: string[];
  /** The dedup was written before this stage aggregated: it applies to events, not groups. */
  dedupEvents?: boolean;
  /** `table()`: the listed columns, in order. */
  projection?: string[];
  /** Window functions of the stage (see StageWindow). */
  readonly windows: StageWindow[] = [];
  /** Its window columns, and columns computed from them later in the stage. */
  readonly windowNames = new Set<string>();
  /** Conditions on those, applied after the statistics (see StageWindow). */
  readonly windowWhere: string[] = [];
  /** The order a command gives its rows when no `sort()` is written in the stage (`frequency`: by `_count` desc). */
  defaultSort?: SortKey[];
  /**
   * The stage's outputs include window functions (`frequency`'s running percentage): conditions
   * on its rows go to `qualify` (SQL QUALIFY), evaluated after the window columns exist (§1.9.5).
   */
  windowed = false;
  readonly qualify: string[] = [];
  /** Set by `case { … }` with field assignments: the fields a following `count()` groups by (§3.2). */
  caseKeys?: string[];
  /** `JOIN (…) AS jN ON …` clauses after what the stage reads (`join()`, §3.7); they expose only `jN_*` names. */
  readonly joins: string[] = [];
  constructor(
    readonly index: number,
    /** Output columns of the previous stage; undefined for stage 0 (events). */
    readonly input: OutputColumn[] | undefined,
  ) {}

  get isEvents(): boolean {
    return this.index === 0;
  }
}

export interface PipelineOptions {
  params: Params;
  /** Fully qualified logs table. */
  table: string;
  fractalIds: string[];
  /** ClickHouse DateTime64 text, UTC. */
  start: string;
  end: string;
  /**
   * The column the range bounds: the event's `timestamp` (both ends included), or for the alert
   * engine's windows `ingest_timestamp` (end excluded, so consecutive windows never share a log).
   */
  timeColumn?: 'timestamp' | 'ingest_timestamp';
  /** Plans a condition function (`in`, `cidr`, `comment`) whose field names resolve with `resolve`. */
  callCondition(p: Pipeline, cond: Extract<Condition, { kind: 'call' }>, resolve: (name: string) => Column): string;
  /** How `comment()` reads analysts' comments; absent where none can be read (it then fails to compile). */
  commentedLogIds?: CommentedLogIds;
  /** How `match()` finds a dictionary by name in the query's scope; absent where none can be read. */
  dictionary?: (name: string) => DictionaryLookup | undefined;
  /** `table` also holds archived rows (search in place): event rows carry its `from_archive` marker. */
  archiveRows?: boolean;
}

/**
 * A dictionary as `match()` reads it (query-language.md §3.11), from the dictionaries domain:
 * its columns, the columns it can be looked up by, and the SQL of its rows keyed by one of them
 * (`k`, then `x0, x1, …` for `include`, one row per key), its values bound through `bind`.
 */
export interface DictionaryLookup {
  name: string;
  columns: string[];
  keyColumns: string[];
  sql(bind: Params['bind'], keyColumn: string, include: string[]): string;
}

/**
 * The one way a condition command reads comments (`comment()`, query-language.md §3.1): the
 * distinct ids of the logs in `fractalIds` carrying at least one comment that has any of `tags`
 * (exact, case-sensitive; empty: any) and whose text contains `keyword` (case-insensitive;
 * absent: any). Both hold for the same comment. Filled by query-service.ts from the comments
 * store (SQLite, synchronous); the ids go into the SQL only as a bound parameter.
 */
export type CommentedLogIds = (fractalIds: string[], filter: { tags: string[]; keyword?: string }) => string[];

/** Runs one more statement (bound parameters) on the engine, under the query's time-out; rows in column order. */
export type FetchRows = (sql: string, params: Record<string, unknown>) => Promise<unknown[][]>;
/**
 * Completes the final rows after they are shaped, before they are sent (`chain`'s `_chain_events`):
 * may look up more with bounded statements through `fetch`. Runs once per streamed chunk.
 */
export type RowHook = (rows: Array<Record<string, unknown>>, fetch: FetchRows) => Promise<void>;

export class Pipeline {
  readonly stages: Stage[] = [new Stage(0, undefined)];
  readonly params: Params;
  readonly regexes: string[] = [];
  chartType = '';
  chartConfig: ChartConfig = {};
  /** Set by a command that owns its row cap (heatmap, analyzeFields…): no row cap applies. */
  ownCap = false;
  /** Names produced after events: aggregate outputs and columns computed on aggregated rows. */
  private readonly derived = new Set<string>();
  /**
   * Conditions planned by addFilter. Window statistics read a stage's rows with only these: a
   * condition pushed onto `where` from outside (the paging cursor) picks rows to show, it does
   * not change the rows the statistics are over.
   */
  private readonly planned = new Set<string>();
  /** A query-level `limit`/`head`/`tail`/`table(limit=)`/`groupBy(limit=)` was written. */
  hasOwnLimit = false;
  /** Event-row columns listed after all others in field_order (`join()` on events: outer columns, then `_join_*`). */
  readonly listedLast: string[] = [];
  /** Join outputs (§1.9 rule 5): an AND naming one of them and event names is split, the event part filtering events. */
  private readonly late = new Set<string>();
  /** Run on the final rows by the query endpoints (see RowHook). */
  readonly rowHooks: RowHook[] = [];
  private range?: string[];

  constructor(readonly options: PipelineOptions) {
    this.params = options.params;
  }

  get current(): Stage {
    return this.stages[this.stages.length - 1];
  }

  get events(): Stage {
    return this.stages[0];
  }

  /** True once any stage aggregated. */
  get aggregated(): boolean {
    return this.stages.some((s) => s.agg);
  }

  // ---- names ---------------------------------------------------------------------------------

  /** Resolves a name in a stage's input scope (§1.7): computed, else reserved, else event field. */
  resolveIn(stage: Stage, name: string): Column {
    const computed = stage.computed.get(name);
    if (computed) return computed;
    if (stage.input) {
      const col = stage.input.find((c) => c.name === name);
      return col ? { name, sql: col.alias, type: col.type } : absentColumn(name);
    }
    return reservedEventColumn(name) ?? eventField(name === '_normalizer' ? 'normalizer' : name, this.params);
  }

  // ---- stages --------------------------------------------------------------------------------

  /** Starts a new stage reading the current one's outputs. */
  newStage(): Stage {
    const prev = this.current;
    const stage = new Stage(this.stages.length, this.outputsOf(prev).filter((c) => c.name !== '' ));
    this.stages.push(stage);
    return stage;
  }

  /** The stage a per-row transform lands in: after an aggregation it starts a new stage. */
  rowStage(): Stage {
    return this.current.agg ? this.newStage() : this.current;
  }

  /** A per-row column; `hidden`: in the rows, not in field_order (madOutlier's `_mz_val` on events). */
  addComputed(name: string, sql: string, type: ColumnType, opts: { arithmetic?: boolean; stage?: Stage; hidden?: boolean } = {}): void {
    const stage = opts.stage ?? this.rowStage();
    stage.computed.set(name, { name, sql, type });
    const i = stage.computedOrder.findIndex((c) => c.name === name);
    if (i !== -1) stage.computedOrder.splice(i, 1);
    if (!opts.hidden) stage.computedOrder.push({ name, arithmetic: opts.arithmetic ?? false });
    if (!stage.isEvents) this.derived.add(name);
    // After a window function a computed column may read its columns: conditions on it apply
    // after the statistics too.
    if (stage.windows.length) {
      stage.windowNames.add(name);
      this.derived.add(name);
    }
  }

  /**
   * Adds a window function to `stage` (see StageWindow): its statistics over all rows of the
   * stage and the columns computed from them. Window columns are listed after the stage's other
   * columns (§5: window functions add `_median`, `_mad`, `_modified_z` …; on events after the
   * event columns, like arithmetic assignments).
   */
  addWindow(stage: Stage, spec: WindowSpec): void {
    const alias = `s${stage.index}_w${stage.windows.length}`;
    const inputNames = spec.inputs.map((_, i) => `${alias}_in${i}`);
    stage.windows.push({ alias, inputs: spec.inputs, statistics: spec.statistics(inputNames), overGroups: stage.agg !== null });
    for (const { hidden, ...col } of spec.columns((i) => `tupleElement(${alias}, ${i + 1})`)) {
      if (stage.agg) this.addAggregate(stage, col);
      else {
        this.addComputed(col.name, col.sql, col.type, { stage, arithmetic: true, hidden });
        if (!hidden && stage.projection && !stage.projection.includes(col.name)) stage.projection.push(col.name);
      }
      stage.windowNames.add(col.name);
      this.derived.add(col.name);
    }
  }

  /**
   * Adds a filter stage (§1.9): conditions naming only event-level names filter events wherever
   * written; a condition naming an aggregate output or a column computed after events filters the
   * rows of the latest stage.
   */
  addFilter(cond: Condition): void {
    const names = conditionNames(cond);
    const derived = names.some((n) => this.derived.has(n));
    const cur = this.current;
    if (derived && cond.kind === 'and' && names.some((n) => this.late.has(n))) {
      // §1.9 rule 5: each conjunct goes where its names exist (events, or after the join).
      for (const c of cond.items) this.addFilter(c);
      return;
    }
    if (derived && cur.windows.length && (cur.windows[0].overGroups || !cur.agg)) {
      // Written after a window function (§1.9 rule 5): after the statistics. Event conditions
      // ANDed with it are split off: they filter events before anything (rule 1).
      const items = cond.kind === 'and' ? cond.items : [cond];
      const after = items.filter((c) => conditionNames(c).some((n) => this.derived.has(n)));
      for (const c of items) if (!after.includes(c)) this.addFilter(c);
      const rest: Condition = after.length === 1 ? after[0] : { kind: 'and', items: after, span: cond.span };
      cur.windowWhere.push(conditionSql(rest, cur.agg ? this.outputScope(cur) : this.scopeFor(cur, cur.isEvents)));
      return;
    }
    if (!derived) {
      const stage = this.events;
      const sql = conditionSql(cond, this.scopeFor(stage, true));
      this.planned.add(sql);
      stage.where.push(sql);
      return;
    }
    const stage = this.current;
    if (stage.windowed) {
      stage.qualify.push(conditionSql(cond, this.outputScope(stage)));
    } else if (stage.agg) {
      stage.post.push(conditionSql(cond, this.outputScope(stage)));
    } else {
      const sql = conditionSql(cond, this.scopeFor(stage, false));
      this.planned.add(sql);
      stage.where.push(sql);
    }
  }

  /** The fractals and the time range every read of events is bounded by (bound once). */
  rangeWhere(): string[] {
    this.range ??= rangeConditions(this.params, this.options);
    return this.range;
  }

  /** The events the query's event conditions keep, as one condition: what the histogram (§5) and field statistics count. */
  eventWhereSql(): string {
    return conjunction([...this.rangeWhere(), ...this.events.where]);
  }

  /** A scope for conditions over a stage's input rows. */
  scopeFor(stage: Stage, events: boolean): ConditionScope {
    return {
      params: this.params,
      resolve: (n) => this.resolveIn(stage, n),
      callCondition: (c) => this.options.callCondition(this, c, (n) => this.resolveIn(stage, n)),
      fullText: () => (events ? { name: 'raw', sql: RECORD_SQL, type: 'text' } : undefined),
      noteRegex: (p) => this.regexes.push(p),
    };
  }

  /** A scope over a stage's output columns (HAVING), by alias. */
  outputScope(stage: Stage): ConditionScope {
    const outs = this.outputsOf(stage);
    const resolve = (n: string): Column => {
      const c = outs.find((o) => o.name === n);
      return c ? { name: n, sql: c.alias, type: c.type } : absentColumn(n);
    };
    return {
      params: this.params,
      resolve,
      callCondition: (c) => this.options.callCondition(this, c, resolve),
      fullText: () => undefined,
      noteRegex: (p) => this.regexes.push(p),
    };
  }

  // ---- aggregation ---------------------------------------------------------------------------

  /**
   * The stage an aggregate over `fields` lands in (§3.2): after `groupBy` in the same stage when
   * it reads event fields; a new stage when it reads the previous aggregation's outputs or counts
   * the groups.
   */
  aggregateStage(fields: string[], opts: { countsRows?: boolean } = {}): Stage {
    const cur = this.current;
    if (!cur.agg) return cur;
    // count() after groupBy counts the groups; standalone aggregates combine in one row (§3.2).
    const { keys, values } = cur.agg;
    const chained =
      (opts.countsRows && cur.agg.kind === 'group') || fields.some((f) => !keys.some((k) => k.name === f) && values.some((v) => v.name === f));
    return chained ? this.newStage() : cur;
  }

  addAggregate(stage: Stage, col: Column): void {
    if (!stage.agg) stage.agg = { kind: 'standalone', keys: [], values: [] };
    const existing = stage.agg.values.findIndex((v) => v.name === col.name);
    if (existing !== -1) stage.agg.values.splice(existing, 1);
    stage.agg.values.push(col);
    this.derived.add(col.name);
  }

  /** A condition in SQL on a stage's rows that a command plans itself (`match(strict=true)`), counted like a written filter. */
  addWhere(stage: Stage, sql: string): void {
    this.planned.add(sql);
    stage.where.push(sql);
  }

  /** Marks a name as existing only after events (a group key a command names itself, e.g. `value`). */
  markDerived(name: string): void {
    this.derived.add(name);
  }

  /** Marks a join output computed after events (derived; see `late`). */
  markLate(name: string): void {
    this.derived.add(name);
    this.late.add(name);
  }

  /**
   * Joins a lookup to the current rows (`join()`). `sql` is a subquery aliased
   * `alias` giving at most one row per key: `<alias>_k` (the key as text), `<alias>_m` (1) and
   * `<alias>_<i>` for each of `columns`, so outer rows are kept or dropped, never repeated.
   * - Event rows: the JOIN goes on stage 0 and each column is a per-event computed column, listed
   *   after the event's own; later filters, sorts and aggregations read it like any other, and the
   *   histogram counts the joined events.
   * - Aggregated rows: a new stage joins on `key`, one of their columns (`missingKey` otherwise,
   *   given the columns there are); the columns exist only after events, so conditions on them
   *   apply after the join (§1.9 rule 5).
   * Unmatched rows of a LEFT join: text and lists empty, numbers and times NULL.
   */
  joinLookup(l: {
    alias: string;
    sql: string;
    inner: boolean;
    key: string;
    columns: Array<{ name: string; type: ColumnType }>;
    missingKey: (columns: string[]) => Error;
  }): void {
    const kind = l.inner ? 'INNER' : 'LEFT';
    const a = l.alias;
    const value = (i: number, t: ColumnType): string => (t === 'number' || t === 'time' ? `if(${a}_m = 1, ${a}_${i}, NULL)` : `${a}_${i}`);
    const cur = this.current;
    if (cur.isEvents && !cur.agg) {
      cur.joins.push(`${kind} JOIN (${l.sql}) AS ${a} ON ${asText(this.resolveIn(cur, l.key))} = ${a}_k`);
      l.columns.forEach(({ name, type }, i) => {
        this.addComputed(name, value(i, type), type, { stage: cur });
        this.listedLast.push(name);
        if (cur.projection && !cur.projection.includes(name)) cur.projection.push(name);
      });
      return;
    }
    const stage = this.newStage();
    const outerKey = stage.input!.find((c) => c.name === l.key && !c.hidden);
    if (!outerKey) throw l.missingKey(stage.input!.filter((c) => !c.hidden).map((c) => c.name));
    stage.joins.push(`${kind} JOIN (${l.sql}) AS ${a} ON ${asText({ sql: outerKey.alias, type: outerKey.type })} = ${a}_k`);
    l.columns.forEach(({ name, type }, i) => {
      this.addComputed(name, value(i, type), type, { stage });
      this.markLate(name);
    });
  }

  /** `groupBy(keys)`: a new stage when the current one already aggregated. */
  groupBy(keys: string[]): Stage {
    const stage = this.current.agg ? this.newStage() : this.current;
    stage.agg = {
      kind: 'group',
      keys: keys.map((k) => {
        const c = this.resolveIn(stage, k);
        return { name: k, sql: c.type === 'time' ? c.sql : asText(c), type: c.type === 'time' ? 'time' : 'text' };
      }),
      values: [],
    };
    return stage;
  }

  // ---- order and limits ----------------------------------------------------------------------

  setLimit(n: number, stage: Stage = this.current): void {
    stage.limit = n;
    this.hasOwnLimit = true;
  }

  // ---- output --------------------------------------------------------------------------------

  /** The columns a stage outputs, in field order. */
  outputsOf(stage: Stage): OutputColumn[] {
    const k = stage.index;
    let i = 0;
    const out = (name: string, sql: string, type: ColumnType, hidden = false): OutputColumn => ({
      name,
      sql,
      type,
      alias: `s${k}_${i++}`,
      hidden,
    });
    if (stage.agg) {
      return [
        ...stage.agg.keys.map((c) => out(c.name, c.sql, c.type)),
        ...stage.agg.values.map((c) => out(c.name, c.sql, c.type, c.hidden)),
      ];
    }
    const cols: OutputColumn[] = [];
    if (stage.isEvents) {
      cols.push(out('timestamp', 'timestamp', 'time'));
      cols.push(out('log_id', 'toString(log_id)', 'text'));
      cols.push(out('fractal_id', 'toString(fractal_id)', 'text'));
      cols.push(out('norm_log', NORM_LOG_SQL, 'text'));
      if (this.options.archiveRows) cols.push(out(FROM_ARCHIVE, FROM_ARCHIVE, 'number', true));
    } else {
      // A column a transform overwrites (`groupBy(user) | lowercase(user)`) keeps its place.
      for (const c of stage.input!) {
        const over = stage.computed.get(c.name);
        cols.push(over ? out(c.name, over.sql, over.type) : out(c.name, c.alias, c.type, c.hidden));
      }
    }
    for (const { name } of stage.computedOrder) {
      if (!stage.isEvents && stage.input!.some((c) => c.name === name)) continue;
      const c = stage.computed.get(name)!;
      cols.push(out(name, c.sql, c.type));
    }
    for (const [name, c] of stage.computed) {
      if (!stage.computedOrder.some((o) => o.name === name)) cols.push(out(name, c.sql, c.type, true));
    }
    // A projection after an aggregation keeps the listed columns in their order; on events the
    // rows are unpacked from norm_log and the projection is applied when shaping them.
    if (stage.projection && !stage.isEvents) {
      // A listed name the previous stage does not produce is an absent (empty) column.
      return stage.projection.flatMap((n) => {
        const found = cols.filter((c) => c.name === n);
        return found.length ? found : [out(n, "''", 'text')];
      });
    }
    return cols;
  }

  /** One SELECT per stage, nested. */
  stageSql(stage: Stage, finalLimit: number | undefined): string {
    const outs = this.outputsOf(stage);
    const select = outs.map((c) => `${c.sql} AS ${c.alias}`).join(', ');
    const { from, where: source } = this.sourceOf(stage);
    const overGroups = stage.windows[0]?.overGroups ?? false;
    const where = [...source, ...stage.where, ...(overGroups ? [] : stage.windowWhere)];
    const post = [...stage.post, ...(overGroups ? stage.windowWhere : [])];
    const statistics = stage.windows.map((w) => `(${this.statisticsSql(stage, w)}) AS ${w.alias}`);
    let sql = `${statistics.length ? `WITH ${statistics.join(', ')} ` : ''}SELECT ${select} FROM ${from}`;
    // dedup() before an aggregation keeps the newest event per combination, then aggregates.
    const dedupEvents = stage.isEvents && !!stage.agg && !!stage.dedup?.length && !!stage.dedupEvents;
    if (dedupEvents) {
      const keys = stage.dedup!.map((n) => asText(this.resolveIn(stage, n)));
      const filtered = where.length ? ` WHERE ${conjunction(where)}` : '';
      where.push(`log_id IN (SELECT argMax(log_id, (timestamp, log_id)) FROM ${from}${filtered} GROUP BY ${keys.join(', ')})`);
    }
    if (where.length) sql += ` WHERE ${conjunction(where)}`;
    if (stage.agg && stage.agg.keys.length) {
      sql += ` GROUP BY ${outs.slice(0, stage.agg.keys.length).map((c) => c.alias).join(', ')}`;
    }
    if (post.length) sql += ` ${stage.agg ? 'HAVING' : 'AND'} ${conjunction(post)}`;
    if (stage.qualify.length) sql += ` QUALIFY ${conjunction(stage.qualify)}`;
    const order = this.orderSql(stage, outs);
    if (order) sql += ` ORDER BY ${order}`;
    if (stage.dedup?.length && !dedupEvents) {
      const by = stage.dedup.map((n) => {
        const c = outs.find((o) => o.name === n);
        return c ? c.alias : asText(this.resolveIn(stage, n));
      });
      sql += ` LIMIT 1 BY ${by.join(', ')}`;
    }
    const lim = [stage.edge?.n, stage.limit, finalLimit].filter((x): x is number => x !== undefined);
    if (lim.length) sql += ` LIMIT ${Math.min(...lim)}`;
    return sql;
  }

  /** What a stage reads: the events table (with the scope and time range) or the previous stage. */
  private sourceOf(stage: Stage): { from: string; where: string[] } {
    const joins = stage.joins.map((j) => ` ${j}`).join('');
    if (!stage.isEvents) {
      // A joined subquery needs an alias; the previous stage's rows are then `s<k>_from`.
      const alias = joins ? ` AS s${stage.index}_from` : '';
      return { from: `(${this.stageSql(this.stages[stage.index - 1], undefined)})${alias}${joins}`, where: [] };
    }
    return { from: this.eventsFrom(), where: this.rangeWhere() };
  }

  /** The statistics of a window function: one row, one tuple (see StageWindow). */
  private statisticsSql(stage: Stage, w: StageWindow): string {
    const { from, where: source } = this.sourceOf(stage);
    const where = [...source, ...stage.where.filter((c) => this.planned.has(c))];
    const inputs = w.inputs.map((sql, i) => `${sql} AS ${w.alias}_in${i}`);
    let rows: string;
    if (w.overGroups && stage.agg) {
      // The groups as the stage makes them, without the window columns and their conditions.
      const outs = this.outputsOf(stage).filter((c) => !stage.windowNames.has(c.name));
      rows = `SELECT ${[...outs.map((c) => `${c.sql} AS ${c.alias}`), ...inputs].join(', ')} FROM ${from}`;
      if (where.length) rows += ` WHERE ${conjunction(where)}`;
      if (stage.agg.keys.length) rows += ` GROUP BY ${outs.slice(0, stage.agg.keys.length).map((c) => c.alias).join(', ')}`;
      if (stage.post.length) rows += ` HAVING ${conjunction(stage.post)}`;
    } else {
      rows = `SELECT ${inputs.join(', ')} FROM ${from}`;
      if (where.length) rows += ` WHERE ${conjunction(where)}`;
    }
    return `SELECT tuple(${w.statistics.join(', ')}) FROM (${rows})`;
  }

  private orderSql(stage: Stage, outs: OutputColumn[]): string {
    const keyFor = (name: string, desc: boolean): string[] => {
      const dir = desc ? 'DESC' : 'ASC';
      const c = outs.find((o) => o.name === name);
      // After an aggregation only its outputs exist; any other name is absent (sorts as empty).
      const col: Column = c ? { name, sql: c.alias, type: c.type } : stage.agg ? absentColumn(name) : this.resolveIn(stage, name);
      if (col.type === 'number' || col.type === 'time') return [`${col.sql} ${dir}`];
      const text = asText(col);
      return [`toFloat64OrNull(${text}) ${dir} NULLS LAST`, `${text} ${dir}`];
    };
    let keys: string[] = [];
    if (stage.isEvents && !stage.agg) {
      if (stage.edge?.which === 'head') keys = ['timestamp ASC', 'log_id ASC'];
      else if (stage.edge?.which === 'tail' || stage.sort.length === 0) keys = ['timestamp DESC', 'log_id DESC'];
      else keys = stage.sort.flatMap((s) => keyFor(s.name, s.desc));
    } else {
      const flip = stage.edge?.which === 'tail';
      const sort = stage.sort.length ? stage.sort : (stage.defaultSort ?? []);
      keys = sort.flatMap((s) => keyFor(s.name, flip ? !s.desc : s.desc));
    }
    return keys.join(', ');
  }

  toSql(rowCap: number | undefined): string {
    return this.stageSql(this.current, rowCap);
  }

  /** Visible output columns of the final stage. */
  finalColumns(): OutputColumn[] {
    return this.outputsOf(this.current);
  }

  /** The events table as stage 0 reads it: with the JOINs of `join()` on events, which its conditions may read. */
  eventsFrom(): string {
    return [this.options.table, ...this.events.joins].join(' ');
  }

  /**
   * The final rows are the events the filters keep, one row each, with their own `timestamp`:
   * nothing after the filters drops, merges, limits or re-times rows. When such a query returns
   * fewer rows than its cap, the rows are every event the histogram counts.
   */
  rowsAreFilteredEvents(): boolean {
    const s = this.events;
    return (
      this.stages.length === 1 &&
      !s.agg && !s.edge && !s.dedup && s.limit === undefined && !this.hasOwnLimit && !this.ownCap &&
      s.post.length === 0 && s.windowWhere.length === 0 && s.qualify.length === 0 &&
      !s.computed.has('timestamp')
    );
  }

  /** The filters on events only: what the histogram counts (§5). */
  eventCountSql(bucketSeconds: number): string {
    return `SELECT toUnixTimestamp(toStartOfInterval(timestamp, toIntervalSecond(${bucketSeconds}))) AS b, count() AS n
      FROM ${this.eventsFrom()} WHERE ${this.eventWhereSql()} GROUP BY b ORDER BY b`;
  }
}

/** The hidden event column saying a row was read from the archive (1) or the hot store (0). */
export const FROM_ARCHIVE = 'from_archive';

/** Conditions ANDed, each in parentheses. */
export const conjunction = (conds: string[]): string => conds.map((c) => `(${c})`).join(' AND ');

/**
 * The fractals and the time range of a read of events. One fractal is `=`, not IN: with `=` the
 * engine reads the sort key newest-first and stops at the row cap; with IN it reads and sorts the
 * whole range.
 */
export function rangeConditions(params: Params, o: Pick<PipelineOptions, 'fractalIds' | 'start' | 'end' | 'timeColumn'>): string[] {
  const ids = o.fractalIds;
  const column = o.timeColumn ?? 'timestamp';
  return [
    ids.length === 1 ? `fractal_id = ${params.bind(ids[0], 'UUID')}` : `fractal_id IN ${params.bind(ids, 'Array(UUID)')}`,
    `${column} >= ${params.bind(o.start, "DateTime64(9, 'UTC')")}`,
    `${column} ${column === 'timestamp' ? '<=' : '<'} ${params.bind(o.end, "DateTime64(9, 'UTC')")}`,
  ];
}

/** Names a condition reads (fields of comparisons and of condition functions' first argument). */
export function conditionNames(cond: Condition): string[] {
  switch (cond.kind) {
    case 'and':
    case 'or':
      return cond.items.flatMap(conditionNames);
    case 'not':
      return conditionNames(cond.item);
    case 'compare':
      return [cond.field];
    case 'call': {
      const first = cond.call.args.find((a) => !a.key || a.key === 'field');
      return first && first.value.kind !== 'list' && first.value.kind !== 'call' ? [first.value.text] : [];
    }
    default:
      return ['norm_log'];
  }
}
