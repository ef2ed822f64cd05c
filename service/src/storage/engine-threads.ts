// The embedded engine's merges run at a lower CPU priority than searches and the event loop.
// On this appliance's two cores a merge of wide JSON parts takes a core for seconds, and the
// engine schedules it whenever parts pile up, which is exactly while shippers push: a search typed
// then waited behind it. Linux keeps a niceness per thread, so the merge pool's threads (named
// "MergeMutate" by the engine; created on demand, hence a sweep) get nice MERGE_NICE: they still
// have every core nobody else wants, and give way when a search or a request needs one. Raising a
// thread's nice value needs no privilege. Inserts are low-priority statements
// (`os_thread_priority`, clickhouse.ts INSERT_SETTINGS; low-priority-threads.ts puts back the pool
// threads they leave niced): MERGE_NICE is one step from theirs, so that putting back never
// touches the merge pool, and merges and inserts share the cores about evenly.
import { readdirSync, readFileSync } from 'node:fs';
import { setPriority } from 'node:os';

/** The merge threads' niceness (0 normal, 19 lowest): about a twelfth of a core's share against nice 0. */
export const MERGE_NICE = 11;
const SWEEP_MS = 1_000;
const MERGE_THREAD = /^MergeMutate/;

/** Starts the sweep (Linux only; elsewhere nothing); the function returned stops it. */
export function lowerMergePriority(): () => void {
  if (process.platform !== 'linux') return () => {};
  /** Threads already looked at: a thread's name and niceness do not change under us. */
  const seen = new Set<string>();
  const sweep = () => {
    let tids: string[];
    try {
      tids = readdirSync('/proc/self/task');
    } catch {
      return;
    }
    for (const tid of tids) {
      if (seen.has(tid)) continue;
      seen.add(tid);
      try {
        if (MERGE_THREAD.test(readFileSync(`/proc/self/task/${tid}/comm`, 'utf8'))) setPriority(Number(tid), MERGE_NICE);
      } catch {
        /* the thread ended, or the system refuses: merges keep the normal priority */
      }
    }
    // Thread ids are reused once threads end: forget the ones gone.
    if (seen.size > tids.length * 2) for (const t of [...seen]) if (!tids.includes(t)) seen.delete(t);
  };
  sweep();
  const timer = setInterval(sweep, SWEEP_MS);
  timer.unref();
  return () => clearInterval(timer);
}
