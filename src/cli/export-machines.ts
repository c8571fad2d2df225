import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AnyStateMachine } from 'xstate';

/**
 * A machine's definition as JSON the Stately editor can import: states, transitions, guards and
 * actions by name (implementations stay in code).
 */
export function machineJson(machine: AnyStateMachine): unknown {
  return JSON.parse(
    JSON.stringify(machine.toJSON(), (_key, value: unknown) => (typeof value === 'function' ? undefined : value)),
  );
}

export async function exportMachines(machines: Record<string, AnyStateMachine>, outDir: string): Promise<string[]> {
  await mkdir(outDir, { recursive: true });
  const written: string[] = [];
  for (const [name, machine] of Object.entries(machines)) {
    const file = join(outDir, `${name}.json`);
    await writeFile(file, `${JSON.stringify(machineJson(machine), null, 2)}\n`);
    written.push(file);
  }
  return written;
}
