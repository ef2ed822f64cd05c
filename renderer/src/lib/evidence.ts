// Evidence (service/src/evidence/): imports of files into a fractal, with the upload's own
// progress (the files of a drop in groups, each group one multipart request through api.ts
// uploadFile, import-groups.ts) and then
// the import's (bytes read of the stored file); the custody log with its verify verdict; and the
// files of a drop, folders walked (Chromium and Electron give them as entries).
import type { ChainVerdict, CustodyEntry } from '../../../service/src/evidence/custody/chain.ts';
import type { ImportView } from '../../../service/src/evidence/imports/imports-store.ts';
import { enc, get, uploadFile } from './api.ts';
import { fileShares } from './import-groups.ts';

export type { ChainVerdict, CustodyEntry, ImportView };

export interface CustodyLog {
  fractal_id: string;
  total: number;
  entries: CustodyEntry[];
  verify: ChainVerdict;
}

export const evidence = {
  imports: (fractalId: string, limit = 50) => get<ImportView[]>(`/fractals/${enc(fractalId)}/imports?limit=${limit}`),
  custody: (fractalId: string) => get<CustodyLog>(`/fractals/${enc(fractalId)}/custody?limit=1000`),
};

/**
 * Sends files to import as one multipart/form-data request (a part `file` each); `onUpload` gets
 * each file's share sent (0 … 1). Resolves with their imports, in the files' order, once the
 * service has stored them all; a refusal rejects with its sentence.
 */
export function uploadImports(fractalId: string, files: File[], normalizerId: string, onUpload: (shares: number[]) => void): Promise<ImportView[]> {
  const form = new FormData();
  for (const f of files) form.append('file', f, f.name.slice(0, 255) || 'upload');
  const query = normalizerId ? `?${new URLSearchParams({ normalizer_id: normalizerId })}` : '';
  const sizes = files.map((f) => f.size);
  return uploadFile<ImportView[]>(`/fractals/${enc(fractalId)}/imports${query}`, form, null, (_, sent) => onUpload(fileShares(sizes, sent)), (status) => `The import was refused (HTTP ${status}).`);
}

/** The share of an import done, 0 … 1: bytes of the stored file read, then 1 once it ended. */
export function importShare(i: Pick<ImportView, 'status' | 'bytes_read' | 'size_bytes'>): number {
  if (i.status !== 'running') return 1;
  return i.size_bytes > 0 ? Math.min(0.99, i.bytes_read / i.size_bytes) : 0;
}

/** The search that shows an import's events: its id, over all time, in its fractal. */
export function importSearchPath(i: Pick<ImportView, 'id' | 'fractal_id'>): string {
  const p = new URLSearchParams({ q: `import_id="${i.id}"`, t: 'all', scope: `fractal:${i.fractal_id}` });
  return `/search?${p.toString().replaceAll('+', '%20')}`;
}

interface EntryLike {
  isFile: boolean;
  isDirectory: boolean;
  name: string;
  file?(ok: (f: File) => void, fail: (e: unknown) => void): void;
  createReader?(): { readEntries(ok: (entries: EntryLike[]) => void, fail: (e: unknown) => void): void };
}

/** Every file of a drop: dropped folders are walked (all their files, at any depth). */
export async function filesFromDrop(dt: DataTransfer): Promise<File[]> {
  const entries = [...dt.items]
    .filter((it) => it.kind === 'file')
    .map((it) => (it as DataTransferItem & { webkitGetAsEntry?: () => EntryLike | null }).webkitGetAsEntry?.() ?? null);
  if (entries.length === 0 || entries.some((e) => e === null)) return [...dt.files];
  const out: File[] = [];
  const walk = async (e: EntryLike): Promise<void> => {
    if (e.isFile && e.file) out.push(await new Promise<File>((ok, fail) => e.file!(ok, fail)));
    else if (e.isDirectory && e.createReader) {
      const reader = e.createReader();
      // readEntries gives a folder's entries in batches until an empty one.
      for (;;) {
        const batch = await new Promise<EntryLike[]>((ok, fail) => reader.readEntries(ok, fail));
        if (batch.length === 0) break;
        for (const child of batch) await walk(child);
      }
    }
  };
  for (const e of entries) await walk(e!);
  return out;
}

/** Whether a drag carries files (not text or a link dragged within the page). */
export const dragHasFiles = (e: DragEvent): boolean => !!e.dataTransfer && [...e.dataTransfer.types].includes('Files');
