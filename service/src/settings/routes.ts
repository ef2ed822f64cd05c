// Runtime settings: readable by any signed-in user, changed by global admins.
import { Type } from 'typebox';
import type { Context } from '../context.ts';
import { ok } from '../http/envelope.ts';
import type { App } from '../http/app.ts';

export async function settingsRoutes(app: App, ctx: Context) {
  app.get('/api/v1/settings', { config: { access: { authenticated: true } } }, async () => ok(ctx.settings.get()));

  app.put(
    '/api/v1/settings',
    {
      config: { access: { globalAdmin: true } },
      schema: {
        body: Type.Object({
          shared_links_enabled: Type.Optional(Type.Boolean()),
          query_timeout_s: Type.Optional(Type.Integer({ minimum: 1, maximum: 3600 })),
          alert_interval_s: Type.Optional(Type.Integer({ minimum: 1, maximum: 86400 })),
          timestamp_fields: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 500 }), { maxItems: 50 })),
          max_query_rows: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
        }),
      },
    },
    async (req) => ok(ctx.settings.update(req.body)),
  );
}
