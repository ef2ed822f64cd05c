// What kind of refusal an engine error is, read from its ClickHouse error code (both transports:
// chDB's errors and the HTTP client's carry "Code: N." in their message, the client also `code`).

/** ClickHouse error code of an engine error, if it carries one. */
export function engineErrorCode(err: unknown): number | undefined {
  const e = err as { code?: string | number; message?: string };
  if (e?.code !== undefined && /^\d+$/.test(String(e.code))) return Number(e.code);
  const m = /Code: (\d+)/.exec(String(e?.message ?? ''));
  return m ? Number(m[1]) : undefined;
}

/**
 * Refusals of a statement's data, not of the engine's state: parse and type errors. Retried as
 * they are they would fail for ever (ingest/queue.ts splits the insert to find the rows at fault).
 */
const DATA_ERROR_CODES = new Set([6, 26, 27, 38, 41, 53, 69, 70, 72, 117, 130, 131]);

/** Whether the engine refused `err`'s statement for the data it was given. */
export const refusedForData = (err: unknown): boolean => DATA_ERROR_CODES.has(engineErrorCode(err) ?? -1);

/** The engine's refusal of a statement for its memory limit (the server's or the query's). */
const MEMORY_LIMIT = /MEMORY_LIMIT_EXCEEDED|memory limit exceeded/i;

/** Whether the engine refused `err`'s statement for its memory limit. */
export const refusedForMemory = (err: unknown): boolean => MEMORY_LIMIT.test(String((err as Error)?.message ?? ''));
