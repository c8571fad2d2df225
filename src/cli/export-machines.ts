import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AnyStateMachine } from 'xstate';
import { makeDirectory } from '../shared/make-directory.ts';

/**
 * A machine's config as JSON, the form the Stately editor imports: states, transitions, and guards
 * and actions by name (their implementations stay in code, so none is written inline).
 */
export function machineJson(machine: AnyStateMachine): unknown {
  return JSON.parse(
    JSON.stringify(machine.config, (key, value: unknown) => {
      if (typeof value === 'function') throw new Error(`${machine.id}: ${key} is inline code; name it in setup()`);
      return value;
    }),
  );
}

export async function exportMachines(machines: Record<string, AnyStateMachine>, outDir: string): Promise<string[]> {
  await makeDirectory(outDir);
  const written: string[] = [];
  for (const [name, machine] of Object.entries(machines)) {
    const file = join(outDir, `${name}.json`);
    await writeFile(file, `${JSON.stringify(machineJson(machine), null, 2)}\n`);
    written.push(file);
  }
  return written;
}
