import { asText } from '../plan/columns.ts';
import { QueryCompileError } from '../plan/errors.ts';
import type { ArgValue } from '../syntax/ast.ts';
import { Args, valueText } from './args.ts';
import { defineCommand } from './command.ts';

const INTEGER = /^[+-]?\d+$/;
const LIMIT = 2 ** 31;

/** An integer argument; beyond any string length it is clamped (the result is the same). */
function integer(v: ArgValue, what: string): number {
  const t = valueText(v).trim();
  if (!INTEGER.test(t)) throw new QueryCompileError(`substr(): ${what} must be numeric, got "${valueText(v)}"`, v.span);
  return Math.max(-LIMIT, Math.min(LIMIT, Number(t)));
}

export default defineCommand({
  name: 'substr',
  tier: 'STANDARD',
  category: 'string',
  signature: 'substr(field, start, length)',
  description:
    'Substring counted in characters: start is 1-based (negative counts from the end; 0 gives an empty value); length is optional (default: to the end; a negative length stops that many characters before the end).',
  outputs: '_substr',
  example: '* | substr(hash, 1, 8) | table(hash, _substr)',
  apply(call, p) {
    const args = new Args(call);
    args.allowOnly([]);
    const [fieldArg, startArg, lengthArg] = args.positional;
    if (!fieldArg || !startArg || args.positional.length > 3) {
      throw new QueryCompileError('substr() requires a field and a start, e.g. substr(hash, 1, 8)', call.span);
    }
    const start = integer(startArg, 'start');
    const length = lengthArg ? integer(lengthArg, 'length') : undefined;
    const stage = p.rowStage();
    const text = asText(p.resolveIn(stage, valueText(fieldArg)));
    const bounds = [p.params.bind(start, 'Int64'), ...(length === undefined ? [] : [p.params.bind(length, 'Int64')])];
    p.addComputed('_substr', `substringUTF8(${text}, ${bounds.join(', ')})`, 'text', { stage });
  },
});
