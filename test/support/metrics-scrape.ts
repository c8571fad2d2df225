/** One scrape of `GET /metrics`, parsed. */
export type Scrape = {
  /** The families declared (`# TYPE` lines), with their type. */
  families: Map<string, string>;
  /**
   * The sum of the samples named `name` whose labels include `labels` (0 when none does): a
   * family's total, or one series.
   */
  value(name: string, labels?: Record<string, string>): number;
};

type Sample = { name: string; labels: Record<string, string>; value: number };

const SAMPLE = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)$/;
const LABEL = /(\w+)="((?:[^"\\]|\\.)*)"/g;

/** Parses the Prometheus text format (what prom-client writes; no timestamps). */
export function parseMetrics(text: string): Scrape {
  const families = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) families.set(type[1]!, type[2]!);
    const sample = line.startsWith('#') ? null : SAMPLE.exec(line);
    if (!sample) continue;
    const labels = Object.fromEntries([...(sample[2] ?? '').matchAll(LABEL)].map((m) => [m[1]!, m[2]!]));
    samples.push({ name: sample[1]!, labels, value: Number(sample[3]) });
  }
  return {
    families,
    value: (name, labels = {}) =>
      samples
        .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
        .reduce((sum, s) => sum + s.value, 0),
  };
}

/** Scrapes `baseUrl`/metrics (with the operator's token when given); throws unless it answers 200. */
export async function scrapeMetrics(baseUrl: string, token?: string): Promise<Scrape> {
  const response = await fetch(`${baseUrl}/metrics`, {
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`GET /metrics answered ${response.status}: ${text}`);
  return parseMetrics(text);
}
