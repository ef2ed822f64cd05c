// `match(dict="name", field=f, column=key, include=[c1, …], strict=false)` (query-language.md
// §3.11): looks each row's `field` up in key column `column` of a user-managed dictionary (the
// dictionaries domain; the query's own fractal or prism first, then the global ones) and adds the
// `include` columns under their own names, empty when nothing matches; `strict=true` keeps only
// matched rows. The columns are computed per row inside the engine (on the events, or on a new
// stage after an aggregation), so a later filter, sort or aggregation reads them like any other.
// Lookups are exact text comparisons, as `=` compares text.
import { asText, reservedEventColumn } from '../plan/columns.ts';
import { QueryCompileError } from '../plan/errors.ts';
import type { Call, Stage } from '../syntax/ast.ts';
import { parseQuery } from '../syntax/parser.ts';
import { Args } from './args.ts';
import { defineCommand } from './command.ts';

/**
 * The dictionary names a query's match() calls read, as written (resolve them as the query's scope
 * would), found in the parsed query, case/chain/join blocks included. A query that does not parse
 * reads nothing.
 */
export function dictionariesNamed(query: string): string[] {
  let stages: Stage[];
  try {
    stages = parseQuery(query).stages;
  } catch {
    return [];
  }
  const names = new Set<string>();
  const visit = (list: Stage[]): void => {
    for (const s of list) {
      if (s.kind !== 'command') continue;
      const call: Call = s.call;
      if (call.name.toLowerCase() === 'match') {
        const name = new Args(call).text(['dict']);
        if (name) names.add(name);
      }
      for (const b of call.block?.branches ?? []) visit(b.stages);
    }
  };
  visit(stages);
  return [...names];
}

export default defineCommand({
  name: 'match',
  tier: 'STANDARD',
  category: 'enrichment',
  signature: 'match(dict="name", field=f, column=key, include=[c1, …], strict=false)',
  description:
    'Looks the field up in key column `column` of a dictionary (the fractal\'s or prism\'s own, else a global one; exact text) and adds the include columns under their own names, empty when there is no match. strict=true keeps only matched rows.',
  outputs: 'the rows\' columns, then each include column',
  example: '* | match(dict="threat_intel", field=src_ip, column=ip, include=[threat_score,category])',
  apply(call, p) {
    const args = new Args(call);
    args.allowOnly(['dict', 'field', 'column', 'include', 'strict']);
    const dictName = args.text(['dict']);
    if (!dictName) throw new QueryCompileError('match() requires dict= parameter', call.span);
    const field = args.text(['field']);
    if (!field) throw new QueryCompileError('match() requires field= parameter', call.span);
    const include = [...new Set(args.list(['include']) ?? [])];
    if (include.length === 0) throw new QueryCompileError('match() requires include= parameter with at least one column', call.span);
    const column = args.text(['column']);
    if (!column) throw new QueryCompileError('match() requires column= parameter to specify the lookup key column', call.span);

    const lookup = p.options.dictionary;
    if (!lookup) throw new QueryCompileError('match() cannot read dictionaries here', call.nameSpan);
    const dict = lookup(dictName);
    if (!dict || !dict.keyColumns.includes(column)) {
      throw new QueryCompileError(`dictionary "${dictName}" with key column "${column}" not found`, args.named.get('dict')?.span ?? call.span);
    }
    const includeSpan = args.named.get('include')?.span ?? call.span;
    for (const c of include) {
      if (!dict.columns.includes(c)) {
        throw new QueryCompileError(`match(): dictionary "${dict.name}" has no column "${c}" (its columns: ${dict.columns.join(', ')})`, includeSpan);
      }
      // An event's own columns are its identity: a dictionary column cannot stand in for them.
      if (reservedEventColumn(c)) {
        throw new QueryCompileError(`match(): the include column "${c}" would replace the event's own ${c}; leave it out of include=`, includeSpan);
      }
    }

    const strict = args.flag('strict', false);

    // The dictionary's rows as one constant (keys, 1s, then each include column): the engine
    // computes it once and each row looks its key up by hash in `transform`, so an event search
    // still reads newest-first and stops at the row cap (a JOIN would read and sort every match).
    const rows = dict.sql((value, type) => p.params.bind(value, type), column, include);
    const table = `(SELECT tuple(groupArray(k), groupArray(toUInt8(1)), ${include.map((_, i) => `groupArray(x${i})`).join(', ')}) FROM (${rows}))`;
    const stage = p.rowStage();
    if (!stage.isEvents && !stage.input!.some((c) => c.name === field && !c.hidden)) {
      const cols = stage.input!.filter((c) => !c.hidden).map((c) => c.name);
      throw new QueryCompileError(
        `match(): the rows have no column "${field}" (they have [${cols.join(', ')}]); after an aggregation, look up one of its group columns`,
        args.named.get('field')?.span ?? call.span,
      );
    }
    const key = asText(p.resolveIn(stage, field));
    if (strict) p.addWhere(stage, `transform(${key}, tupleElement(${table}, 1), tupleElement(${table}, 2), toUInt8(0)) = 1`);
    include.forEach((name, i) => {
      p.addComputed(name, `transform(${key}, tupleElement(${table}, 1), tupleElement(${table}, ${i + 3}), '')`, 'text', { stage });
      if (stage.isEvents) {
        // Listed after the event's own fields, also under a table() projection.
        p.listedLast.push(name);
        if (stage.projection && !stage.projection.includes(name)) stage.projection.push(name);
      }
    });
  },
});
