import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { erc20Abi, getAddress, parseUnits } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { OPERATOR_KEY_FILE, operatorPublicKey } from '../../src/audit/operator-key.ts';
import { createEvmWriteClients } from '../../src/chain-ingest/evm/contracts/clients.ts';
import { parseDevnetInfo } from '../../src/chain-ingest/evm/devnet/devnet-info.ts';
import { createJsonRpc } from '../../src/chain-ingest/evm/devnet/json-rpc.ts';
import { eventually } from '../support/api-client.ts';
import { merchantWallet } from '../support/evm-devnet.ts';
import { codeBlocks, readmeSection, runBlock } from '../support/readme.ts';
import { createMerchant } from '../support/weir-harness.ts';
import { spawnWeir, WEIR_BIN } from '../support/weir-process.ts';

/**
 * The README's "Reconciling the bundle with the chain", followed as written: two sessions paid in
 * USDC on the local chain and swept (one paid twice, the second transfer found moved by the sweep of
 * the first), then its shell block run by bash (the checkpoint, the export, the offline verify, its
 * reconcile.mjs against the chain's JSON-RPC) with only the organization, the environment, the
 * operator's key, the RPC URL and the `weir` binary filled in. A bundle whose payment amount no
 * longer matches the chain, or whose sweep is said to move other than it did, is reported by the
 * same script, exit 1.
 */

/** A line of the bundle after its header: an event in full, or a withheld one (which has no `data`). */
type BundleLine = {
  position: string;
  withheld?: true;
  id: string;
  streamId: string;
  revision: number;
  type: string;
  data: string;
  metadata: string;
  previous: string;
  hash: string;
};
type Session = { id: string; status: string; addresses: { paymentAddress: string; asset: { currency: string } }[] };

