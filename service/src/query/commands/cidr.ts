import { asText } from '../plan/columns.ts';
import { QueryCompileError } from '../plan/errors.ts';
import { Args } from './args.ts';
import { defineCommand } from './command.ts';

const IPV4_CIDR = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/;
const IPV6_CIDR = /^[0-9a-fA-F:.]+\/(\d{1,3})$/;

function validRange(range: string): boolean {
  const v4 = IPV4_CIDR.exec(range);
  if (v4) return v4.slice(1, 5).every((o) => Number(o) <= 255) && Number(v4[5]) <= 32;
  const v6 = IPV6_CIDR.exec(range);
  return !!v6 && range.includes(':') && Number(v6[1]) <= 128;
}

export default defineCommand({
  name: 'cidr',
  tier: 'CORE',
  category: 'filter',
  signature: 'cidr(field, "range")',
  description:
    'Keeps events whose field is an IPv4/IPv6 address inside the range. Invalid or absent values never are, so !cidr() keeps them.',
  example: '* | !cidr(src_ip, "10.0.0.0/8")',
  condition(call, p, resolve) {
    const args = new Args(call);
    args.allowOnly(['field', 'range']);
    const field = args.field(['field'], 0, 'cidr() requires a field and a range, e.g. cidr(src_ip, "10.0.0.0/8")');
    const range = args.text(['range'], args.has('field') ? 0 : 1);
    if (!range) throw new QueryCompileError('cidr() requires a range, e.g. cidr(src_ip, "10.0.0.0/8")', call.span);
    if (!validRange(range)) throw new QueryCompileError(`cidr(): invalid CIDR range "${range}"`, call.span);
    const text = asText(resolve(field));
    // isIPAddressInRange fails on text that is not an address; if() evaluates it only for addresses.
    return `if(isNotNull(toIPv6OrNull(${text})), isIPAddressInRange(${text}, ${p.params.text(range)}), 0)`;
  },
});
