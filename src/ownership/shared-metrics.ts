import type { Counter, Histogram, Metrics, ReadSamples } from '../shared/metrics.ts';

export type ScopedMetrics = Metrics & {
  /** The figures read from this scope's component stop being read (it stopped: its work moved elsewhere). */
  close(): void;
};

/**
 * One metrics registry for components created again each time this instance takes their work
 * over (or created once per network): a family is registered once, counters and histograms are
 * shared, and what is read at scrape time is the samples of every live scope together.
 */
export function createSharedMetrics(metrics: Metrics): { scoped(): ScopedMetrics } {
  const counters = new Map<string, Counter<string>>();
  const histograms = new Map<string, Histogram<string>>();
  const readers = new Map<string, Set<ReadSamples<string>>>();

  const readerSet = (name: string, register: (read: ReadSamples<string>) => void) => {
    let set = readers.get(name);
    if (!set) {
      const live = new Set<ReadSamples<string>>();
      set = live;
      readers.set(name, live);
      register(async () => (await Promise.all([...live].map((read) => read()))).flat());
    }
    return set;
  };

  return {
    scoped() {
      const mine: [Set<ReadSamples<string>>, ReadSamples<string>][] = [];
      const add = (set: Set<ReadSamples<string>>, read: ReadSamples<string>) => {
        set.add(read);
        mine.push([set, read]);
      };
      const scope = {
        counter(spec) {
          let counter = counters.get(spec.name);
          if (!counter) {
            counter = metrics.counter(spec) as Counter<string>;
            counters.set(spec.name, counter);
          }
          return counter;
        },
        histogram(spec) {
          let histogram = histograms.get(spec.name);
          if (!histogram) {
            histogram = metrics.histogram(spec) as Histogram<string>;
            histograms.set(spec.name, histogram);
          }
          return histogram;
        },
        gauge(spec, read) {
          add(
            readerSet(spec.name, (all) => metrics.gauge(spec, all)),
            read as ReadSamples<string>,
          );
        },
        total(spec, read) {
          add(
            readerSet(spec.name, (all) => metrics.total(spec, all)),
            read as ReadSamples<string>,
          );
        },
        close() {
          for (const [set, read] of mine.splice(0)) set.delete(read);
        },
      } as ScopedMetrics;
      return scope;
    },
  };
}
