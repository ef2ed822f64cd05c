// Case archives (service/src/cases/): export jobs of a fractal, the archive's download address, and
// the upload of an archive to import, with the upload's own progress (api.ts uploadFile), then its job.
import type { CaseJob } from '../../../service/src/cases/case-jobs.ts';
import { del, get, post, uploadFile } from './api.ts';

export { followJob } from './jobs.ts';

export type { CaseJob };

const exportsOf = (fractalId: string) => `/fractals/${encodeURIComponent(fractalId)}/case-exports`;

export const cases = {
  startExport: (fractalId: string) => post<CaseJob>(`/fractals/${encodeURIComponent(fractalId)}/case-export`, {}),
  exports: (fractalId: string) => get<CaseJob[]>(exportsOf(fractalId)),
  exportJob: (fractalId: string, jobId: string) => get<CaseJob>(`${exportsOf(fractalId)}/${jobId}`),
  deleteExport: (fractalId: string, jobId: string) => del<{ deleted: boolean }>(`${exportsOf(fractalId)}/${jobId}`),
  /** Where the browser downloads a finished export (the session cookie goes along). */
  archiveHref: (fractalId: string, jobId: string) => `/api/v1${exportsOf(fractalId)}/${jobId}/archive`,
  imports: () => get<CaseJob[]>('/case-imports'),
  importJob: (jobId: string) => get<CaseJob>(`/case-imports/${jobId}`),
};

/**
 * Sends an archive to import as the raw body; `onUpload` gets the share sent (0 … 1). Resolves with
 * the import's job once the service has verified the archive; a refusal rejects with its sentence.
 */
export function uploadCase(file: File, name: string, onUpload: (share: number) => void): Promise<CaseJob> {
  const query = new URLSearchParams({ file_name: file.name.slice(0, 255) });
  if (name) query.set('name', name);
  return uploadFile<CaseJob>(`/case-import?${query}`, file, 'application/gzip', onUpload, (status) => `The import was refused (HTTP ${status}).`);
}
