// Who may see and change alert actions, and the checks on each kind. Actions belong to a fractal
// or prism (its admins create and change them: "creating and editing webhooks is a tenant admin
// operation") or to everyone (global admins); anyone who may read the scope sees them, so
// analysts can attach them to alerts. Secrets are never shown: a view says only that one is set.
import { Type, type Static } from 'typebox';
import { enforceScopeRule } from '../../auth/access.ts';
import { assertReadable, ownerFor as ownedBy, ownerScope } from '../../auth/owned.ts';
import type { Principal } from '../../auth/principal.ts';
import type { Context } from '../../context.ts';
import { badRequest, conflict, forbidden, HttpError, notFound } from '../../http/errors.ts';
import type { ActionKind } from '../alerts-store.ts';
import { Template, TemplateError } from '../template/index.ts';
import type { Action, ActionInput, ActionOwner, WebhookAuth } from './actions-store.ts';

const KIND_LABEL: Record<ActionKind, string> = { webhook: 'Webhook', email: 'E-mail action', fractal: 'Fractal action', dictionary: 'Dictionary action' };
const FIELD = /^[\p{L}_][\p{L}\p{N}_.*-]{0,199}$/u;
const DICTIONARY_NAME = /^[\p{L}\p{N}_][\p{L}\p{N}_.-]{0,99}$/u;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,200}$/;
const EMAIL = /^[^\s@<>(),;:"[\]]+@[^\s@<>(),;:"[\]]+$/;
export const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

const Common = {
  name: Type.Optional(Type.String({ maxLength: 200 })),
  description: Type.Optional(Type.String({ maxLength: 2000 })),
  enabled: Type.Optional(Type.Boolean()),
  fractal_id: Type.Optional(Type.String()),
  prism_id: Type.Optional(Type.String()),
  is_global: Type.Optional(Type.Boolean()),
};

export const BODIES = {
  webhook: Type.Object({
    ...Common,
    url: Type.Optional(Type.String({ maxLength: 4000 })),
    method: Type.Optional(Type.String({ maxLength: 10 })),
    headers: Type.Optional(Type.Record(Type.String(), Type.String({ maxLength: 8000 }))),
    auth_type: Type.Optional(Type.String()),
    auth_config: Type.Optional(Type.Object({ token: Type.Optional(Type.String({ maxLength: 8000 })), username: Type.Optional(Type.String({ maxLength: 500 })), password: Type.Optional(Type.String({ maxLength: 8000 })) })),
    timeout_seconds: Type.Optional(Type.Integer()),
    retry_count: Type.Optional(Type.Integer()),
    include_alert_link: Type.Optional(Type.Boolean()),
    body_mode: Type.Optional(Type.String()),
    body_template: Type.Optional(Type.String({ maxLength: 1_000_000 })),
    content_type: Type.Optional(Type.String({ maxLength: 200 })),
  }),
  email: Type.Object({
    ...Common,
    recipients: Type.Optional(Type.Array(Type.String({ maxLength: 320 }), { maxItems: 100 })),
    subject_template: Type.Optional(Type.String({ maxLength: 10_000 })),
    body_template: Type.Optional(Type.String({ maxLength: 1_000_000 })),
  }),
  fractal: Type.Object({
    ...Common,
    target_fractal_id: Type.Optional(Type.String()),
    preserve_timestamp: Type.Optional(Type.Boolean()),
    add_alert_context: Type.Optional(Type.Boolean()),
    max_logs_per_trigger: Type.Optional(Type.Integer()),
  }),
  dictionary: Type.Object({
    ...Common,
    dictionary_name: Type.Optional(Type.String({ maxLength: 200 })),
    key_field: Type.Optional(Type.String({ maxLength: 200 })),
    value_fields: Type.Optional(Type.Array(Type.String({ maxLength: 200 }), { maxItems: 63 })),
    max_logs_per_trigger: Type.Optional(Type.Integer()),
  }),
};
export type ActionBody<K extends ActionKind> = Static<(typeof BODIES)[K]>;

/** The action as the API shows it: every field but secrets, which appear as `…_set`. */
export function viewAction(a: Action): Record<string, unknown> {
  const { auth, ...rest } = a as Action & { auth?: WebhookAuth };
  const out: Record<string, unknown> = { ...rest, is_global: !a.fractal_id && !a.prism_id };
  delete out.kind;
  if (a.kind === 'webhook') {
    const w = a as Action<'webhook'>;
    out.auth_config =
      w.auth_type === 'bearer' ? { token_set: !!auth?.token } : w.auth_type === 'basic' ? { username: auth?.username ?? '', password_set: !!auth?.password } : {};
  }
  return out;
}

