import test from 'ava';
import type { Metrics, ReadSamples } from '../shared/metrics.ts';
import { createSharedMetrics } from './shared-metrics.ts';

test('a family registered again by a component made anew is registered once, read from every live scope, and a closed scope is no longer read', async (t) => {
  const registered: string[] = [];
  const reads = new Map<string, ReadSamples<string>>();
  const base: Metrics = {
    counter: (spec) => {
      registered.push(spec.name);
      return { inc: () => {} };
    },
    histogram: (spec) => {
      registered.push(spec.name);
      return { observe: () => {} };
    },
    gauge: (spec, read) => {
      registered.push(spec.name);
      reads.set(spec.name, read as ReadSamples<string>);
    },
    total: (spec, read) => {
      registered.push(spec.name);
      reads.set(spec.name, read as ReadSamples<string>);
    },
  };
  const shared = createSharedMetrics(base);
  const first = shared.scoped();
  const second = shared.scoped();
  for (const scope of [first, second]) {
    scope.counter({ name: 'weir_sweeps_total', help: 'h' });
    scope.histogram({ name: 'weir_lateness_seconds', help: 'h', buckets: [1] });
  }
  first.gauge({ name: 'weir_sweeps_pending', help: 'h', labelNames: ['network'] }, () => [
    { labels: { network: 'a' }, value: 1 },
  ]);
  second.gauge({ name: 'weir_sweeps_pending', help: 'h', labelNames: ['network'] }, () => [
    { labels: { network: 'b' }, value: 2 },
  ]);
  t.deepEqual(registered, ['weir_sweeps_total', 'weir_lateness_seconds', 'weir_sweeps_pending']);
  t.deepEqual(await reads.get('weir_sweeps_pending')!(), [
    { labels: { network: 'a' }, value: 1 },
    { labels: { network: 'b' }, value: 2 },
  ]);
  first.close();
  t.deepEqual(await reads.get('weir_sweeps_pending')!(), [{ labels: { network: 'b' }, value: 2 }]);
});
