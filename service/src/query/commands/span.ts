// Spans of `bucket`, `timechart` and `chain within=` (query-language.md §3.5): `<integer><unit>`,
// unit s m h d w; an unknown unit or malformed span means 1h, a bad count 1.
export interface TimeSpan {
  count: number;
  unit: 's' | 'm' | 'h' | 'd' | 'w';
  text: string;
}

const UNIT_SECONDS = { s: 1, m: 60, h: 3600, d: 86400, w: 604800 } as const;
const UNIT_SQL = { s: 'SECOND', m: 'MINUTE', h: 'HOUR', d: 'DAY', w: 'WEEK' } as const;

export function parseSpan(text: string | undefined): TimeSpan {
  const m = /^\s*(\S*?)\s*([smhdw])\s*$/.exec(text ?? '');
  if (!m) return { count: 1, unit: 'h', text: '1h' };
  const n = /^\d+$/.test(m[1]) && Number(m[1]) > 0 ? Number(m[1]) : 1;
  const unit = m[2] as TimeSpan['unit'];
  return { count: n, unit, text: `${n}${unit}` };
}

export const spanSeconds = (s: TimeSpan): number => s.count * UNIT_SECONDS[s.unit];

/** SQL for the bucket start of `timeSql`; weeks start on Sunday. */
function bucketSql(timeSql: string, s: TimeSpan): string {
  if (s.unit === 'w' && s.count === 1) return `toDateTime(toStartOfWeek(${timeSql}, 0), 'UTC')`;
  return `toStartOfInterval(${timeSql}, INTERVAL ${s.count} ${UNIT_SQL[s.unit]})`;
}

/**
 * Bucket start as a DateTime (second precision), so results show `YYYY-MM-DD hh:mm:ss`. Grouping
 * by the DateTime and formatting only the output rows is about twice as fast as grouping by text.
 */
export const bucketTime = (timeSql: string, s: TimeSpan): string => `toDateTime(${bucketSql(timeSql, s)}, 'UTC')`;
