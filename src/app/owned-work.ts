import type { CommandHandler } from '../actors/command-handler.ts';
import type { EventStore } from '../event-store/event-store.ts';
import type { Mailer } from '../mail/mailer.ts';
import type { Fence, StartWork } from '../ownership/ownership.ts';
import type { SweepExecutor } from '../sweeper/sweeper.ts';
import type { WebhookSender } from '../webhooks/webhook-sender.ts';

/*
 * The side effects of owned work, guarded by its lease from the outside: each command, mail,
 * webhook request and sweep transaction first proves (a revision-checked renewal) that this
 * instance still owns the work; a stale owner's is refused with LeaseLostError.
 */

export const fencedCommands = (commands: CommandHandler, fence: Fence): CommandHandler => ({
  handle: (aggregate, id, command, ctx) => fence(() => commands.handle(aggregate, id, command, ctx)),
  load: (aggregate, id, tenant) => commands.load(aggregate, id, tenant),
});

export const fencedMailer = (mailer: Mailer, fence: Fence): Mailer => ({
  send: (message) => fence(() => mailer.send(message)),
});

export const fencedWebhookSender =
  (send: WebhookSender, fence: Fence): WebhookSender =>
  (request) =>
    fence(() => send(request));

/** The transaction is proven owned just before it is recorded and sent (`beforeSend`), and so is a rebroadcast. */
export const fencedSweepExecutor = (executor: SweepExecutor, fence: Fence): SweepExecutor => ({
  funded: (requests) => executor.funded(requests),
  flush: (requests, beforeSend) => executor.flush(requests, (signed) => fence(() => beforeSend(signed))),
  minedSweep: (hash, signed) => executor.minedSweep(hash, signed),
  rebroadcast: (hash, signed) => fence(() => executor.rebroadcast(hash, signed)),
});

/** Owned work out of a component with start and stop (created anew at each acquisition: stopped ones do not restart). */
export const componentWork =
  (create: (fence: Fence) => { start(): void | Promise<void>; stop(): Promise<void> }): StartWork =>
  async (fence) => {
    const component = create(fence);
    await component.start();
    return { stop: () => component.stop() };
  };

export const fencedAppends = (eventStore: EventStore, fence: Fence): EventStore => ({
  ...eventStore,
  append: (...args) => fence(() => eventStore.append(...args)),
});
