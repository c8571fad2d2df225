import test from 'ava';
import { randomUUID } from 'node:crypto';
import { encodeDeployData, keccak256, toFunctionSelector, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { falseReturningTokenAbi, forwarderAbi, forwarderFactoryAbi } from '../evm/contracts/abis.ts';
import { forwarderFactoryBytecode } from '../evm/contracts/bytecodes.ts';
import { createEvmWriteClients, type EvmWriteClients } from '../evm/contracts/clients.ts';
import {
  deployForwarderFactory,
  deployTestToken,
  localTronFactoryFlavour,
  type ForwarderFactoryFlavour,
} from '../evm/contracts/deploy-contracts.ts';
import {
  deriveDepositAddress,
  forwarderCloneInitCode,
  forwarderCreate2Salt,
  sessionSaltOf,
} from '../evm/contracts/deposit-address.ts';
import { ForwarderFlushError } from '../evm/contracts/errors.ts';
import { flushForwarders } from '../evm/contracts/flush-forwarders.ts';
import { startAnvilNode, type AnvilNode } from '../evm/devnet/anvil-node.ts';
import { hardhatAccounts } from '../evm/devnet/hardhat-accounts.ts';
import { evmToTron } from './address.ts';
import { tronCreate2Address, tronDepositAddress } from './deposit-address.ts';
import { TRON_LOCAL_CHAIN_ID } from './networks.ts';

/*
 * The Tron flavour of the contracts on the local chain (anvil, the local Tron's node): the factory
 * built with the TVM's CREATE2 prefix predicts what tronCreate2Address derives, and the forwarder
 * that checks its balance sweeps a token whose transfer returns false on success (as Tron
 * mainnet's USDT does), where the EVM forwarder reverts.
 */

type Chain = { node: AnvilNode; deployer: EvmWriteClients; stranger: EvmWriteClients; token: Address };
let chain: Chain | undefined;

test.before(async () => {
  const node = await startAnvilNode({ chainId: TRON_LOCAL_CHAIN_ID });
  try {
    const clientsFor = (privateKey: Hex) =>
      createEvmWriteClients({ rpcUrl: node.rpcUrl, chainId: node.chainId, privateKey, pollingIntervalMs: 25 });
    const deployer = clientsFor(hardhatAccounts[0].privateKey);
    const token = await deployTestToken(deployer, {
      name: 'Tron-like Tether USD',
      symbol: 'USDT',
      decimals: 6,
      kind: 'false-returning',
    });
    chain = { node, deployer, stranger: clientsFor(hardhatAccounts[7].privateKey), token: token.address };
  } catch (error) {
    await node.stop();
    throw error;
  }
});

test.after.always(async () => {
  await chain?.node.stop();
});

function onChain(): Chain {
  if (chain === undefined) throw new Error('anvil did not start: see test.before');
  return chain;
}

const newMerchant = (): Address => privateKeyToAccount(generatePrivateKey()).address;

async function mint(to: Address, amount: bigint): Promise<void> {
  const { deployer, token } = onChain();
  await deployer.publicClient.waitForTransactionReceipt({
    hash: await deployer.walletClient.writeContract({
      address: token,
      abi: falseReturningTokenAbi,
      functionName: 'mint',
      args: [to, amount],
    }),
  });
}

const balanceOf = (owner: Address) =>
  onChain().deployer.publicClient.readContract({
    address: onChain().token,
    abi: falseReturningTokenAbi,
    functionName: 'balanceOf',
    args: [owner],
  });

// Factories are deployed in the tests' order (serial), each by the deployer.
const factories = new Map<string, Address>();
async function factoryOf(flavour: ForwarderFactoryFlavour): Promise<Address> {
  const key = `${flavour.create2Prefix}/${flavour.checksBalanceChange}`;
  const known = factories.get(key);
  if (known) return known;
  const deployed = await deployForwarderFactory(onChain().deployer, flavour);
  factories.set(key, deployed.address);
  return deployed.address;
}

test.serial("the factory built with the TVM's prefix 0x41 predicts what tronCreate2Address derives", async (t) => {
  const { deployer } = onChain();
  const read = deployer.publicClient;
  const factory = await factoryOf({ create2Prefix: '0x41', checksBalanceChange: true });
  t.is(await read.readContract({ address: factory, abi: forwarderFactoryAbi, functionName: 'create2Prefix' }), '0x41');
  const implementation = await read.readContract({
    address: factory,
    abi: forwarderFactoryAbi,
    functionName: 'implementation',
  });
  t.true(await read.readContract({ address: implementation, abi: forwarderAbi, functionName: 'checksBalanceChange' }));
  for (let i = 0; i < 4; i++) {
    const merchant = newMerchant();
    const sessionId = randomUUID();
    const sessionSalt = sessionSaltOf(sessionId);
    const predicted = await read.readContract({
      address: factory,
      abi: forwarderFactoryAbi,
      functionName: 'predictAddress',
      args: [merchant, sessionSalt],
    });
    const salt = forwarderCreate2Salt(merchant, sessionSalt);
    const expected = tronCreate2Address(factory, salt, keccak256(forwarderCloneInitCode(implementation)));
    t.is<string, string>(evmToTron(predicted), expected);
    t.is<string, string>(
      evmToTron(predicted),
      tronDepositAddress({
        factoryAddress: evmToTron(factory),
        implementationAddress: evmToTron(implementation),
        merchantAddress: evmToTron(merchant),
        sessionId,
      }),
    );
    // ... and not the EVM's address for the same inputs.
    t.not(predicted, deriveDepositAddress({ factoryAddress: factory, merchantAddress: merchant, sessionId }));
  }
  // On an EVM node, CREATE2 hashes 0xff: the 0x41 factory's clone lands elsewhere, so deploy refuses.
  const error = await t.throwsAsync(
    read.simulateContract({
      address: factory,
      abi: forwarderFactoryAbi,
      functionName: 'deploy',
      args: [newMerchant(), sessionSaltOf(randomUUID())],
    }),
  );
  t.regex(error.message, /DeployFailed/);
});

test.serial('a factory refuses a CREATE2 prefix other than 0xff or 0x41', async (t) => {
  const { deployer } = onChain();
  const error = await t.throwsAsync(
    deployer.publicClient.call({
      account: deployer.walletClient.account,
      data: encodeDeployData({ abi: forwarderFactoryAbi, bytecode: forwarderFactoryBytecode, args: ['0xee', true] }),
    }),
  );
  // The custom error's selector is in the revert data.
  t.true(String(error).includes(toFunctionSelector('UnknownCreate2Prefix(bytes1)')), String(error));
});

test.serial(
  'the Tron forwarder sweeps a token whose transfer returns false on success; the EVM forwarder cannot',
  async (t) => {
    const { stranger, token } = onChain();
    const tronFactory = await factoryOf(localTronFactoryFlavour);
    const evmFactory = await factoryOf({ create2Prefix: '0xff', checksBalanceChange: false });

    // The EVM forwarder trusts the return value: false reads as a failed transfer, nothing moves.
    const evmMerchant = newMerchant();
    const evmSession = randomUUID();
    const evmDeposit = deriveDepositAddress({
      factoryAddress: evmFactory,
      merchantAddress: evmMerchant,
      sessionId: evmSession,
    });
    await mint(evmDeposit, 7_000_000n);
    const refused = await t.throwsAsync(
      flushForwarders(stranger, {
        factoryAddress: evmFactory,
        requests: [{ merchantAddress: evmMerchant, sessionId: evmSession, tokens: [token], native: false }],
      }),
      { instanceOf: ForwarderFlushError },
    );
    t.regex(refused.message, /TokenTransferFailed/);
    t.is(await balanceOf(evmDeposit), 7_000_000n);

    // The Tron forwarder checks its balance fell by the amount: swept.
    const merchant = newMerchant();
    const sessionId = randomUUID();
    const deposit = deriveDepositAddress({ factoryAddress: tronFactory, merchantAddress: merchant, sessionId });
    await mint(deposit, 25_000_000n);
    const swept = await flushForwarders(stranger, {
      factoryAddress: tronFactory,
      requests: [{ merchantAddress: merchant, sessionId, tokens: [token], native: false }],
    });
    t.deepEqual(swept.forwarders, [deposit]);
    t.deepEqual(swept.transfers, [{ forwarder: deposit, merchant, token, amount: 25_000_000n }]);
    t.is(await balanceOf(merchant), 25_000_000n);
    t.is(await balanceOf(deposit), 0n);
    t.log(`Tron forwarder, deploy + false-returning token: ${swept.gasUsed} gas`);
  },
);

test.serial('the Tron forwarder still refuses a transfer that returned false and moved nothing', async (t) => {
  const { deployer, stranger, token } = onChain();
  const factory = await factoryOf(localTronFactoryFlavour);
  const merchant = newMerchant();
  const sessionId = randomUUID();
  const deposit = deriveDepositAddress({ factoryAddress: factory, merchantAddress: merchant, sessionId });
  await mint(deposit, 3_000_000n);
  await deployer.publicClient.waitForTransactionReceipt({
    hash: await deployer.walletClient.writeContract({
      address: token,
      abi: falseReturningTokenAbi,
      functionName: 'setRefusing',
      args: [deposit, true],
    }),
  });
  const error = await t.throwsAsync(
    flushForwarders(stranger, {
      factoryAddress: factory,
      requests: [{ merchantAddress: merchant, sessionId, tokens: [token], native: false }],
    }),
    { instanceOf: ForwarderFlushError },
  );
  t.regex(error.message, /TokenTransferFailed/);
  t.is(await balanceOf(deposit), 3_000_000n);
  t.is(await balanceOf(merchant), 0n);
});
