import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import test, { type ExecutionContext } from 'ava';
import Koa from 'koa';
import type { DevnetInfo } from '../../chain-ingest/evm/devnet/devnet-info.ts';
import { devnetAccountFixture, devnetInfoFixture } from '../../chain-ingest/evm/devnet/devnet-info.fixture.ts';
import { startTestLocalTron } from '../../../test/support/tron-devnet.ts';
import type { ApiState } from '../api-context.ts';
import { errorMiddleware, jsonBodyMiddleware } from '../middleware.ts';
import type { Rail } from '../../chain-ingest/rail.ts';
import { SOLANA_LOCALNET_CHAIN_ID } from '../../chain-ingest/solana/networks.ts';
import { TEST_NETWORK } from '../../chain-ingest/test-rail.ts';
import { evmToTron } from '../../chain-ingest/tron/address.ts';
import { type FaucetDevnets, faucetRoutes, localSolanaOffer } from './faucet.ts';

/** A devnet whose node is gone: nothing listens on port 1. */
const GONE: DevnetInfo = devnetInfoFixture([devnetAccountFixture(0, 'deployer')]);

/** The faucet route on a server of its own, called with a test key's tenant; one devnet serves both chains unless told. */
async function faucet(t: ExecutionContext, devnet: DevnetInfo | FaucetDevnets) {
  const app = new Koa<ApiState>();
  app.silent = true;
  app.use(errorMiddleware());
  app.use(jsonBodyMiddleware());
  app.use(async (ctx, next) => {
    ctx.state.tenant = { organizationId: 'org_1', environment: 'test', keyId: 'key_1', actor: 'api_key:key_1' };
    await next();
  });
  app.use(faucetRoutes('rpcUrl' in devnet ? { devnet, tronDevnet: devnet } : devnet).routes());
  const server = createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/faucet`;
  return async (body: unknown) => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
}

test('a faucet whose chain is down answers 502 faucet_failed naming the node, not a 500', async (t) => {
  const fund = await faucet(t, GONE);
  for (const address of ['0x52908400098527886E0F7030069857D2E4169EE7', 'TJRabPrwbZy45sbavfcjinPJC18kjpRTv8']) {
    const answer = await fund({ address });
    t.is(answer.status, 502, JSON.stringify(answer.body));
    t.is(answer.body['code'], 'faucet_failed');
    t.regex(String(answer.body['message']), /127\.0\.0\.1:1/);
  }
});

test('a bad faucet request is still a 400 before the chain is asked', async (t) => {
  const fund = await faucet(t, GONE);
  const answer = await fund({ address: '0x52908400098527886E0F7030069857D2E4169EE7', asset: 'trx' });
  t.is(answer.status, 400);
  t.regex(String(answer.body['message']), /asset/);
});

test('the faucet answers a Tron transfer with its bare 64-hex txID, as Tron tools show it, and an EVM one with its 0x hash', async (t) => {
  const { devnet, payer } = await startTestLocalTron(t);
  // The local Tron's anvil serves both legs here: the answer's form follows the address given.
  const fund = await faucet(t, devnet);
  const tron = await fund({ address: payer(0).address, asset: 'trx', amount: '100000000' });
  t.is(tron.status, 200, JSON.stringify(tron.body));
  t.regex(String(tron.body['transactionHash']), /^[0-9a-f]{64}$/);
  const evm = await fund({ address: '0x52908400098527886E0F7030069857D2E4169EE7', asset: 'eth', amount: '100000000' });
  t.is(evm.status, 200, JSON.stringify(evm.body));
  t.regex(String(evm.body['transactionHash']), /^0x[0-9a-f]{64}$/);
});

test("the coin sent to a contract that takes none is a 400 naming the address and the coin, not a 502 asking whether the devnet still runs (it said 'eth' for TRX too)", async (t) => {
  const { devnet } = await startTestLocalTron(t);
  const fund = await faucet(t, devnet);
  // The test USDT contract has no payable receive: the transfer reverts whichever chain's address names it.
  for (const [address, asset] of [
    [devnet.contracts.usdt, 'eth'],
    [evmToTron(devnet.contracts.usdt), 'trx'],
  ] as const) {
    const answer = await fund({ address, asset, amount: '100000000' });
    t.is(answer.status, 400, JSON.stringify(answer.body));
    t.is(answer.body['code'], 'parameter_invalid');
    t.is(
      answer.body['message'],
      `address: ${address} is a contract that takes no ${asset.toUpperCase()} (it reverted the transfer): fund an account, or ask for a token`,
    );
  }
});

test('a server with no faucet chain answers 400 faucet_unavailable telling the operator both forms of WEIR_LOCAL_CHAIN that give one', async (t) => {
  const fund = await faucet(t, { devnet: null, tronDevnet: null });
  const answer = await fund({ address: '0x52908400098527886E0F7030069857D2E4169EE7' });
  t.is(answer.status, 400, JSON.stringify(answer.body));
  t.is(answer.body['code'], 'faucet_unavailable');
  t.is(
    answer.body['message'],
    'no faucet on this server: it runs neither the local chain nor the local Tron; start Weir with its local chains (WEIR_LOCAL_CHAIN=on, the default, or a list naming evm or tron, such as evm,solana) or with --devnet FILE',
  );
});

test('a server offering the local Solana alone (WEIR_LOCAL_CHAIN=solana) is told the faucet does not give there, how a Solana wallet is funded, and what to start', async (t) => {
  const fund = await faucet(t, { devnet: null, tronDevnet: null, localSolana: { beside: [] } });
  for (const address of ['0x52908400098527886E0F7030069857D2E4169EE7', 'TJRabPrwbZy45sbavfcjinPJC18kjpRTv8']) {
    const answer = await fund({ address });
    t.is(answer.status, 400, JSON.stringify(answer.body));
    t.is(answer.body['code'], 'faucet_unavailable');
    t.is(
      answer.body['message'],
      "no faucet on this server: it offers only the local Solana, and the faucet gives on the local chain and the local Tron, neither of which runs (a Solana wallet is funded through the local Solana's RPC, logged at start: requestAirdrop for SOL, weir_mintTo for test USDC and USDT); start Weir with its local chains (WEIR_LOCAL_CHAIN=on, the default, or a list naming evm or tron, such as evm,solana) or with --devnet FILE",
    );
  }
});

test('a server offering the local Solana beside a public testnet (WEIR_LOCAL_CHAIN=solana with WEIR_RPC_84532) is not told it offers only the local Solana', async (t) => {
  // Only their chain ids and names are read.
  const localSolana = { ...TEST_NETWORK, chainId: SOLANA_LOCALNET_CHAIN_ID, name: 'Local Solana' };
  const baseSepolia = { ...TEST_NETWORK, chainId: 84_532, name: 'Base Sepolia' };
  const railOf = (networks: Rail['networks']): Pick<Rail, 'networks'> => ({ networks });
  t.deepEqual(localSolanaOffer(railOf(() => [localSolana])), { beside: [] });
  t.is(localSolanaOffer(railOf(() => [baseSepolia])), null, 'no local Solana');
  const offer = localSolanaOffer(railOf((environment) => (environment === 'test' ? [localSolana, baseSepolia] : [])));
  t.deepEqual(offer, { beside: ['Base Sepolia'] });
  const fund = await faucet(t, { devnet: null, tronDevnet: null, localSolana: offer });
  const answer = await fund({ address: '0x52908400098527886E0F7030069857D2E4169EE7' });
  t.is(answer.status, 400, JSON.stringify(answer.body));
  t.is(answer.body['code'], 'faucet_unavailable');
  t.regex(
    String(answer.body['message']),
    /^no faucet on this server: it offers the local Solana \(beside Base Sepolia\), and the faucet gives on the local chain and the local Tron, neither of which runs \(a Solana wallet is funded/,
  );
  t.notRegex(String(answer.body['message']), /only/);
});
