// At start, what a stop or a crash left of case jobs: a job still `running` ends as failed, saying
// so (an export's unfinished archive is removed; an import kept nothing); events a case import had
// stored under the id of a fractal it never created are removed, and its dictionaries' rows; files
// no job owns (uploads of imports, archives of exports that did not finish) are deleted. Finished
// exports keep their archives: they can be downloaded after the restart.
import { readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { Context } from '../context.ts';
import { exportFile, exportsDir } from './case-export.ts';
import type { CaseJobs } from './case-jobs.ts';

export async function recoverCaseJobs(ctx: Context, jobs: CaseJobs): Promise<void> {
  for (const row of jobs.store.interrupted()) {
    const job = jobs.get(row.id) ?? row;
    if (job.kind === 'export') rmSync(exportFile(ctx, job.id), { force: true });
    jobs.finish(
      job,
      job.kind === 'export'
        ? `The appliance stopped during this export (${job.phase}); the unfinished archive was removed. Start the export again.`
        : `The appliance stopped during this import (${job.phase}); nothing of it was kept. Send the archive again.`,
    );
  }
  for (const { id, target_fractal_id } of jobs.store.unswept()) {
    // The fractal exists only when its transaction committed, and then the events are its own.
    if (!ctx.fractals.get(target_fractal_id)) {
      await ctx.logs.deleteFractal(target_fractal_id);
      // Its dictionaries' rows were written under ids no definition names: orphans now.
      await ctx.dictionaries.purgeOrphanRows();
      ctx.log.warn({ job: id, fractal: target_fractal_id }, 'removed the events and dictionary rows of a case import that did not finish');
    }
    jobs.swept({ id });
  }
  rmSync(path.join(ctx.config.dataDir, 'cases', 'incoming'), { recursive: true, force: true });
  const kept = new Set(jobs.list((j) => j.kind === 'export' && j.status === 'done').map((j) => path.basename(exportFile(ctx, j.id))));
  let names: string[] = [];
  try {
    names = readdirSync(exportsDir(ctx));
  } catch {
    /* no export yet */
  }
  for (const name of names) if (!kept.has(name)) rmSync(path.join(exportsDir(ctx), name), { recursive: true, force: true });
}