test("the README's audit reconciliation on the local chain: every payment and sweep of the exported bundle matches the chain, a transfer found swept included; an amount edited in the bundle differs", async (t) => {
  t.timeout(360_000, 'a Weir with its local chain, two payments swept, then four commands in a row');
  const text = readmeSection('#### Reconciling the bundle with the chain');
  const [commands] = codeBlocks(text, 'sh');
  const [script] = codeBlocks(text, 'js');
  t.truthy(commands && script, 'the section has its shell block and its reconcile.mjs');
  t.is(commands!.match(/npx weir /g)?.length, 3, commands);

  const dataDir = await mkdtemp(join(tmpdir(), 'weir-audit-reconcile-'));
  const work = await mkdtemp(join(tmpdir(), 'weir-auditor-'));
  t.teardown(() => Promise.all([dataDir, work].map((d) => rm(d, { recursive: true, force: true }))));
  const weir = await spawnWeir({ dataDir, env: { WEIR_LOCAL_CHAIN: 'evm', WEIR_CONFIRMATIONS_31337: '3' } });
  t.teardown(() => weir.kill());
  const info = parseDevnetInfo(JSON.parse(await readFile(join(dataDir, 'local-chain', 'devnet.json'), 'utf8')));

  const org = await createMerchant(weir.url, 'Audited Shop', { chainId: 31337, address: merchantWallet(info) });
  const api = org.api;
  // A new payer funded by the faucet pays two sessions, 1.50 (and 0.25 more) and 2.50 USDC.
  const payerKey = generatePrivateKey();
  for (const asset of ['eth', 'usdc'])
    t.is((await api.post('/api/v1/faucet', { address: privateKeyToAccount(payerKey).address, asset })).status, 200);
  const clients = createEvmWriteClients({
    rpcUrl: info.rpcUrl,
    chainId: 31337,
    privateKey: payerKey,
    pollingIntervalMs: 25,
  });
  const rpc = createJsonRpc(info.rpcUrl);
  const pay = async (deposit: string, price: string) => {
    const hash = await clients.walletClient.writeContract({
      address: info.contracts.usdc,
      abi: erc20Abi,
      functionName: 'transfer',
      args: [getAddress(deposit), parseUnits(price, 6)],
      gas: 120_000n,
    });
    await clients.publicClient.waitForTransactionReceipt({ hash });
  };
  const sessions: Session[] = [];
  for (const price of ['1.5', '2.5'])
    sessions.push(
      (
        await api.post<Session>('/api/v1/checkout/sessions', {
          successUrl: 'https://shop.example/ok',
          lineItems: {
            data: [
              {
                priceData: { currency: 'usdc', unitAmount: String(parseUnits(price, 8)), productData: { name: 'Mug' } },
              },
            ],
          },
        })
      ).body,
    );
  const [first, second] = sessions.map((s) => s.addresses.find((a) => a.asset.currency === 'usdc')!.paymentAddress);
  // The first is paid 1.50, then 0.25 more in the block that makes the 1.50 final (3 confirmations,
  // each transfer a block): the sweep mined next flushes both, though its FundsSwept lists only the
  // 1.50. The 0.25, final a block later, is then recorded as moved by it (TransfersFoundSwept).
  await pay(first!, '1.5');
  await rpc('evm_mine');
  await pay(first!, '0.25');
  await eventually(async () => {
    const session = (await api.get<{ sweeps?: unknown[] }>(`/api/v1/checkout/sessions/${sessions[0]!.id}`)).body;
    return session.sweeps?.length === 1 ? true : undefined;
  }, 'the 1.50 swept');
  // The 2.50's block makes the 0.25 final; two empty ones make the 2.50 final.
  await pay(second!, '2.5');
  await rpc('evm_mine');
  await rpc('evm_mine');
  await eventually(async () => {
    const swept = (await api.get<{ data: { amountRaw: string }[] }>('/api/v1/transactions?type=transfer&status=swept'))
      .body.data;
    const amounts = swept.map((s) => s.amountRaw).sort();
    return amounts.join() === '1750000,2500000' ? true : undefined;
  }, 'both sessions paid and swept, the 0.25 with the 1.50');

  const publicKey = operatorPublicKey({ keyFile: join(dataDir, OPERATOR_KEY_FILE) });
  t.truthy(publicKey);
  await writeFile(join(work, 'reconcile.mjs'), script!);
  const stdout = await runBlock(commands!.replaceAll('npx weir ', `node ${WEIR_BIN} `), {
    dataDir,
    cwd: work,
    // Four processes in a row (three of them Weir's CLI, each loading its TypeScript): roomy on a busy machine.
    timeout: 240_000,
    fill: {
      ORG_ID: org.organizationId,
      '--environment live': '--environment test',
      OPERATOR_KEY: publicKey!,
      'https://rpc.example': info.rpcUrl,
    },
  });
  const lines = stdout.trim().split('\n');
  t.is(
    lines.filter((l) => /^ok payment 0x[0-9a-f]{64} log \d+, block \d+: \d+ \(6 decimals\) USDC from 0x/.test(l))
      .length,
    3,
    stdout,
  );
  t.is(
    lines.filter((l) =>
      new RegExp(
        `^ok sweep 0x[0-9a-f]{64}, block \\d+: \\d+ of \\S+ from 0x[0-9a-f]{40} to ${merchantWallet(info)}$`,
      ).test(l),
    ).length,
    2,
    stdout,
  );
  t.truthy(
    lines.find((l) => /^ok sweep 0x[0-9a-f]{64}, block \d+: 1750000 of /.test(l)),
    'the 1.50 and the 0.25 found swept with it',
  );
  t.is(lines.at(-1), '3 payments in the bundle; 0 differ from chain 31337', stdout);

  // Every held event's hash, recomputed by the recipe the README's Audit gives (not Weir's code).
  const bundle = await readFile(join(work, 'bundle.ndjson'), 'utf8');
  const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
  const held = bundle
    .trim()
    .split('\n')
    .slice(1)
    .map((line) => JSON.parse(line) as BundleLine)
    .filter((e) => e.withheld === undefined);
  t.true(held.length > 0);
  for (const e of held) {
    const digest = sha256(`${JSON.stringify([e.id, e.streamId, e.revision, e.type])}\n${e.data}\n${e.metadata}`);
    const { organizationId = '', environment = '' } = JSON.parse(e.metadata) as Record<string, string | undefined>;
    const tenant = sha256(`weir-tenant\n${e.previous}\n${organizationId}\n${environment}`);
    t.is(sha256(`${e.previous}\n${digest}\n${tenant}`), e.hash, `the hash at ${e.position}`);
  }
  // A withheld line's link is recomputed from its digest and tenant tag the same way.
  const withheld = bundle
    .trim()
    .split('\n')
    .slice(1)
    .map((line) => JSON.parse(line) as BundleLine & { digest: string; tenant: string })
    .filter((e) => e.withheld === true);
  for (const e of withheld)
    t.is(sha256(`${e.previous}\n${e.digest}\n${e.tenant}`), e.hash, `the hash at ${e.position}`);

  // Each sweep names its block and both ends itself, so it is matched to the chain from its event alone.
  const sweeps = held
    .filter((e) => e.type === 'FundsSwept')
    .map((e) => (JSON.parse(e.data) as { sweep: Record<string, unknown> }).sweep);
  t.is(sweeps.length, 2);
  for (const sweep of sweeps) {
    t.is(typeof sweep['blockNumber'], 'number');
    t.is(sweep['merchantAddress'], merchantWallet(info));
    t.regex(String(sweep['depositAddress']), /^0x[0-9a-fA-F]{40}$/);
  }

  // The 0.25 was confirmed after the sweep that moved it was recorded.
  const found = held.filter((e) => e.type === 'TransfersFoundSwept');
  t.is(found.length, 1);
  t.like(JSON.parse(found[0]!.data), { moved: [{ amountRaw: '250000' }] });

  const reconcile = async (name: string, text: string) => {
    t.not(text, bundle);
    await writeFile(join(work, name), text);
    return spawnSync('node', ['reconcile.mjs', name, info.rpcUrl], { cwd: work, encoding: 'utf8' });
  };
  // The hash chain cannot tell a payment that never happened: the chain can.
  const edited = await reconcile(
    'edited.ndjson',
    bundle.replace('\\"amountRaw\\":\\"1500000\\"', '\\"amountRaw\\":\\"1600000\\"'),
  );
  t.is(edited.status, 1, edited.stdout + edited.stderr);
  t.regex(edited.stdout, /^DIFFERS payment 0x[0-9a-f]{64} log \d+, block \d+: 1600000 /m);
  t.regex(edited.stdout, /^DIFFERS sweep .*: 1850000 of /m);
  t.regex(edited.stdout, /3 payments in the bundle; 2 differ from chain 31337\n$/);

  // Nor a sweep said to move less than it did, or its amount misstated.
  const foundLine = bundle.split('\n').find((line) => line.includes('"type":"TransfersFoundSwept"'))!;
  for (const [name, text] of [
    ['unfound.ndjson', bundle.replace(`${foundLine}\n`, '')],
    ['misstated.ndjson', bundle.replace(foundLine, foundLine.replace('\\"250000\\"', '\\"260000\\"'))],
  ] as const) {
    const run = await reconcile(name, text);
    t.is(run.status, 1, run.stdout + run.stderr);
    t.regex(run.stdout, /^DIFFERS sweep /m, name);
    t.regex(run.stdout, /3 payments in the bundle; 1 differ from chain 31337\n$/, name);
  }
});
