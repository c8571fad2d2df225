/**
 * Compiles contracts/*.sol with the pinned solc and (re)writes the committed artifacts, abis.ts
 * and bytecodes.ts beside this file. Deterministic: running it twice changes nothing.
 *
 *   node --import tsx src/chain-ingest/evm/contracts/build-artifacts.ts
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { artifactsDirectory, renderArtifactFiles } from './artifact-files.ts';
import { compileContracts, readContractSources } from './compile.ts';

const here = dirname(fileURLToPath(import.meta.url));

const files = renderArtifactFiles(compileContracts(readContractSources()));
mkdirSync(join(here, artifactsDirectory), { recursive: true });
// Drop artifacts of contracts that no longer exist.
for (const stale of readdirSync(join(here, artifactsDirectory))) {
  if (!files.has(`${artifactsDirectory}/${stale}`)) rmSync(join(here, artifactsDirectory, stale));
}
for (const [path, content] of files) writeFileSync(join(here, path), content);
console.log(`wrote ${[...files.keys()].join(', ')}`);
