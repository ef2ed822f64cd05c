// `chain(f1, f2, …, within=SPAN, order=true) { step ; step ; … }` (query-language.md §3.8): per
// identity, how often the steps occur as a sequence. Everything that decides the rows is SQL:
// - Identity: one field → its value (events without one take no part), output column named after
//   it; several fields → `_entity`, an event joining every distinct non-empty value among them
//   (`arrayJoin`).
// - Steps are row conditions over events; stage 0 keeps only events matching some step.
// - Ordered (default): stage 0 groups by (identity, millisecond): a bit mask of the steps matched
//   in that millisecond and, per step, one of its events (the smallest log id); each step must
//   come strictly after the previous one, at most `within` after it. The count is greedy: the
//   earliest-ending occurrence, then the earliest-ending one starting after it, …: the largest
//   number of complete occurrences that do not overlap in time. Keeping, per step k, the
//   latest-ending partial sequence 1..k finds it (a later end extends to everything an earlier
//   one does, with smaller gaps). The engine's `sequenceCount` counts non-overlapping matches of
//   `(?1)(?t<=W)(?2)…` (`(?1).*(?2)…` without within) but backtracks, which exceeds its iteration
//   cap on dense identities, and `arrayFold` over long arrays is far too slow; `windowFunnel`
//   finds one occurrence only. So window passes first keep only the step bits that can matter:
//   a_k = step k with an a_(k-1) at most `within` before it (forward), u_k = an a_k that is the
//   latest a_k before some u_(k+1) (backward, u_n = a_n). On what is left, from any usable step
//   event the first usable event of the next step continues it, so `sequenceCount` never
//   backtracks and its leftmost match is the earliest-ending one: exactly the greedy count.
//   `sequenceMatchEvents` gives the first occurrence's times (`_chain_ts`).
// - Unordered (`order=false`): one grouping by identity; `chain_count` is the smallest per-step
//   count of matching events, `_chain_ts` each step's earliest time.
// Rows: identity, `chain_count` (> 0, by `chain_count` desc unless sorted), hidden `_chain_ts`,
// `_chain_done` (latest step-matching event, ms). For the endpoint a row hook replaces the internal
// `_chain_ids` (the events behind `_chain_ts`) by `_chain_events` and adds `_chain_fields`; it
// reads those events' text with one more statement per chunk of rows, bounded to the ids of the
// rows being sent (at most steps × rows, in batches of 2000), within the query's scope, time range
// and the batch's own time span.
import { asText, NORM_LOG_SQL, timeText } from '../plan/columns.ts';
import { conditionSql } from '../plan/conditions.ts';
import { QueryCompileError } from '../plan/errors.ts';
import { Params } from '../plan/params.ts';
import { conditionNames, conjunction, rangeConditions, type Pipeline, type RowHook, type Stage } from '../plan/pipeline.ts';
import type { Branch, Condition } from '../syntax/ast.ts';
import { Args, listOf } from './args.ts';
import { defineCommand } from './command.ts';
import { findCommand } from './registry.ts';
import { parseSpan, spanSeconds } from './span.ts';

const STEP = 'chain(): chain step: ';
/** The engine's sequence functions take at most 32 conditions. */
const MAX_STEPS = 32;
const EVENT_BATCH = 2000;

