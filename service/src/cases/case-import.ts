// A verified case archive becomes a new fractal. The events go into storage first, under the new
// fractal's id, before that fractal exists (no query can name it, so nobody sees half of them);
// then one SQLite transaction creates the fractal with its comments, notebooks, dashboards,
// alerts, firings, dictionaries (their rows stored with the events, under ids no definition has
// yet) and custody log through each domain's store. Any failure removes the events and rows
// stored so far: either the whole case is there or nothing of it.
import { randomUUID } from 'node:crypto';
import type { Context } from '../context.ts';
import { createFractal } from '../tenancy/fractals-logic.ts';
import type { StoredRow } from '../storage/stored-rows.ts';
import {
  ALERT_EXECUTIONS,
  ALERTS,
  CASE_INFO,
  COMMENTS,
  DASHBOARDS,
  DICTIONARIES,
  EVENTS_PART,
  NOTEBOOKS,
  type CaseEvent,
  type CaseInfo,
} from './archive-layout.ts';
import { archiveMembers, BadRecord, isObject, ndjsonLines, unreadable, type VerifiedArchive } from './archive-reader.ts';
import { CarriedDictionaries } from './case-dictionaries.ts';
import type { CaseJob, CaseJobs } from './case-jobs.ts';
import { carriedCustody } from './custody-link.ts';

/** Rows handed to storage in one insert. */
const INSERT_BYTES = 16 * 1024 * 1024;
const UUID = /^[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}$/i;
const STORED_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,9})?$/;

/** A fractal name not yet taken: the archive's, else with "(imported <day>)" and a number. */
export function freeFractalName(ctx: Context, wanted: string): string {
  if (!ctx.fractals.byName(wanted)) return wanted;
  const base = `${wanted} (imported ${new Date().toISOString().slice(0, 10)})`;
  for (let n = 1; ; n++) {
    const name = n === 1 ? base : `${base} ${n}`;
    if (!ctx.fractals.byName(name)) return name;
  }
}

type Records = { [COMMENTS]: StoredRow[]; [NOTEBOOKS]: StoredRow[]; [DASHBOARDS]: StoredRow[]; [ALERTS]: StoredRow[]; [ALERT_EXECUTIONS]: StoredRow[] };

