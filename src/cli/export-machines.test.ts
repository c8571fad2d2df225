import { existsSync } from 'node:fs';
import test from 'ava';
import { type AnyStateMachine, createMachine } from 'xstate';
import { MACHINES } from '../../machines/index.ts';
import { settleWithin } from '../shared/settle-within.ts';
import { exportMachines, machineJson } from './export-machines.ts';

const definition = (machine: AnyStateMachine) =>
  JSON.parse(
    JSON.stringify(machine.toJSON(), (_key, value: unknown) => (typeof value === 'function' ? '(code)' : value)),
  );

// The Stately editor imports a machine as its config object: plain JSON (states, transitions, guards
// and actions by name). A config xstate itself accepts and turns back into the same JSON is one it reads.
for (const [name, machine] of Object.entries(MACHINES)) {
  test(`${name}: the exported JSON is a machine config xstate builds again into the same chart (no inline code)`, (t) => {
    const json = machineJson(machine);
    t.is(JSON.stringify(json), JSON.stringify(JSON.parse(JSON.stringify(json))), 'plain JSON, no functions');
    const rebuilt = createMachine(json as Parameters<typeof createMachine>[0]);
    // Built again from the JSON alone, the chart is the same: states, transitions, guard and action names.
    t.deepEqual(definition(rebuilt), definition(machine));
    t.is(rebuilt.id, machine.id);
    t.true(Object.keys(rebuilt.states).length > 1);
  });
}

test('an --out that cannot be made (under /proc) fails at once naming it, where the export hung', async (t) => {
  if (!existsSync('/proc/self')) return t.pass('no /proc here');
  const outcome = await settleWithin(exportMachines(MACHINES, '/proc/weir-machines'), 5000);
  t.false('timedOut' in outcome, 'settled');
  t.like('rejected' in outcome ? outcome.rejected : null, { code: 'ENOENT', path: '/proc/weir-machines' });
});
