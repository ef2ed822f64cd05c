// The comments domain's rules between the routes and the store: who may read, write, edit and
// delete a comment, tag and content normalisation, and the log look-up at creation.
//
// Authorisation. The comment routes name their fractal in the body, a query parameter or
// through the comment itself, so the access hook only checks `{authenticated: true}` and the
// checks happen here, with the rules of the single check (auth/access.ts):
// - Lists read a scope resolved by auth/read-scope.ts (fractal_id or prism_id, else the
//   session's selection; API keys need `query`).
// - One comment is visible to whoever may read its fractal: a role on the fractal itself, or on
//   a prism holding it (a prism's readers already read its members' logs); an API key scoped to
//   the fractal or such a prism, with `query`.
// - Writing (create, edit, tag, delete) needs the analyst role the same way, or an API key with
//   the `comment` permission. Changing or deleting an existing comment also needs to be its
//   author or an admin of the fractal itself (prism roles never make anyone a fractal's admin).
// - A fractal or comment the caller cannot read is "not found", never revealed.
import { enforceScopeRule, type ScopeRule } from '../auth/access.ts';
import type { Principal, Role } from '../auth/principal.ts';
import { roleRank } from '../auth/principal.ts';
import { readableMembers, readsThroughPrism } from '../auth/read-scope.ts';
import type { Context } from '../context.ts';
import { badRequest, forbidden, notFound } from '../http/errors.ts';
import { isUuid } from '../http/schemas.ts';
import { currentSelection } from '../auth/selection.ts';
import { parseShownTime } from '../logs/log-store.ts';
import type { Comment, CommentFilter } from './comments-store.ts';

export const MAX_CONTENT = 10_000;
export const MAX_TAG_LENGTH = 64;
export const MAX_TAGS = 20;
export const MAX_BULK = 1_000;

/** A comment as the API returns it. */
export interface CommentView {
  id: string;
  fractal_id: string;
  log_id: string;
  /** The log's event time (RFC 3339, UTC). */
  timestamp: string;
  content: string;
  tags: string[];
  author: string;
  author_type: 'user' | 'api_key';
  created_at: string;
  updated_at: string;
  /** Whether the caller may edit or delete it (author or fractal admin, with write access). */
  can_edit: boolean;
}

// ---- normalisation --------------------------------------------------------------------------

/**
 * Tags as stored: trimmed, empty ones dropped, duplicates removed (exact, case-sensitive, as
 * comment(tags=…) matches them). A tag may not hold a comma or a quote (the query language's
 * tag lists split on commas and strip quotes, so such a tag could never be found) nor control
 * characters, and is at most MAX_TAG_LENGTH characters.
 */
