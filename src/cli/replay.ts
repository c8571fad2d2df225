import type { RecordedEvent } from '../event-store/event-store.ts';
import type { Projection } from '../projections/projection.ts';
import type { ReadStore } from '../read-store/read-store.ts';

/** What `weir replay` did: its summary on stderr, and with `--json` on stdout. */
export type ReplayReport = {
  events: number;
  /** Streams replayed: those whose first event the log holds. */
  streams: number;
  /** The log position the rebuilt read models are at (null: an empty log). */
  position: string | null;
  seconds: number;
  eventsPerSecond: number;
  readStore: string;
  /** Events replayed per type. */
  types: Record<string, number>;
  /** Documents rebuilt per read-model collection (those left empty too). */
  collections: Record<string, number>;
};

/**
 * A projection that writes nothing and counts what the replay passes it: events per type, and
 * streams by their first event (a set of every stream id would grow with the log).
 */
export function replayTally(): { projection: Projection; streams(): number; types(): Record<string, number> } {
  const types = new Map<string, number>();
  let streams = 0;
  return {
    projection: {
      name: 'replay tally',
      collections: [],
      async apply(event: RecordedEvent) {
        types.set(event.type, (types.get(event.type) ?? 0) + 1);
        if (event.revision === 0) streams += 1;
      },
    },
    streams: () => streams,
    types: () => Object.fromEntries(types),
  };
}

/** How many documents each of `collections` holds once rebuilt. */
export async function documentCounts(readStore: ReadStore, collections: readonly string[]) {
  const counts: Record<string, number> = {};
  for (const name of [...new Set(collections)].sort()) counts[name] = await readStore.collection(name).count({});
  return counts;
}

const counted = (n: number, noun: string): string => `${n.toLocaleString('en-US')} ${noun}${n === 1 ? '' : 's'}`;

/** `name  count` rows, names left and counts right aligned, most first (then by name); empty ones left out. */
function table(counts: Record<string, number>): string[] {
  const rows = Object.entries(counts)
    .filter(([, n]) => n > 0)
    .sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1));
  const nameWidth = Math.max(0, ...rows.map(([name]) => name.length));
  const countWidth = Math.max(0, ...rows.map(([, n]) => n.toLocaleString('en-US').length));
  return rows.map(([name, n]) => `  ${name.padEnd(nameWidth)}  ${n.toLocaleString('en-US').padStart(countWidth)}`);
}

/** The summary a person reads, in `weir audit verify`'s manner: what was replayed, what it rebuilt, where. */
export function replaySummaryOf(report: ReplayReport): string {
  const documents = Object.values(report.collections).reduce((sum, n) => sum + n, 0);
  const filled = Object.values(report.collections).filter((n) => n > 0).length;
  return [
    report.events === 0
      ? 'log: no events'
      : `log: ${counted(report.events, 'event')} in ${counted(report.streams, 'stream')}, through position ${report.position}`,
    ...(report.events === 0 ? [] : ['events by type:', ...table(report.types)]),
    `read models: ${counted(documents, 'document')} in ${filled} of ${counted(Object.keys(report.collections).length, 'collection')}`,
    ...table(report.collections),
    `read store: ${report.readStore}`,
    `OK: rebuilt in ${report.seconds.toFixed(1)} s (${report.eventsPerSecond.toLocaleString('en-US')} events/s)`,
  ].join('\n');
}
