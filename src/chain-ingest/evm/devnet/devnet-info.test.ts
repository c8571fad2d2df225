import test from 'ava';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  devnetAccount,
  parseDevnetInfo,
  prepareDevnetInfoFile,
  readDevnetInfo,
  writeDevnetInfo,
  type DevnetInfo,
} from './devnet-info.ts';
import { DevnetInfoError } from './errors.ts';
import { hardhatAccounts } from './hardhat-accounts.ts';
import { evmToTron } from '../../tron/address.ts';
import { tronOfDevnetFile } from '../../tron/devnet/tron-devnet.ts';
import { TRON_LOCAL_CHAIN_ID } from '../../tron/networks.ts';

const valid: DevnetInfo = {
  chainId: 31337,
  rpcUrl: 'http://127.0.0.1:8545',
  wsUrl: 'ws://127.0.0.1:8545',
  contracts: {
    forwarderFactory: '0x5FbDB2315678afecb367f032d93F642f64180aa3',
    usdc: '0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512',
    usdt: '0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0',
    dai: '0xCf7Ed3AccA5a467e9e704C703E8D87F634fB0Fc9',
  },
  accounts: [
    { ...hardhatAccounts[0], role: 'deployer' },
    { ...hardhatAccounts[1], role: 'sweeper' },
  ],
  startedAt: '2026-01-02T03:04:05.678Z',
};

test('a valid document parses to itself, with addresses checksummed', (t) => {
  t.deepEqual(parseDevnetInfo(structuredClone(valid)), valid);
  const lowercase = { ...valid, contracts: { ...valid.contracts, usdc: valid.contracts.usdc.toLowerCase() } };
  t.is(parseDevnetInfo(lowercase).contracts.usdc, valid.contracts.usdc);
  t.is(devnetAccount(valid, 'sweeper').address, hardhatAccounts[1].address);
});

test("weir devnet's local Tron, when the document names one, parses with it (and what is wrong in it is named); tronOfDevnetFile offers it with the same accounts", (t) => {
  const tron = { rpcUrl: 'http://127.0.0.1:9001', sendUrl: 'http://127.0.0.1:9002', contracts: valid.contracts };
  const parsed = parseDevnetInfo({ ...structuredClone(valid), tron });
  t.deepEqual(parsed.tron, tron);
  const offered = tronOfDevnetFile(parsed)!;
  t.like(offered.devnet, { chainId: TRON_LOCAL_CHAIN_ID, rpcUrl: tron.sendUrl, wsUrl: 'ws://127.0.0.1:9002' });
  t.false('tron' in offered.devnet);
  t.deepEqual(offered.devnet.accounts, valid.accounts);
  t.like(offered.info, {
    rpcUrl: tron.rpcUrl,
    sendUrl: tron.sendUrl,
    factory: evmToTron(valid.contracts.forwarderFactory),
  });
  t.is(tronOfDevnetFile(valid), null);
  const error = t.throws(() => parseDevnetInfo({ ...valid, tron: { ...tron, sendUrl: 'ws://x', contracts: {} } }), {
    instanceOf: DevnetInfoError,
  });
  t.regex(error.message, /tron\.sendUrl must be a http:\/\/ or https:\/\/ URL/);
  t.regex(error.message, /tron\.contracts\.usdt must be/);
});

test('every problem is reported at once, each naming its field', (t) => {
  const broken = {
    chainId: '31337',
    rpcUrl: 'ftp://127.0.0.1',
    wsUrl: 'http://127.0.0.1:8545',
    contracts: { forwarderFactory: '0x1234', usdc: valid.contracts.usdc, usdt: valid.contracts.usdt },
    accounts: [
      { address: hardhatAccounts[0].address, privateKey: hardhatAccounts[1].privateKey, role: 'deployer' },
      { role: 'owner' },
    ],
    startedAt: 'yesterday',
  };
  const error = t.throws(() => parseDevnetInfo(broken, 'devnet.json'), { instanceOf: DevnetInfoError });
  const problems = error?.problems.join('\n') ?? '';
  for (const field of [
    'chainId',
    'rpcUrl',
    'wsUrl',
    'contracts.forwarderFactory',
    'contracts.dai',
    'accounts[0].privateKey belongs to',
    'accounts[1].address',
    'accounts[1].role',
    'startedAt',
  ]) {
    t.true(problems.includes(field), `no problem mentions ${field}:\n${problems}`);
  }
  t.regex(error?.message ?? '', /^devnet info devnet\.json is not usable: .*weir devnet/s);
});

test('a document without a deployer is refused: the faucet needs one', (t) => {
  const error = t.throws(() => parseDevnetInfo({ ...valid, accounts: [{ ...hardhatAccounts[1], role: 'sweeper' }] }), {
    instanceOf: DevnetInfoError,
  });
  t.regex(error?.message ?? '', /deployer/);
  t.throws(() => parseDevnetInfo([valid]), { instanceOf: DevnetInfoError, message: /expected a JSON object/ });
});

test('readDevnetInfo reads what writeDevnetInfo wrote and explains a missing or non-JSON file', async (t) => {
  const directory = await mkdtemp(join(tmpdir(), 'weir-devnet-info-'));
  t.teardown(() => rm(directory, { recursive: true, force: true }));
  const file = join(directory, 'devnet.json');
  await writeDevnetInfo(file, valid);
  t.deepEqual(await readDevnetInfo(file), valid);

  await t.throwsAsync(readDevnetInfo(join(directory, 'missing.json')), {
    instanceOf: DevnetInfoError,
    message: /does not exist/,
  });
  await writeFile(file, '{"chainId": 31337,');
  await t.throwsAsync(readDevnetInfo(file), { instanceOf: DevnetInfoError, message: /not JSON/ });
});

test('prepareDevnetInfoFile makes the missing folders of weir devnet --out, and refuses a file standing for one', async (t) => {
  const directory = await mkdtemp(join(tmpdir(), 'weir-devnet-info-'));
  t.teardown(() => rm(directory, { recursive: true, force: true }));
  const file = join(directory, 'made', 'here', 'devnet.json');
  await prepareDevnetInfoFile(file);
  await writeDevnetInfo(file, valid);
  t.deepEqual(await readDevnetInfo(file), valid);
  await t.throwsAsync(prepareDevnetInfoFile(join(file, 'devnet.json')), { code: 'EEXIST' });
});
