// First start (conventions.md): the admin user, a fractal named "default" with its ingest token,
// selected for new sessions. A generated admin password is written once, mode 0600.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { hashPassword } from './auth/passwords.ts';
import type { Context } from './context.ts';
import { createFractal } from './tenancy/fractals-logic.ts';

export interface FirstStartInfo {
  adminUsername: string;
  /** The generated password, or null when it came from SVC_ADMIN_PASSWORD. */
  adminPassword: string | null;
  ingestToken: string;
}

export async function firstStart(ctx: Context): Promise<FirstStartInfo | null> {
  if (ctx.users.count() > 0) return null;
  const { config } = ctx;
  const generated = config.adminPassword === null ? randomBytes(12).toString('base64url') : null;
  const password = config.adminPassword ?? generated!;
  const hash = await hashPassword(password);
  let token = '';
  ctx.db.transaction(() => {
    ctx.users.create({ username: config.adminUsername, passwordHash: hash, isAdmin: true, enabled: true });
    const existing = ctx.fractals.defaultFractal() ?? ctx.fractals.byName('default');
    if (existing) {
      const t = ctx.ingestTokens.list(existing.id)[0];
      token = t ? ctx.ingestTokens.reveal(t) : '';
    } else {
      token = createFractal(ctx, { name: 'default', description: 'Created on first start', isDefault: true }).token;
    }
  })();
  if (generated) {
    writeFileSync(path.join(config.dataDir, 'initial-admin-password'), generated + '\n', { mode: 0o600 });
  }
  return { adminUsername: config.adminUsername, adminPassword: generated, ingestToken: token };
}
