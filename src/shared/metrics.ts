/**
 * The metrics port. Components declare their instruments through it at creation and never import a
 * metrics library: the composition root passes the Prometheus registry (src/app/prometheus-metrics.ts),
 * and everything else (unit tests above all) gets `noMetrics`, which records nothing.
 */

/** A sample's labels: one value per label name. */
export type Labels<L extends string> = Readonly<Record<L, string>>;

export type MetricSpec<L extends string> = {
  /** `weir_…`, Prometheus style: snake case, base units, `_total` for counters. */
  name: string;
  help: string;
  labelNames?: readonly L[];
};

/** A value read when the metrics are scraped. */
export type Sample<L extends string> = { labels: Labels<L>; value: number };

/** What a component reads out of itself at scrape time (its status, a store count). */
export type ReadSamples<L extends string> = () => Sample<L>[] | Promise<Sample<L>[]>;

export type Counter<L extends string> = { inc(labels: Labels<L>, by?: number): void };
export type Histogram<L extends string> = { observe(labels: Labels<L>, value: number): void };

export type Metrics = {
  /** A count this component adds to as things happen. */
  counter<L extends string = never>(spec: MetricSpec<L>): Counter<L>;
  /** A distribution (latencies, lateness) this component observes as things happen. */
  histogram<L extends string = never>(spec: MetricSpec<L> & { buckets: readonly number[] }): Histogram<L>;
  /** A level (a depth, a lag) read at scrape time: nothing is done on the component's own paths. */
  gauge<L extends string = never>(spec: MetricSpec<L>, read: ReadSamples<L>): void;
  /** A running total the component keeps itself (its own counters), read at scrape time. */
  total<L extends string = never>(spec: MetricSpec<L>, read: ReadSamples<L>): void;
};

const ignored = { inc: () => {}, observe: () => {} };

/** Records nothing: the default of every component, so only the composition root pays for metrics. */
export const noMetrics: Metrics = {
  counter: () => ignored,
  histogram: () => ignored,
  gauge: () => {},
  total: () => {},
};

/** Seconds from `fromMs` to `toMs` (never negative: clocks of two writers may disagree a little). */
export const secondsBetween = (fromMs: number, toMs: number): number => Math.max(0, toMs - fromMs) / 1000;