/** Refuses unless the caller may change actions of this owner (its admins; global: global admins). */
export function mayChange(ctx: Context, p: Principal, owner: ActionOwner): void {
  const scope = ownerScope(owner);
  if (!scope) {
    if (p.kind !== 'user' || p.user.is_admin !== 1) throw forbidden('Only administrators can change actions shared with every fractal.');
    return;
  }
  enforceScopeRule(p, { scope: scope.type, role: 'admin' }, ctx.roles.resolve(p, scope.type, scope.id), { needs: 'Creating and changing alert actions needs' });
}

/** The action if the caller may see it; else 404. */
export function readableAction<K extends ActionKind>(ctx: Context, p: Principal | null, kind: K, id: string): Action<K> {
  const a = ctx.alertActions.get(kind, id);
  const missing = notFound(`${KIND_LABEL[kind]} ${id} not found.`);
  if (!a) throw missing;
  assertReadable(ctx, p, a, missing);
  return a;
}

export function writableAction<K extends ActionKind>(ctx: Context, p: Principal, kind: K, id: string): Action<K> {
  const a = readableAction(ctx, p, kind, id);
  mayChange(ctx, p, a);
  return a;
}

/** Where a new action goes: the named fractal or prism, everyone (`is_global`), else the session's selection. */
export const ownerFor = (ctx: Context, p: Principal, body: { fractal_id?: string; prism_id?: string; is_global?: boolean }): ActionOwner => ownedBy(ctx, p, body, 'An action');

const field = (name: string, sentence: string) => badRequest(`The field "${name}" ${sentence}`);

/** A template field that must compile: a 400 naming the field, line and column otherwise. */
export function checkTemplate(name: string, text: string): void {
  try {
    Template.compile(text, name);
  } catch (err) {
    if (err instanceof TemplateError) {
      throw new HttpError(400, `The field "${name}" does not compile at line ${err.line}, column ${err.column}: ${err.reason}.`, {}, { line: err.line, column: err.column });
    }
    throw err;
  }
}

function checkRange(name: string, v: number, min: number, max: number): number {
  if (!Number.isInteger(v) || v < min || v > max) throw field(name, `must be a whole number from ${min} to ${max}.`);
  return v;
}

export function checkUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url.trim());
  } catch {
    throw field('url', 'must be an absolute http or https URL.');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw field('url', `must use http or https, not ${u.protocol.replace(':', '')}.`);
  return u.toString();
}

/**
 * The action as it will be stored, from the body merged over `existing` (an update). Throws a 400
 * naming the field. A secret left out of an update keeps its stored value.
 */
