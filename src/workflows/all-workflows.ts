import type { Ownership } from '../ownership/ownership.ts';
import { componentWork, fencedCommands } from '../app/owned-work.ts';
import type { CommandHandler } from '../actors/command-handler.ts';
import type { Rail } from '../chain-ingest/rail.ts';
import { customerCheckoutUpdates } from './customer-checkout-updates.ts';
import { invoicePayments } from './invoice-payments.ts';
import { promotionCodeReleases } from './promotion-code-releases.ts';
import { invoiceSessionClosing } from './invoice-session-closing.ts';
import { subscriptionBilling } from './subscription-billing.ts';
import { subscriptionBillingEffects } from './subscription-billing.effects.ts';
import type { EffectHandler, Workflow } from './workflow.ts';
import { createWorkflowRunner, type WorkflowRunner, type WorkflowRunnerDeps } from './workflow-runner.ts';

/** What the runners of the workflows are given, effect handlers included (they send through `commands`). */
export type WorkflowDeps = Omit<WorkflowRunnerDeps, 'commands' | 'effects'> & {
  commands: CommandHandler;
  /** Where hosted pages are served (links in what effects create). */
  publicUrl: string;
  /** Weir's networks (subscription billing checks a renewal is payable before it finalizes it). */
  rail: Pick<Rail, 'networks' | 'unpayableAddress'>;
};

/** A workflow ready to run, its state type hidden. */
type RunnableWorkflow = { name: string; run(deps: WorkflowDeps): WorkflowRunner };
const runnable = <TState>(
  workflow: Workflow<TState>,
  effects?: (deps: WorkflowDeps) => Record<string, EffectHandler>,
): RunnableWorkflow => ({
  name: workflow.name,
  run: (deps) => createWorkflowRunner({ ...deps, workflow, ...(effects ? { effects: effects(deps) } : {}) }),
});

/** Every workflow Weir runs (each in one instance at a time). */
export const ALL_WORKFLOWS: readonly RunnableWorkflow[] = [
  runnable(invoicePayments),
  runnable(customerCheckoutUpdates),
  runnable(promotionCodeReleases),
  runnable(invoiceSessionClosing),
  runnable(subscriptionBilling, subscriptionBillingEffects),
];

/** Where each workflow stands in this instance: its log position, or null when it does not run here. */
export type WorkflowPositions = { position(name: string): bigint | null };

/**
 * Runs each workflow while this instance holds its lease (`workflow.<name>`), its commands fenced
 * by that lease, created anew at each acquisition; its checkpoint and states are in this
 * instance's read store, so a new owner resumes from where it last got to (sending again what it
 * decided since then: the deciders answer nothing for a repeat).
 */
export async function ownWorkflows(ownership: Pick<Ownership, 'own'>, deps: WorkflowDeps): Promise<WorkflowPositions> {
  const running = new Map<string, WorkflowRunner>();
  for (const workflow of ALL_WORKFLOWS) {
    await ownership.own(
      `workflow.${workflow.name}`,
      componentWork((fence) => {
        const runner = workflow.run({ ...deps, commands: fencedCommands(deps.commands, fence) });
        return {
          async start() {
            await runner.start();
            running.set(workflow.name, runner);
          },
          async stop() {
            if (running.get(workflow.name) === runner) running.delete(workflow.name);
            await runner.stop();
          },
        };
      }),
    );
  }
  return { position: (name) => running.get(name)?.position() ?? null };
}