/** One step's condition as SQL over events, with the fields it tests added to `fields`. */
function stepSql(branch: Branch, p: Pipeline, fields: string[]): string {
  const scope = p.scopeFor(p.events, true);
  const parts: string[] = [];
  for (const st of branch.stages) {
    let cond: Condition;
    if (st.kind === 'assignment') {
      throw new QueryCompileError(`${STEP}assignments are not allowed (${st.target} := …); a step is a row condition`, st.span);
    } else if (st.kind === 'command') {
      const name = st.call.name.toLowerCase();
      if (name === 'match') throw new QueryCompileError(`${STEP}match() is not allowed; a step is a row condition`, st.call.nameSpan);
      const def = findCommand(st.call.name);
      if (!def) throw new QueryCompileError(`${STEP}unsupported command: ${name}`, st.call.nameSpan);
      if (!def.condition || def.apply) {
        throw new QueryCompileError(`${STEP}only row conditions are allowed; ${def.name}() changes the shape of the result`, st.call.nameSpan);
      }
      cond = { kind: 'call', call: st.call, span: st.span };
    } else {
      cond = st.condition;
    }
    for (const n of conditionNames(cond)) if (n !== 'norm_log' && !fields.includes(n)) fields.push(n);
    try {
      parts.push(conditionSql(cond, scope));
    } catch (e) {
      if (e instanceof QueryCompileError) throw new QueryCompileError(STEP + e.message, e.span ?? st.span);
      throw e;
    }
  }
  // A step that is only `*` matches every event.
  return parts.length ? conjunction(parts) : '1';
}


/**
 * Moves order and limits written before chain() (stage 0) to its rows (§1.9 rule 4). A dedup()
 * written before it stays: it dedups the events first, as before any aggregation.
 */
function moveOrderAndLimits(from: Stage, to: Stage): void {
  if (from === to) return;
  to.sort.push(...from.sort.splice(0));
  if (from.limit !== undefined) [to.limit, from.limit] = [from.limit, undefined];
  if (from.edge) [to.edge, from.edge] = [from.edge, undefined];
}

/** Replaces the internal `_chain_ids` by `_chain_events` and adds `_chain_fields` (see the header). */
function chainEventsHook(p: Pipeline, fields: string[]): RowHook {
  return async (rows, fetch) => {
    const timeOf = new Map<string, number>();
    for (const r of rows) {
      const ids = r._chain_ids;
      const ts = r._chain_ts;
      if (!Array.isArray(ids) || !Array.isArray(ts)) continue;
      ids.forEach((id, i) => timeOf.set(String(id), Number(ts[i])));
    }
    const found = new Map<string, { timestamp: string; norm_log: string }>();
    const all = [...timeOf.keys()];
    for (let i = 0; i < all.length; i += EVENT_BATCH) {
      const batch = all.slice(i, i + EVENT_BATCH);
      const times = batch.map((id) => timeOf.get(id)!);
      const params = new Params();
      const where = [
        ...rangeConditions(params, p.options),
        `timestamp >= fromUnixTimestamp64Milli(${params.bind(Math.min(...times), 'Int64')})`,
        `timestamp < fromUnixTimestamp64Milli(${params.bind(Math.max(...times) + 1, 'Int64')})`,
        `log_id IN ${params.bind(batch, 'Array(UUID)')}`,
      ];
      const sql = `SELECT toString(log_id), ${timeText('timestamp')}, ${NORM_LOG_SQL} FROM ${p.options.table} WHERE ${conjunction(where)}`;
      for (const [id, timestamp, norm] of await fetch(sql, params.values)) {
        found.set(String(id), { timestamp: String(timestamp), norm_log: String(norm) });
      }
    }
    for (const r of rows) {
      if (!('_chain_ids' in r)) continue;
      const ids = Array.isArray(r._chain_ids) ? r._chain_ids.map(String) : [];
      delete r._chain_ids;
      r._chain_events = ids.flatMap((id, i) => {
        const e = found.get(id);
        return e ? [{ step: i + 1, timestamp: e.timestamp, log_id: id, norm_log: e.norm_log }] : [];
      });
      r._chain_fields = [...fields];
    }
  };
}

