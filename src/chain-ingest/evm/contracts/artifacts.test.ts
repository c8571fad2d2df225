import test from 'ava';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { falseReturningTokenAbi, forwarderAbi, forwarderFactoryAbi, testTokenAbi, tetherLikeTokenAbi } from './abis.ts';
import { artifactsDirectory, renderArtifactFiles } from './artifact-files.ts';
import { forwarderFactoryBytecode } from './bytecodes.ts';
import {
  compileContracts,
  readContractSources,
  SolidityCompileError,
  solcVersion,
  type ContractArtifact,
} from './compile.ts';

const here = dirname(fileURLToPath(import.meta.url));
const sources = readContractSources();
const compiled = compileContracts(sources);
const rebuild = 'run `node --import tsx src/chain-ingest/evm/contracts/build-artifacts.ts` and commit the result';

test('every generated file equals a fresh compile of contracts/*.sol', (t) => {
  const fresh = renderArtifactFiles(compiled);
  for (const [path, content] of fresh) {
    const file = join(here, path);
    t.true(existsSync(file), `${path} is missing: ${rebuild}`);
    if (existsSync(file)) t.is(readFileSync(file, 'utf8'), content, `${path} drifted from contracts/: ${rebuild}`);
  }
  const committedArtifacts = readdirSync(join(here, artifactsDirectory)).map((name) => `${artifactsDirectory}/${name}`);
  t.deepEqual(
    committedArtifacts.filter((path) => !fresh.has(path)),
    [],
    `stale artifacts without a contract: ${rebuild}`,
  );
});

test('artifacts record the pinned compiler and the sha256 of every source', (t) => {
  const expectedHashes = Object.fromEntries(
    Object.entries(sources).map(([name, text]) => [name, createHash('sha256').update(text, 'utf8').digest('hex')]),
  );
  t.deepEqual(Object.keys(compiled), [
    'FalseReturningToken',
    'Forwarder',
    'ForwarderFactory',
    'TestToken',
    'TetherLikeToken',
  ]);
  for (const name of Object.keys(compiled)) {
    const committed = JSON.parse(
      readFileSync(join(here, artifactsDirectory, `${name}.json`), 'utf8'),
    ) as ContractArtifact;
    t.is(committed.compiler.version, solcVersion);
    t.deepEqual(committed.sourcesSha256, expectedHashes);
    t.regex(committed.bytecode, /^0x[0-9a-f]+$/);
    t.regex(committed.deployedBytecode, /^0x[0-9a-f]+$/);
  }
});

test('compiling is deterministic and comments do not change the bytecode', (t) => {
  const withComment = Object.fromEntries(
    Object.entries(sources).map(([name, text]) => [
      name,
      `${text}\n// a trailing comment that must not change the bytes\n`,
    ]),
  );
  const again = compileContracts(withComment);
  for (const name of Object.keys(compiled)) {
    t.is(again[name]?.bytecode, compiled[name]?.bytecode, `${name} bytecode depends on comments`);
    t.is(again[name]?.deployedBytecode, compiled[name]?.deployedBytecode);
  }
});

test('the typed ABIs and bytecodes are the compiled ones', (t) => {
  t.deepEqual(forwarderAbi, compiled['Forwarder']?.abi);
  t.deepEqual(forwarderFactoryAbi, compiled['ForwarderFactory']?.abi);
  t.deepEqual(testTokenAbi, compiled['TestToken']?.abi);
  t.deepEqual(tetherLikeTokenAbi, compiled['TetherLikeToken']?.abi);
  t.is(compiled['ForwarderFactory']?.bytecode, forwarderFactoryBytecode);
  // The no-return token really returns nothing from transfer: the safe-transfer path is exercised.
  const transfer = tetherLikeTokenAbi.find((item) => item.type === 'function' && item.name === 'transfer');
  t.deepEqual(transfer?.type === 'function' ? transfer.outputs : undefined, []);
  // The Tron-USDT-like token declares a bool it sets false: the balance-checked path is exercised.
  const falseTransfer = falseReturningTokenAbi.find((item) => item.type === 'function' && item.name === 'transfer');
  t.deepEqual(falseTransfer?.type === 'function' ? falseTransfer.outputs.map((o) => o.type) : undefined, ['bool']);
  t.deepEqual(falseReturningTokenAbi, compiled['FalseReturningToken']?.abi);
});

test('a source that does not compile gives a SolidityCompileError naming the problem', (t) => {
  const error = t.throws(
    () => compileContracts({ 'contracts/Broken.sol': 'pragma solidity 0.8.28; contract Broken { function f( }' }),
    {
      instanceOf: SolidityCompileError,
    },
  );
  t.regex(error?.message ?? '', /Broken\.sol/);
});
