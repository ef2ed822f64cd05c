// Go's time.Time as templates see it (always UTC here): String(), and Format with Go's reference
// layout "Mon Jan 2 15:04:05 MST 2006" (2006, 01, Jan, 02, _2, 15, 03, 04, 05, .000, PM, MST,
// -0700, Z07:00 …), so `{{ .TriggeredAt.Format "2006-01-02" }}` works as in Go.

const LONG_MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const LONG_DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

const pad = (n: number, w: number, c = '0') => String(n).padStart(w, c);

function yearDay(d: Date): number {
  return Math.floor((Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()) - Date.UTC(d.getUTCFullYear(), 0, 1)) / 86_400_000) + 1;
}

/** The layout's chunks: a recognised element, or literal text. */
const ELEMENTS: Array<[RegExp, (d: Date, m: RegExpExecArray) => string]> = [
  [/^January/, (d) => LONG_MONTHS[d.getUTCMonth()]!],
  [/^Jan(?![a-z])/, (d) => LONG_MONTHS[d.getUTCMonth()]!.slice(0, 3)],
  [/^Monday/, (d) => LONG_DAYS[d.getUTCDay()]!],
  [/^Mon(?![a-z])/, (d) => LONG_DAYS[d.getUTCDay()]!.slice(0, 3)],
  [/^MST/, () => 'UTC'],
  [/^2006/, (d) => pad(d.getUTCFullYear(), 4)],
  [/^_2006/, (d) => `_${pad(d.getUTCFullYear(), 4)}`],
  [/^002/, (d) => pad(yearDay(d), 3)],
  [/^__2/, (d) => pad(yearDay(d), 3, ' ')],
  [/^01/, (d) => pad(d.getUTCMonth() + 1, 2)],
  [/^02/, (d) => pad(d.getUTCDate(), 2)],
  [/^03/, (d) => pad(d.getUTCHours() % 12 || 12, 2)],
  [/^04/, (d) => pad(d.getUTCMinutes(), 2)],
  [/^05/, (d) => pad(d.getUTCSeconds(), 2)],
  [/^06/, (d) => pad(d.getUTCFullYear() % 100, 2)],
  [/^_2/, (d) => pad(d.getUTCDate(), 2, ' ')],
  [/^15/, (d) => pad(d.getUTCHours(), 2)],
  [/^1/, (d) => String(d.getUTCMonth() + 1)],
  [/^2/, (d) => String(d.getUTCDate())],
  [/^3/, (d) => String(d.getUTCHours() % 12 || 12)],
  [/^4/, (d) => String(d.getUTCMinutes())],
  [/^5/, (d) => String(d.getUTCSeconds())],
  [/^PM/, (d) => (d.getUTCHours() >= 12 ? 'PM' : 'AM')],
  [/^pm/, (d) => (d.getUTCHours() >= 12 ? 'pm' : 'am')],
  [/^Z07:00:00|^Z070000|^Z07:00|^Z0700|^Z07/, () => 'Z'],
  [/^-07:00:00/, () => '+00:00:00'],
  [/^-070000/, () => '+000000'],
  [/^-07:00/, () => '+00:00'],
  [/^-0700/, () => '+0000'],
  [/^-07/, () => '+00'],
  // Fractional seconds: .000 (fixed digits) or .999 (trailing zeros dropped), also with a comma.
  [/^[.,](0+|9+)(?![0-9])/, (d, m) => fraction(d, m[0]![0]!, m[1]!)],
];

function fraction(d: Date, sep: string, spec: string): string {
  const ns = String(d.getUTCMilliseconds() * 1_000_000).padStart(9, '0').slice(0, spec.length);
  if (spec[0] === '0') return sep + ns;
  const trimmed = ns.replace(/0+$/, '');
  return trimmed ? sep + trimmed : '';
}

/** time.Time.Format(layout) in UTC. */
export function goFormat(d: Date, layout: string): string {
  let out = '';
  let i = 0;
  while (i < layout.length) {
    const rest = layout.slice(i);
    let hit = false;
    for (const [re, f] of ELEMENTS) {
      const m = re.exec(rest);
      if (!m) continue;
      // As in Go, "Jan" or "Mon" followed by a lower-case letter is text ("Janet"), and every
      // other element is recognised wherever it stands (the order above settles overlaps).
      out += f(d, m);
      i += m[0].length;
      hit = true;
      break;
    }
    if (!hit) {
      out += layout[i];
      i++;
    }
  }
  return out;
}

/** time.Time.String(): "2006-01-02 15:04:05.999999999 -0700 MST". */
export function goTimeString(d: Date): string {
  return goFormat(d, '2006-01-02 15:04:05.999999999 -0700 MST');
}

/** Go's zero time, 0001-01-01 00:00:00 UTC. */
const ZERO_TIME = -62_135_596_800_000;

/** The methods a template may call on a time value (`.TriggeredAt.Unix`). */
export const TIME_METHODS: Record<string, (d: Date, args: unknown[]) => unknown> = {
  Format: (d, [layout]) => goFormat(d, String(layout)),
  String: (d) => goTimeString(d),
  Unix: (d) => Math.floor(d.getTime() / 1000),
  UnixMilli: (d) => d.getTime(),
  UnixMicro: (d) => d.getTime() * 1000,
  UnixNano: (d) => BigInt(d.getTime()) * 1_000_000n,
  UTC: (d) => d,
  Local: (d) => d,
  Year: (d) => d.getUTCFullYear(),
  Month: (d) => LONG_MONTHS[d.getUTCMonth()],
  Day: (d) => d.getUTCDate(),
  Hour: (d) => d.getUTCHours(),
  Minute: (d) => d.getUTCMinutes(),
  Second: (d) => d.getUTCSeconds(),
  Nanosecond: (d) => d.getUTCMilliseconds() * 1_000_000,
  YearDay: (d) => yearDay(d),
  Weekday: (d) => LONG_DAYS[d.getUTCDay()],
  IsZero: (d) => d.getTime() === ZERO_TIME,
};

/** Arity of each time method (Format takes the layout). */
export const TIME_METHOD_ARGS: Record<string, number> = { Format: 1 };
