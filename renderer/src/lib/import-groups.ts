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
