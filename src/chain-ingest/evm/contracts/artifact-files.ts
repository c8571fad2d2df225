import type { ContractArtifact } from './compile.ts';

/** Where the committed artifacts live, relative to this folder. */
export const artifactsDirectory = 'artifacts';

const generatedHeader = (what: string): string =>
  `// Generated from contracts/*.sol by src/chain-ingest/evm/contracts/build-artifacts.ts: do not edit.\n` +
  `// ${what}\n` +
  `// Regenerate with \`node --import tsx src/chain-ingest/evm/contracts/build-artifacts.ts\`; artifacts.test.ts fails when this file drifts.\n`;

/** `ForwarderFactory` -> `forwarderFactory` */
export function camelName(contractName: string): string {
  return contractName.charAt(0).toLowerCase() + contractName.slice(1);
}

/**
 * Every generated file, keyed by its path relative to this folder: one JSON artifact per
 * contract under `artifacts/`, `abis.ts` (ABIs `as const` for viem) and `bytecodes.ts`
 * (creation code). Pure, so the build script writes and the drift test compares the same text.
 */
export function renderArtifactFiles(artifacts: Record<string, ContractArtifact>): Map<string, string> {
  const files = new Map<string, string>();
  const names = Object.keys(artifacts).sort();
  for (const name of names) {
    const artifact = artifacts[name];
    if (artifact === undefined) continue;
    files.set(`${artifactsDirectory}/${name}.json`, `${JSON.stringify(artifact, null, 2)}\n`);
  }

  let abis = `${generatedHeader('ABIs of the Weir contracts, typed for viem.')}import type { Abi } from 'viem';\n`;
  let bytecodes = `${generatedHeader('Creation code of the Weir contracts (deploy with viem deployContract).')}import type { Hex } from 'viem';\n`;
  for (const name of names) {
    const artifact = artifacts[name];
    if (artifact === undefined) continue;
    abis += `\n/** ABI of ${name} (${artifact.sourceName}). */\nexport const ${camelName(name)}Abi = ${JSON.stringify(artifact.abi, null, 2)} as const satisfies Abi;\n`;
    bytecodes += `\n/** Creation code of ${name} (${artifact.sourceName}). */\nexport const ${camelName(name)}Bytecode: Hex = '${artifact.bytecode}';\n`;
  }
  files.set('abis.ts', abis);
  files.set('bytecodes.ts', bytecodes);
  return files;
}
