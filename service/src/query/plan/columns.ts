// How a name in a query becomes a SQL expression. Every expression the planner builds is typed,
// so comparisons, sorting and arithmetic pick text or numeric semantics as query-language.md §2
// requires (`status=200` compares text; `_count=5` compares numbers).
import { FIELDS_TEXT_SQL } from '../../logs/log-store.ts';
import type { Params } from './params.ts';

export type ColumnType = 'text' | 'number' | 'list' | 'time';

export interface Column {
  name: string;
  sql: string;
  type: ColumnType;
  /** An event field's JSON subcolumn (`sql` is its text): numeric reads take its typed variants. */
  jsonPath?: string;
}

/** The event's fields serialized (§1.7 `norm_log`), as result rows show them. */
export const NORM_LOG_SQL = FIELDS_TEXT_SQL;

/**
 * What bare search reads: the record as stored. Rebuilding the fields' JSON for every event in
 * range cost about 13 µs a row (minutes over ten million events); the stored text costs a scan.
 */
export const RECORD_SQL = 'raw';

/** Timestamps as text `YYYY-MM-DD hh:mm:ss.mmm` (UTC), the spec's event time format. */
export const timeText = (sql: string): string => `substring(toString(${sql}), 1, 23)`;

export function asText(c: Pick<Column, 'sql' | 'type'>): string {
  switch (c.type) {
    case 'text':
      return c.sql;
    case 'time':
      return timeText(c.sql);
    case 'number':
      return `ifNull(toString(${c.sql}), '')`;
    case 'list':
      return `toString(${c.sql})`;
  }
}

/** Numeric value, NULL when the text is not a number (aggregates then ignore it). */
export function asNumberOrNull(c: Pick<Column, 'sql' | 'type' | 'jsonPath'>): string {
  // A stored number is its own numeric value, a string is parsed, anything else (true, absent) is
  // not a number: what parsing the text gives, without printing each number to text first
  // (`status>=500` over ten million events: 148 ms instead of 258). Ingest stores numbers only as
  // Int64 and Float64: one beyond 2^53 is kept as exact text (shared/exact-json.ts), a String.
  if (c.jsonPath) {
    const v = c.jsonPath;
    return `coalesce(toFloat64(${v}.:Int64), ${v}.:Float64, toFloat64OrNull(${stringVariant(c)}))`;
  }
  switch (c.type) {
    case 'number':
      return `toFloat64OrNull(toString(${c.sql}))`;
    case 'time':
      return `toFloat64(toUnixTimestamp64Milli(${c.sql}))`;
    default:
      return `toFloat64OrNull(${asText(c)})`;
  }
}

/** Numeric value for comparisons: empty or non-numeric counts as 0 (§2). */
export function asNumberOrZero(c: Pick<Column, 'sql' | 'type' | 'jsonPath'>): string {
  return `ifNull(${asNumberOrNull(c)}, 0)`;
}

// A field name the engine can read as one subcolumn (`fields.`name``): getSubcolumn() with a
// parameter made it read every field of the JSON column. The name is quoted as an identifier,
// never spliced as a value; names with a backquote, backslash or control character fall back to
// getSubcolumn with a bound parameter.
const PLAIN_PATH = /^[^`\\\x00-\x1f\x7f]+$/;

const isPlainPath = (name: string): boolean => PLAIN_PATH.test(name) && !name.startsWith('.') && !name.endsWith('.') && !name.includes('..');

/** An event field's value as text; absent fields are the empty string. */
export function eventField(name: string, params: Params): Column {
  if (!isPlainPath(name)) return { name, sql: `toString(getSubcolumn(fields, ${params.text(name)}))`, type: 'text' };
  const path = `fields.\`${name}\``;
  return { name, sql: `toString(${path})`, type: 'text', jsonPath: path };
}

/**
 * An event field's String variant (`fields.`name`.:String`): its value when it is a string, NULL
 * when it is absent or of another type. Reading it alone skips printing every value to text.
 */
export const stringVariant = (c: Pick<Column, 'jsonPath'>): string | undefined => (c.jsonPath ? `${c.jsonPath}.:String` : undefined);

/** How the text of a number or array may start: digit, sign, point or bracket. */
const NON_STRING_START = /^[-+.\d[({]/;

/**
 * `text` can only be the text of a string value: the `fields` JSON column holds numbers (Int64,
 * Float64: digits, sign, point, exponent, `inf`, `nan`), booleans (`true`, `false`) and arrays
 * (`[…]`) besides strings, and absence reads as ''. A comparison of a field with such texts only
 * needs its String variant.
 */
export const onlyStringText = (text: string): boolean =>
  text !== '' && !NON_STRING_START.test(text) && !/^(true|false|inf|nan|infinity)$/i.test(text);

/** Words a number or boolean prints as: Float64 infinity and NaN, Bool. */
const VALUE_WORDS = ['true', 'false', 'inf', 'nan'];

/**
 * No text of an absent, number, boolean or array value starts (`at: 'start'`) or ends with `term`,
 * compared case-insensitively as `=^` and `=$` do: such texts start with a digit, sign, point or
 * `[` (or are one of VALUE_WORDS) and end with a digit or `]` (or VALUE_WORDS). A term of five
 * code points or fewer with a non-ASCII letter is taken as unsafe: its lowercase may be ASCII.
 */
export function onlyStringAffix(term: string, at: 'start' | 'end'): boolean {
  if (term === '') return false;
  if (at === 'start' ? NON_STRING_START.test(term) : /[\d\])}]$/.test(term)) return false;
  if ([...term].length > 5) return true;
  const lower = term.toLowerCase();
  return !/[^\x00-\x7f]/.test(term) && !VALUE_WORDS.some((w) => (at === 'start' ? w.startsWith(lower) : w.endsWith(lower)));
}

/** Reserved names of §1.7 as the event table holds them. */
export function reservedEventColumn(name: string): Column | undefined {
  switch (name) {
    case 'timestamp':
      return { name, sql: 'timestamp', type: 'time' };
    case 'log_id':
      return { name, sql: 'toString(log_id)', type: 'text' };
    case 'fractal_id':
      return { name, sql: 'toString(fractal_id)', type: 'text' };
    case 'norm_log':
      return { name, sql: NORM_LOG_SQL, type: 'text' };
    case 'raw_log':
      return { name, sql: 'raw', type: 'text' };
    default:
      return undefined;
  }
}

/** A name absent from the scope: the empty string, so it silently matches nothing (§1.7). */
export const absentColumn = (name: string): Column => ({ name, sql: "''", type: 'text' });
