// The embedded engine lowers the OS priority of the threads that run a low-priority statement
// (`os_thread_priority`), but puts back only the threads it detaches from the query: a few of its
// pool threads stay niced after the statement ends, and later run anyone's queries, an analyst's
// search included. So once no low-priority statement runs in the process any more, the threads
// still at that nice value are put back to 0. Linux only, and only where the engine could lower
// them in the first place (CAP_SYS_NICE, which raising them back needs too); elsewhere nothing is
// niced and this finds nothing.
import { readdirSync, readFileSync } from 'node:fs';
import { setPriority } from 'node:os';

export class LowPriorityThreads {
  private running = 0;

  constructor(readonly nice: number) {}

  /** A low-priority statement starts; the function returned says it ended. */
  begin(): () => void {
    this.running++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      if (--this.running === 0) restoreThreads(this.nice);
    };
  }
}

/** Puts this process's threads at nice `nice` back to 0; returns how many it changed. */
export function restoreThreads(nice: number): number {
  if (process.platform !== 'linux') return 0;
  let tasks: string[];
  try {
    tasks = readdirSync('/proc/self/task');
  } catch {
    return 0;
  }
  let changed = 0;
  for (const tid of tasks) {
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
