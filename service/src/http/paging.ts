// Paged lists (comments, dictionary rows): `?limit=&offset=` read the same way everywhere, and
// the number of matches before paging sent in X-Total-Count beside the envelope's array.
import type { FastifyReply } from 'fastify';
import { ok } from './envelope.ts';
import { badRequest } from './errors.ts';

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;

/** `limit` (1–1000, default 100) and `offset` (default 0) from a query string; a 400 naming the parameter otherwise. */
export function pageOf(q: { limit?: string; offset?: string }): { limit: number; offset: number } {
  const int = (name: 'limit' | 'offset', fallback: number, min: number, max: number) => {
    const text = q[name];
    if (text === undefined || text === '') return fallback;
    const n = /^\d{1,9}$/.test(text) ? Number(text) : NaN;
    if (!(n >= min && n <= max)) throw badRequest(`The query parameter "${name}" must be a whole number from ${min} to ${max}.`);
    return n;
  };
  return { limit: int('limit', DEFAULT_LIMIT, 1, MAX_LIMIT), offset: int('offset', 0, 0, 1_000_000_000) };
}

/** The success envelope of one page, with the total before paging in X-Total-Count. */
export function withTotal<T>(reply: FastifyReply, total: number, data: T[]) {
  reply.header('x-total-count', String(total));
  return ok(data);
}
