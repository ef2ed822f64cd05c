import { asText } from '../plan/columns.ts';
import { Args } from './args.ts';
import { defineCommand } from './command.ts';

export default defineCommand({
  name: 'urldecode',
  tier: 'STANDARD',
  category: 'string',
  signature: 'urldecode(field)',
  description:
    'Percent-decodes a field (%41 → A); "+" stays "+", malformed escapes stay as written, decoded bytes that are not UTF-8 are shown as U+FFFD.',
  outputs: '_urldecoded',
  example: '* | urldecode(request_uri) | _urldecoded=/<script/i',
  apply(call, p) {
    const args = new Args(call);
    args.allowOnly(['field']);
    const field = args.field(['field'], 0, 'urldecode() requires a field, e.g. urldecode(request_uri)');
    const stage = p.rowStage();
    p.addComputed('_urldecoded', `toValidUTF8(decodeURLComponent(${asText(p.resolveIn(stage, field))}))`, 'text', { stage });
  },
});
