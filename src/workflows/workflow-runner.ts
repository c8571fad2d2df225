import type { Tracer } from '@opentelemetry/api';
import type { Aggregate, DomainEvent } from '../actors/aggregate.ts';
import type { CommandHandler } from '../actors/command-handler.ts';
import type { EventStore, RecordedEvent } from '../event-store/event-store.ts';
import { categoryOf } from '../projections/projection.ts';
import type { ReadDocument, ReadStore } from '../read-store/read-store.ts';
import type { Clock } from '../shared/clock.ts';
import type { Log } from '../shared/logger.ts';
import { InvalidStateError, NotFoundError } from '../shared/errors.ts';
import { inSpan, noTracer } from '../shared/tracing.ts';
import { createProcessor, retryDelay, type PassResult, type RetryPolicy } from '../processing/processor.ts';
import { isEffect, type EffectHandler, type Workflow, type WorkflowStep } from './workflow.ts';

/** A failed command of an instance, and a failed pass, back off 1 s doubling to 5 min. */
const RETRY: RetryPolicy = { firstMs: 1000, maxMs: 5 * 60_000 };
const BATCH = 250;
/** Instances whose commands wait, sent per pass (the rest in the next one). */
const RESEND_BATCH = 200;

/** One instance of a workflow: its state as of log position `position`, and its steps not run yet, in order. */
export type WorkflowInstanceDoc = ReadDocument & {
  state: unknown;
  position: string;
  commands: WorkflowStep[];
  /** Whether `commands` holds any (an indexed field: a start finds what a crash left unsent). */
  pending: boolean;
  /** Unexpected failures in a row of its first command, and when it is tried again (ms). */
  failures: number;
  retryAt: number | null;
};

/** A stream the workflow has correlated, and the instance its events go to. */
type StreamLinkDoc = ReadDocument & { instance: string };
/** The version of each workflow whose states are stored. */
type WorkflowVersionDoc = ReadDocument & { version: number };

/** The read store collection holding a workflow's instances. */
export const workflowInstances = (name: string): string => `workflow_${name.replace(/-/g, '_')}`;
/** The version of each workflow whose states are stored (cleared: every workflow rebuilds from the log). */
export const WORKFLOW_VERSIONS = 'workflow_versions';
const checkpointOf = (name: string): string => `workflow:${name}`;

export type WorkflowRunner = {
  /** Resume from the stored checkpoint (sending first what a crash left unsent), then follow the log. */
  start(): Promise<void>;
  stop(): Promise<void>;
  /** The log position every event up to has been folded and decided. */
  position(): bigint | null;
  /** Run one pass now and wait for it (tests). */
  runOnce(): Promise<void>;
};

/**
 * Runs a workflow over the log. Each event of its categories is folded into its instance's state
 * and decided; the state and the decided commands are stored together (the read store, one
 * document per instance) before the commands are sent through the command handler in order, and
 * the checkpoint moves after each batch. A crash therefore resumes at the checkpoint: an event
 * already folded is skipped (its instance's position says so), and commands stored but not sent
 * are sent at the start. A command may thus be sent twice; the deciders answer nothing for a
 * repeat. A refusal of the domain (InvalidStateError, NotFoundError: the record moved on, e.g. a
 * session paid before it could be canceled) is logged and the command dropped; any other failure
 * is tried again on the clock (1 s doubling to 5 min) while other instances go on, and holds back
 * that instance's later commands, so they keep their order. An effect (a step that looks something
 * up before it sends its commands) runs through its handler in the same order, by the same rules.
 * A stored state of another workflow
 * version is dropped and rebuilt from the log.
 */
export type WorkflowRunnerDeps = {
  eventStore: Pick<EventStore, 'readAll' | 'onAppended'>;
  readStore: ReadStore;
  commands: Pick<CommandHandler, 'handle'>;
  clock: Clock;
  log?: Log;
  batchSize?: number;
  /** Each batch folded and decided is a span ('workflow <name> batch'); the commands it sends are its children. */
  tracer?: Tracer;
  /** The handlers of the effects the workflow decides, by name (each it names is required). */
  effects?: Readonly<Record<string, EffectHandler>>;
};