export function normalizeTags(raw: string[], field = 'tags'): string[] {
  const out: string[] = [];
  for (const t of raw) {
    const tag = t.trim();
    if (!tag) continue;
    if ([...tag].length > MAX_TAG_LENGTH) throw badRequest(`The field "${field}" holds a tag longer than ${MAX_TAG_LENGTH} characters.`);
    if (/[,"'\p{Cc}]/u.test(tag)) throw badRequest(`The field "${field}" holds the tag "${tag}"; tags cannot contain commas, quotes or control characters.`);
    if (!out.includes(tag)) out.push(tag);
  }
  if (out.length > MAX_TAGS) throw badRequest(`The field "${field}" may hold at most ${MAX_TAGS} different tags.`);
  return out.sort();
}

/** One tag (bulk routes): normalised, and required. */
export function normalizeTag(raw: string): string {
  const [tag] = normalizeTags([raw], 'tag');
  if (!tag) throw badRequest('The field "tag" must not be empty.');
  return tag;
}

export function normalizeContent(raw: string): string {
  const content = raw.trim();
  if (!content) throw badRequest('The field "content" must not be empty.');
  if (content.length > MAX_CONTENT) throw badRequest(`The field "content" must be at most ${MAX_CONTENT} characters long.`);
  return content;
}

// ---- access ---------------------------------------------------------------------------------

/** Writing on a fractal (create, edit, tag, delete): the analyst role, or an API key with `comment`. */
const WRITE: ScopeRule = { scope: 'fractal', role: 'analyst', keyPermission: 'comment' };

/** A fractal as the caller sees it for comments. */
interface FractalRights {
  /** Undefined when no such fractal exists. */
  name: string | undefined;
  /** The role on the fractal itself (only this one makes anyone its admin). */
  own: Role | null;
  /** `own`, or the best role through a prism holding the fractal (at most analyst); null: not visible. */
  role: Role | null;
}

function rightsOn(ctx: Context, p: Principal, fractalId: string): FractalRights {
  const name = ctx.roles.scopeName('fractal', fractalId);
  if (name === undefined) return { name, own: null, role: null };
  const own = ctx.roles.roleOf(p, 'fractal', fractalId);
  let role = own;
  // A prism adds rights only on a member it shows the caller now (readsThroughPrism).
  if (!readsThroughPrism(ctx, p, fractalId)) return { name, own, role };
  for (const prismId of ctx.prisms.containing(fractalId)) {
    const viaPrism = ctx.roles.roleOf(p, 'prism', prismId);
    const capped: Role | null = viaPrism === 'admin' ? 'analyst' : viaPrism;
    if (roleRank(capped) > roleRank(role)) role = capped;
  }
  return { name, own, role };
}

export interface CommentAccess {
  /** Holds any role on the fractal (directly or through a prism); otherwise it is "not found". */
  visible(fractalId: string): boolean;
  /** May read comments of a fractal. */
  canRead(fractalId: string): boolean;
  canWrite(fractalId: string): boolean;
  canChange(c: Comment): boolean;
  /** Throws 404 unless the fractal is visible, then 403 unless the caller may write there. */
  requireWrite(fractalId: string, notFoundMessage: string): void;
  /** Throws like requireWrite, then 403 unless the caller may change this comment. */
  requireChange(c: Comment): void;
}

/** The caller's rights on comments, looked up once per fractal for one request. */
export function accessFor(ctx: Context, p: Principal): CommentAccess {
  const seen = new Map<string, FractalRights>();
  const rights = (f: string) => {
    let r = seen.get(f);
    if (!r) seen.set(f, (r = rightsOn(ctx, p, f)));
    return r;
  };
  const isAuthor = (c: Comment) => (p.kind === 'user' ? c.author_user_id === p.user.id : c.author_key_id === p.key.id);
  const isFractalAdmin = (f: string) => p.kind === 'user' && rights(f).own === 'admin';
  const visible = (f: string) => rights(f).role !== null;
  const canRead = (f: string) => visible(f) && (p.kind === 'user' || p.permissions.query);
  const canWrite = (f: string) => roleRank(rights(f).role) >= roleRank('analyst') && (p.kind === 'user' || p.permissions.comment);
  const a: CommentAccess = {
    visible,
    canRead,
    canWrite,
    canChange: (c) => canWrite(c.fractal_id) && (isAuthor(c) || isFractalAdmin(c.fractal_id)),
    requireWrite(f, message) {
      enforceScopeRule(p, WRITE, { id: f, ...rights(f) }, { notFound: message, needs: 'Writing comments needs' });
    },
    requireChange(c) {
      a.requireWrite(c.fractal_id, `Comment ${c.id} not found.`);
      if (!isAuthor(c) && !isFractalAdmin(c.fractal_id)) {
        throw forbidden(`Only the comment's author (${c.author}) or an admin of fractal "${rights(c.fractal_id).name}" can change or delete it.`);
      }
    },
  };
  return a;
}

export function view(c: Comment, access: CommentAccess): CommentView {
  return {
    id: c.id,
    fractal_id: c.fractal_id,
    log_id: c.log_id,
    timestamp: c.log_timestamp,
    content: c.content,
    tags: c.tags,
    author: c.author,
    author_type: c.author_type,
    created_at: c.created_at,
    updated_at: c.updated_at,
    can_edit: access.canChange(c),
  };
}

/** A comment the caller may read; 404 when it does not exist or is not theirs to see. */
export function readableComment(ctx: Context, access: CommentAccess, id: string): Comment {
  const c = ctx.comments.get(id.toLowerCase());
  if (!c || !access.visible(c.fractal_id)) throw notFound(`Comment ${id} not found.`);
  if (!access.canRead(c.fractal_id)) throw forbidden('This API key lacks the "query" permission.');
  return c;
}

/**
 * The comments named by a bulk request, each one the caller may change; all or nothing: an id
 * that does not exist (or is not visible) is a 404 naming it, one the caller may not change a
 * 403, and then nothing is changed.
 */
function changeableComments(ctx: Context, access: CommentAccess, ids: string[]): Comment[] {
  const unique = [...new Set(ids.map((i) => i.toLowerCase()))];
  const found = new Map(ctx.comments.getMany(unique).map((c) => [c.id, c]));
  const out: Comment[] = [];
  for (const id of unique) {
    const c = found.get(id);
    if (!c || !access.visible(c.fractal_id)) throw notFound(`Comment ${id} not found.`);
    access.requireChange(c);
    out.push(c);
  }
  return out;
}

// ---- operations -----------------------------------------------------------------------------

export interface CreateCommentInput {
  log_id: string;
  fractal_id?: string;
  content: string;
  tags?: string[];
  /** The log's time as the client saw it: narrows the look-up; the stored time comes from the log. */
  timestamp?: string;
}

/** The fractal a create request names, else the caller's selected fractal. */
function targetFractal(ctx: Context, p: Principal, requested: string | undefined): string {
  if (requested) return requested;
  const sel = currentSelection(ctx, p);
  if (!sel) throw notFound('No fractal is selected and you have access to none; ask an admin for a role on a fractal.');
  if (sel.type !== 'fractal') throw badRequest('The field "fractal_id" is required while a prism is selected: name the fractal of the log.');
  return sel.id;
}

function parseTimeHint(text: string | undefined): Date | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  const d = parseShownTime(text);
  if (!d) throw badRequest('The field "timestamp" must be RFC 3339 or "YYYY-MM-DD hh:mm:ss.mmm" (UTC).');
  return d;
}

export async function createComment(ctx: Context, p: Principal, input: CreateCommentInput): Promise<CommentView> {
  if (!isUuid(input.log_id)) throw badRequest('The field "log_id" must be a valid UUID.');
  if (input.fractal_id !== undefined && !isUuid(input.fractal_id)) throw badRequest('The field "fractal_id" must be a valid UUID.');
  const fractalId = targetFractal(ctx, p, input.fractal_id?.toLowerCase());
  const access = accessFor(ctx, p);
  access.requireWrite(fractalId, `Fractal ${fractalId} not found.`);
  const content = normalizeContent(input.content);
  const tags = normalizeTags(input.tags ?? []);
  const near = parseTimeHint(input.timestamp);
  const logId = input.log_id.toLowerCase();
  const logTimestamp = await ctx.logs.logTimestamp(fractalId, logId, { near, timeoutS: ctx.settings.get().query_timeout_s });
  if (!logTimestamp) throw notFound(`Log ${logId} not found in this fractal.`);
  const c = ctx.comments.create({
    fractalId,
    logId,
    logTimestamp,
    content,
    tags,
    ...(p.kind === 'user'
      ? { author: p.user.username, authorType: 'user' as const, authorUserId: p.user.id, authorKeyId: null }
      : { author: p.key.name, authorType: 'api_key' as const, authorUserId: null, authorKeyId: p.key.id }),
  });
  return view(c, access);
}

export function updateComment(ctx: Context, p: Principal, id: string, patch: { content?: string; tags?: string[] }): CommentView {
  if (patch.content === undefined && patch.tags === undefined) throw badRequest('Send "content", "tags" or both to change a comment.');
  const access = accessFor(ctx, p);
  const c = readableComment(ctx, access, id);
  access.requireChange(c);
  const updated = ctx.comments.update(c.id, {
    content: patch.content === undefined ? undefined : normalizeContent(patch.content),
    tags: patch.tags === undefined ? undefined : normalizeTags(patch.tags),
  });
  return view(updated, access);
}

export function deleteComment(ctx: Context, p: Principal, id: string): void {
  const access = accessFor(ctx, p);
  const c = readableComment(ctx, access, id);
  access.requireChange(c);
  ctx.comments.deleteMany([c.id]);
}

/**
 * The fractals a write on a scope touches (DELETE of a log's comments): the named fractal (with
 * write access checked), the named prism's members, else the session's selection. Like
 * auth/read-scope.ts, but an API key needs `comment` rather than `query`; each comment changed is
 * still checked on its own fractal.
 */
export function resolveWriteScope(ctx: Context, p: Principal, requested: { fractal_id?: string; prism_id?: string }): string[] {
  const access = accessFor(ctx, p);
  let target: { type: 'fractal' | 'prism'; id: string };
  if (requested.fractal_id) {
    if (!isUuid(requested.fractal_id)) throw badRequest('The query parameter "fractal_id" must be a valid UUID.');
    target = { type: 'fractal', id: requested.fractal_id.toLowerCase() };
  } else if (requested.prism_id) {
    if (!isUuid(requested.prism_id)) throw badRequest('The query parameter "prism_id" must be a valid UUID.');
    target = { type: 'prism', id: requested.prism_id.toLowerCase() };
  } else {
    const sel = currentSelection(ctx, p);
    if (!sel) throw notFound('No fractal is selected and you have access to none; ask an admin for a role on a fractal.');
    target = sel;
  }
  if (target.type === 'fractal') {
    access.requireWrite(target.id, `Fractal ${target.id} not found.`);
    return [target.id];
  }
  enforceScopeRule(p, { scope: 'prism', role: 'viewer', keyPermission: 'comment' }, ctx.roles.resolve(p, 'prism', target.id));
  return readableMembers(ctx, p, target.id);
}

/**
 * Deletes every comment on a log within `fractalIds` (from resolveWriteScope): all or nothing,
 * so a caller who may not delete one of them deletes none (403).
 */
export function deleteLogComments(ctx: Context, p: Principal, fractalIds: string[], logId: string): number {
  const comments = ctx.comments.forLog(fractalIds, logId.toLowerCase());
  const access = accessFor(ctx, p);
  for (const c of comments) access.requireChange(c);
  return ctx.comments.deleteMany(comments.map((c) => c.id));
}

export function bulkAddTag(ctx: Context, p: Principal, ids: string[], rawTag: string): { updated: number; comments: CommentView[] } {
  const tag = normalizeTag(rawTag);
  const access = accessFor(ctx, p);
  const comments = changeableComments(ctx, access, ids);
  for (const c of comments) {
    if (!c.tags.includes(tag) && c.tags.length >= MAX_TAGS) throw badRequest(`Comment ${c.id} already has ${MAX_TAGS} tags, the most a comment may hold.`);
  }
  const updated = ctx.comments.addTag(comments.map((c) => c.id), tag);
  return { updated, comments: reread(ctx, access, comments) };
}

export function bulkRemoveTag(ctx: Context, p: Principal, ids: string[], rawTag: string): { updated: number; comments: CommentView[] } {
  const tag = normalizeTag(rawTag);
  const access = accessFor(ctx, p);
  const comments = changeableComments(ctx, access, ids);
  const updated = ctx.comments.removeTag(comments.map((c) => c.id), tag);
  return { updated, comments: reread(ctx, access, comments) };
}

/** The comments again after a change, in the order the request named them. */
function reread(ctx: Context, access: CommentAccess, comments: Comment[]): CommentView[] {
  const now = new Map(ctx.comments.getMany(comments.map((c) => c.id)).map((c) => [c.id, c]));
  return comments.map((c) => view(now.get(c.id)!, access));
}

export function bulkDelete(ctx: Context, p: Principal, ids: string[]): number {
  const comments = changeableComments(ctx, accessFor(ctx, p), ids);
  return ctx.comments.deleteMany(comments.map((c) => c.id));
}

/** The filter of list routes and of comment(): tags normalised like stored ones, keyword as given. */
export function listFilter(q: { tag?: string; keyword?: string }): CommentFilter {
  return { tags: q.tag ? normalizeTags([q.tag], 'tag') : undefined, keyword: q.keyword || undefined };
}
