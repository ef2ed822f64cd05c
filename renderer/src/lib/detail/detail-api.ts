// The calls of the log detail: the log, the logs around it, its comments. All answer the {success, data}
// envelope, so they go through lib/api.ts: a refusal arrives as ApiError carrying the service's own sentence.
import { del, enc, get, post, put } from '../api.ts';
import type { Comment } from './comments.ts';
import type { FullLog, Row } from './fields.ts';

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
