// Case archives (service/src/cases/): export jobs of a fractal, the archive's download address, and
// the upload of an archive to import, with the upload's own progress (fetch reports none, so the
// upload goes through XMLHttpRequest), then its job.
import type { CaseJob } from '../../../service/src/cases/case-jobs.ts';
import { ApiError, del, get, post } from './api.ts';

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
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    const query = new URLSearchParams({ file_name: file.name.slice(0, 255) });
    if (name) query.set('name', name);
    xhr.open('POST', `/api/v1/case-import?${query}`);
    xhr.setRequestHeader('Content-Type', 'application/gzip');
    xhr.setRequestHeader('Accept', 'application/json');
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable && e.total > 0) onUpload(e.loaded / e.total);
    };
    xhr.onerror = () => reject(new ApiError('Could not reach the service. Check that it is running and the network is up.', 0));
    xhr.onload = () => {
      let body: { success?: boolean; data?: CaseJob; error?: string } = {};
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        /* not the envelope */
      }
      if (xhr.status >= 200 && xhr.status < 300 && body.data) resolve(body.data);
      else reject(new ApiError(body.error ?? `The import was refused (HTTP ${xhr.status}).`, xhr.status));
    };
    xhr.send(file);
  });
}

/** Asks for the job every `everyMs` until it is no longer running; `onJob` sees each state. */
export async function followJob(read: () => Promise<CaseJob>, onJob: (j: CaseJob) => void, signal: AbortSignal, everyMs = 500): Promise<CaseJob> {
  for (;;) {
    const job = await read();
    if (signal.aborted) return job;
    onJob(job);
    if (job.status !== 'running') return job;
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
