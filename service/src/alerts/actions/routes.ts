// The actions alerts attach, one collection per kind (interface-spec "Alerts, actions, feeds"):
// /api/v1/webhooks, /email-actions, /fractal-actions, /dictionary-actions, each GET, POST and
// GET, PUT, DELETE by id; a webhook's preview and send-test and an e-mail action's test, all on
// unsaved edits too; /api/v1/smtp-settings. Access is checked in actions-logic.ts.
import { Type } from 'typebox';
import { resolveReadScope } from '../../auth/read-scope.ts';
import type { Context } from '../../context.ts';
import type { App } from '../../http/app.ts';
import { ok } from '../../http/envelope.ts';
import { badRequest, forbidden } from '../../http/errors.ts';
import { IdParams } from '../../http/schemas.ts';
import { readable as readableAlert } from '../alerts-logic.ts';
import type { ActionKind } from '../alerts-store.ts';
import type { FiringPayload } from '../executions-store.ts';
import type { Action, ActionInput } from './actions-store.ts';
import {
  BODIES,
  checkAction,
  checkName,
  mayChange,
  ownerFor,
  readableAction,
  viewAction,
  writableAction,
  type ActionBody,
} from './actions-logic.ts';
import { renderEmail, sendEmail } from './email.ts';
import { samplePayload } from './payload.ts';
import { masked, RenderError, renderWebhook, sendOnce } from './webhook.ts';
import type { Principal } from '../../auth/principal.ts';

const authenticated = { access: { authenticated: true as const } };
const PATHS: Record<ActionKind, string> = { webhook: 'webhooks', email: 'email-actions', fractal: 'fractal-actions', dictionary: 'dictionary-actions' };
const ScopeQuery = Type.Object({ fractal_id: Type.Optional(Type.String()), prism_id: Type.Optional(Type.String()) });

/** An action as it would be after `body` (unsaved edits), for previews and tests; never stored. */
function draft<K extends ActionKind>(ctx: Context, p: Principal, kind: K, body: ActionBody<K>, saved?: Action<K>): Action<K> {
  const input: ActionInput<K> = checkAction(ctx, p, kind, { ...body, name: body.name ?? saved?.name ?? 'draft' }, saved);
  return { ...(saved ?? { id: '00000000-0000-4000-8000-000000000000', fractal_id: null, prism_id: null, created_by: '', created_at: '', updated_at: '' }), ...input, kind } as Action<K>;
}

/** The firing a preview or test renders against: the alert's last one (when named), else sample data. */
function firingFor(ctx: Context, p: Principal, alertId: string | undefined): FiringPayload {
  if (!alertId) return samplePayload();
  const a = readableAlert(ctx, p, alertId);
  return ctx.alertExecutions.lastPayload(a.id) ?? samplePayload();
}

