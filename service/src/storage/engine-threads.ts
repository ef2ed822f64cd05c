// The CPU priority of the embedded engine's threads (Linux keeps a niceness per thread; the
// engine's threads are this process's). Two things are set here, both through one walk of
// /proc/self/task:
//
// - Merges run below searches and the event loop. On this appliance's two cores a merge of wide
//   JSON parts takes a core for seconds, and the engine schedules it whenever parts pile up, which
//   is exactly while shippers push: a search typed then waited behind it. The merge pool's threads
//   (named "MergeMutate" by the engine; created on demand, hence a sweep) get nice MERGE_NICE: they
//   still have every core nobody else wants. Raising a thread's nice value needs no privilege.
// - Low-priority statements (inserts, a shared link's refresh: `os_thread_priority`, clickhouse.ts)
//   leave pool threads niced. The engine puts back only the threads it detaches from the query: a
//   few of its pool threads stay niced after the statement ends, and later run anyone's queries, an
//   analyst's search included. So once no low-priority statement runs any more, the threads still
//   at that nice value are put back to 0. Only where the engine could lower them in the first place
//   (CAP_SYS_NICE, which raising them back needs too); elsewhere nothing is niced and this finds
//   nothing. MERGE_NICE is one step from the statements' value, so that putting back never touches
//   the merge pool, and merges and inserts share the cores about evenly.
import { readdirSync, readFileSync } from 'node:fs';
import { setPriority } from 'node:os';
import { RunningCount } from './running-count.ts';

/** The merge threads' niceness (0 normal, 19 lowest): about a twelfth of a core's share against nice 0. */
export const MERGE_NICE = 11;
const SWEEP_MS = 1_000;
const MERGE_THREAD = /^MergeMutate/;

/** This process's thread ids (Linux; none elsewhere or when /proc cannot be read). */
function threadIds(): string[] {
  if (process.platform !== 'linux') return [];
  try {
    return readdirSync('/proc/self/task');
  } catch {
    return [];
  }
}

/** Starts the merge threads' sweep (Linux only; elsewhere nothing); the function returned stops it. */
export function lowerMergePriority(): () => void {
  if (process.platform !== 'linux') return () => {};
  /** Threads already looked at: a thread's name and niceness do not change under us. */
  const seen = new Set<string>();
  const sweep = () => {
    const tids = threadIds();
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

/** Counts the low-priority statements running; when the last one ends, puts back the threads they left niced. */
export class LowPriorityThreads extends RunningCount {
  constructor(readonly nice: number) {
    super();
  }

  protected ended(): void {
    if (this.running === 0) restoreThreads(this.nice);
  }
}

/** Puts this process's threads at nice `nice` back to 0; returns how many it changed. */
export function restoreThreads(nice: number): number {
  let changed = 0;
  for (const tid of threadIds()) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      // Fields after the command name (which may hold spaces): state is the 3rd field, nice the 19th.
      const after = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(after[16]) !== nice) continue;
      setPriority(Number(tid), 0);
      changed++;
    } catch {
      // A thread that ended meanwhile, or no permission to raise it: nothing to put back.
    }
  }
  return changed;
}