export function createWorkflowRunner<TState>(
  deps: WorkflowRunnerDeps & { workflow: Workflow<TState> },
): WorkflowRunner {
  const { workflow, eventStore, readStore, commands, clock } = deps;
  const log: Log = deps.log ?? ((line: string) => console.error(line));
  const name = workflow.name;
  const instances = readStore.collection<WorkflowInstanceDoc>(workflowInstances(name));
  const links = readStore.collection<StreamLinkDoc>(`${workflowInstances(name)}_links`);
  const categories = new Set(workflow.categories);
  const aggregates = new Map(
    workflow.aggregates.map((a) => [a.category, a as unknown as Aggregate<unknown, DomainEvent, unknown>]),
  );
  const effects = deps.effects ?? {};
  const unhandled = (workflow.effects ?? []).filter((effect) => !effects[effect]);
  if (unhandled.length > 0) throw new Error(`workflow ${name} needs handlers for its effects ${unhandled.join(', ')}`);
  let checkpoint: bigint | null = null;
  let stopped = false;
  /** The stored version checked and the checkpoint read, once (by `start`, or a `runOnce` without it). */
  let prepared: Promise<void> | null = null;

  const reasonOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));
  const describe = (step: WorkflowStep): string =>
    isEffect(step) ? `effect ${step.effect}` : `${step.command.type} of ${step.aggregate} ${step.id}`;

  async function run(step: WorkflowStep): Promise<void> {
    if (isEffect(step)) return effects[step.effect]!(step.input, step.context);
    const aggregate = aggregates.get(step.aggregate);
    if (!aggregate) throw new Error(`workflow ${name} has no aggregate ${step.aggregate}`);
    await commands.handle(aggregate, step.id, step.command, step.context);
  }

  async function instanceOf(event: RecordedEvent): Promise<string | null> {
    const correlation = workflow.correlate(event);
    let instance: string | null;
    if (correlation === false) return null;
    // For this event alone: its stream is linked to no instance.
    if (correlation !== null && typeof correlation === 'object' && 'only' in correlation) return correlation.only;
    const linked = (await links.get(event.streamId))?.instance ?? null;
    if (correlation === null) return linked;
    // A stream stays with the instance its first correlated event named (a later event may name another).
    if (linked !== null) return linked;
    if (typeof correlation === 'string') instance = correlation;
    else instance = (await links.get(correlation.sameAs))?.instance ?? null;
    if (instance !== null) await links.put({ _id: event.streamId, instance });
    return instance;
  }

  /** Send the instance's commands in order until one fails unexpectedly; answers the document as it is then. */
  async function send(doc: WorkflowInstanceDoc): Promise<WorkflowInstanceDoc> {
    let sent = 0;
    let failure: unknown = null;
    for (const step of doc.commands) {
      if (stopped) break;
      try {
        await run(step);
      } catch (error) {
        if (!(error instanceof InvalidStateError || error instanceof NotFoundError)) {
          failure = error;
          break;
        }
        log(
          `[workflow ${name}] ${describe(step)} refused: ${error.message}`,
          // Expected when the record moved on first, and at every replay of the log: not a warning.
          { level: 'debug', event: 'workflow.refused', workflow: name },
        );
      }
      sent++;
    }
    const rest = doc.commands.slice(sent);
    const failures = failure === null ? 0 : doc.failures + 1;
    const retryAt = failure === null ? null : clock.now() + retryDelay(RETRY, failures);
    const next: WorkflowInstanceDoc = { ...doc, commands: rest, pending: rest.length > 0, failures, retryAt };
    if (failure !== null)
      log(
        `[workflow ${name}] instance ${doc._id}: ${describe(rest[0]!)} failed (attempt ${failures}); retrying at ${new Date(retryAt!).toISOString()}: ${reasonOf(failure)}`,
        { level: 'warn', event: 'workflow.failed', workflow: name },
      );
    if (sent > 0 || failure !== null) await instances.put(next);
    return next;
  }

  const due = (doc: WorkflowInstanceDoc, now: number): boolean => doc.retryAt === null || doc.retryAt <= now;

  /** Send what waits: left by a crash, or held back by a failure whose retry is due. */
  async function resend(): Promise<void> {
    const now = clock.now();
    // Only the due ones: a page of instances backing off must not hide one whose retry is due.
    const waiting = await instances.find(
      { pending: true, $or: [{ retryAt: null }, { retryAt: { $lte: now } }] },
      { limit: RESEND_BATCH },
    );
    for (const doc of waiting) {
      if (stopped) return;
      if (due(doc, now)) await send(doc);
    }
  }

  /** Folds and decides `event` in its instance; answers the instance when it decided commands now due. */
  async function apply(event: RecordedEvent): Promise<string | null> {
    if (!categories.has(categoryOf(event.streamId))) return null;
    const instance = await instanceOf(event);
    if (instance === null) return null;
    const doc: WorkflowInstanceDoc = (await instances.get(instance)) ?? {
      _id: instance,
      state: workflow.initialState(),
      position: '-1',
      commands: [],
      pending: false,
      failures: 0,
      retryAt: null,
    };
    // Folded before a crash that came before the checkpoint moved.
    if (BigInt(doc.position) >= event.position) return null;
    const state = doc.state as TState;
    const decided = workflow.decide(event, state);
    const commandsNow = [...doc.commands, ...decided];
    const next: WorkflowInstanceDoc = {
      ...doc,
      state: workflow.evolve(state, event),
      position: event.position.toString(),
      commands: commandsNow,
      pending: commandsNow.length > 0,
    };
    await instances.put(next);
    return decided.length > 0 && due(next, clock.now()) ? instance : null;
  }

  /** One pass: what waits is sent, then one batch of the log is folded and decided. */
  async function pass(): Promise<PassResult> {
    // The read models were dropped under it (a rebuild of a shared store by the projections' owner,
    // or `weir replay`): its states and links went with them, so it folds the log again from the start.
    if ((await readStore.collection<WorkflowVersionDoc>(WORKFLOW_VERSIONS).get(name)) === null) {
      log(`[workflow ${name}] its states were dropped with the read models: rebuilding them from the log`);
      await checkVersion();
      checkpoint = null;
    }
    await resend();
    if (stopped) return {};
    const events = await eventStore.readAll(checkpoint, deps.batchSize ?? BATCH);
    if (events.length > 0) {
      const attributes = { 'weir.events': events.length, 'weir.log_position.last': events.at(-1)!.position.toString() };
      await inSpan(deps.tracer ?? noTracer, `workflow ${name} batch`, attributes, async () => {
        const decided = new Set<string>();
        let reached = checkpoint;
        // The states a batch moved and the position after it are committed together.
        await readStore.atomically(async () => {
          for (const event of events) {
            if (stopped) return;
            const instance = await apply(event);
            if (instance !== null) decided.add(instance);
            reached = event.position;
          }
          await readStore.setCheckpoint(checkpointOf(name), reached);
        });
        // Only once committed: a batch undone by a failure is read again, not skipped with what it decided.
        checkpoint = reached;
        // Sent once stored, outside the batch: an append waiting on the network holds back no commit.
        for (const id of decided) {
          if (stopped) return;
          const doc = await instances.get(id);
          if (doc?.pending && due(doc, clock.now())) await send(doc);
        }
      });
    }
    return { more: events.length > 0 && !stopped, nextAt: await nextRetryAt() };
  }

  /** When the earliest instance held back by a failure is due again, if any. */
  async function nextRetryAt(): Promise<number | null> {
    const [first] = await instances.find({ pending: true, failures: { $gt: 0 } }, { sort: { retryAt: 1 }, limit: 1 });
    return first?.retryAt ?? null;
  }

  async function prepare(): Promise<void> {
    await checkVersion();
    checkpoint = await readStore.getCheckpoint(checkpointOf(name));
  }

  const prepareOnce = (): Promise<void> => {
    prepared ??= prepare();
    return prepared;
  };

  const processor = createProcessor({
    name: `workflow.${name}`,
    clock,
    retry: RETRY,
    // A log or store that is down is not hammered by every append meanwhile.
    pokesWhileFailing: 'wait',
    position: () => checkpoint,
    log: (line) => log(line, { level: 'warn', event: 'workflow.pass_failed', workflow: name }),
    failureLine: ({ error, attempts, waitMs }) =>
      `[workflow ${name}] pass from log position ${checkpoint ?? 'start'} failed (attempt ${attempts}); retrying at ${new Date(clock.now() + waitMs).toISOString()}: ${reasonOf(error)}`,
    work: {
      open: () => prepareOnce(),
      subscribe: (poke) => eventStore.onAppended(poke),
      pass: () => pass(),
    },
  });
  let started = false;

  /** States of another version are dropped with the streams they correlated: rebuilt from the log. */
  async function checkVersion(): Promise<void> {
    const versions = readStore.collection<WorkflowVersionDoc>(WORKFLOW_VERSIONS);
    const stored = await versions.get(name);
    if (stored?.version === workflow.version) return;
    if (stored) log(`[workflow ${name}] version ${stored.version} -> ${workflow.version}: rebuilding its states`);
    await instances.clear();
    await links.clear();
    await readStore.setCheckpoint(checkpointOf(name), null);
    await versions.put({ _id: name, version: workflow.version });
  }

  return {
    async start() {
      started = true;
      // Resolves once prepared, not caught up: a long log is followed in the background, as the processor's passes.
      void processor.start().catch(() => {});
      await prepareOnce();
    },
    position: () => checkpoint,
    async runOnce() {
      if (started) return processor.poke();
      started = true;
      return processor.start();
    },
    async stop() {
      stopped = true;
      await processor.stop();
    },
  };
}
