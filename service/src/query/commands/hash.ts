import { asText } from '../plan/columns.ts';
import { QueryCompileError } from '../plan/errors.ts';
import { Args, listOf, valueText } from './args.ts';
import { defineCommand } from './command.ts';

export default defineCommand({
  name: 'hash',
  tier: 'STANDARD',
  category: 'field',
  signature: 'hash(f1, …, as=hash_key)',
  description:
    "CityHash64 (ClickHouse's cityHash64: CityHash v1.0.2, several values combined with Hash128to64) of the fields' values as text (timestamp as its text), written as upper-case hex, two digits per byte, leading zero bytes dropped. field=f may be used for any field.",
  outputs: 'hash_key (or as=)',
  example: '* | hash(user, event_id, as=composite_key)',
  apply(call, p) {
    const args = new Args(call);
    args.allowOnly(['field', 'as']);
    const fields: string[] = [];
    for (const a of call.args) {
      const k = a.key?.toLowerCase();
      if (k === undefined || k === 'field') fields.push(...listOf(a.value));
    }
    if (fields.length === 0) throw new QueryCompileError('hash() requires at least one field, e.g. hash(user, event_id, as=composite_key)', call.span);
    const asArg = args.value(['as']);
    const as = asArg ? valueText(asArg) : 'hash_key';
    const stage = p.rowStage();
    const texts = fields.map((f) => asText(p.resolveIn(stage, f)));
    // hex() of a UInt64 is big-endian, two digits per byte, without leading zero bytes.
    p.addComputed(as || 'hash_key', `hex(cityHash64(${texts.join(', ')}))`, 'text', { stage });
  },
});
