// better-sqlite3 talks to V8 directly, so its binary only loads in the runtime it was built
// for: the project's copy is built for Node (npm start, the tests) and fails inside Electron.
// Rebuilding it in place would break the Node side, so an Electron build is made in a copy
// next to the bundle: Node resolves main/dist/node_modules before the project's
// node_modules, so only the Electron bundle sees it. (chDB's addon is Node-API: it loads in
// both runtimes unchanged.) electron-builder ships this copy (see electron-builder.yml).
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** Native modules that need an Electron-specific build. */
export const ELECTRON_ABI_MODULES = ['better-sqlite3'];

const readJson = (file) => JSON.parse(readFileSync(file, 'utf8'));

/**
 * Makes `outDir`/node_modules/<module> an Electron `electronVersion` build of each
 * ELECTRON_ABI_MODULES entry; skipped when the stamp says it is already that build.
 * Downloads a prebuilt binary (or Electron headers to compile), so it needs the network
 * the first time for each Electron version. Returns whether it rebuilt.
 */
export async function prepareElectronNative({ root, outDir, electronVersion, arch = process.arch, rebuild }) {
  const modulesDir = path.join(outDir, 'node_modules');
  const stampFile = path.join(modulesDir, '.electron-native.json');
  const want = JSON.stringify({
    electronVersion,
    platform: process.platform,
    arch,
    modules: Object.fromEntries(
      ELECTRON_ABI_MODULES.map((m) => [m, readJson(path.join(root, 'node_modules', m, 'package.json')).version]),
    ),
  });
  if (existsSync(stampFile) && readFileSync(stampFile, 'utf8') === want) return false;

  mkdirSync(modulesDir, { recursive: true });
  const dependencies = {};
  for (const m of ELECTRON_ABI_MODULES) {
    const src = path.join(root, 'node_modules', m);
    const dest = path.join(modulesDir, m);
    rmSync(dest, { recursive: true, force: true });
    // Leave out the Node build; sources stay for a from-source fallback.
    cpSync(src, dest, { recursive: true, filter: (p) => p !== path.join(src, 'build') });
    dependencies[m] = readJson(path.join(src, 'package.json')).version;
  }
  // @electron/rebuild walks the dependencies of the package.json in buildPath.
  writeFileSync(
    path.join(outDir, 'package.json'),
    JSON.stringify({ name: 'log-appliance-electron-native', private: true, dependencies }, null, 2),
  );
  // @electron/rebuild comes with electron-builder (a devDependency); tests pass a stand-in.
  rebuild ??= (await import('@electron/rebuild')).rebuild;
  await rebuild({
    buildPath: outDir,
    projectRootPath: outDir,
    electronVersion,
    arch,
    onlyModules: ELECTRON_ABI_MODULES,
    force: true,
  });
  for (const m of ELECTRON_ABI_MODULES) {
    prune(path.join(modulesDir, m));
    const release = path.join(modulesDir, m, 'build', 'Release');
    if (!existsSync(release) || !readdirSync(release).some((f) => f.endsWith('.node'))) {
      throw new Error(`rebuilding ${m} for Electron ${electronVersion} produced no binary`);
    }
  }
  writeFileSync(stampFile, want);
  return true;
}

/** Drops what only the build needed (sources, object files, test addons): it would ship. */
function prune(dir) {
  for (const name of ['deps', 'src', 'binding.gyp']) rmSync(path.join(dir, name), { recursive: true, force: true });
  const build = path.join(dir, 'build');
  if (!existsSync(build)) return;
  for (const name of readdirSync(build)) {
    if (name !== 'Release') rmSync(path.join(build, name), { recursive: true, force: true });
  }
  const release = path.join(build, 'Release');
  for (const name of existsSync(release) ? readdirSync(release) : []) {
    if (!name.endsWith('.node') || name.startsWith('test_')) rmSync(path.join(release, name), { recursive: true, force: true });
  }
}
