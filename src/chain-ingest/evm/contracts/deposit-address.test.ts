import test from 'ava';
import { randomUUID } from 'node:crypto';
import { BaseError, ContractFunctionRevertedError, getAddress, keccak256, parseEther, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { hardhatAccounts, startHardhatNode, type HardhatNode } from '../../../../test/support/hardhat-node.ts';
import { forwarderAbi, forwarderFactoryAbi, testTokenAbi, tetherLikeTokenAbi } from './abis.ts';
import { createEvmWriteClients, type EvmWriteClients } from './clients.ts';
import { deployForwarderFactory, deployTestToken } from './deploy-contracts.ts';
import {
  deriveDepositAddress,
  forwarderCloneInitCode,
  forwarderCreate2Salt,
  forwarderImplementationAddress,
  sessionSaltOf,
} from './deposit-address.ts';
import { DepositAddressInputError, ForwarderFlushError } from './errors.ts';
import { flushForwarders } from './flush-forwarders.ts';

// ---------------------------------------------------------------------------------------------
// Offline: the derivation is pinned, so a change to it can never slip through unnoticed.
// ---------------------------------------------------------------------------------------------

const pinnedSessionId = '0b9e4a8c-1f6d-4c2a-9e57-3d1b2f8a6c40';
const pinnedFactory: Address = '0x5FbDB2315678afecb367f032d93F642f64180aa3';
const pinnedMerchant: Address = '0x9965507D1a55bcC2695C58ba16FB37d819B0A4dc';
const pinnedDepositAddress: Address = '0x08D6D6121c3C897FF76b3BECb02b2A5b75fF6979';

test('sessionSaltOf is keccak256 of the 16 uuid bytes, whatever the case', (t) => {
  const expected = keccak256('0x0b9e4a8c1f6d4c2a9e573d1b2f8a6c40');
  t.is(sessionSaltOf(pinnedSessionId), expected);
  t.is(sessionSaltOf(pinnedSessionId.toUpperCase()), expected);
  t.not(sessionSaltOf(pinnedSessionId), keccak256(new TextEncoder().encode(pinnedSessionId)));
});

test('the derivation of a known session is pinned', (t) => {
  t.is(forwarderImplementationAddress(pinnedFactory), '0xa16E02E87b7454126E5E10d957A927A7F5B5d2be');
  // Changing any of these moves every deposit address: never do it once a network is live.
  t.is(sessionSaltOf(pinnedSessionId), '0xd7cd08bf8551409150aa51b3e7e623c0d153431a654cb51e5247baa00d85d4ad');
  t.is(
    forwarderCreate2Salt(pinnedMerchant, sessionSaltOf(pinnedSessionId)),
    '0xb03a0ad56591e146a92aed1b24057b5bccbe754463a769be19ddeea8ffd08de0',
  );
  t.is(
    deriveDepositAddress({
      factoryAddress: pinnedFactory,
      merchantAddress: pinnedMerchant,
      sessionId: pinnedSessionId,
    }),
    pinnedDepositAddress,
  );
  t.is(
    deriveDepositAddress({
      factoryAddress: pinnedFactory,
      merchantAddress: pinnedMerchant.toLowerCase(),
      sessionId: pinnedSessionId,
    }),
    deriveDepositAddress({
      factoryAddress: pinnedFactory,
      merchantAddress: pinnedMerchant,
      sessionSalt: sessionSaltOf(pinnedSessionId),
    }),
  );
});

test('a merchant wallet in all upper case (no checksum, as the API takes it) derives the same address as in lower case', (t) => {
  const upper = `0x${pinnedMerchant.slice(2).toUpperCase()}`;
  t.is(
    deriveDepositAddress({ factoryAddress: pinnedFactory, merchantAddress: upper, sessionId: pinnedSessionId }),
    pinnedDepositAddress,
  );
  t.is(
    forwarderCreate2Salt(upper as Address, sessionSaltOf(pinnedSessionId)),
    forwarderCreate2Salt(pinnedMerchant, sessionSaltOf(pinnedSessionId)),
  );
});

test('malformed inputs are refused with DepositAddressInputError naming the field', (t) => {
  const derive = (overrides: { factoryAddress?: string; merchantAddress?: string; sessionId?: string }) => () =>
    deriveDepositAddress({
      factoryAddress: (overrides.factoryAddress ?? pinnedFactory) as Address,
      merchantAddress: overrides.merchantAddress ?? pinnedMerchant,
      sessionId: overrides.sessionId ?? pinnedSessionId,
    });
  const cases = [
    { overrides: { sessionId: 'cs_123' }, field: 'sessionId' },
    { overrides: { sessionId: `${pinnedSessionId}0` }, field: 'sessionId' },
    { overrides: { merchantAddress: '0x1234' }, field: 'merchantAddress' },
    // A mixed-case address with a wrong EIP-55 checksum is a typo, not a wallet.
    { overrides: { merchantAddress: '0x9965507d1a55bcC2695C58ba16FB37d819B0A4dc' }, field: 'merchantAddress' },
    { overrides: { merchantAddress: '0x0000000000000000000000000000000000000000' }, field: 'merchantAddress' },
    { overrides: { factoryAddress: 'factory' }, field: 'factoryAddress' },
  ] as const;
  for (const { overrides, field } of cases) {
    const error = t.throws(derive(overrides), { instanceOf: DepositAddressInputError });
    t.is(error?.field, field);
  }
});

// ---------------------------------------------------------------------------------------------
// On a real hardhat node.
// ---------------------------------------------------------------------------------------------

type Chain = {
  node: HardhatNode;
  deployer: EvmWriteClients;
  /** An account with no role at all: proves anyone may sweep. */
  stranger: EvmWriteClients;
  payer: EvmWriteClients;
  factory: Address;
  usdc: Address;
  usdt: Address;
};

let chain: Chain | undefined;

test.before(async () => {
  const node = await startHardhatNode();
  try {
    const clientsFor = (privateKey: `0x${string}`) =>
      createEvmWriteClients({ rpcUrl: node.rpcUrl, chainId: node.chainId, privateKey });
    const deployer = clientsFor(hardhatAccounts[0].privateKey);
    const factory = await deployForwarderFactory(deployer);
    const usdc = await deployTestToken(deployer, { name: 'Test USD Coin', symbol: 'USDC', decimals: 6 });
    const usdt = await deployTestToken(deployer, {
      name: 'Test Tether USD',
      symbol: 'USDT',
      decimals: 6,
      kind: 'tether-like',
    });
    chain = {
      node,
      deployer,
      stranger: clientsFor(hardhatAccounts[7].privateKey),
      payer: clientsFor(hardhatAccounts[2].privateKey),
      factory: factory.address,
      usdc: usdc.address,
      usdt: usdt.address,
    };
  } catch (error) {
    await node.stop();
    throw error;
  }
});

test.after.always(async () => {
  await chain?.node.stop();
});

function onChain(): Chain {
  if (chain === undefined) throw new Error('the hardhat node did not start: see test.before');
  return chain;
}

/** The custom error a contract call reverted with, as viem decoded it. */
function revertedWith(error: unknown): string | undefined {
  if (!(error instanceof BaseError)) return undefined;
  const reverted = error.walk((cause) => cause instanceof ContractFunctionRevertedError);
  return reverted instanceof ContractFunctionRevertedError ? reverted.data?.errorName : undefined;
}

/** A fresh merchant wallet with no history, so balances start at zero. */
const newMerchant = (): Address => privateKeyToAccount(generatePrivateKey()).address;

async function balances(address: Address): Promise<{ eth: bigint; usdc: bigint; usdt: bigint }> {
  const { deployer, usdc, usdt } = onChain();
  const reader = deployer.publicClient;
  const [eth, usdcBalance, usdtBalance] = await Promise.all([
    reader.getBalance({ address }),
    reader.readContract({ address: usdc, abi: testTokenAbi, functionName: 'balanceOf', args: [address] }),
    reader.readContract({ address: usdt, abi: tetherLikeTokenAbi, functionName: 'balanceOf', args: [address] }),
  ]);
  return { eth, usdc: usdcBalance, usdt: usdtBalance };
}

/** Pays a deposit address the way a customer would: plain transfers, no contract call on it. */
async function pay(to: Address, amounts: { eth: bigint; usdc: bigint; usdt: bigint }): Promise<void> {
  const { deployer, payer, usdc, usdt } = onChain();
  const waitFor = (hash: `0x${string}`) => deployer.publicClient.waitForTransactionReceipt({ hash });
  // The payer holds no tokens; the deployer (token owner) mints straight to the deposit address.
  if (amounts.usdc > 0n)
    await waitFor(
      await deployer.walletClient.writeContract({
        address: usdc,
        abi: testTokenAbi,
        functionName: 'mint',
        args: [to, amounts.usdc],
      }),
    );
  if (amounts.usdt > 0n)
    await waitFor(
      await deployer.walletClient.writeContract({
        address: usdt,
        abi: tetherLikeTokenAbi,
        functionName: 'mint',
        args: [to, amounts.usdt],
      }),
    );
  if (amounts.eth > 0n) await waitFor(await payer.walletClient.sendTransaction({ to, value: amounts.eth }));
}

test.serial(
  'the offline derivation equals the factory: implementation, init code hash and predictAddress',
  async (t) => {
    const { deployer, factory } = onChain();
    const read = deployer.publicClient;
    const implementation = await read.readContract({
      address: factory,
      abi: forwarderFactoryAbi,
      functionName: 'implementation',
    });
    t.is(implementation, forwarderImplementationAddress(factory));
    t.is(
      await read.readContract({ address: factory, abi: forwarderFactoryAbi, functionName: 'forwarderInitCodeHash' }),
      keccak256(forwarderCloneInitCode(implementation)),
    );
    // The factory is account #0's first deployment on a fresh node, so the pinned vector holds on chain too.
    t.is(factory, pinnedFactory);
    t.is(
      await read.readContract({
        address: factory,
        abi: forwarderFactoryAbi,
        functionName: 'predictAddress',
        args: [pinnedMerchant, sessionSaltOf(pinnedSessionId)],
      }),
      pinnedDepositAddress,
    );
    for (let i = 0; i < 5; i++) {
      const merchantAddress = newMerchant();
      const sessionId = randomUUID();
      const sessionSalt = sessionSaltOf(sessionId);
      t.is(
        await read.readContract({
          address: factory,
          abi: forwarderFactoryAbi,
          functionName: 'saltFor',
          args: [merchantAddress, sessionSalt],
        }),
        forwarderCreate2Salt(merchantAddress, sessionSalt),
      );
      t.is(
        await read.readContract({
          address: factory,
          abi: forwarderFactoryAbi,
          functionName: 'predictAddress',
          args: [merchantAddress, sessionSalt],
        }),
        deriveDepositAddress({ factoryAddress: factory, merchantAddress, sessionId }),
      );
    }
  },
);

test.serial(
  'funds paid before deployment (ETH, USDC, no-return USDT) are swept to the merchant by a stranger',
  async (t) => {
    const { stranger, factory, usdc, usdt, deployer } = onChain();
    const merchantAddress = newMerchant();
    const sessionId = randomUUID();
    const deposit = deriveDepositAddress({ factoryAddress: factory, merchantAddress, sessionId });
    const paid = { eth: parseEther('0.25'), usdc: 125_000_000n, usdt: 42_500_000n };
    await pay(deposit, paid);
    t.is(await deployer.publicClient.getCode({ address: deposit }), undefined, 'nothing is deployed before the sweep');
    t.deepEqual(await balances(deposit), paid);

    const strangerEthBefore = await deployer.publicClient.getBalance({
      address: stranger.walletClient.account.address,
    });
    const result = await flushForwarders(stranger, {
      factoryAddress: factory,
      requests: [{ merchantAddress, sessionId, tokens: [usdc, usdt] }],
    });

    t.deepEqual(result.forwarders, [deposit]);
    t.deepEqual(await balances(merchantAddress), paid, 'the merchant received everything');
    t.deepEqual(await balances(deposit), { eth: 0n, usdc: 0n, usdt: 0n }, 'the deposit address is empty');
    t.deepEqual(result.transfers, [
      { forwarder: deposit, merchant: merchantAddress, token: null, amount: paid.eth },
      { forwarder: deposit, merchant: merchantAddress, token: getAddress(usdc), amount: paid.usdc },
      { forwarder: deposit, merchant: merchantAddress, token: getAddress(usdt), amount: paid.usdt },
    ]);
    // The stranger only paid gas; none of the funds went its way.
    const strangerEthAfter = await deployer.publicClient.getBalance({ address: stranger.walletClient.account.address });
    t.is(strangerEthBefore - strangerEthAfter, result.gasCost);
    t.is(
      await deployer.publicClient.readContract({ address: deposit, abi: forwarderAbi, functionName: 'merchant' }),
      merchantAddress,
    );
  },
);

test.serial('deploy is idempotent and a deployed forwarder keeps accepting and forwarding payments', async (t) => {
  const { stranger, deployer, factory, usdc } = onChain();
  const read = deployer.publicClient;
  const merchantAddress = newMerchant();
  const sessionId = randomUUID();
  const sessionSalt = sessionSaltOf(sessionId);
  const deposit = deriveDepositAddress({ factoryAddress: factory, merchantAddress, sessionId });

  const first = await read.waitForTransactionReceipt({
    hash: await stranger.walletClient.writeContract({
      address: factory,
      abi: forwarderFactoryAbi,
      functionName: 'deploy',
      args: [merchantAddress, sessionSalt],
    }),
  });
  const code = await read.getCode({ address: deposit });
  t.truthy(code);
  const { result: again } = await read.simulateContract({
    account: stranger.walletClient.account,
    address: factory,
    abi: forwarderFactoryAbi,
    functionName: 'deploy',
    args: [merchantAddress, sessionSalt],
  });
  t.is(again, deposit);
  const second = await read.waitForTransactionReceipt({
    hash: await stranger.walletClient.writeContract({
      address: factory,
      abi: forwarderFactoryAbi,
      functionName: 'deploy',
      args: [merchantAddress, sessionSalt],
    }),
  });
  t.is(first.logs.length, 1, 'the first deploy emits ForwarderDeployed');
  t.is(second.logs.length, 0, 'the second deploy is a no-op');
  t.is(await read.getCode({ address: deposit }), code);
  t.log(`deploy (clone + initialize): ${first.gasUsed} gas; repeated deploy (no-op): ${second.gasUsed} gas`);

  // A payment to the already deployed clone goes through its receive() (delegatecall).
  const paid = { eth: parseEther('0.01'), usdc: 7_000_000n, usdt: 0n };
  await pay(deposit, paid);
  const direct = await read.waitForTransactionReceipt({
    hash: await stranger.walletClient.writeContract({
      address: deposit,
      abi: forwarderAbi,
      functionName: 'flushNative',
    }),
  });
  t.is(direct.status, 'success');
  await flushForwarders(stranger, {
    factoryAddress: factory,
    requests: [{ merchantAddress, sessionId, tokens: [usdc], native: false }],
  });
  t.deepEqual(await balances(merchantAddress), paid);
});

test.serial('an address derived for merchant A can never pay merchant B', async (t) => {
  const { stranger, deployer, factory, usdc, usdt } = onChain();
  const read = deployer.publicClient;
  const merchantA = newMerchant();
  const merchantB = newMerchant();
  const sessionId = randomUUID();
  const depositForA = deriveDepositAddress({ factoryAddress: factory, merchantAddress: merchantA, sessionId });
  const depositForB = deriveDepositAddress({ factoryAddress: factory, merchantAddress: merchantB, sessionId });
  t.not(depositForA, depositForB, 'the merchant is part of the address');

  const paid = { eth: parseEther('1'), usdc: 99_000_000n, usdt: 1_000_000n };
  await pay(depositForA, paid);

  // Deploying and flushing with B and the same session salt touches B's address only.
  const result = await flushForwarders(stranger, {
    factoryAddress: factory,
    requests: [{ merchantAddress: merchantB, sessionId, tokens: [usdc, usdt] }],
  });
  t.deepEqual(result.forwarders, [depositForB]);
  t.deepEqual(result.transfers, []);
  t.deepEqual(await balances(merchantB), { eth: 0n, usdc: 0n, usdt: 0n });
  t.deepEqual(await balances(depositForA), paid);
  t.is(await read.getCode({ address: depositForA }), undefined);

  // Once A's forwarder exists it is bound to A for good: nobody can initialize it again.
  await flushForwarders(stranger, {
    factoryAddress: factory,
    requests: [{ merchantAddress: merchantA, sessionId, tokens: [usdc, usdt] }],
  });
  t.deepEqual(await balances(merchantA), paid);
  // Nor the implementation behind every clone.
  for (const [caller, target] of [
    [stranger, depositForA],
    [deployer, depositForA],
    [stranger, forwarderImplementationAddress(factory)],
  ] as const) {
    const error = await t.throwsAsync(
      read.simulateContract({
        account: caller.walletClient.account,
        address: target,
        abi: forwarderAbi,
        functionName: 'initialize',
        args: [merchantB],
      }),
    );
    t.is(revertedWith(error), 'NotFactory');
  }
  t.is(await read.readContract({ address: depositForA, abi: forwarderAbi, functionName: 'merchant' }), merchantA);
});

test.serial(
  'a merchant wallet that rejects the native coin makes the whole batch revert, naming the cause',
  async (t) => {
    const { stranger, factory, usdc, usdt } = onChain();
    // A contract without receive() as "merchant": the USDT token contract itself.
    const rejecting = { merchantAddress: usdt, sessionId: randomUUID(), tokens: [usdc] };
    const fine = { merchantAddress: newMerchant(), sessionId: randomUUID(), tokens: [usdc] };
    const amounts = { eth: parseEther('0.5'), usdc: 3_000_000n, usdt: 0n };
    for (const request of [fine, rejecting])
      await pay(deriveDepositAddress({ factoryAddress: factory, ...request }), amounts);

    const error = await t.throwsAsync(
      flushForwarders(stranger, { factoryAddress: factory, requests: [fine, rejecting] }),
      {
        instanceOf: ForwarderFlushError,
      },
    );
    t.regex(error?.message ?? '', new RegExp(`NativeTransferFailed\\(${usdt}, ${amounts.eth}\\)`));
    t.deepEqual(await balances(fine.merchantAddress), { eth: 0n, usdc: 0n, usdt: 0n }, 'nothing moved');
    // Without the native coin the same batch goes through; the ETH waits for a wallet that takes it.
    await flushForwarders(stranger, { factoryAddress: factory, requests: [fine, { ...rejecting, native: false }] });
    t.deepEqual(await balances(fine.merchantAddress), amounts);
  },
);

test.serial('gas of a batched flush of N forwarders (deploy + ETH + USDC + USDT each)', async (t) => {
  const { stranger, factory, usdc, usdt } = onChain();
  const each = { eth: parseEther('0.001'), usdc: 1_000_000n, usdt: 2_000_000n };
  // A merchant wallet already in use (holds ETH and both tokens): the usual case, and cheaper
  // than a brand-new wallet (no new-account surcharge, no zero-to-nonzero balance writes).
  const established = newMerchant();
  await pay(established, each);
  const scenarios = [
    { n: 1, merchants: 'new' },
    { n: 5, merchants: 'new' },
    { n: 20, merchants: 'new' },
    { n: 20, merchants: 'established' },
  ] as const;
  const report: string[] = [];
  for (const { n, merchants } of scenarios) {
    const requests = Array.from({ length: n }, () => ({
      merchantAddress: merchants === 'new' ? newMerchant() : established,
      sessionId: randomUUID(),
      tokens: [usdc, usdt],
    }));
    for (const request of requests) await pay(deriveDepositAddress({ factoryAddress: factory, ...request }), each);
    const merchantBefore = merchants === 'established' ? await balances(established) : { eth: 0n, usdc: 0n, usdt: 0n };
    const fresh = await flushForwarders(stranger, { factoryAddress: factory, requests });
    t.is(fresh.transfers.length, 3 * n);
    const paidTo = (count: bigint) => ({
      eth: merchantBefore.eth + each.eth * count,
      usdc: merchantBefore.usdc + each.usdc * count,
      usdt: merchantBefore.usdt + each.usdt * count,
    });
    if (merchants === 'established') t.deepEqual(await balances(established), paidTo(BigInt(n)));
    else for (const request of requests) t.deepEqual(await balances(request.merchantAddress), paidTo(1n));

    // The same forwarders again, now deployed, each holding one more USDC payment.
    for (const request of requests)
      await pay(deriveDepositAddress({ factoryAddress: factory, ...request }), { eth: 0n, usdc: 1_000_000n, usdt: 0n });
    const deployed = await flushForwarders(stranger, {
      factoryAddress: factory,
      requests: requests.map((r) => ({ ...r, tokens: [usdc], native: false })),
    });
    t.is(deployed.transfers.length, n);
    report.push(
      `N=${n}, ${merchants} merchant wallet(s): undeployed (deploy+ETH+USDC+USDT) ${fresh.gasUsed} gas = ${fresh.gasUsed / BigInt(n)}/forwarder; ` +
        `deployed (USDC only) ${deployed.gasUsed} gas = ${deployed.gasUsed / BigInt(n)}/forwarder`,
    );
  }
  for (const line of report) t.log(line);
});
