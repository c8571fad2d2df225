import test from 'ava';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  loadRpcConfig,
  mergeRpcConfigs,
  parseRpcConfig,
  parseRpcEnv,
  readRpcConfigFile,
  RpcConfigError,
} from './rpc-config.ts';

test('WEIR_RPC_<chainId> splits http(s) from ws(s), trims, drops empty items and duplicates', (t) => {
  const rpc = parseRpcEnv({
    WEIR_RPC_1:
      ' https://eth.example/v2/key , wss://eth.example/v2/key,http://10.0.0.5:8545,,https://eth.example/v2/key,',
    WEIR_RPC_8453: 'ws://base.example',
    HOME: '/root',
  });
  t.deepEqual(rpc, {
    1: { http: ['https://eth.example/v2/key', 'http://10.0.0.5:8545'], ws: ['wss://eth.example/v2/key'] },
    8453: { http: [], ws: ['ws://base.example'] },
  });
});

test('an empty or unset variable counts as unset, and WEIR_RPC_CONFIG is not a chain', (t) => {
  t.deepEqual(
    parseRpcEnv({ WEIR_RPC_1: '', WEIR_RPC_10: '  ', WEIR_RPC_56: undefined, WEIR_RPC_CONFIG: '/etc/weir/rpc.json' }),
    {},
  );
});

test('another scheme is an error naming the variable', (t) => {
  const error = t.throws(() => parseRpcEnv({ WEIR_RPC_137: 'https://polygon.example,ftp://polygon.example/key' }), {
    instanceOf: RpcConfigError,
  });
  t.is(error.source, 'WEIR_RPC_137');
  t.regex(error.message, /^WEIR_RPC_137: entry 2 has scheme "ftp"; only http, https, ws and wss are supported/);
});

test('a malformed URL is an error naming the variable without echoing the value', (t) => {
  const error = t.throws(() => parseRpcEnv({ WEIR_RPC_1: 'eth.example/v2/SECRETKEY' }), { instanceOf: RpcConfigError });
  t.regex(error.message, /^WEIR_RPC_1: entry 1 is not a URL/);
  t.notRegex(error.message, /SECRETKEY/);
  const noHost = t.throws(() => parseRpcEnv({ WEIR_RPC_1: 'https://:8545/v2/SECRETKEY' }), {
    instanceOf: RpcConfigError,
  });
  t.notRegex(noHost.message, /SECRETKEY/);
});

test('a variable whose suffix is not a chain id is an error naming it', (t) => {
  const error = t.throws(() => parseRpcEnv({ WEIR_RPC_BASE: 'https://base.example' }), { instanceOf: RpcConfigError });
  t.regex(error.message, /^WEIR_RPC_BASE: expected WEIR_RPC_<chainId>/);
});

test('unknown chain ids are an error naming them', (t) => {
  const error = t.throws(
    () =>
      parseRpcEnv({
        WEIR_RPC_5: 'https://goerli.example',
        WEIR_RPC_1: 'https://eth.example',
        WEIR_RPC_250: 'https://ftm.example',
      }),
    { instanceOf: RpcConfigError },
  );
  t.regex(error.message, /WEIR_RPC_250, WEIR_RPC_5: unknown chain ids 5, 250; known chain ids: 1, 10, 56/);
  t.deepEqual(parseRpcEnv({ WEIR_RPC_5: 'https://goerli.example' }, { knownChainIds: [5] }), {
    5: { http: ['https://goerli.example'], ws: [] },
  });
});

test('the devnet chain id is known', (t) => {
  t.deepEqual(parseRpcEnv({ WEIR_RPC_31337: 'http://127.0.0.1:8545,ws://127.0.0.1:8545' }), {
    31337: { http: ['http://127.0.0.1:8545'], ws: ['ws://127.0.0.1:8545'] },
  });
});

test('parseRpcConfig reads {"rpc": {"<chainId>": [...]}} and ignores other keys', (t) => {
  const rpc = parseRpcConfig(
    { rpc: { '1': ['https://eth.example', 'wss://eth.example'], '42161': ['https://arb.example'] }, other: true },
    'weir.json',
  );
  t.deepEqual(rpc, {
    1: { http: ['https://eth.example'], ws: ['wss://eth.example'] },
    42161: { http: ['https://arb.example'], ws: [] },
  });
});

