/**
 * Shared bits of the EVM benchmarks: machine and load description, percentiles, Markdown tables,
 * a deadline that ends the process if a run hangs, and the check that no hardhat node is left.
 */
import { execFileSync } from 'node:child_process';
import { cpus, loadavg, totalmem } from 'node:os';

export type MachineInfo = { cpus: number; cpuModel: string; memoryGiB: number; node: string };

export function machineInfo(): MachineInfo {
  return {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    memoryGiB: +(totalmem() / 2 ** 30).toFixed(1),
    node: process.version,
  };
}

export const loadAverage1m = (): number => +loadavg()[0]!.toFixed(2);

/** `uptime` and the busiest other processes (above `minCpuPercent`), so a report can say what shared the machine. */
export function machineLoad(minCpuPercent = 10): { uptime: string; loadAverage: number[]; busyProcesses: string[] } {
  let uptime = '';
  let busyProcesses: string[] = [];
  try {
    uptime = execFileSync('uptime', [], { encoding: 'utf8' }).trim();
  } catch {
    uptime = `loadavg ${loadavg()
      .map((value) => value.toFixed(2))
      .join(' ')}`;
  }
  try {
    const lines = execFileSync('ps', ['-eo', 'pid,pcpu,etime,args', '--sort=-pcpu', '--no-headers'], {
      encoding: 'utf8',
    }).split('\n');
    busyProcesses = lines
      .map((line) => line.trim())
      .filter((line) => line !== '')
      .filter(
        (line) =>
          Number(line.split(/\s+/)[1]) >= minCpuPercent &&
          !line.startsWith(`${process.pid} `) &&
          !/\bps -eo\b/.test(line),
      )
      .map((line) => line.slice(0, 160));
  } catch {
    busyProcesses = [];
  }
  return { uptime, loadAverage: loadavg().map((value) => +value.toFixed(2)), busyProcesses };
}

/** Nearest-rank percentile of already sorted values. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export type Distribution = { n: number; p50: number; p90: number; p99: number; max: number; min: number; mean: number };

export function distribution(values: readonly number[], digits = 1): Distribution {
  const sorted = [...values].sort((a, b) => a - b);
  const round = (value: number): number => +value.toFixed(digits);
  const mean = sorted.length === 0 ? Number.NaN : sorted.reduce((sum, value) => sum + value, 0) / sorted.length;
  return {
    n: sorted.length,
    p50: round(percentile(sorted, 50)),
    p90: round(percentile(sorted, 90)),
    p99: round(percentile(sorted, 99)),
    max: round(sorted.at(-1) ?? Number.NaN),
    min: round(sorted[0] ?? Number.NaN),
    mean: round(mean),
  };
}

export function markdownTable(
  header: readonly string[],
  rows: readonly (readonly (string | number)[])[],
  alignRight: readonly boolean[] = [],
): string {
  const line = (cells: readonly (string | number)[]): string => `| ${cells.map(String).join(' | ')} |`;
  const rule = `|${header.map((_, index) => (alignRight[index] ? '---:' : '---')).join('|')}|`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}

export const fmt = (value: number, digits = 0): string =>
  value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

/** Ends the process (after `cleanUp`, given a few seconds) if the run is not done by then. */
export function deadline(ms: number, what: string, cleanUp: () => Promise<void>): { clear(): void } {
  const timer = setTimeout(() => {
    console.error(`[bench] ${what}: still running after ${Math.round(ms / 1000)} s; stopping`);
    const forced = setTimeout(() => process.exit(3), 15_000);
    forced.unref();
    void cleanUp().finally(() => process.exit(2));
  }, ms);
  timer.unref();
  return { clear: () => clearTimeout(timer) };
}

/** Hardhat processes still running that this process started (its children), as `pid args` lines. */
export function leftoverHardhatChildren(): string[] {
  try {
    const lines = execFileSync('ps', ['-eo', 'pid,ppid,args', '--no-headers'], { encoding: 'utf8' }).split('\n');
    return lines
      .map((line) => line.trim())
      .filter((line) => {
        const [, ppid] = line.split(/\s+/);
        return Number(ppid) === process.pid && /hardhat/.test(line);
      });
  } catch {
    return [];
  }
}

export function numberFlag(argv: readonly string[], name: string, fallback: number, min: number, max: number): number {
  const index = argv.indexOf(name);
  if (index < 0) return fallback;
  const raw = argv[index + 1];
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min || value > max)
    throw new Error(`${name} must be a number from ${min} to ${max}, got ${String(raw)}`);
  return value;
}

export function stringFlag(argv: readonly string[], name: string): string | undefined {
  const index = argv.indexOf(name);
  return index < 0 ? undefined : argv[index + 1];
}
