import test from 'ava';
import { generateKeyPairSigner, type Address } from '@solana/kit';
import { findAssociatedTokenPda } from '@solana-program/token';
import { TOKEN_PROGRAM_ADDRESS } from '../../src/chain-ingest/solana/define-network.ts';
import { localSolanaMints } from '../../src/chain-ingest/solana/devnet/local-ledger.ts';
import { SOLANA_LOCALNET_CHAIN_ID } from '../../src/chain-ingest/solana/networks.ts';
import { eventually } from '../support/api-client.ts';
import { findFreePort } from '../support/free-port.ts';
import { spawnWeirDevnet } from '../support/weir-process.ts';
import { createMerchant, startTestWeir } from '../support/weir-harness.ts';

const rpc = async (url: string, method: string, params: unknown[] = []) => {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return ((await response.json()) as { result: unknown }).result;
};

test('a Weir given WEIR_RPC_1399811148 offers that local Solana to test keys with its test USDC and USDT', async (t) => {
  const { startLocalSolanaCluster } = await import('../../src/chain-ingest/solana/devnet/local-cluster.ts');
  const cluster = await startLocalSolanaCluster({ finalizeEveryMs: 60_000 });
  t.teardown(() => cluster.stop());
  const weir = await startTestWeir(t, { chainEnv: { [`WEIR_RPC_${SOLANA_LOCALNET_CHAIN_ID}`]: cluster.rpcUrl } });
  const merchant = await createMerchant(weir.url);
  const chains = await merchant.api.get<{ data: { id: number; type: string; assets: { symbol: string }[] }[] }>(
    '/api/v1/chains',
  );
  const local = chains.body.data.find((c) => c.id === SOLANA_LOCALNET_CHAIN_ID);
  t.is(local?.type, 'solana');
  t.deepEqual(
    local?.assets.map((a) => a.symbol),
    ['SOL', 'USDC', 'USDT'],
  );
  const live = await merchant.live.get<{ data: { id: number }[] }>('/api/v1/chains');
  t.false(
    live.body.data.some((c) => c.id === SOLANA_LOCALNET_CHAIN_ID),
    'never to live keys',
  );
  // A token account (off the curve) given as the wallet is refused and named as such.
  const refused = await merchant.api.post<{ message: string }>('/api/v1/organization/withdrawal-addresses', {
    chainId: SOLANA_LOCALNET_CHAIN_ID,
    address: (
      await findAssociatedTokenPda({
        owner: (await generateKeyPairSigner()).address,
        mint: cluster.info.mints.usdc as Address,
        tokenProgram: TOKEN_PROGRAM_ADDRESS,
      })
    )[0],
    name: 'token account',
  });
  t.is(refused.status, 400);
  t.regex(refused.body.message, /off the ed25519 curve .*token account.*not a wallet/);
  t.deepEqual(cluster.info.mints, await localSolanaMints(), 'the fixed test mints, known without asking');
});

test('weir devnet runs a local Solana beside the EVM chain, with its test mints and faucet, until stopped', async (t) => {
  const [port, solanaPort] = [await findFreePort(), await findFreePort()];
  const devnet = spawnWeirDevnet(t, ['--port', String(port), '--solana-port', String(solanaPort)]);
  const url = `http://127.0.0.1:${solanaPort}`;
  await eventually(
    async () => (devnet.stderr().includes(`local Solana running on ${url}`) ? true : undefined),
    'the line',
    150_000,
  );
  t.is(await rpc(url, 'getHealth'), 'ok');
  const info = (await rpc(url, 'weir_info')) as { mints: { usdc: string; usdt: string } };
  t.deepEqual(info.mints, await localSolanaMints());
  t.true(devnet.stderr().includes(`WEIR_RPC_1399811148=${url}`));
  t.is(await devnet.stop(), 0, 'its anvils stopped with it');
});
