import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Labels, Metrics, ReadSamples } from '../shared/metrics.ts';

/** The metrics port over a prom-client registry of its own, and its text for `GET /metrics`. */
export type PrometheusMetrics = Metrics & {
  /** Every family in the Prometheus text format (this Weir's, then the process's). */
  scrape(): Promise<string>;
  contentType: string;
};

/**
 * The process's own figures (CPU, memory, event-loop delay, GC) describe the process, not one Weir
 * in it: one registry per process, made on first use (tests start several Weirs in one process).
 */
let processRegistry: Registry | null = null;
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

/**
 * One registry per Weir (never prom-client's global one), so two Weirs in one process keep their
 * figures apart. Values read at scrape time that fail to read (a store down) leave their family
 * empty for that scrape and count in `weir_metric_read_failures_total` (seen from the next scrape:
 * families are read side by side), so one bad read never fails the whole scrape.
 */
export function createPrometheusMetrics(): PrometheusMetrics {
  const registry = new Registry();
  const registers = [registry];
  const readFailures = new Counter({
    name: 'weir_metric_read_failures_total',
    help: 'Values that could not be read at scrape time (their family is empty in that scrape), by family',
    labelNames: ['metric'],
    registers,
  });

  /** Resets `metric`, then sets each sample `read` answers (`add` for counters, `set` for gauges). */
  const fill =
    <L extends string>(name: string, read: ReadSamples<L>) =>
    async (
      metric: { reset(): void; remove(labels: Partial<Record<L, string>>): void },
      put: (labels: Record<L, string>, value: number) => void,
    ) => {
      try {
        const samples = await read();
        metric.reset();
        for (const sample of samples) put(sample.labels, sample.value);
      } catch {
        // reset() leaves a family without labels at 0, which would read as "no lag": no sample at all.
        metric.reset();
        metric.remove({});
        readFailures.inc({ metric: name });
      }
    };

  return {
    counter(spec) {
      // Counted in a map of its own and handed to prom-client at scrape time: a count costs a Map
      // lookup (prom-client checks and hashes the labels on every inc, several times the cost).
      const names = spec.labelNames ?? [];
      const series = new Map<string, { labels: Labels<(typeof names)[number]>; value: number }>();
      const keyOf =
        names.length === 1
          ? (labels: Labels<(typeof names)[number]>) => labels[names[0]!]!
          : (labels: Labels<(typeof names)[number]>) => names.map((name) => labels[name]).join('\u0000');
      new Counter({
        ...spec,
        labelNames: names,
        registers,
        collect() {
          this.reset();
          for (const { labels, value } of series.values()) this.inc(labels, value);
        },
      });
      return {
        inc(labels, by = 1) {
          const key = keyOf(labels);
          const known = series.get(key);
          if (known) known.value += by;
          else series.set(key, { labels: { ...labels }, value: by });
        },
      };
    },
    histogram(spec) {
      const histogram = new Histogram({
        ...spec,
        buckets: [...spec.buckets],
        labelNames: spec.labelNames ?? [],
        registers,
      });
      return { observe: (labels, value) => histogram.observe(labels, value) };
    },
    gauge(spec, read) {
      const refill = fill(spec.name, read);
      new Gauge({
        ...spec,
        labelNames: spec.labelNames ?? [],
        registers,
        collect() {
          return refill(this, (labels, value) => this.set(labels, value));
        },
      });
    },
    total(spec, read) {
      const refill = fill(spec.name, read);
      new Counter({
        ...spec,
        labelNames: spec.labelNames ?? [],
        registers,
        collect() {
          return refill(this, (labels, value) => this.inc(labels, value));
        },
      });
    },
    async scrape() {
      return (await registry.metrics()) + (await processMetrics().metrics());
    },
    contentType: registry.contentType,
  };
}
