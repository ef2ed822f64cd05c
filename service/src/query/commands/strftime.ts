import { asText } from '../plan/columns.ts';
import { QueryCompileError } from '../plan/errors.ts';
import { Args } from './args.ts';
import { defineCommand } from './command.ts';

/**
 * C strftime conversions as ClickHouse formatDateTime fragments (whose `%M` would be the month
 * name and `%i` is the minute), or as SQL over the zoned time `t` where formatDateTime differs
 * from C (`%e` unpadded there, `%s` the seconds there).
 */
const FRAGMENTS: Record<string, string> = {
  Y: '%Y', m: '%m', d: '%d', H: '%H', M: '%i', S: '%S', a: '%a', b: '%b', h: '%b',
  R: '%H:%i', T: '%H:%i:%S', D: '%m/%d/%y', F: '%Y-%m-%d', x: '%m/%d/%y', X: '%H:%i:%S',
  r: '%I:%i:%S %p', y: '%y', C: '%C', j: '%j', I: '%I', p: '%p', u: '%u', w: '%w', V: '%V', z: '%z',
  n: '\n', t: '\t', '%': '%%',
};
const SPECIAL: Record<string, (t: string) => string> = {
  A: (t) => `dateName('weekday', ${t})`,
  B: (t) => `monthName(${t})`,
  e: (t) => `leftPad(toString(toDayOfMonth(${t})), 2, ' ')`,
  s: (t) => `toString(toUnixTimestamp(${t}))`,
  c: (t) => `concat(formatDateTime(${t}, '%a %b '), leftPad(toString(toDayOfMonth(${t})), 2, ' '), formatDateTime(${t}, ' %H:%i:%S %Y'))`,
};

type Piece = { kind: 'format'; text: string } | { kind: 'sql'; sql: (t: string) => string };

/** A C format as pieces: runs of formatDateTime text (user text with `%` escaped) and special SQL. */
function strftimePieces(format: string): Piece[] {
  const pieces: Piece[] = [];
  const text = (s: string) => {
    const last = pieces[pieces.length - 1];
    if (last?.kind === 'format') last.text += s;
    else pieces.push({ kind: 'format', text: s });
  };
  for (let i = 0; i < format.length; i++) {
    const c = format[i];
    const next = format[i + 1];
    if (c === '%' && next !== undefined && (FRAGMENTS[next] !== undefined || SPECIAL[next])) {
      i++;
      if (SPECIAL[next]) pieces.push({ kind: 'sql', sql: SPECIAL[next] });
      else text(FRAGMENTS[next]);
    } else {
      // Literal text, and conversions C does not define here, are printed as written.
      text(c === '%' ? '%%' : c);
    }
  }
  return pieces;
}

/** A time from any text (§3.5): 19/16/13 digits are epoch ns/µs/ms, anything else a date-time text; NULL if unparseable. */
function lenientTime(text: string): string {
  return (
    `multiIf(match(${text}, '^[0-9]{19}$'), fromUnixTimestamp64Nano(toInt64OrNull(${text}), 'UTC'), ` +
    `match(${text}, '^[0-9]{16}$'), fromUnixTimestamp64Micro(toInt64OrNull(${text}), 'UTC'), ` +
    `match(${text}, '^[0-9]{13}$'), fromUnixTimestamp64Milli(toInt64OrNull(${text}), 'UTC'), ` +
    `parseDateTime64BestEffortOrNull(${text}, 9, 'UTC'))`
  );
}

/** The IANA name as the time zone database spells it, or undefined when unknown. */
function canonicalZone(tz: string): string | undefined {
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: tz }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}

export default defineCommand({
  name: 'strftime',
  tier: 'STANDARD',
  category: 'time',
  signature: 'strftime("format", field=timestamp, timezone="UTC", as=_time)',
  description:
    'Formats a time with C strftime conversions: %Y %m %d %H %M (minute) %S %a %A %b %B %R (= %H:%M), also %T %F %D %y %e %j %I %p %u %w %V %z %s %c %x %X %n %t %%, in an IANA timezone. A field other than timestamp is parsed leniently: 19/16/13 digits are epoch ns/µs/ms, anything else a date-time text (UTC unless it says otherwise); unparseable values give an empty result.',
  outputs: '_time (or as=)',
  example: '* | strftime("%H", as=_hour) | groupBy(_hour)',
  apply(call, p) {
    const args = new Args(call);
    args.allowOnly(['format', 'field', 'timezone', 'as']);
    const format = args.text(['format'], 0);
    if (!format) throw new QueryCompileError('strftime() requires a format string', call.span);
    const field = args.text(['field'], args.has('format') ? 0 : 1) || 'timestamp';
    const tzText = args.text(['timezone']) || 'UTC';
    const tz = canonicalZone(tzText);
    if (!tz) throw new QueryCompileError(`strftime(): unknown timezone "${tzText}"`, args.named.get('timezone')?.span ?? call.span);
    const as = args.text(['as']) || '_time';

    const stage = p.rowStage();
    const col = p.resolveIn(stage, field);
    const time = col.type === 'time' ? col.sql : lenientTime(asText(col));
    const zoned = `toTimeZone(${time}, ${p.params.text(tz)})`;
    const parts = strftimePieces(format).map((piece) =>
      piece.kind === 'format' ? `formatDateTime(${zoned}, ${p.params.text(piece.text)})` : piece.sql(zoned),
    );
    const joined = parts.length === 1 ? parts[0] : `concat(${parts.join(', ')})`;
    p.addComputed(as, col.type === 'time' ? joined : `ifNull(${joined}, '')`, 'text', { stage });
  },
});
