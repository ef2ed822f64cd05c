import { QueryCompileError } from '../plan/errors.ts';
import { aggregateColumns, isSubFunction, multiSpecs, subFunctionSpec } from './aggregate-functions.ts';
import { Args, listOf } from './args.ts';
import { defineCommand } from './command.ts';

export default defineCommand({
  name: 'groupBy',
  tier: 'CORE',
  category: 'aggregate',
  aggregates: true,
  signature: 'groupBy(f1, f2, …, function=<sub-function | multi(…)>, limit=N, distinct=false)',
  description:
    'One row per distinct combination of the fields (absent values group as empty), with _count, or with the outputs of function=. A later groupBy groups the previous rows.',
  outputs: 'the group fields, then _count (or the function outputs)',
  example: '* | groupBy(user, function=sum(bytes)) | sort(_sum, order=desc) | limit(10)',
  apply(call, p) {
    const args = new Args(call);
    args.allowOnly(['function', 'limit', 'distinct', 'unique']);
    let fields = args.positional.flatMap(listOf);
    if (fields.length === 0) throw new QueryCompileError('groupBy() requires at least one field, e.g. groupBy(user)', call.span);
    const distinct = args.bool(['distinct', 'unique'], false);
    const distinctField = distinct && fields.length > 0 ? fields[fields.length - 1] : undefined;
    if (distinctField) fields = fields.slice(0, -1);
    const stage = p.groupBy(fields);
    const fnArg = args.value(['function']);
    if (fnArg) {
      const isMulti = fnArg.kind === 'call' && fnArg.name.toLowerCase() === 'multi';
      const specs = isMulti && fnArg.kind === 'call' ? multiSpecs(fnArg.args.map((a) => a.value)) : [subFunctionSpec(fnArg)];
      for (const spec of specs) {
        if (!isSubFunction(spec.fn)) {
          throw new QueryCompileError(
            isMulti ? `unknown aggregation function in multi(): "${spec.fn}"` : `unknown aggregation function: "${spec.fn}" (did you mean multi([...])?)`,
            spec.span,
          );
        }
        for (const col of aggregateColumns(p, stage, spec, 'sub')) p.addAggregate(stage, col);
      }
    } else if (distinctField) {
      for (const col of aggregateColumns(p, stage, { fn: 'count', field: distinctField, distinct: true, as: '_count' }, 'command')) p.addAggregate(stage, col);
    } else {
      p.addAggregate(stage, { name: '_count', sql: 'count()', type: 'number' });
    }
    const limit = args.text(['limit']);
    if (limit !== undefined && /^\d+$/.test(limit)) p.setLimit(Number(limit), stage);
  },
});
