// How the import page sends a drop: consecutive files together, as one multipart/form-data request
// each group, so a folder of small files becomes a few requests whose files share the service's
// pipeline batches (service/src/evidence/imports/import-runner.ts), not one request per file. A
// group is bounded so its imports start while later groups upload, and stays under the service's
// 1,000 parts a request. No DOM here: the evidence benchmark sends the same groups.

/** Files a request holds at most (the service reads at most 1,000 parts). */
export const GROUP_FILES = 500;
/** Bytes a request holds at most, unless one file alone is larger. */
export const GROUP_BYTES = 64 * 1024 * 1024;

/** The files' indexes in groups, in order: each group one request. */
export function uploadGroups(sizes: number[]): number[][] {
  const groups: number[][] = [];
  let current: number[] = [];
  let bytes = 0;
  sizes.forEach((size, i) => {
    if (current.length > 0 && (current.length >= GROUP_FILES || bytes + size > GROUP_BYTES)) {
      groups.push(current);
      current = [];
      bytes = 0;
    }
    current.push(i);
    bytes += size;
  });
  if (current.length > 0) groups.push(current);
  return groups;
}

/** Each file's share sent (0 … 1) when `sent` bytes of a request of these sizes went out (parts go in order). */
export function fileShares(sizes: number[], sent: number): number[] {
  let before = 0;
  return sizes.map((size) => {
    const share = size === 0 ? (sent > before ? 1 : 0) : Math.max(0, Math.min(1, (sent - before) / size));
    before += size;
    return share;
  });
}

/** A file the Evidence page takes for a Windows event log by its name (`.evtx`, gzipped or not). */
export const isEvtxName = (name: string): boolean => /\.evtx(\.gz)?$/i.test(name);

/**
 * The normalizer each dropped file is imported with: the one chosen, for every file; with none
 * chosen ('', the fractal's own), the shipped Windows event log normalizer (`windowsId`, when it
 * exists) for `.evtx` files, so they get the names Sigma rules use, and the fractal's for the rest.
 * Each part is then sent in its own upload groups (the normalizer is one per request).
 */
export function normalizerParts(names: string[], chosen: string, windowsId: string | null): Array<{ normalizerId: string; files: number[] }> {
  if (chosen || !windowsId) return names.length ? [{ normalizerId: chosen, files: names.map((_, i) => i) }] : [];
  const evtx: number[] = [];
  const rest: number[] = [];
  names.forEach((n, i) => (isEvtxName(n) ? evtx : rest).push(i));
  return [
    ...(evtx.length ? [{ normalizerId: windowsId, files: evtx }] : []),
    ...(rest.length ? [{ normalizerId: '', files: rest }] : []),
  ];
}
