import type { Clock } from '../../../shared/clock.ts';
import { secondsBetween, type Metrics, type Sample } from '../../../shared/metrics.ts';
import type { EvmFollower } from './evm-follower.ts';

type Followed = Pick<EvmFollower, 'status' | 'counters'>;

/**
 * The followers' figures, one series per network, read from their status and counters when
 * scraped: following costs nothing more. Registered once for all followers (a family is one per
 * registry).
 */
export function registerFollowerMetrics(metrics: Metrics, followers: readonly Followed[], clock: Pick<Clock, 'now'>) {
  const perNetwork =
    <L extends string>(read: (follower: Followed, network: string) => Sample<L | 'network'>[]) =>
    () =>
      followers.flatMap((follower) => read(follower, follower.status().network));
  const one = (network: string, value: number | bigint | null) =>
    value === null ? [] : [{ labels: { network }, value: Number(value) }];

  metrics.gauge(
    { name: 'weir_follower_head_block', help: 'The newest chain head the follower heard of', labelNames: ['network'] },
    perNetwork((follower, network) => one(network, follower.status().head)),
  );
  metrics.gauge(
    {
      name: 'weir_follower_processed_block',
      help: 'The last block whose transfers the follower has published',
      labelNames: ['network'],
    },
    perNetwork((follower, network) => one(network, follower.status().processed)),
  );
  metrics.gauge(
    {
      name: 'weir_follower_head_lag_blocks',
      help: 'Blocks between the chain head the follower heard of and the last it processed',
      labelNames: ['network'],
    },
    perNetwork((follower, network) => {
      const { head, processed } = follower.status();
      return head === null || processed === null ? [] : one(network, head > processed ? head - processed : 0n);
    }),
  );
  metrics.gauge(
    {
      name: 'weir_follower_head_lag_seconds',
      help: 'Seconds since the follower last stood at a chain head it had read (every transfer mined before then is published)',
      labelNames: ['network'],
    },
    perNetwork((follower, network) => {
      const { caughtUpAt } = follower.status();
      return caughtUpAt === null ? [] : one(network, secondsBetween(caughtUpAt, clock.now()));
    }),
  );
  metrics.total(
    {
      name: 'weir_follower_rpc_errors_total',
      help: 'RPC requests that failed, by network and kind: unreachable, timeout, rejected (a JSON-RPC error), websocket (a new-heads subscription failed or stalled)',
      labelNames: ['network', 'kind'],
    },
    perNetwork((follower, network) => {
      const { rpc, webSocket } = follower.counters();
      return [
        ...Object.entries(rpc.failures).map(([kind, value]) => ({ labels: { network, kind }, value })),
        { labels: { network, kind: 'websocket' }, value: webSocket.failures },
      ];
    }),
  );
  metrics.total(
    {
      name: 'weir_follower_rpc_requests_total',
      help: 'JSON-RPC requests the follower sent, by network and method (one retried on another endpoint counts twice)',
      labelNames: ['network', 'method'],
    },
    perNetwork((follower, network) =>
      Object.entries(follower.counters().rpc.calls).map(([method, value]) => ({ labels: { network, method }, value })),
    ),
  );
  metrics.total(
    {
      name: 'weir_follower_published_total',
      help: 'Chain messages the follower published, by network and type: transfer, reorg, final',
      labelNames: ['network', 'type'],
    },
    perNetwork((follower, network) =>
      Object.entries(follower.counters().published).map(([type, value]) => ({ labels: { network, type }, value })),
    ),
  );
}
