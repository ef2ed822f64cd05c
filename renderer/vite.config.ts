// Vite config for the browser UI. `vite build renderer` (npm run build:ui) and
// scripts/ensure-ui.mjs both use this file; the output in renderer/dist is served by the service at `/`.
// For UI work against a running service: `npx vite renderer` proxies /api to it.
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { defineConfig } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';

const root = path.dirname(fileURLToPath(import.meta.url));
const apiTarget = `http://127.0.0.1:${process.env.SVC_PORT || '8080'}`;
const proxy = { '/api': { target: apiTarget, changeOrigin: false } };

export default defineConfig({
  root,
  base: '/',
  publicDir: path.join(root, 'public'),
  plugins: [svelte({ configFile: false })],
  build: {
    outDir: path.join(root, 'dist'),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: true,
  },
  server: { proxy },
  preview: { proxy },
});