export async function runCaseImport(
  ctx: Context,
  jobs: CaseJobs,
  job: CaseJob,
  file: string,
  verified: VerifiedArchive,
  name: string,
  actor: string,
): Promise<void> {
  const fractalId = randomUUID();
  // Recorded before the first event is stored: a crash before the fractal exists is swept at the next start.
  jobs.storingUnder(job, fractalId);
  let eventsStored = false;
  let created = false;
  const dictionaries = new CarriedDictionaries(ctx, fractalId);
  try {
    job.events_total = verified.manifest.event_count;
    jobs.enter(job, 'storing events');
    let info: CaseInfo | null = null;
    const records: Records = { [COMMENTS]: [], [NOTEBOOKS]: [], [DASHBOARDS]: [], [ALERTS]: [], [ALERT_EXECUTIONS]: [] };
    let batch: Buffer[] = [];
    let batchBytes = 0;
    const store = async () => {
      if (batch.length === 0) return;
      eventsStored = true;
      await ctx.logs.insert('logs_ingest', batch);
      batch = [];
      batchBytes = 0;
      job.progress = 0.9 * (job.events_total ? Math.min(1, job.events_done / job.events_total) : 1);
    };
    for await (const m of archiveMembers(file, (n) => (job.bytes_done = n))) {
      if (jobs.signal.aborted) throw new Error('the service is stopping');
      if (EVENTS_PART.test(m.name)) {
        let line = 0;
        for await (const v of ndjsonLines(m.name, m.content())) {
          line++;
          const e = v as CaseEvent;
          if (!isObject(e) || !UUID.test(String(e.log_id)) || !STORED_TIME.test(String(e.timestamp)) || !STORED_TIME.test(String(e.ingest_timestamp)) || typeof e.raw !== 'string' || typeof e.fields_text !== 'string') {
            throw new BadRecord(`${m.name} line ${line} is not an event of a case archive (log_id, timestamp, ingest_timestamp, raw, fields_text).`);
          }
          // The ingest entry table makes `fields` from this text exactly as it did at the first
          // ingest, and keeps the text as `fields_text`: the stored row comes out equal.
          const row = Buffer.from(`${JSON.stringify({ fractal_id: fractalId, timestamp: e.timestamp, ingest_timestamp: e.ingest_timestamp, log_id: e.log_id, raw: e.raw, fields: e.fields_text })}\n`);
          batch.push(row);
          batchBytes += row.length;
          job.events_done++;
          if (batchBytes >= INSERT_BYTES) await store();
        }
      } else if (m.name === CASE_INFO) {
        const chunks: Buffer[] = [];
        for await (const piece of m.content()) chunks.push(piece);
        try {
          info = JSON.parse(Buffer.concat(chunks).toString('utf8')) as CaseInfo;
        } catch {
          throw new BadRecord(`${CASE_INFO} is not JSON.`);
        }
      } else if (m.name === DICTIONARIES) {
        jobs.enter(job, 'storing dictionaries');
        await dictionaries.read(m.content());
      } else if (m.name in records) { // custody.ndjson was read whole while verifying
        const list = records[m.name as keyof Records] as unknown[];
        for await (const v of ndjsonLines(m.name, m.content())) list.push(v);
      }
    }
    await store();
    job.progress = 0.9;

    jobs.enter(job, 'recording comments, notebooks, dashboards, alerts, dictionaries and custody log');
    checkShapes(records);
    const description = typeof info?.fractal?.description === 'string' ? info.fractal.description : '';
    ctx.db.transaction(() => {
      const fractalName = ctx.fractals.byName(name) ? freeFractalName(ctx, name) : name;
      createFractal(ctx, { id: fractalId, name: fractalName, description });
      job.fractal_name = fractalName;
      for (const c of records[COMMENTS]) ctx.comments.restoreCaseRecord(fractalId, c as StoredRow & { tags: unknown });
      for (const nb of records[NOTEBOOKS]) ctx.notebooks.restoreCaseRecord(fractalId, nb as never);
      for (const d of records[DASHBOARDS]) ctx.dashboards.restoreCaseRecord(fractalId, d as never);
      const alertIds = new Map<string, string>();
      for (const a of records[ALERTS]) alertIds.set(String(a.id), ctx.alerts.restoreCaseRecord(fractalId, a));
      for (const e of records[ALERT_EXECUTIONS] as unknown as Array<{ execution: StoredRow; deliveries: StoredRow[] }>) {
        const alertId = alertIds.get(String(e.execution.alert_id));
        if (!alertId) throw new BadRecord(`${ALERT_EXECUTIONS} holds a firing of alert ${String(e.execution.alert_id)}, which ${ALERTS} does not hold.`);
        ctx.alertExecutions.restoreCaseRecord(alertId, fractalId, e);
      }
      dictionaries.restore();
      ctx.custody.append(fractalId, {
        kind: 'case-import',
        actor,
        details: {
          archive_file: job.archive?.file_name ?? '',
          archive_sha256: job.archive?.sha256 ?? '',
          archive_size: job.archive?.size ?? 0,
          manifest_sha256: verified.manifestSha256,
          source_fractal: verified.manifest.fractal,
          exported_at: info?.exported_at ?? null,
          exported_by: info?.exported_by ?? null,
          event_count: job.events_done,
          started_at: job.started_at,
          ended_at: new Date().toISOString(),
          // The source fractal's log, unchanged: verifyEntries(entries) checks it and gives head_hash.
          carried_custody: carriedCustody(verified.custody),
        },
      });
      // The job is done with the fractal, in the same transaction: a restart finds both or neither.
      job.fractal_id = fractalId;
      jobs.finish(job);
      jobs.swept(job);
    })();
    created = true;
    ctx.fractals.saveStats(fractalId, await ctx.logs.stats(fractalId));
  } catch (err) {
    if (created) {
      ctx.log.warn({ err: (err as Error).message, fractal: fractalId }, 'the imported fractal\'s figures were not saved; they are counted again later');
      return;
    }
    const why = (unreadable(err) as Error).message;
    job.fractal_id = null;
    let removed = true;
    if (eventsStored) {
      removed = await ctx.logs.deleteFractal(fractalId).then(
        () => true,
        (e) => (ctx.log.error({ err: (e as Error).message, fractal: fractalId }, 'could not remove the events of a failed case import; the next start removes them'), false),
      );
    }
    const rowsRemoved = await dictionaries.remove().then(
      () => true,
      (e) => (ctx.log.error({ err: (e as Error).message, fractal: fractalId }, 'could not remove the dictionary rows of a failed case import; the next start removes them'), false),
    );
    if (removed && rowsRemoved) jobs.swept(job);
    jobs.finish(job, `The case import failed and nothing of it was kept: ${why}`);
    ctx.log.error({ err: why, job: job.id }, 'case import failed');
  } finally {
    dictionaries.release();
  }
}

/** Each record file's lines have the shape its store restores from; else the sentence names the file and line. */
function checkShapes(r: Records): void {
  const each = (name: string, list: unknown[], ok: (v: Record<string, unknown>) => boolean, what: string) => {
    list.forEach((v, i) => {
      if (!isObject(v) || !ok(v)) throw new BadRecord(`${name} line ${i + 1} is not ${what}.`);
    });
  };
  const rows = (v: unknown) => Array.isArray(v) && v.every(isObject);
  each(COMMENTS, r[COMMENTS], (v) => Array.isArray(v.tags), 'a comment with its tags');
  each(NOTEBOOKS, r[NOTEBOOKS], (v) => isObject(v.notebook) && rows(v.sections), 'a notebook with its sections');
  each(DASHBOARDS, r[DASHBOARDS], (v) => isObject(v.dashboard) && rows(v.widgets), 'a dashboard with its widgets');
  each(ALERTS, r[ALERTS], (v) => typeof v.id === 'string', 'an alert');
  each(ALERT_EXECUTIONS, r[ALERT_EXECUTIONS], (v) => isObject(v.execution) && rows(v.deliveries), 'a firing with its deliveries');
}
