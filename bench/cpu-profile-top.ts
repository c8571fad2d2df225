/**
 * Summarize a V8 CPU profile (from `node --cpu-prof`): the functions and files with the most
 * self time, and the functions with the most total (inclusive) time.
 *
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx bench/replay-measure.ts DIR/events.sqlite3 --skip-read-all
 *   node --import tsx bench/cpu-profile-top.ts /tmp/prof/CPU.*.cpuprofile [--top 25] [--match substring]
 *
 * With several files, the busiest one is used (the main thread; tsx's loader thread writes a
 * second profile that is almost all idle). `--match` keeps only frames whose URL contains the text.
 */
import { readFile } from 'node:fs/promises';

type CallFrame = { functionName: string; url: string; lineNumber: number; columnNumber: number };
type ProfileNode = { id: number; callFrame: CallFrame; hitCount?: number; children?: number[] };
type CpuProfile = { nodes: ProfileNode[]; startTime: number; endTime: number; samples: number[]; timeDeltas: number[] };

const isCpuProfile = (value: unknown): value is CpuProfile =>
  typeof value === 'object' &&
  value !== null &&
  Array.isArray((value as CpuProfile).nodes) &&
  Array.isArray((value as CpuProfile).samples);

const shortUrl = (url: string): string => {
  if (url === '') return '(native)';
  const path = url.replace(/^file:\/\//, '');
  const modules = path.lastIndexOf('/node_modules/');
  if (modules >= 0) return path.slice(modules + '/node_modules/'.length);
  const cwd = `${process.cwd()}/`;
  return path.startsWith(cwd) ? path.slice(cwd.length) : path;
};

const frameLabel = (frame: CallFrame): string =>
  `${frame.functionName || '(anonymous)'}  ${shortUrl(frame.url)}:${frame.lineNumber + 1}`;

async function main(argv: string[]): Promise<void> {
  const option = (name: string): string | undefined => {
    const index = argv.indexOf(name);
    return index >= 0 ? argv[index + 1] : undefined;
  };
  const top = Number(option('--top') ?? 25);
  const match = option('--match');
  const files = argv.filter((arg, i) => !arg.startsWith('--') && !(i > 0 && argv[i - 1]!.startsWith('--')));
  if (files.length === 0) throw new Error('usage: cpu-profile-top.ts FILE.cpuprofile... [--top N] [--match TEXT]');

  /** Samples that are not (idle). */
  const busySamples = (candidate: CpuProfile): number => {
    const idle = new Set(
      candidate.nodes.filter((node) => node.callFrame.functionName === '(idle)').map((node) => node.id),
    );
    return candidate.samples.filter((id) => !idle.has(id)).length;
  };
  let profile: CpuProfile | null = null;
  for (const file of files) {
    const parsed: unknown = JSON.parse(await readFile(file, 'utf8'));
    if (!isCpuProfile(parsed)) throw new Error(`${file} is not a V8 CPU profile`);
    if (profile === null || busySamples(parsed) > busySamples(profile)) profile = parsed;
  }
  if (profile === null) return;

  // Self time of each node: the sum of the time deltas of its samples.
  const selfUs = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  const totalUs = [...selfUs.values()].reduce((a, b) => a + b, 0);

  const selfByFunction = new Map<string, number>();
  const selfByFile = new Map<string, number>();
  const inclusiveByFunction = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const node = byId.get(id)!;
    const label = frameLabel(node.callFrame);
    if (!match || node.callFrame.url.includes(match)) {
      selfByFunction.set(label, (selfByFunction.get(label) ?? 0) + us);
      const file = shortUrl(node.callFrame.url) || node.callFrame.functionName;
      selfByFile.set(file, (selfByFile.get(file) ?? 0) + us);
    }
    // Inclusive: every distinct function on the sample's stack gets the sample once.
    const seen = new Set<string>();
    for (let current: number | undefined = id; current !== undefined; current = parentOf.get(current)) {
      const frame = byId.get(current)!.callFrame;
      const key = frameLabel(frame);
      if (seen.has(key) || (match && !frame.url.includes(match))) continue;
      seen.add(key);
      inclusiveByFunction.set(key, (inclusiveByFunction.get(key) ?? 0) + us);
    }
  }

  const print = (title: string, entries: Map<string, number>) => {
    console.log(`\n${title}`);
    console.log('   ms      %  function / file');
    for (const [label, us] of [...entries].sort((a, b) => b[1] - a[1]).slice(0, top)) {
      console.log(`${(us / 1000).toFixed(0).padStart(5)}  ${((us / totalUs) * 100).toFixed(1).padStart(5)}  ${label}`);
    }
  };
  console.log(`profile: ${(totalUs / 1000).toFixed(0)} ms sampled in ${profile.samples.length} samples`);
  print('Top self time by function', selfByFunction);
  print('Self time by file', selfByFile);
  print('Top total (inclusive) time by function', inclusiveByFunction);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
