import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomically } from '../../../shared/write-file-atomically.ts';
import { parseCheckpoint, type CheckpointStore, type EvmFollowerCheckpoint } from './checkpoint.ts';
import { CheckpointStoreError } from './errors.ts';

const NETWORK_FILE_NAME = /^[a-z0-9][a-z0-9-]*$/;

/** The file that holds a network's checkpoint in `dir`. */
export function checkpointFilePath(dir: string, network: string): string {
  if (!NETWORK_FILE_NAME.test(network)) {
    throw new CheckpointStoreError(
      network,
      dir,
      'a network name must be lowercase letters, digits and dashes to name a checkpoint file',
    );
  }
  return join(dir, `${network}.evm-follower.json`);
}

/**
 * Checkpoints as JSON files, one per network (`<dir>/<network>.evm-follower.json`). A write goes
 * to a temporary file in the same directory, is flushed to disk, and is renamed over the old
 * file (the directory flushed too: writeFileAtomically), so a crash leaves either the old or the
 * new checkpoint, never a torn one. `dir` is
 * created when missing (0700; files 0600, like everything in the data dir).
 */
export function createFileCheckpointStore(dir: string): CheckpointStore {
  return {
    async get(network) {
      const path = checkpointFilePath(dir, network);
      let text: string;
      try {
        text = await readFile(path, 'utf8');
      } catch (error) {
        if (isNodeError(error) && error.code === 'ENOENT') return undefined;
        throw new CheckpointStoreError(
          network,
          path,
          `cannot be read (${describe(error)}); check the file's permissions`,
          { cause: error },
        );
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (error) {
        throw new CheckpointStoreError(
          network,
          path,
          'is not valid JSON; repair it or delete it to start again from startBlock',
          { cause: error },
        );
      }
      return parseCheckpoint(parsed, network, path);
    },

    async set(network, checkpoint: EvmFollowerCheckpoint) {
      const path = checkpointFilePath(dir, network);
      try {
        await mkdir(dir, { recursive: true, mode: 0o700 });
        await writeFileAtomically(path, `${JSON.stringify(checkpoint, null, 2)}\n`);
      } catch (error) {
        throw new CheckpointStoreError(
          network,
          path,
          `cannot be written (${describe(error)}); check free disk space and the directory's permissions`,
          { cause: error },
        );
      }
    },
  };
}

function isNodeError(error: unknown): error is NodeJS.ErrnoException {
  return error instanceof Error && 'code' in error;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
