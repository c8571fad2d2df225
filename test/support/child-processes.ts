import { readdirSync, readFileSync } from 'node:fs';

/** A running process as /proc shows it: its command line tells it from a later process given the same pid. */
export type RunningProcess = { pid: number; commandLine: string };

function commandLineOf(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return null;
  }
}

/** Parent pid from /proc/PID/stat (its command name, in parentheses, may hold spaces: read after the last one). */
function parentOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return null;
  }
}

function allPids(): number[] {
  try {
    return readdirSync('/proc')
      .filter((name) => /^\d+$/.test(name))
      .map(Number);
  } catch {
    // No /proc (not Linux): nothing can be seen, so nothing is reported left behind.
    return [];
  }
}

/** Alive and still the same program (not a zombie, not a reused pid). */
export function stillRunning(process_: RunningProcess): boolean {
  try {
    const stat = readFileSync(`/proc/${process_.pid}/stat`, 'utf8');
    if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) return false;
  } catch {
    return false;
  }
  return commandLineOf(process_.pid) === process_.commandLine;
}

/**
 * Every process below `pid` now. Weir starts its anvils in process groups of their own, so a
 * SIGKILL of Weir leaves them running, re-parented: this is the moment to note who they are.
 */
export function descendantsOf(pid: number): RunningProcess[] {
  const children = new Map<number, number[]>();
  for (const each of allPids()) {
    const parent = parentOf(each);
    if (parent !== null) children.set(parent, [...(children.get(parent) ?? []), each]);
  }
  const found: RunningProcess[] = [];
  const visit = (parent: number) => {
    for (const child of children.get(parent) ?? []) {
      const commandLine = commandLineOf(child);
      if (commandLine !== null) found.push({ pid: child, commandLine });
      visit(child);
    }
  };
  visit(pid);
  return found;
}

/** Every process whose command line names `text` (a test's own data dir): what a test started and nobody stopped. */
export function processesNaming(text: string): RunningProcess[] {
  return allPids()
    .filter((pid) => pid !== process.pid)
    .map((pid) => ({ pid, commandLine: commandLineOf(pid) ?? '' }))
    .filter((each) => each.commandLine.includes(text) && stillRunning(each));
}

/**
 * SIGTERM to each that still runs (anvil writes its state and goes), SIGKILL to any left after
 * `graceMs`; resolves once none runs. Only the processes given, checked by command line.
 */
export async function stopProcesses(processes: RunningProcess[], graceMs = 10_000): Promise<void> {
  const signal = (each: RunningProcess, name: NodeJS.Signals) => {
    try {
      if (stillRunning(each)) process.kill(each.pid, name);
    } catch {
      // gone meanwhile
    }
  };
  for (const each of processes) signal(each, 'SIGTERM');
  const gone = () => processes.every((each) => !stillRunning(each));
  for (const started = Date.now(); !gone() && Date.now() - started < graceMs; )
    await new Promise((resolve) => setTimeout(resolve, 50));
  for (const each of processes) signal(each, 'SIGKILL');
  for (const started = Date.now(); !gone() && Date.now() - started < 5_000; )
    await new Promise((resolve) => setTimeout(resolve, 50));
}

/** One line per process, for a failure message. */
export const describe = (processes: RunningProcess[]) =>
  processes.map((each) => `  ${each.pid} ${each.commandLine}`).join('\n');