export default defineCommand({
  name: 'chain',
  tier: 'STANDARD',
  category: 'chain',
  signature: 'chain(f1, f2, …, within=SPAN, order=true) { step ; step ; … }',
  description:
    'Per identity (one field, or several as aliases of one identity: _entity), counts the non-overlapping complete occurrences of the steps in written order (millisecond precision), each step at most within= after the previous one; order=false counts the steps in any order (the smallest per-step count). Steps are row conditions. Rows are ordered by chain_count desc.',
  outputs: 'the identity field (or _entity), chain_count; hidden _chain_ts, _chain_done',
  example: 'chain(user, within=5m) { event_id=4624; event_id=1 | image=/powershell/i } | chain_count > 1',
  aggregates: true,
  apply(call, p) {
    const args = new Args(call);
    args.allowOnly(['within', 'order']);
    const ids = [...new Set(args.positional.flatMap(listOf))];
    if (ids.length === 0) throw new QueryCompileError('chain() requires at least one grouping field, e.g. chain(user)', call.nameSpan);
    const ordered = args.flag('order', true);
    const withinText = args.text(['within']);
    if (!ordered && withinText !== undefined) {
      throw new QueryCompileError('chain(): within= cannot be combined with order=false', args.named.get('within')?.span);
    }
    const branches = call.block?.branches ?? [];
    if (branches.length < 2) throw new QueryCompileError(`chain() requires at least 2 steps, got ${branches.length}`, call.block?.span);
    if (branches.length > MAX_STEPS) throw new QueryCompileError(`chain() supports at most ${MAX_STEPS} steps, got ${branches.length}`, call.block?.span);
    const ev = p.events;
    if (p.current !== ev || ev.agg) throw new QueryCompileError('chain() reads events: place it before any aggregation', call.nameSpan);

    const fields: string[] = [];
    const steps = branches.map((b) => stepSql(b, p, fields));
    const idName = ids.length === 1 ? ids[0] : '_entity';
    const texts = ids.map((f) => asText(p.resolveIn(ev, f)));
    const idSql = ids.length === 1 ? texts[0] : `arrayJoin(arrayDistinct(arrayFilter(chain_v -> chain_v != '', [${texts.join(', ')}])))`;
    ev.where.push(`(${texts.map((t) => `${t} != ''`).join(' OR ')}) AND (${steps.map((s) => `(${s})`).join(' OR ')})`);
    const ms = 'toUnixTimestamp64Milli(timestamp)';

    let final: Stage;
    if (ordered) {
      const mask = steps.map((s, i) => `if(${s}, bitShiftLeft(toUInt64(1), ${i}), toUInt64(0))`).join(' + ');
      ev.agg = {
        kind: 'group',
        keys: [
          { name: idName, sql: idSql, type: 'text' },
          { name: '_chain_ms', sql: ms, type: 'number' },
        ],
        values: [
          { name: '_chain_mask', sql: `groupBitOr(${mask})`, type: 'number' },
          { name: '_chain_step_ids', sql: `[${steps.map((s) => `minIf(log_id, ${s})`).join(', ')}]`, type: 'list' },
        ],
      };
      // Which step bits can take part in an occurrence (see the header), one window pass a stage.
      const withinMs = withinText !== undefined ? spanSeconds(parseSpan(withinText)) * 1000 : undefined;
      const w = withinMs !== undefined ? p.params.bind(withinMs, 'Int64') : undefined;
      const n = steps.length;
      const col = (st: Stage, name: string) => st.input!.find((c) => c.name === name)!.alias;
      // Rows strictly before (after) this millisecond; both frames start unbounded so the engine
      // accumulates them in one pass (a frame with a moving start would be recomputed per row).
      const over = (st: Stage, dir: 'before' | 'after') =>
        `OVER (PARTITION BY ${col(st, idName)} ORDER BY ${col(st, '_chain_ms')} ${dir === 'before' ? 'ASC' : 'DESC'} ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)`;
      // Forward: a_k = matches step k with an a_(k-1) millisecond before it, at most `within` before.
      let st = p.newStage();
      p.addComputed('_chain_a1', `bitTest(${col(st, '_chain_mask')}, 0)`, 'number', { stage: st });
      for (let k = 2; k <= n; k++) {
        if (k > 2) st = p.newStage();
        const prev = k === 2 ? `bitTest(${col(st, '_chain_mask')}, 0)` : col(st, `_chain_a${k - 1}`);
        const last = `max(if(${prev}, ${col(st, '_chain_ms')}, NULL)) ${over(st, 'before')}`;
        const near = w ? `ifNull(${col(st, '_chain_ms')} - ${last} <= ${w}, 0)` : `isNotNull(${last})`;
        p.addComputed(`_chain_a${k}`, `bitTest(${col(st, '_chain_mask')}, ${k - 1}) AND ${near}`, 'number', { stage: st });
      }
      // Backward: u_k = a_k that is the latest a_k before some u_(k+1) (u_n = a_n).
      const useful = (st: Stage, k: number) => col(st, k === n ? `_chain_a${n}` : `_chain_u${k}`);
      for (let k = n - 1; k >= 1; k--) {
        st = p.newStage();
        const following = over(st, 'after');
        const nextUseful = `min(if(${useful(st, k + 1)}, ${col(st, '_chain_ms')}, NULL)) ${following}`;
        const nextActive = `min(if(${col(st, `_chain_a${k}`)}, ${col(st, '_chain_ms')}, NULL)) ${following}`;
        p.addComputed(`_chain_u${k}`, `${col(st, `_chain_a${k}`)} AND ifNull(${nextUseful} <= ifNull(${nextActive}, ${nextUseful}), 0)`, 'number', { stage: st });
      }
      final = p.newStage();
      const t = `toUInt64(${col(final, '_chain_ms')})`;
      const conds = Array.from({ length: n }, (_, i) => useful(final, i + 1)).join(', ');
      // Built from integers only (step numbers, within in ms): an aggregate function parameter must be a literal.
      const pattern = Array.from({ length: n }, (_, i) => `(?${i + 1})`).join(withinMs !== undefined ? `(?t<=${withinMs})` : '.*');
      const firstMatch = `sequenceMatchEvents('${pattern}')(${t}, ${conds})`;
      const steppedRows = `groupArrayIf(tuple(${col(final, '_chain_ms')}, ${col(final, '_chain_step_ids')}), ${conds.split(', ').join(' OR ')})`;
      final.agg = {
        kind: 'group',
        keys: [{ name: idName, sql: col(final, idName), type: 'text' }],
        values: [
          { name: 'chain_count', sql: `sequenceCount('${pattern}')(${t}, ${conds})`, type: 'number' },
          { name: '_chain_ts', sql: `arrayMap(x -> toFloat64(x), ${firstMatch})`, type: 'list', hidden: true },
          { name: '_chain_done', sql: `toFloat64(max(${col(final, '_chain_ms')}))`, type: 'number', hidden: true },
          {
            name: '_chain_ids',
            sql: `arrayMap((x, k) -> toString(arrayFirst(r -> r.1 = x, ${steppedRows}).2[k]), ${firstMatch}, range(1, ${n} + 1))`,
            type: 'list',
            hidden: true,
          },
        ],
      };
      moveOrderAndLimits(ev, final);
    } else {
      final = ev;
      ev.agg = {
        kind: 'group',
        keys: [{ name: idName, sql: idSql, type: 'text' }],
        values: [
          { name: 'chain_count', sql: `arrayMin([${steps.map((s) => `countIf(${s})`).join(', ')}])`, type: 'number' },
          { name: '_chain_ts', sql: `[${steps.map((s) => `toFloat64(minIf(${ms}, ${s}))`).join(', ')}]`, type: 'list', hidden: true },
          { name: '_chain_done', sql: `toFloat64(max(${ms}))`, type: 'number', hidden: true },
          { name: '_chain_ids', sql: `[${steps.map((s) => `toString(argMinIf(log_id, (timestamp, log_id), ${s}))`).join(', ')}]`, type: 'list', hidden: true },
        ],
      };
    }
    for (const name of ['chain_count', '_chain_ts', '_chain_done', '_chain_ids']) p.markDerived(name);
    // `_entity` exists only in the chain's rows; a named identity field still filters events (§1.9 rule 1).
    if (idName === '_entity') p.markDerived('_entity');
    const count = p.outputsOf(final).find((c) => c.name === 'chain_count')!;
    final.post.push(`${count.alias} > 0`);
    final.defaultSort = [
      { name: 'chain_count', desc: true },
      { name: idName, desc: false },
    ];
    p.rowHooks.push(chainEventsHook(p, fields));
  },
});