export function checkAction<K extends ActionKind>(ctx: Context, p: Principal, kind: K, body: ActionBody<K>, existing?: Action<K>): ActionInput<K> {
  const b = { ...(existing ? viewAction(existing) : {}), ...body } as Record<string, unknown>;
  const name = String(b.name ?? '').trim();
  if (!name) throw field('name', 'must not be empty.');
  const common = { name, description: String(b.description ?? ''), enabled: b.enabled === undefined ? true : b.enabled === true };
  switch (kind) {
    case 'webhook': {
      const method = String(b.method ?? 'POST').toUpperCase();
      if (!(METHODS as readonly string[]).includes(method)) throw field('method', `must be one of ${METHODS.join(', ')}.`);
      const headers = (b.headers ?? {}) as Record<string, string>;
      for (const [h, v] of Object.entries(headers)) {
        if (!HEADER_NAME.test(h)) throw field('headers', `has "${h}", which is not a valid header name.`);
        if (/[\r\n\0]/.test(v)) throw field('headers', `has a line break in the value of "${h}".`);
      }
      const authType = String(b.auth_type ?? 'none');
      if (!['none', 'bearer', 'basic'].includes(authType)) throw field('auth_type', 'must be none, bearer or basic.');
      const given = (body as ActionBody<'webhook'>).auth_config ?? {};
      const stored = (existing as Action<'webhook'> | undefined)?.auth ?? {};
      let auth: WebhookAuth = {};
      if (authType === 'bearer') {
        auth = { token: given.token || stored.token };
        if (!auth.token) throw field('auth_config', 'needs a token for bearer authentication.');
      } else if (authType === 'basic') {
        auth = { username: given.username ?? stored.username, password: given.password || stored.password };
        if (!auth.username || !auth.password) throw field('auth_config', 'needs a username and a password for basic authentication.');
      }
      const bodyMode = String(b.body_mode ?? 'envelope');
      if (bodyMode !== 'envelope' && bodyMode !== 'template') throw field('body_mode', 'must be envelope or template.');
      const template = String(b.body_template ?? '');
      if (bodyMode === 'template') {
        if (!template.trim()) throw field('body_template', 'is required when body_mode is template.');
        checkTemplate('body_template', template);
      }
      const contentType = String(b.content_type ?? 'application/json').trim();
      if (!contentType || /[\r\n]/.test(contentType)) throw field('content_type', 'must be a media type such as application/json.');
      const out: ActionInput<'webhook'> = {
        ...common,
        url: checkUrl(String(b.url ?? '')),
        method,
        headers,
        auth_type: authType as 'none',
        auth,
        timeout_seconds: checkRange('timeout_seconds', Number(b.timeout_seconds ?? 30), 1, 300),
        retry_count: checkRange('retry_count', Number(b.retry_count ?? 3), 0, 10),
        include_alert_link: b.include_alert_link === undefined ? true : b.include_alert_link === true,
        body_mode: bodyMode,
        body_template: template,
        content_type: contentType,
      };
      return out as unknown as ActionInput<K>;
    }
    case 'email': {
      const recipients = ((b.recipients ?? []) as string[]).map((r) => r.trim()).filter(Boolean);
      if (recipients.length === 0) throw field('recipients', 'must list at least one address.');
      for (const r of recipients) if (!EMAIL.test(r)) throw field('recipients', `has "${r}", which is not an e-mail address.`);
      const subject = String(b.subject_template ?? '');
      const bodyT = String(b.body_template ?? '');
      checkTemplate('subject_template', subject);
      checkTemplate('body_template', bodyT);
      return { ...common, recipients, subject_template: subject, body_template: bodyT } as unknown as ActionInput<K>;
    }
    case 'fractal': {
      const target = String(b.target_fractal_id ?? '');
      if (!target) throw field('target_fractal_id', 'is required.');
      const role = ctx.roles.resolve(p, 'fractal', target);
      if (role.name === undefined || role.role === null) throw field('target_fractal_id', `names no fractal you can see: ${target}.`);
      enforceScopeRule(p, { scope: 'fractal', role: 'analyst' }, role, { needs: 'Writing alert results into a fractal needs' });
      return {
        ...common,
        target_fractal_id: target,
        preserve_timestamp: b.preserve_timestamp === undefined ? true : b.preserve_timestamp === true,
        add_alert_context: b.add_alert_context === undefined ? true : b.add_alert_context === true,
        max_logs_per_trigger: checkRange('max_logs_per_trigger', Number(b.max_logs_per_trigger ?? 1000), 1, 100_000),
      } as unknown as ActionInput<K>;
    }
    case 'dictionary': {
      const dict = String(b.dictionary_name ?? '').trim();
      if (!DICTIONARY_NAME.test(dict)) throw field('dictionary_name', 'must be 1 to 100 letters, digits, "_", "." or "-", starting with a letter, digit or "_".');
      const keyField = String(b.key_field ?? '').trim();
      if (keyField && !FIELD.test(keyField)) throw field('key_field', 'is not a field name.');
      const values = ((b.value_fields ?? []) as string[]).map((v) => v.trim()).filter(Boolean);
      for (const v of values) if (!FIELD.test(v)) throw field('value_fields', `has "${v}", which is not a field name.`);
      return {
        ...common,
        dictionary_name: dict,
        key_field: keyField,
        value_fields: values,
        max_logs_per_trigger: checkRange('max_logs_per_trigger', Number(b.max_logs_per_trigger ?? 1000), 1, 100_000),
      } as unknown as ActionInput<K>;
    }
  }
  throw badRequest('Unknown action kind.');
}

export function checkName(ctx: Context, kind: ActionKind, owner: ActionOwner, name: string, except?: string): void {
  if (ctx.alertActions.nameTaken(kind, owner, name, except)) throw conflict(`A ${KIND_LABEL[kind].toLowerCase()} named "${name}" already exists here.`);
}

export { KIND_LABEL };
