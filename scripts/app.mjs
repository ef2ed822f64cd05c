#!/usr/bin/env node
// `npm run app`: bundle the Electron main process, then run Electron on the project root.
// Electron is an optional dependency (npm ci must pass where its binary cannot be
// downloaded), so its absence is an expected state that gets one clear line, not a stack.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseEnv } from 'node:util';

const root = path.resolve(import.meta.dirname, '..');

export const NOT_INSTALLED =
  'Electron is not installed (it is an optional dependency and its binary could not be downloaded here): ' +
  'on a machine with internet access run `npm install electron`, then `npm run app` (the headless service runs without it: `npm start`).';

/**
 * Finds the Electron binary as installed under `projectRoot`/node_modules.
 * The package can be present without its binary (download failed or was skipped): its
 * index.js then throws, or names a file that does not exist. Both count as not installed.
 * @returns {{ ok: true, binary: string } | { ok: false, reason: string }}
 */
export function locateElectron(projectRoot) {
  const req = createRequire(path.join(projectRoot, 'package.json'));
  let binary;
  try {
    binary = req('electron'); // the package's index.js exports the binary's path
  } catch (e) {
    return { ok: false, reason: e instanceof Error ? e.message.split('\n')[0] : String(e) };
  }
  if (typeof binary !== 'string' || !existsSync(binary)) return { ok: false, reason: `no binary at ${binary}` };
  return { ok: true, binary };
}

/** The service's environment file (what `npm start` gives node with --env-file), read as node reads it. */
function serviceEnv(root) {
  return parseEnv(readFileSync(path.join(root, 'bundled-config', 'service.env'), 'utf8'));
}

async function main() {
  const electron = locateElectron(root);
  if (!electron.ok) {
    console.error(NOT_INSTALLED);
    process.exit(1);
  }
  // Same UI as `npm start`: built first when it is missing or older than its sources.
  const r = spawnSync(process.execPath, [path.join(root, 'scripts', 'ensure-ui.mjs')], { stdio: 'inherit', cwd: root });
  if (r.status !== 0) process.exit(r.status ?? 1);
  const { buildAll } = await import('./build-main.mjs');
  try {
    await buildAll();
  } catch (e) {
    // esbuild errors (e.errors) were printed with their locations already.
    if (!(e && typeof e === 'object' && 'errors' in e)) {
      console.error(
        `Could not prepare the Electron build of native modules: ${e instanceof Error ? e.message.split('\n')[0] : e} ` +
          '(the first run per Electron version downloads a prebuilt binary or Electron headers).',
      );
    }
    process.exit(1);
  }

  const env = { ...serviceEnv(root), ...process.env };
  delete env.ELECTRON_RUN_AS_NODE; // set by some editors' terminals; would make Electron act as plain node
  // Chromium refuses to start as root with its sandbox on (containers, CI): dev launcher only.
  const args = process.getuid?.() === 0 ? ['--no-sandbox', root] : [root];
  const child = spawn(electron.binary, args, { stdio: 'inherit', cwd: root, env });
  // Ctrl+C reaches Electron directly (same process group) and it stops the service
  // gracefully; this launcher must not die first and leave the terminal early.
  process.on('SIGINT', () => {});
  process.on('SIGTERM', () => child.kill('SIGTERM'));
  child.on('error', (e) => {
    console.error(`could not start Electron: ${e.message}`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) await main();
