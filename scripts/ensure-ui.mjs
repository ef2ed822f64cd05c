#!/usr/bin/env node
// Builds the browser UI into renderer/dist when it is missing or older than its sources; otherwise does
// nothing. `npm start` runs this before the service so a fresh clone (after `npm ci`) serves a current UI.
// Sources: everything under renderer/src and renderer/public, renderer/index.html, renderer/vite.config.*.
// Directory times count too, so deleting a source file also triggers a rebuild.
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const renderer = path.join(root, 'renderer');
const builtIndex = path.join(renderer, 'dist', 'index.html');
const configName = readdirSync(renderer).find((n) => /^vite\.config\.(ts|mts|js|mjs)$/.test(n)) ?? 'vite.config.ts';

function newestMtime(p) {
  let st;
  try {
    st = statSync(p);
  } catch {
    return 0; // optional input that does not exist
  }
  let newest = st.mtimeMs;
  if (st.isDirectory()) {
    for (const name of readdirSync(p)) {
      if (name.startsWith('.')) continue; // editor swap files, .DS_Store
      newest = Math.max(newest, newestMtime(path.join(p, name)));
    }
  }
  return newest;
}

function sourcesNewest() {
  const inputs = ['src', 'public', 'index.html', configName].map((n) => path.join(renderer, n));
  return Math.max(...inputs.map(newestMtime));
}

function reason() {
  if (!existsSync(builtIndex)) return 'renderer/dist is missing';
  if (sourcesNewest() > statSync(builtIndex).mtimeMs) return 'renderer/dist is older than its sources';
  return null;
}

const why = reason();
if (why === null) process.exit(0);

let vite;
try {
  vite = await import('vite');
} catch {
  console.error(
    `ensure-ui: ${why} and Vite is not installed; run \`npm ci\` (with dev dependencies) or \`npm run build:ui\` first.`,
  );
  process.exit(1);
}

const started = Date.now();
process.stdout.write(`ensure-ui: building the UI (${why})… `);
try {
  await vite.build({
    root: renderer,
    configFile: path.join(renderer, configName),
    logLevel: 'error',
  });
} catch (err) {
  process.stdout.write('failed\n');
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
}
process.stdout.write(`done in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
