// Serves the built web UI (renderer/dist) at / with a fallback to index.html for client-side
// routes. API paths never fall through to the UI: they answer 404 in the envelope.
import fastifyStatic from '@fastify/static';
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { App } from '../http/app.ts';

export const UI_DIR = path.resolve(import.meta.dirname, '../../../renderer/dist');

export async function uiRoutes(app: App, opts: { dir?: string } = {}) {
  const dir = opts.dir ?? UI_DIR;
  const built = existsSync(path.join(dir, 'index.html'));
  if (built) await app.register(fastifyStatic, { root: dir, serve: false });

  app.get('/*', { config: { access: { public: true } } }, async (req, reply) => {
    const urlPath = decodeURIComponent(req.url.split('?')[0] ?? '/');
    if (urlPath.startsWith('/api/')) {
      return reply.code(404).send({ success: false, error: `No route ${req.method} ${urlPath}.` });
    }
    if (!built) {
      return reply
        .code(503)
        .type('text/plain')
        .send('The web UI has not been built. Run `npm run build:ui` (npm start does this for you).\n');
    }
    const file = path.normalize(urlPath).replace(/^([/\\])+/, '');
    if (file && !file.startsWith('..') && existsSync(path.join(dir, file)) && !file.endsWith('/')) {
      const cache = file.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'no-cache';
      return reply.header('cache-control', cache).sendFile(file);
    }
    return reply.header('cache-control', 'no-cache').sendFile('index.html');
  });
}
