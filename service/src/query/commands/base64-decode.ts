import { asText } from '../plan/columns.ts';
import { Args } from './args.ts';
import { defineCommand } from './command.ts';

export default defineCommand({
  name: 'base64Decode',
  tier: 'STANDARD',
  category: 'string',
  signature: 'base64Decode(field)',
  description:
    'Decodes standard (padded) base64 to text; invalid input gives an empty value. Text encoded as UTF-16LE (as PowerShell -EncodedCommand is) is recognised by its zero bytes and converted; byte sequences that are not UTF-8 are shown as U+FFFD.',
  outputs: '_decoded',
  example: '* | base64Decode(encoded_command) | _decoded=/invoke-expression/i',
  apply(call, p) {
    const args = new Args(call);
    args.allowOnly(['field']);
    const field = args.field(['field'], 0, 'base64Decode() requires a field, e.g. base64Decode(encoded_command)');
    const stage = p.rowStage();
    const d = `tryBase64Decode(${asText(p.resolveIn(stage, field))})`;
    // UTF-16LE: even length and the first zero byte is a high byte (at an even 1-based position).
    const utf16 = `(length(${d}) % 2 = 0 AND position(${d}, char(0)) > 0 AND position(${d}, char(0)) % 2 = 0)`;
    p.addComputed('_decoded', `toValidUTF8(if(${utf16}, convertCharset(${d}, 'UTF-16LE', 'UTF-8'), ${d}))`, 'text', { stage });
  },
});
