// Field statistics for the search workspace: the value distribution of one field over a query's
// result set (POST /api/v1/query/fieldstats) and the catalog of fields a scope holds
// (GET /api/v1/query/fields, GET /api/v1/logs/fields).
import { chTime, type Analytics } from '../storage/clickhouse.ts';
import { asNumberOrNull, asText } from './plan/columns.ts';
import { Params } from './plan/params.ts';
import { conjunction, rangeConditions } from './plan/pipeline.ts';
import type { CompiledQuery } from './compile.ts';
import { engineFailure, executableSql } from './run.ts';

/** One statement's rows under the per-query limits; engine errors as the query's caller sees them. */
async function readRows<T>(ch: Analytics, sql: string, params: Record<string, unknown>, timeoutS: number): Promise<T[]> {
  try {
    const rs = await ch.client.query({ query: executableSql(sql, timeoutS), query_params: params, format: 'JSONEachRow' });
    return (await rs.json()) as T[];
  } catch (err) {
    throw engineFailure(err);
  }
}

export interface FieldStats {
  field: string;
  /** Rows in the result set. */
  total: number;
  /** Rows where the field is present and non-empty. */
  present: number;
  distinct: number;
  top: Array<{ value: string; count: number; share: number }>;
  numeric?: { min: number; max: number; avg: number };
}

/**
 * Over events (a search): every matching event in range, not only the displayed page. Over an
 * aggregation: its result rows.
 */
export async function fieldStats(ch: Analytics, q: CompiledQuery, field: string, limit: number, timeoutS: number): Promise<FieldStats> {
  const p = q.pipeline;
  let source: string;
  let text: string;
  let num: string;
  if (q.eventRows) {
    const col = p.resolveIn(p.events, field);
    text = asText(col);
    num = asNumberOrNull(col);
    source = `(SELECT ${text} AS v, ${num} AS n FROM ${p.eventsFrom()} WHERE ${p.eventWhereSql()})`;
  } else {
    const out = q.columns.find((c) => c.name === field);
    const inner = q.sql;
    if (!out) source = `(SELECT '' AS v, CAST(NULL, 'Nullable(Float64)') AS n FROM (${inner}))`;
    else {
      const colRef = { sql: out.alias, type: out.type };
      source = `(SELECT ${asText(colRef)} AS v, ${asNumberOrNull(colRef)} AS n FROM (${inner}))`;
    }
  }
  const sql = `SELECT count() AS total, countIf(v != '') AS present, uniqExactIf(v, v != '') AS distinct,
      countIf(isNotNull(n)) AS numeric, min(n) AS min, max(n) AS max, avg(n) AS avg
    FROM ${source}`;
  // Exact counts for the top values (an approximate top-K would show counts a filter then contradicts).
  const topSql = `SELECT v, count() AS c FROM ${source} WHERE v != '' GROUP BY v ORDER BY c DESC, v LIMIT ${Math.max(1, Math.min(limit, 100))}`;
  const read = <T>(statement: string) => readRows<T>(ch, statement, p.params.values, timeoutS);
  type Summary = { total: string | number; present: string | number; distinct: string | number; numeric: string | number; min: number | null; max: number | null; avg: number | null };
  const [[r], topRows] = await Promise.all([read<Summary>(sql), read<{ v: string; c: string | number }>(topSql)]);
  const total = Number(r.total);
  const present = Number(r.present);
  const stats: FieldStats = {
    field,
    total,
    present,
    distinct: Number(r.distinct),
    top: topRows.map(({ v, c }) => ({
      value: v,
      count: Number(c),
      share: total ? Math.round((10000 * Number(c)) / total) / 100 : 0,
    })),
  };
  // Numeric statistics only when the field's present values are all numbers.
  if (present > 0 && Number(r.numeric) === present && r.min !== null && r.max !== null && r.avg !== null) {
    stats.numeric = { min: r.min, max: r.max, avg: Math.round(r.avg * 100) / 100 };
  }
  return stats;
}

export interface CatalogField {
  name: string;
  /** ClickHouse's type of the stored values, e.g. String, Int64, Float64, Bool (several: the most common). */
  type: string;
  count: number;
  share: number;
}

const CATALOG_SAMPLE = 200_000;

/** Fields of the most recent events (up to 200,000) in range, with type and how often each appears. */
export async function fieldCatalog(
  ch: Analytics,
  fractalIds: string[],
  start: Date,
  end: Date,
  timeoutS: number,
): Promise<{ sampled: number; fields: CatalogField[] }> {
  const params = new Params();
  const range = conjunction(rangeConditions(params, { fractalIds, start: chTime(start), end: chTime(end) }));
  // The newest events first, so the engine reads the sort key backwards and stops at the sample;
  // their count comes from a statement of its own (a window over every row in range held them all).
  const sample = `SELECT fields FROM ${ch.table('logs')} WHERE ${range} ORDER BY timestamp DESC LIMIT ${CATALOG_SAMPLE}`;
  const sql = `SELECT path, argMax(type, n) AS type, sum(n) AS count FROM (
      SELECT path, type, count() AS n FROM (SELECT JSONAllPathsWithTypes(fields) AS m FROM (${sample}))
      ARRAY JOIN mapKeys(m) AS path, mapValues(m) AS type
      GROUP BY path, type
    ) GROUP BY path ORDER BY count DESC, path`;
  const [rows, [counted]] = await Promise.all([
    readRows<{ path: string; type: string; count: string | number }>(ch, sql, params.values, timeoutS),
    readRows<{ n: string | number }>(ch, `SELECT count() AS n FROM (SELECT 1 FROM ${ch.table('logs')} WHERE ${range} LIMIT ${CATALOG_SAMPLE})`, params.values, timeoutS),
  ]);
  const sampled = Number(counted?.n ?? 0);
  return {
    sampled,
    fields: rows.map((r) => ({
      name: r.path,
      type: r.type,
      count: Number(r.count),
      share: sampled ? Math.round((10000 * Number(r.count)) / sampled) / 100 : 0,
    })),
  };
}
