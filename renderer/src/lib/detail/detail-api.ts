// The calls of the log detail and the field sidebar. All answer the {success, data} envelope, so they
// go through lib/api.ts: a refusal arrives as ApiError carrying the service's own sentence.
import { del, enc, get, post, put } from '../api.ts';
import type { Comment } from './comments.ts';
import type { FullLog, Row } from './fields.ts';
import type { FieldStats } from './presence.ts';

export interface LogRef {
  timestamp: string;
  log_id: string;
  fractal_id: string;
}

export function loadLog(ref: LogRef, signal?: AbortSignal): Promise<FullLog> {
  return post<FullLog>('/logs/by-timestamp', ref, { signal });
}

export interface SurroundingRequest extends LogRef {
  before: number;
  after: number;
  same?: string;
}

/** POST /api/v1/logs/surrounding → data: both sides oldest first. */
export interface Surrounding {
  anchor: Row;
  before: Row[];
  after: Row[];
  same?: { field: string; value: string };
}

export function loadSurrounding(req: SurroundingRequest, signal?: AbortSignal): Promise<Surrounding> {
  return post<Surrounding>('/logs/surrounding', req, { signal });
}

export async function listComments(logId: string, fractalId: string, signal?: AbortSignal): Promise<Comment[]> {
  return (await get<Comment[]>(`/logs/${enc(logId)}/comments?fractal_id=${enc(fractalId)}`, { signal })) ?? [];
}

export function addComment(body: { log_id: string; fractal_id: string; timestamp: string; content: string; tags: string[] }): Promise<Comment> {
  return post<Comment>('/comments', body);
}

export function updateComment(id: string, patch: { content?: string; tags?: string[] }): Promise<Comment> {
  return put<Comment>(`/comments/${enc(id)}`, patch);
}

export function deleteComment(id: string): Promise<unknown> {
  return del(`/comments/${enc(id)}`);
}

export interface FieldStatsRequest {
  query: string;
  field: string;
  fractal_id?: string;
  prism_id?: string;
  start: string;
  end: string;
  limit?: number;
  variables?: Array<{ name: string; value: string }>;
}

export function loadFieldStats(body: FieldStatsRequest, signal?: AbortSignal): Promise<FieldStats> {
  return post<FieldStats>('/query/fieldstats', body, { signal });
}
