import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeyPairSigner, type Address } from '@solana/kit';
import { startWeir, type Weir, type WeirOverrides } from '../../src/app/start-weir.ts';
import { SOLANA_LOCALNET_CHAIN_ID } from '../../src/chain-ingest/solana/networks.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { openChainShop, type ChainSession } from './chain-shop.ts';
import { startNatsServer } from './nats-server.ts';
import { startTestSolana } from './solana-devnet.ts';
import { startWebhookReceiver } from './webhook-receiver.ts';
import { ADMIN_TOKEN } from './weir-harness.ts';

export type SolanaSession = ChainSession;

/** Cleanups run in reverse when the world is torn down (one world serves a whole test file). */
export function teardowns() {
  const steps: (() => unknown)[] = [];
  return {
    teardown: (fn: () => unknown) => void steps.push(fn),
    async run() {
      for (const step of steps.reverse()) await step();
    },
  };
}

/**
 * The local Solana (litesvm behind JSON-RPC), NATS, a webhook receiver and a Weir offering the local
 * Solana only (no EVM devnet, no test rail), with a shop whose wallet there is a fresh key. `restart`
 * stops Weir and starts it again on the same data dir, NATS and chain.
 */
export async function startSolanaWeir(overrides: WeirOverrides = {}) {
  const cleanup = teardowns();
  const chain = await startTestSolana(cleanup);
  const nats = await startNatsServer();
  cleanup.teardown(() => nats.stop());
  const receiver = await startWebhookReceiver();
  cleanup.teardown(() => receiver.close());
  const dataDir = await mkdtemp(join(tmpdir(), 'weir-solana-'));
  const solanaLocal = { rpcUrl: chain.server.rpcUrl, wsUrl: chain.server.wsUrl, mints: chain.server.ledger.mints };
  const start = (port = 0, more: WeirOverrides = {}) =>
    startWeir(
      { port, host: '127.0.0.1', dataDir, adminToken: ADMIN_TOKEN, chainEnv: {}, natsUrl: nats.url },
      { logger: silentLogger(), solanaLocal, solanaPollIntervalMs: 50, ...overrides, ...more },
    );
  let weir: Weir = await start();
  cleanup.teardown(async () => {
    await weir.stop();
    await rm(dataDir, { recursive: true, force: true });
  });
  const merchant = (await generateKeyPairSigner()).address;
  const shop = await openChainShop<SolanaSession>({
    url: () => weir.url,
    name: 'Solana Shop',
    chainId: SOLANA_LOCALNET_CHAIN_ID,
    merchant,
    receiverUrl: receiver.url,
    untilTimeoutMs: 20_000,
  });
  const { api, session, get, until } = shop;
  /**
   * For a payment just sent to session `id`: waits until the session shows `seen` transactions (the
   * payment read at confirmed), lets the cluster finalize, then waits until `settled` holds.
   */
  const seenThenFinalized = async (
    id: string,
    settled: (s: SolanaSession) => boolean,
    what: string,
    seen = 1,
  ): Promise<SolanaSession> => {
    await until(id, (x) => x.paymentIntent.transactions.length === seen, `${what}: the payment seen at confirmed`);
    chain.server.ledger.finalize();
    return until(id, settled, what);
  };
  /** The session's reference (its payment address) for `currency`. */
  const referenceOf = (s: SolanaSession, currency: string) =>
    s.addresses.find((a) => a.asset.currency === currency)!.paymentAddress as Address;

  return {
    chain,
    nats,
    receiver,
    merchant,
    organizationId: shop.organizationId,
    endpointSecret: shop.endpointSecret,
    get weir() {
      return weir;
    },
    api,
    session,
    get,
    until,
    seenThenFinalized,
    referenceOf,
    async restart(stopped?: () => Promise<void>) {
      const port = weir.port;
      await weir.stop();
      await stopped?.();
      weir = await start(port);
    },
    teardown: () => cleanup.run(),
  };
}
