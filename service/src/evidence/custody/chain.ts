// The custody chain's hashing, shared by the store (appending, verifying what SQLite holds) and
// by anyone checking a chain carried elsewhere (a case archive): pure functions, no storage.
//
// An entry's hash is SHA-256 over the previous entry's hash, a newline, and the entry's canonical
// form: JSON with object keys sorted at every depth, no spaces. The first entry of a fractal
// chains to GENESIS_HASH. Changing any field of an entry changes its hash, and so breaks the link
// the next entry holds; removing an entry breaks the link of the one after it.
import { createHash } from 'node:crypto';

export const CUSTODY_KINDS = ['import', 'export', 'case-import'] as const;
export type CustodyKind = (typeof CUSTODY_KINDS)[number];

/** The `prev_hash` of a fractal's first entry. */
export const GENESIS_HASH = '0'.repeat(64);

/** What the chain covers of an entry (everything but the hashes themselves). */
export interface CustodyEntryBody {
  id: string;
  fractal_id: string;
  /** 1, 2, 3 … per fractal, without gaps. */
  seq: number;
  kind: CustodyKind;
  /** RFC 3339 UTC, when the entry was appended. */
  recorded_at: string;
  /** Who did it: a user name ("alice"), or "api key <name>". */
  actor: string;
  /** What happened: for an import the file's name, size, SHA-256, start and end, counts. */
  details: Record<string, unknown>;
}

export interface CustodyEntry extends CustodyEntryBody {
  prev_hash: string;
  hash: string;
}

/** JSON with every object's keys in code-unit order: the same value always gives the same text. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'number' && !Number.isFinite(value)) throw new Error('custody details hold only finite numbers');
    if (value === undefined) return 'null';
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const keys = Object.keys(value).filter((k) => (value as Record<string, unknown>)[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
}

export function entryHash(prevHash: string, body: CustodyEntryBody): string {
  const { id, fractal_id, seq, kind, recorded_at, actor, details } = body;
  const canonical = canonicalJson({ id, fractal_id, seq, kind, recorded_at, actor, details });
  return createHash('sha256').update(`${prevHash}\n${canonical}`).digest('hex');
}

export type ChainVerdict =
  | { ok: true; entries: number; head_hash: string }
  | { ok: false; entries: number; bad_entry: { id: string | null; seq: number }; reason: string };

/**
 * Walks a fractal's entries in `seq` order: each must follow the previous one by number, name the
 * previous hash, and hash to its own. The first failure is the verdict, naming the entry.
 */
export function verifyEntries(entries: readonly CustodyEntry[]): ChainVerdict {
  let prev = GENESIS_HASH;
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!;
    const bad = (reason: string): ChainVerdict => ({ ok: false, entries: entries.length, bad_entry: { id: e.id, seq: e.seq }, reason });
    if (e.seq !== i + 1) {
      return bad(i === 0 || e.seq > i + 1 ? `entry ${e.seq} follows entry ${i}: entry ${i + 1} is missing` : `entry ${e.seq} is out of order after entry ${i}`);
    }
    if (e.prev_hash !== prev) return bad(`entry ${e.seq} does not chain to the entry before it (its previous hash is ${e.prev_hash.slice(0, 12)}…, expected ${prev.slice(0, 12)}…)`);
    let recomputed: string;
    try {
      recomputed = entryHash(prev, e);
    } catch (err) {
      return bad(`entry ${e.seq} cannot be hashed: ${(err as Error).message}`);
    }
    if (recomputed !== e.hash) return bad(`entry ${e.seq} was changed after it was recorded (its content no longer hashes to its stored hash)`);
    prev = e.hash;
  }
  return { ok: true, entries: entries.length, head_hash: prev };
}