export async function actionRoutes(app: App, ctx: Context) {
  for (const kind of ['webhook', 'email', 'fractal', 'dictionary'] as const) {
    const path = `/api/v1/${PATHS[kind]}`;
    const Body = BODIES[kind];

    app.get(path, { config: authenticated, schema: { querystring: ScopeQuery } }, async (req) => {
      const scope = resolveReadScope(ctx, req.principal, req.query);
      return ok(ctx.alertActions.visibleTo(kind, scope).map((a) => ({ ...viewAction(a), used_by: ctx.alertActions.usage(kind, a.id) })));
    });

    app.post(path, { config: authenticated, schema: { body: Body } }, async (req, reply) => {
      const p = req.principal!;
      const b = req.body as ActionBody<typeof kind>;
      const owner = ownerFor(ctx, p, b);
      mayChange(ctx, p, owner);
      const input = checkAction(ctx, p, kind, b);
      checkName(ctx, kind, owner, input.name);
      const created = ctx.alertActions.create(kind, input, owner, p.kind === 'user' ? p.user.username : `api key ${p.key.name}`);
      return reply.code(201).send(ok(viewAction(created)));
    });

    app.get(`${path}/:id`, { config: authenticated, schema: { params: IdParams } }, async (req) => {
      const a = readableAction(ctx, req.principal, kind, req.params.id);
      return ok({ ...viewAction(a), used_by: ctx.alertActions.usage(kind, a.id) });
    });

    app.put(`${path}/:id`, { config: authenticated, schema: { params: IdParams, body: Body } }, async (req) => {
      const p = req.principal!;
      const a = writableAction(ctx, p, kind, req.params.id);
      const input = checkAction(ctx, p, kind, req.body as ActionBody<typeof kind>, a);
      checkName(ctx, kind, a, input.name, a.id);
      return ok(viewAction(ctx.alertActions.update(kind, a.id, input)));
    });

    app.delete(`${path}/:id`, { config: authenticated, schema: { params: IdParams } }, async (req) => {
      const a = writableAction(ctx, req.principal!, kind, req.params.id);
      const used = ctx.alertActions.usage(kind, a.id);
      ctx.alertActions.delete(kind, a.id);
      return ok({ deleted: true, detached_from: used });
    });
  }

  // ---- webhook preview and send-test (saved or not) --------------------------------------------------

  const Unsaved = Type.Intersect([BODIES.webhook, Type.Object({ alert_id: Type.Optional(Type.String()) })]);

  const preview = (p: Principal, w: Action<'webhook'>, alertId: string | undefined) => {
    const firing = firingFor(ctx, p, alertId);
    try {
      const r = masked(renderWebhook(w, firing, ctx.config.baseUrl));
      return ok({ ...r, bytes: Buffer.byteLength(r.body), sample: !alertId || ctx.alertExecutions.lastPayload(alertId) === null });
    } catch (err) {
      if (err instanceof RenderError) throw badRequest(err.message.replace(/\.?$/, '.'));
      throw err;
    }
  };
  const sendTest = async (p: Principal, w: Action<'webhook'>, alertId: string | undefined) => {
    const r = await sendOnce(w, firingFor(ctx, p, alertId), ctx.config.baseUrl, { 'x-alert-test': 'true' });
    return ok({
      delivered: r.ok,
      status_code: r.status_code,
      error: r.error,
      response_body: r.response_body,
      duration_ms: r.duration_ms,
      sent: r.sent ?? null,
    });
  };
  /** Preview and send-test need what creating a webhook needs: they render secrets into a request. */
  const unsavedWebhook = (p: Principal, body: Record<string, unknown>) => {
    mayChange(ctx, p, ownerFor(ctx, p, body));
    return draft(ctx, p, 'webhook', body as ActionBody<'webhook'>);
  };
  const savedWebhook = (p: Principal, id: string, body: Record<string, unknown>) => {
    const saved = writableAction(ctx, p, 'webhook', id);
    return draft(ctx, p, 'webhook', body as ActionBody<'webhook'>, saved);
  };

  app.post('/api/v1/webhooks/preview', { config: authenticated, schema: { body: Unsaved } }, async (req) =>
    preview(req.principal!, unsavedWebhook(req.principal!, req.body), req.body.alert_id),
  );
  app.post('/api/v1/webhooks/test', { config: authenticated, schema: { body: Unsaved } }, async (req) =>
    sendTest(req.principal!, unsavedWebhook(req.principal!, req.body), req.body.alert_id),
  );
  app.post('/api/v1/webhooks/:id/preview', { config: authenticated, schema: { params: IdParams, body: Type.Optional(Unsaved) } }, async (req) =>
    preview(req.principal!, savedWebhook(req.principal!, req.params.id, req.body ?? {}), req.body?.alert_id),
  );
  app.post('/api/v1/webhooks/:id/test', { config: authenticated, schema: { params: IdParams, body: Type.Optional(Unsaved) } }, async (req) =>
    sendTest(req.principal!, savedWebhook(req.principal!, req.params.id, req.body ?? {}), req.body?.alert_id),
  );

  // ---- e-mail test ------------------------------------------------------------------------------------

  const EmailTest = Type.Intersect([BODIES.email, Type.Object({ alert_id: Type.Optional(Type.String()), to: Type.Optional(Type.Array(Type.String({ maxLength: 320 }), { maxItems: 20 })) })]);
  const emailTest = async (p: Principal, e: Action<'email'>, alertId: string | undefined, to: string[] | undefined) => {
    const firing = firingFor(ctx, p, alertId);
    const r = await sendEmail(ctx.alertActions.smtp(), e, firing, ctx.config.baseUrl, to?.length ? to : undefined);
    let rendered = { subject: r.subject ?? '', body: r.body ?? '' };
    if (!r.subject) {
      try {
        rendered = renderEmail(e, firing, ctx.config.baseUrl);
      } catch {
        /* the error already says why */
      }
    }
    return ok({ delivered: r.ok, error: r.error, response: r.detail, duration_ms: r.duration_ms, ...rendered, recipients: to?.length ? to : e.recipients });
  };
  app.post('/api/v1/email-actions/test', { config: authenticated, schema: { body: EmailTest } }, async (req) => {
    const p = req.principal!;
    mayChange(ctx, p, ownerFor(ctx, p, req.body));
    return emailTest(p, draft(ctx, p, 'email', req.body), req.body.alert_id, req.body.to);
  });
  app.post('/api/v1/email-actions/:id/test', { config: authenticated, schema: { params: IdParams, body: Type.Optional(EmailTest) } }, async (req) => {
    const p = req.principal!;
    const saved = writableAction(ctx, p, 'email', req.params.id);
    return emailTest(p, draft(ctx, p, 'email', (req.body ?? {}) as ActionBody<'email'>, saved), req.body?.alert_id, req.body?.to);
  });

  // ---- SMTP settings (global admins; the password is never shown) ----------------------------------------

  const smtpView = () => {
    const s = ctx.alertActions.smtp();
    if (!s) return { configured: false, host: '', port: 587, username: '', password_set: false, from_address: '', tls_mode: 'starttls' };
    const { password, ...rest } = s;
    return { configured: true, ...rest, password_set: password !== '' };
  };
  app.get('/api/v1/smtp-settings', { config: authenticated }, async (req) => {
    const p = req.principal!;
    if (p.kind !== 'user') throw forbidden('This endpoint needs a signed-in user; API keys cannot use it.');
    return ok(smtpView());
  });
  app.post(
    '/api/v1/smtp-settings',
    {
      config: { access: { globalAdmin: true } },
      schema: {
        body: Type.Object({
          host: Type.String({ minLength: 1, maxLength: 255, pattern: '^[^\\s/]+$' }),
          port: Type.Integer({ minimum: 1, maximum: 65535 }),
          username: Type.Optional(Type.String({ maxLength: 500 })),
          password: Type.Optional(Type.String({ maxLength: 1000 })),
          from_address: Type.String({ minLength: 3, maxLength: 320, pattern: '@' }),
          tls_mode: Type.Unsafe<'none' | 'starttls' | 'tls'>({ type: 'string', enum: ['none', 'starttls', 'tls'] }),
        }),
      },
    },
    async (req) => {
      const b = req.body;
      const stored = ctx.alertActions.smtp();
      // A password left out keeps the stored one; an empty string clears it.
      const password = b.password ?? stored?.password ?? '';
      ctx.alertActions.setSmtp({ host: b.host, port: b.port, username: b.username ?? '', password, from_address: b.from_address, tls_mode: b.tls_mode });
      return ok(smtpView());
    },
  );
}
