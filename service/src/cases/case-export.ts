// A fractal leaves as one case archive (layout in archive-layout.ts, docs/evidence.md): its events
// streamed from storage in time order and cut into NDJSON parts by day, then its comments,
// notebooks, dashboards, alerts with their firings, the dictionaries its queries read and its
// custody log, each read through its own domain's store, and the manifest. The job reports progress as it goes; the archive is written
// to a file the page downloads.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Context } from '../context.ts';
import type { FractalRow } from '../tenancy/fractals-store.ts';
import {
  ALERT_EXECUTIONS,
  ALERTS,
  CASE_FORMAT,
  CASE_INFO,
  COMMENTS,
  CUSTODY,
  DASHBOARDS,
  DICTIONARIES,
  EVENTS_PART_BYTES,
  eventsPart,
  NOTEBOOKS,
  type CaseEvent,
  type CaseInfo,
} from './archive-layout.ts';
import { CaseArchiveWriter, RecordFile } from './archive-writer.ts';
import { QueriedDictionaries, writeDictionaries } from './case-dictionaries.ts';
import type { CaseJob, CaseJobs } from './case-jobs.ts';

export const exportsDir = (ctx: Context): string => path.join(ctx.config.dataDir, 'cases', 'exports');
export const exportFile = (ctx: Context, jobId: string): string => path.join(exportsDir(ctx), `${jobId}.tar.gz`);

/** The name a download is saved under: the fractal's name made safe for any file system, and the time. */
export function archiveName(fractalName: string, at: Date): string {
  const safe = fractalName.normalize('NFKD').replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 60) || 'fractal';
  return `case-${safe}-${at.toISOString().slice(0, 16).replace(/[-:]/g, '').replace('T', '-')}.tar.gz`;
}

/** Share of the progress bar the events take; the records and manifest take the rest. */
const EVENTS_SHARE = 0.9;

export async function runCaseExport(ctx: Context, jobs: CaseJobs, job: CaseJob, fractal: FractalRow, actor: string): Promise<void> {
  await mkdir(exportsDir(ctx), { recursive: true });
  const writer = new CaseArchiveWriter(exportFile(ctx, job.id));
  const scratch = await mkdtemp(path.join(exportsDir(ctx), '.records-'));
  try {
    job.events_total = (await ctx.logs.stats(fractal.id)).log_count;
    jobs.enter(job, 'reading events');
    await writeEvents(ctx, writer, fractal.id, job, jobs.signal);
    if (jobs.signal.aborted) throw new Error('the service is stopping');

    jobs.enter(job, 'writing comments, notebooks, dashboards, alerts, dictionaries and custody log');
    const info: CaseInfo = {
      format: CASE_FORMAT,
      exported_at: new Date().toISOString(),
      exported_by: actor,
      appliance_version: ctx.version,
      fractal: { id: fractal.id, name: fractal.name, description: fractal.description, retention_days: fractal.retention_days },
    };
    await writer.addBuffer(CASE_INFO, Buffer.from(`${JSON.stringify(info, null, 1)}\n`));
    const record = async (name: string, fill: (f: RecordFile) => Promise<void>) => {
      const f = new RecordFile(path.join(scratch, name));
      try {
        await fill(f);
        await f.close();
        await writer.addRecordFile(name, f);
      } finally {
        await f.remove();
      }
    };
    await record(COMMENTS, async (f) => {
      let after: { created_at: string; id: string } | null = null;
      for (;;) {
        const page = ctx.comments.caseRecords(fractal.id, after, 1000);
        for (const c of page) await f.line(c);
        if (page.length < 1000) break;
        const last = page.at(-1)!;
        after = { created_at: String(last.created_at), id: String(last.id) };
      }
    });
    // The dictionaries the carried queries read, noted as the records go in.
    const queried = new QueriedDictionaries();
    await record(NOTEBOOKS, async (f) => {
      for (const id of ctx.notebooks.caseIds(fractal.id)) {
        const nb = ctx.notebooks.caseRecord(id);
        if (nb) {
          queried.notebook(nb);
          await f.line(nb);
        }
      }
    });
    await record(DASHBOARDS, async (f) => {
      for (const id of ctx.dashboards.caseIds(fractal.id)) {
        const d = ctx.dashboards.caseRecord(id);
        if (d) {
          queried.dashboard(d);
          await f.line(d);
        }
      }
    });
    const alerts = ctx.alerts.caseRecords(fractal.id);
    await record(ALERTS, async (f) => {
      for (const a of alerts) {
        queried.alert(a);
        await f.line(a);
      }
    });
    await record(ALERT_EXECUTIONS, async (f) => {
      for (const a of alerts) for (const e of ctx.alertExecutions.caseRecords(String(a.id))) await f.line(e);
    });
    await record(DICTIONARIES, (f) => writeDictionaries(ctx, f, queried.carried(ctx, fractal.id), jobs.signal));
    await record(CUSTODY, async (f) => {
      for (const entry of ctx.custody.list(fractal.id)) await f.line(entry);
    });

    jobs.enter(job, 'writing the manifest');
    const archive = await writer.finish({ fractal: { id: fractal.id, name: fractal.name }, event_count: job.events_done });
    job.bytes_done = archive.size;
    job.archive = { file_name: archiveName(fractal.name, new Date(job.started_at)), ...archive };
    // After the archive is whole: its hash is what the entry records. The archive's own custody
    // file ends with the entry before this one.
    ctx.custody.append(fractal.id, {
      kind: 'export',
      actor,
      details: {
        archive_file: job.archive.file_name,
        archive_sha256: archive.sha256,
        archive_size: archive.size,
        manifest_sha256: archive.manifest_sha256,
        event_count: job.events_done,
        started_at: job.started_at,
        ended_at: new Date().toISOString(),
      },
    });
    jobs.finish(job);
  } catch (err) {
    await writer.abandon();
    jobs.finish(job, `The case export stopped: ${(err as Error).message}`);
    ctx.log.error({ err: (err as Error).message, fractal: fractal.id, job: job.id }, 'case export failed');
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** The fractal's events in time order, one NDJSON part per day and at most EVENTS_PART_BYTES. */
async function writeEvents(ctx: Context, writer: CaseArchiveWriter, fractalId: string, job: CaseJob, signal: AbortSignal): Promise<void> {
  let day = '';
  let part = 0;
  let lines: string[] = [];
  let bytes = 0;
  const flush = async () => {
    if (lines.length === 0) return;
    await writer.addBuffer(eventsPart(day, ++part), Buffer.from(lines.join('')));
    lines = [];
    bytes = 0;
    job.bytes_done = writer.bytes;
  };
  for await (const rows of ctx.logs.streamCaseEvents(fractalId, signal)) {
    for (const [log_id, timestamp, ingest_timestamp, raw, fields_text] of rows) {
      const rowDay = timestamp.slice(0, 10);
      if (rowDay !== day) {
        await flush();
        day = rowDay;
        part = 0;
      } else if (bytes >= EVENTS_PART_BYTES) await flush();
      const event: CaseEvent = { log_id, timestamp, ingest_timestamp, raw, fields_text };
      const line = `${JSON.stringify(event)}\n`;
      lines.push(line);
      bytes += Buffer.byteLength(line);
      job.events_done++;
    }
    job.progress = EVENTS_SHARE * (job.events_total ? Math.min(1, job.events_done / job.events_total) : 1);
  }
  await flush();
  job.progress = EVENTS_SHARE;
}
