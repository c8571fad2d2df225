import test from 'ava';
import { parseMetrics } from '../../test/support/metrics-scrape.ts';
import { createPrometheusMetrics } from './prometheus-metrics.ts';

test('counters and histograms count as things happen; gauges and totals are read when scraped', async (t) => {
  const metrics = createPrometheusMetrics();
  const sent = metrics.counter({ name: 'weir_test_sent_total', help: 'sent', labelNames: ['to'] });
  const took = metrics.histogram({ name: 'weir_test_seconds', help: 'took', buckets: [0.1, 1] });
  let depth = 3;
  let kept = 7;
  metrics.gauge({ name: 'weir_test_depth', help: 'depth', labelNames: ['queue'] }, () => [
    { labels: { queue: 'a' }, value: depth },
  ]);
  metrics.total({ name: 'weir_test_kept_total', help: 'kept' }, async () => [{ labels: {}, value: kept }]);
  sent.inc({ to: 'x' });
  sent.inc({ to: 'x' }, 2);
  took.observe({}, 0.5);

  const first = parseMetrics(await metrics.scrape());
  t.is(first.value('weir_test_sent_total', { to: 'x' }), 3);
  t.is(first.value('weir_test_seconds_bucket', { le: '0.1' }), 0);
  t.is(first.value('weir_test_seconds_bucket', { le: '1' }), 1);
  t.is(first.value('weir_test_depth', { queue: 'a' }), 3);
  t.is(first.value('weir_test_kept_total'), 7);
  t.is(first.families.get('weir_test_kept_total'), 'counter');
  depth = 0;
  kept = 9;
  const second = parseMetrics(await metrics.scrape());
  t.is(second.value('weir_test_depth', { queue: 'a' }), 0);
  t.is(second.value('weir_test_kept_total'), 9, 'the total is what the component keeps, not added up per scrape');
});

test('a value that cannot be read leaves its family empty in that scrape and is counted; the rest is scraped', async (t) => {
  const metrics = createPrometheusMetrics();
  let down = true;
  metrics.gauge({ name: 'weir_test_lag', help: 'lag' }, async () => {
    if (down) throw new Error('the store does not answer');
    return [{ labels: {}, value: 5 }];
  });
  metrics.gauge({ name: 'weir_test_other', help: 'other' }, () => [{ labels: {}, value: 1 }]);
  const text = await metrics.scrape();
  const failed = parseMetrics(text);
  t.true(failed.families.has('weir_test_lag'));
  t.false(/^weir_test_lag /m.test(text), 'no sample (not a 0, which would read as no lag)');
  t.is(failed.value('weir_test_other'), 1);
  // Families are read side by side: the failure shows from the next scrape on.
  const again = parseMetrics(await metrics.scrape());
  t.is(again.value('weir_metric_read_failures_total', { metric: 'weir_test_lag' }), 1);
  down = false;
  t.is(parseMetrics(await metrics.scrape()).value('weir_test_lag'), 5);
});

test('two registries in one process keep their figures apart (tests start several Weirs), the process figures in both', async (t) => {
  const one = createPrometheusMetrics();
  const two = createPrometheusMetrics();
  one.counter({ name: 'weir_test_total', help: 'n' }).inc({});
  two.counter({ name: 'weir_test_total', help: 'n' });
  const [first, second] = [parseMetrics(await one.scrape()), parseMetrics(await two.scrape())];
  t.is(first.value('weir_test_total'), 1);
  t.is(second.value('weir_test_total'), 0);
  t.true(first.families.has('process_resident_memory_bytes'));
  t.true(second.families.has('process_resident_memory_bytes'));
});