const badFiles: [string, unknown, RegExp][] = [
  ['not an object', ['https://eth.example'], /^weir\.json: expected a JSON object with an "rpc" object/],
  ['no rpc object', { endpoints: {} }, /^weir\.json: expected an "rpc" object/],
  [
    'a key that is not a chain id',
    { rpc: { mainnet: ['https://eth.example'] } },
    /^weir\.json rpc\["mainnet"\]: keys of "rpc" must be decimal chain ids/,
  ],
  [
    'a single string instead of a list',
    { rpc: { '1': 'https://eth.example' } },
    /^weir\.json rpc\["1"\]: expected a list of URL strings/,
  ],
  ['a list with a number', { rpc: { '1': [8545] } }, /^weir\.json rpc\["1"\]: expected a list of URL strings/],
  ['a bad scheme', { rpc: { '1': ['ipc:///tmp/geth.ipc'] } }, /^weir\.json rpc\["1"\]: entry 1 has scheme "ipc"/],
  [
    'unknown chain ids',
    { rpc: { '1': ['https://eth.example'], '3': ['https://ropsten.example'], '4': ['https://rinkeby.example'] } },
    /^weir\.json: unknown chain ids 3, 4; known chain ids:/,
  ],
];

for (const [what, json, message] of badFiles) {
  test(`parseRpcConfig rejects ${what}`, (t) => {
    const error = t.throws(() => parseRpcConfig(json, 'weir.json'), { instanceOf: RpcConfigError });
    t.regex(error.message, message);
  });
}

async function tempDir(t: { teardown(fn: () => Promise<void>): void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'weir-rpc-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

test('readRpcConfigFile reads a JSON file; errors name the path', async (t) => {
  const dir = await tempDir(t);
  const good = join(dir, 'rpc.json');
  await writeFile(good, JSON.stringify({ rpc: { '10': ['https://op.example', 'wss://op.example'] } }));
  t.deepEqual(await readRpcConfigFile(good), { 10: { http: ['https://op.example'], ws: ['wss://op.example'] } });

  const broken = join(dir, 'broken.json');
  await writeFile(broken, '{"rpc": {');
  const invalid = await t.throwsAsync(readRpcConfigFile(broken), { instanceOf: RpcConfigError });
  t.is(invalid.source, broken);
  t.regex(invalid.message, /is not valid JSON/);

  const missing = join(dir, 'missing.json');
  const absent = await t.throwsAsync(readRpcConfigFile(missing), { instanceOf: RpcConfigError });
  t.regex(
    absent.message,
    new RegExp(`^${missing.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: cannot read the RPC config file \\(ENOENT\\)`),
  );
});

test('environment variables win over the file, chain by chain', (t) => {
  const file = {
    1: { http: ['https://file-eth.example'], ws: ['wss://file-eth.example'] },
    137: { http: ['https://file-polygon.example'], ws: [] },
  };
  const env = { 1: { http: ['https://env-eth.example'], ws: [] } };
  t.deepEqual(mergeRpcConfigs(file, env), {
    1: { http: ['https://env-eth.example'], ws: [] },
    137: { http: ['https://file-polygon.example'], ws: [] },
  });
});

test('loadRpcConfig reads the file named by WEIR_RPC_CONFIG and overlays WEIR_RPC_<chainId>', async (t) => {
  const dir = await tempDir(t);
  const path = join(dir, 'rpc.json');
  await writeFile(
    path,
    JSON.stringify({ rpc: { '1': ['https://file-eth.example'], '8453': ['https://file-base.example'] } }),
  );
  const rpc = await loadRpcConfig({
    env: { WEIR_RPC_CONFIG: path, WEIR_RPC_8453: 'https://env-base.example,wss://env-base.example' },
  });
  t.deepEqual(rpc, {
    1: { http: ['https://file-eth.example'], ws: [] },
    8453: { http: ['https://env-base.example'], ws: ['wss://env-base.example'] },
  });
  t.deepEqual(await loadRpcConfig({ env: {} }), {});
  t.deepEqual(await loadRpcConfig({ env: { WEIR_RPC_1: 'https://x.example' }, configPath: path }), {
    1: { http: ['https://x.example'], ws: [] },
    8453: { http: ['https://file-base.example'], ws: [] },
  });
});
