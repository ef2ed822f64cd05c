#!/usr/bin/env node
// Bundles the Electron main process (main/src/index.ts and the service it starts in-process)
// into main/dist/index.cjs (package.json "main"), and writes the icons next to it.
// Native modules stay external: they load their .node binaries from node_modules at run
// time (unpacked from the asar by electron-builder.yml); with Electron installed,
// better-sqlite3 gets an Electron build in main/dist/node_modules (main/tools/electron-native.mjs).
// Usage: node scripts/build-main.mjs
import { readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild'; // present through tsx's dependency
import { prepareElectronNative } from '../main/tools/electron-native.mjs';
import { drawIcon, ICONS } from '../main/tools/icons.mjs';

const root = path.resolve(import.meta.dirname, '..');
const OUT_DIR = path.join(root, 'main', 'dist');

/** Packages with .node binaries (or Electron itself): never bundled. */
const EXTERNAL = ['electron', 'chdb', '@chdb/*', 'better-sqlite3', 'bindings'];

const LOADERS = { '.ts': 'ts', '.mts': 'ts', '.cts': 'ts', '.js': 'js', '.mjs': 'js', '.cjs': 'js' };

/**
 * In CJS output esbuild leaves `import.meta` empty, which breaks ESM code (the service,
 * ESM-only dependencies) that finds files next to itself. Rewrite import.meta.url /
 * dirname / filename into the file's path *relative to the bundle*, so it stays right
 * wherever the app is installed (the package keeps the same layout inside the asar).
 */
function importMetaPaths(outDir) {
  return {
    name: 'import-meta-paths',
    setup(b) {
      b.onLoad({ filter: /\.[cm]?[jt]s$/ }, async (args) => {
        const src = await readFile(args.path, 'utf8');
        if (!src.includes('import.meta')) return undefined; // esbuild's default loading
        const rel = path.relative(outDir, args.path).split(path.sep).join('/');
        const file = `require("node:path").join(__dirname, ${JSON.stringify(rel)})`;
        const contents = src
          .replaceAll('import.meta.dirname', `require("node:path").dirname(${file})`)
          .replaceAll('import.meta.filename', file)
          .replaceAll('import.meta.url', `require("node:url").pathToFileURL(${file}).href`);
        return { contents, loader: LOADERS[path.extname(args.path)], resolveDir: path.dirname(args.path) };
      });
    },
  };
}

/** Bundles `entry` to `outfile` (CommonJS, Electron 38's Node 22). Exported for tests. */
export async function bundleMain({
  entry = path.join(root, 'main', 'src', 'index.ts'),
  outfile = path.join(OUT_DIR, 'index.cjs'),
} = {}) {
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node22',
    external: EXTERNAL,
    sourcemap: 'linked', // stack traces from the packaged app point at the TS sources
    logLevel: 'warning',
    plugins: [importMetaPaths(path.dirname(outfile))],
    loader: { '.env': 'text' }, // bundled-config/service.env, read by main/src/threadpool.ts
  });
}

export async function writeIcons(dir = OUT_DIR) {
  await mkdir(dir, { recursive: true });
  for (const [name, size] of Object.entries(ICONS)) await writeFile(path.join(dir, name), drawIcon(size));
}

/** Version of the installed `electron` package, or null (it is an optional dependency). */
function installedElectronVersion() {
  try {
    return JSON.parse(readFileSync(path.join(root, 'node_modules', 'electron', 'package.json'), 'utf8')).version;
  } catch {
    return null;
  }
}

/** Bundle + icons, and with Electron installed, the Electron build of native modules. */
export async function buildAll() {
  await bundleMain();
  await writeIcons();
  const electronVersion = installedElectronVersion();
  if (electronVersion) await prepareElectronNative({ root, outDir: OUT_DIR, electronVersion });
  return { electronVersion };
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  try {
    const { electronVersion } = await buildAll();
    console.log(`built ${path.relative(process.cwd(), path.join(OUT_DIR, 'index.cjs'))}`);
    if (!electronVersion) {
      console.log('Electron is not installed: native modules were not built for it (npm run app / dist need that).');
    }
  } catch (e) {
    // esbuild has already printed the located errors
    console.error(`build-main failed: ${e instanceof Error ? e.message.split('\n')[0] : e}`);
    process.exit(1);
  }
}
