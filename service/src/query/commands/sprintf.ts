import { asText } from '../plan/columns.ts';
import { QueryCompileError } from '../plan/errors.ts';
import type { Params } from '../plan/params.ts';
import { Args, listOf, valueText } from './args.ts';
import { defineCommand } from './command.ts';

/** One piece of a C format: literal text, or a conversion `%[flags][width][.precision][length]conv`. */
export type FormatPiece = { kind: 'text'; text: string } | { kind: 'spec'; flags: string; width: string; precision?: string; conv: string };

const SPEC = /%([-+ #0]*)(\d*)(?:\.(\d*))?(?:hh|h|ll|l|L|q|j|z|t)?([diouxXeEfFgGcs%])/y;
/** A conversion's width or precision at most: padding is made per row before any limit applies, so `%10000000s` would ask the engine for gigabytes. */
export const MAX_SPRINTF_WIDTH = 1000;

/** Splits a C printf format; a `%` that starts no conversion is literal text (as C libraries print it). */
function parseFormat(format: string): FormatPiece[] {
  const pieces: FormatPiece[] = [];
  let text = '';
  for (let i = 0; i < format.length; ) {
    if (format[i] === '%') {
      SPEC.lastIndex = i;
      const m = SPEC.exec(format);
      if (m) {
        i = SPEC.lastIndex;
        if (m[4] === '%') {
          text += '%';
          continue;
        }
        if (text) pieces.push({ kind: 'text', text });
        text = '';
        pieces.push({ kind: 'spec', flags: m[1], width: m[2], precision: m[3], conv: m[4] });
        continue;
      }
    }
    text += format[i++];
  }
  if (text) pieces.push({ kind: 'text', text });
  return pieces;
}

/**
 * SQL for one conversion applied to a text value. Integer conversions (d i u o x X) and floating
 * ones (f F e E g G) read the text as a number; text that is not one (absent, empty, `abc`) gives
 * an empty piece. `%c` is the value's first character, `%s` the value; flags, width and precision
 * behave as in C (ClickHouse's printf applies them, counting characters).
 */
function specSql(spec: Extract<FormatPiece, { kind: 'spec' }>, value: string, params: Params): string {
  const plain = !spec.flags && !spec.width && spec.precision === undefined;
  // C ignores the sign flags for unsigned conversions; ClickHouse's printf would print a '+'.
  const flags = 'uoxX'.includes(spec.conv) ? spec.flags.replace(/[+ ]/g, '') : spec.flags;
  const fmt = (conv: string) => params.text(`%${flags}${spec.width}${spec.precision !== undefined ? `.${spec.precision}` : ''}${conv}`);
  switch (spec.conv) {
    case 's':
      return plain ? value : `printf(${fmt('s')}, ${value})`;
    case 'c': {
      const first = `substringUTF8(${value}, 1, 1)`;
      return spec.flags || spec.width ? `printf(${params.text(`%${spec.flags.replace(/[^-]/g, '')}${spec.width}s`)}, ${first})` : first;
    }
    case 'f':
    case 'F':
    case 'e':
    case 'E':
    case 'g':
    case 'G':
      return `ifNull(printf(${fmt(spec.conv)}, toFloat64OrNull(${value})), '')`;
    default: {
      // d i u o x X: an integer; decimals are truncated toward zero as C's conversion to int does.
      const f = `toFloat64OrNull(${value})`;
      const int = `multiIf(isNotNull(toInt64OrNull(${value})), toInt64OrNull(${value}), abs(${f}) < 9.2e18, toInt64(trunc(${f})), NULL)`;
      return `ifNull(printf(${fmt(spec.conv)}, ${int}), '')`;
    }
  }
}

export default defineCommand({
  name: 'sprintf',
  tier: 'STANDARD',
  category: 'string',
  signature: 'sprintf("format", f1, …, as=_sprintf)',
  description:
    'Formats field values with C printf conversions (%s %d %i %u %x %X %o %f %e %g %c %%, with flags, width and precision). Values are passed as text, an absent field or a missing argument as empty; a numeric conversion of text that is not a number gives an empty piece. field=f may be used for any value.',
  outputs: '_sprintf (or as=)',
  example: '* | sprintf("https://%s:%s/%s", hostname, port, path, as=url)',
  apply(call, p) {
    const args = new Args(call);
    args.allowOnly(['format', 'field', 'as']);
    let format: string | undefined = args.text(['format']);
    const fields: string[] = [];
    for (const a of call.args) {
      const k = a.key?.toLowerCase();
      if (k === undefined && format === undefined) format = valueText(a.value);
      else if (k === undefined || k === 'field') fields.push(...listOf(a.value));
    }
    if (format === undefined) throw new QueryCompileError('sprintf() requires a format string, e.g. sprintf("%s:%s", host, port)', call.span);
    const as = args.text(['as']) || '_sprintf';
    const stage = p.rowStage();
    const values = fields.map((f) => asText(p.resolveIn(stage, f)));
    let next = 0;
    const parts = parseFormat(format).map((piece) => {
      if (piece.kind === 'text') return p.params.text(piece.text);
      for (const [what, n] of [['width', piece.width], ['precision', piece.precision]] as const) {
        if (n && Number(n) > MAX_SPRINTF_WIDTH) {
          throw new QueryCompileError(`sprintf(): a ${what} of ${n} is more than the ${MAX_SPRINTF_WIDTH} allowed`, call.span);
        }
      }
      const value = values[next++] ?? "''";
      return specSql(piece, value, p.params);
    });
    const sql = parts.length === 0 ? "''" : parts.length === 1 ? parts[0] : `concat(${parts.join(', ')})`;
    p.addComputed(as, sql, 'text', { stage });
  },
});
