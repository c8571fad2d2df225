import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Abi, Hex } from 'viem';

/** The solc build every artifact is compiled with (the pinned `solc` npm package, bundled wasm). */
export const solcVersion = '0.8.28+commit.7893614a';

/**
 * Compiler settings, fixed so that the same sources always give the same bytes:
 * optimizer on with 200 runs; EVM `paris` (no PUSH0/MCOPY/transient storage), so the bytecode
 * runs on every EVM chain Weir may serve; no metadata hash appended (the CBOR trailer then holds
 * only the solc version, so comments and file paths never change the bytecode).
 */
export const solcSettings = {
  optimizer: { enabled: true, runs: 200 },
  evmVersion: 'paris',
  metadata: { bytecodeHash: 'none' },
  outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object'] } },
} as const;

/** Solidity sources keyed by their path relative to the repository root (`contracts/X.sol`). */
export type SoliditySources = Readonly<Record<string, string>>;

export type ContractArtifact = {
  contractName: string;
  /** Path of the defining file relative to the repository root. */
  sourceName: string;
  abi: Abi;
  /** Creation code. */
  bytecode: Hex;
  /** Runtime code as solc emits it: immutables are still zero placeholders. */
  deployedBytecode: Hex;
  compiler: { version: string; settings: typeof solcSettings };
  /** sha256 (hex) of every source compiled together, keyed like {@link SoliditySources}, sorted. */
  sourcesSha256: Record<string, string>;
};

/** solc reported errors (not warnings): the sources do not compile. */
export class SolidityCompileError extends Error {
  override readonly name = 'SolidityCompileError';
  constructor(readonly diagnostics: readonly string[]) {
    super(`Solidity sources do not compile; fix contracts/ and run build-artifacts again:\n${diagnostics.join('\n')}`);
  }
}

/** The loaded solc package is not the pinned version: artifacts would not be reproducible. */
export class SolcVersionMismatchError extends Error {
  override readonly name = 'SolcVersionMismatchError';
  constructor(readonly found: string) {
    super(
      `solc ${found} is installed but artifacts are pinned to ${solcVersion}: run \`npm ci\` to install the locked solc package`,
    );
  }
}

/** The repository root (where `contracts/` lives). */
export const repositoryRoot: string = fileURLToPath(new URL('../../../../', import.meta.url));

/** Reads every `contracts/*.sol` file, keyed by `contracts/<name>.sol`, in name order. */
export function readContractSources(root: string = repositoryRoot): SoliditySources {
  const directory = join(root, 'contracts');
  const names = readdirSync(directory)
    .filter((name) => name.endsWith('.sol'))
    .sort();
  return Object.fromEntries(names.map((name) => [`contracts/${name}`, readFileSync(join(directory, name), 'utf8')]));
}

type SolcModule = { version(): string; compile(input: string): string };

type SolcOutput = {
  errors?: { severity: string; formattedMessage?: string; message: string }[];
  contracts?: Record<
    string,
    Record<string, { abi: Abi; evm: { bytecode: { object: string }; deployedBytecode: { object: string } } }>
  >;
};

let loadedSolc: SolcModule | undefined;

function loadSolc(): SolcModule {
  if (loadedSolc === undefined) {
    const solc = createRequire(import.meta.url)('solc') as SolcModule;
    const version = solc.version();
    if (!version.startsWith(`${solcVersion}.`) && version !== solcVersion) throw new SolcVersionMismatchError(version);
    loadedSolc = solc;
  }
  return loadedSolc;
}

/**
 * Compiles `sources` in-process with the pinned solc (standard JSON) and returns one artifact
 * per contract, keyed by contract name, in name order. Throws {@link SolidityCompileError}.
 */
export function compileContracts(sources: SoliditySources = readContractSources()): Record<string, ContractArtifact> {
  const sourceNames = Object.keys(sources).sort();
  const input = {
    language: 'Solidity',
    sources: Object.fromEntries(sourceNames.map((name) => [name, { content: sources[name] }])),
    settings: solcSettings,
  };
  const output = JSON.parse(loadSolc().compile(JSON.stringify(input))) as SolcOutput;
  const failures = (output.errors ?? []).filter((entry) => entry.severity === 'error');
  if (failures.length > 0)
    throw new SolidityCompileError(failures.map((entry) => entry.formattedMessage ?? entry.message));

  const sourcesSha256 = Object.fromEntries(
    sourceNames.map((name) => [
      name,
      createHash('sha256')
        .update(sources[name] ?? '', 'utf8')
        .digest('hex'),
    ]),
  );
  const artifacts: ContractArtifact[] = [];
  for (const sourceName of sourceNames) {
    const contracts = output.contracts?.[sourceName] ?? {};
    for (const contractName of Object.keys(contracts).sort()) {
      const compiled = contracts[contractName];
      if (compiled === undefined) continue;
      artifacts.push({
        contractName,
        sourceName,
        abi: compiled.abi,
        bytecode: `0x${compiled.evm.bytecode.object}`,
        deployedBytecode: `0x${compiled.evm.deployedBytecode.object}`,
        compiler: { version: solcVersion, settings: solcSettings },
        sourcesSha256,
      });
    }
  }
  const byName: Record<string, ContractArtifact> = {};
  for (const artifact of artifacts.sort((a, b) =>
    a.contractName < b.contractName ? -1 : a.contractName > b.contractName ? 1 : 0,
  )) {
    if (byName[artifact.contractName] !== undefined) {
      throw new SolidityCompileError([
        `two contracts are named ${artifact.contractName}: contract names must be unique across contracts/`,
      ]);
    }
    byName[artifact.contractName] = artifact;
  }
  return byName;
}
