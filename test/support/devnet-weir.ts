import { dirname, join } from 'node:path';
import type { ExecutionContext } from 'ava';
import type { Address } from 'viem';
import type { WeirOverrides } from '../../src/app/start-weir.ts';
import { writeDevnetInfo } from '../../src/chain-ingest/evm/devnet/devnet-info.ts';
import { type JsonRpcCall, startRpcProxy } from '../../src/chain-ingest/evm/follower/follower-test-kit.ts';
import { apiClient } from './api-client.ts';
import { merchantWallet, startTestDevnet } from './evm-devnet.ts';
import { startNatsServer } from './nats-server.ts';
import { startWebhookReceiver } from './webhook-receiver.ts';
import { ADMIN_TOKEN, startTestWeir } from './weir-harness.ts';

const DEVNET_CHAIN_ID = 31337;

/**
 * A hardhat devnet, NATS (unless `embeddedBus`: the in-process bus in the data dir), a webhook receiver and a Weir offering the devnet (no test rail, no local chain), all
 * stopped at the end of the test. `confirmations` sets the devnet's depth; `overrides` go to
 * `startWeir` after the defaults (sweeps at once, followers polling every 50 ms). `restart` starts
 * Weir again on the same port, data dir, devnet and NATS (API clients and webhook endpoints go on working).
 * With `refuseRpc`, Weir reaches the devnet's HTTP JSON-RPC through a proxy that answers the calls it
 * picks with that JSON-RPC error (a node that fails on demand); payers still reach the devnet itself.
 */
export async function startDevnetWeir(
  t: ExecutionContext,
  options: {
    confirmations?: number;
    chainEnv?: Record<string, string>;
    overrides?: WeirOverrides;
    refuseRpc?: (call: JsonRpcCall) => { code: number; message: string } | undefined;
    /** The devnet's node: hardhat unless given; anvil serves call traces (`debug_traceTransaction` with the callTracer). */
    node?: 'hardhat' | 'anvil';
    /** No NATS: Weir runs on its embedded default, the in-process bus. */
    embeddedBus?: boolean;
  } = {},
) {
  const devnet = await startTestDevnet(t, { node: options.node });
  let devnetFile = devnet.file;
  if (options.refuseRpc) {
    const proxy = await startRpcProxy(devnet.info.rpcUrl, options.refuseRpc);
    t.teardown(() => proxy.close());
    devnetFile = join(dirname(devnet.file), 'devnet-through-proxy.json');
    await writeDevnetInfo(devnetFile, { ...devnet.info, rpcUrl: proxy.url });
  }
  const nats = options.embeddedBus ? null : await startNatsServer();
  if (nats) t.teardown(() => nats.stop());
  const receiver = await startWebhookReceiver();
  t.teardown(() => receiver.close());
  const config = {
    ...(nats ? { natsUrl: nats.url } : {}),
    testRail: false,
    devnetFile,
    chainEnv: {
      ...(options.confirmations ? { [`WEIR_CONFIRMATIONS_${DEVNET_CHAIN_ID}`]: String(options.confirmations) } : {}),
      ...options.chainEnv,
    },
  };
  const defaults: WeirOverrides = { sweepBatchDelayMs: 0, followerPollIntervalMs: 50, ...options.overrides };
  const weir = await startTestWeir(t, config, defaults);
  /** Stops the running Weir (`current`) and starts another on its port and data dir, with `overrides` over the first start's. */
  const restart = async (current: Awaited<ReturnType<typeof startTestWeir>>, overrides: WeirOverrides = {}) => {
    await current.stop();
    return startTestWeir(t, { ...config, dataDir: current.dataDir, port: current.port }, { ...defaults, ...overrides });
  };

  /** A new organization whose wallet on the devnet is `wallet` (the devnet's merchant account unless given): its test and live keys' APIs. */
  const organization = async (name: string, wallet: Address = merchantWallet(devnet.info)) => {
    const created = (
      await apiClient(weir.url, ADMIN_TOKEN).post<{ testSecretKey: string; liveSecretKey: string }>(
        '/admin/organizations',
        { name },
      )
    ).body;
    const api = apiClient(weir.url, created.testSecretKey);
    const added = await api.post('/api/v1/organization/withdrawal-addresses', {
      chainId: DEVNET_CHAIN_ID,
      address: wallet,
      name: 'treasury',
    });
    t.is(added.status, 200, JSON.stringify(added.body));
    return {
      api,
      live: apiClient(weir.url, created.liveSecretKey),
      testSecretKey: created.testSecretKey,
      liveSecretKey: created.liveSecretKey,
    };
  };
  return { devnet, nats, receiver, weir, organization, restart };
}
