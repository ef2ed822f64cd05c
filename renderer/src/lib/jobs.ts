// Following a long job the service runs (case exports and imports, archive restores): its state read
// again every half second until it is no longer running, each state handed to the page.

/** Asks for the job every `everyMs` until it is no longer running; `onJob` sees each state. */
export async function followJob<J extends { status: string }>(read: () => Promise<J>, onJob: (j: J) => void, signal: AbortSignal, everyMs = 500): Promise<J> {
  for (;;) {
    const job = await read();
    if (signal.aborted) return job;
    onJob(job);
    if (job.status !== 'running') return job;
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
