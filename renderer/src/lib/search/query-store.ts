// Query history and saved queries, per user, in this browser's localStorage (keys
// "svc.search.history.<user>" and "svc.search.saved.<user>"). The service has no saved-query endpoint yet,
// so saved queries do not follow the user to another browser. Pure apart from the Storage passed in:
// tests/ui/search-lib.test.ts.

export const HISTORY_MAX = 100;

export interface SavedQuery {
  name: string;
  query: string;
  saved_at: string;
}

type Store = Pick<Storage, 'getItem' | 'setItem'>;

function read<T>(store: Store | null, key: string): T[] {
  if (!store) return [];
  try {
    const v = JSON.parse(store.getItem(key) ?? '[]');
    return Array.isArray(v) ? (v as T[]) : [];
  } catch {
    return [];
  }
}

function write(store: Store | null, key: string, value: unknown): void {
  try {
    store?.setItem(key, JSON.stringify(value));
  } catch {
    // Storage full or disabled (private mode): history is a convenience, carry on without it.
  }
}

export class QueryHistory {
  constructor(
    private readonly store: Store | null,
    private readonly user: string,
  ) {}

  private get key() {
    return `svc.search.history.${this.user}`;
  }

  /** Newest first, no duplicates. */
  list(): string[] {
    return read<unknown>(this.store, this.key).filter((x): x is string => typeof x === 'string');
  }

  /** Records a run query at the top; running an older one again moves it up. Blank queries are not kept. */
  add(query: string): void {
    const q = query.trim();
    if (q === '') return;
    write(this.store, this.key, [q, ...this.list().filter((x) => x !== q)].slice(0, HISTORY_MAX));
  }

  clear(): void {
    write(this.store, this.key, []);
  }
}

/**
 * Arrow-key recall over a history list, the way a shell does it: `older()` from the draft goes to the newest
 * entry, `newer()` past the newest returns the draft the user was typing.
 */
export class HistoryCursor {
  private index = -1;
  private draft = '';

  constructor(private readonly entries: () => string[]) {}

  reset(): void {
    this.index = -1;
  }

  older(current: string): string | null {
    const list = this.entries();
    if (this.index + 1 >= list.length) return null;
    if (this.index === -1) this.draft = current;
    this.index++;
    return list[this.index]!;
  }

  newer(): string | null {
    if (this.index === -1) return null;
    this.index--;
    return this.index === -1 ? this.draft : this.entries()[this.index]!;
  }
}

export class SavedQueries {
  constructor(
    private readonly store: Store | null,
    private readonly user: string,
  ) {}

  private get key() {
    return `svc.search.saved.${this.user}`;
  }

  list(): SavedQuery[] {
    return read<SavedQuery>(this.store, this.key)
      .filter((s) => s && typeof s.name === 'string' && typeof s.query === 'string')
      .sort((a, b) => a.name.localeCompare(b.name, undefined, { sensitivity: 'base', numeric: true }));
  }

  /** Saves under a name; the same name replaces the earlier query. */
  save(name: string, query: string, now: Date = new Date()): SavedQuery {
    const n = name.trim();
    if (n === '') throw new Error('Give the query a name.');
    const entry = { name: n, query, saved_at: now.toISOString() };
    write(this.store, this.key, [...this.list().filter((s) => s.name !== n), entry]);
    return entry;
  }

  remove(name: string): void {
    write(this.store, this.key, this.list().filter((s) => s.name !== name));
  }
}
