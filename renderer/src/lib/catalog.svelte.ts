// The fractals and prisms the signed-in user can choose from, and switching between them.
import { enc, errorMessage, get, post, sameId, type Fractal, type Prism, type Selection } from './api.ts';
import type { Scope } from './admin-scope.ts';
import { setSelected } from './session.svelte.ts';
import { LatestAnswer } from './latest-answer.ts';

export const catalog = $state<{
  fractals: Fractal[];
  prisms: Prism[];
  loaded: boolean;
  loading: boolean;
  error: string | null;
}>({ fractals: [], prisms: [], loaded: false, loading: false, error: null });

const loads = new LatestAnswer();

export async function loadCatalog(): Promise<void> {
  const current = loads.begin();
  catalog.loading = true;
  catalog.error = null;
  try {
    const [fractals, prisms] = await Promise.all([get<Fractal[]>('/fractals'), get<Prism[]>('/prisms')]);
    if (!current()) return;
    catalog.fractals = sortByName(fractals ?? []);
    catalog.prisms = sortByName(prisms ?? []);
    catalog.loaded = true;
  } catch (err) {
    if (current()) catalog.error = errorMessage(err);
  } finally {
    if (current()) catalog.loading = false;
  }
}

export function resetCatalog(): void {
  loads.drop();
  catalog.fractals = [];
  catalog.prisms = [];
  catalog.loaded = false;
  catalog.loading = false;
  catalog.error = null;
}

export function fractalById(id: Selection['id']): Fractal | undefined {
  return catalog.fractals.find((f) => sameId(f.id, id));
}

/** What a scoped admin page calls its fractal or prism ("this prism" until the catalog has it). */
export function nameOfScope(scope: Scope | null): string {
  if (!scope) return '';
  const list = scope.type === 'fractal' ? catalog.fractals : catalog.prisms;
  return list.find((x) => String(x.id) === scope.id)?.name ?? `this ${scope.type}`;
}

// Selections are sent one after another (a keyboard user arrowing through the list fires several);
// only the last one updates the view.
let chain: Promise<unknown> = Promise.resolve();
let selectSeq = 0;

/** Resolves when the service has switched; throws its sentence if it refused. */
export function select(type: Selection['type'], id: Selection['id'], name: string): Promise<void> {
  const my = ++selectSeq;
  const path = type === 'fractal' ? `/fractals/${enc(id)}/select` : `/prisms/${enc(id)}/select`;
  const run = chain.then(async () => {
    if (my !== selectSeq) return; // superseded before it was sent
    await post(path);
    if (my === selectSeq) setSelected({ type, id, name });
  });
  chain = run.catch(() => undefined);
  return run;
}

function sortByName<T extends { name: string }>(list: T[]): T[] {
  return [...list].sort((a, b) => a.name.localeCompare(b.name, undefined, { sensitivity: 'base', numeric: true }));
}
