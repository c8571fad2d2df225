import {
  notifyAcknowledged,
  type Bus,
  type BusMessage,
  type Consumer,
  type ConsumerOptions,
  type MessageHandler,
  type PublishOptions,
} from './bus.ts';
import { BusArgumentError, BusClosedError } from './errors.ts';
import { createMemoryBusStore, type InProcessBusStore, type StoredMessage } from './in-process-bus-store.ts';
import { defaultMaxRedeliveryDelayMs, defaultRedeliveryDelayMs, redeliveryDelay } from './redelivery.ts';
import {
  assertContinueFrom,
  assertDurableName,
  assertPublishSubject,
  assertSubjectFilter,
  subjectMatchesFilter,
} from './subject.ts';

export type InProcessBusOptions = {
  /** A second publish with the same messageId within this window is dropped. Default 2 minutes. */
  duplicateWindowMs?: number;
  /** Delay before redelivering a message whose handler threw. Default 50 ms, doubled per failure. */
  redeliveryDelayMs?: number;
  /** Ceiling of the redelivery backoff. Default 1 s. */
  maxRedeliveryDelayMs?: number;
  /** Wall clock in ms, for the duplicate window. Default Date.now. */
  now?: () => number;
  /** Where the log and the durables' positions are kept (closed with the bus). Default: in memory. */
  store?: InProcessBusStore;
  /**
   * A message every durable wanting it acknowledged is removed once published this long ago (never
   * less than the duplicate window, whose check reads the kept messages). Default 1 day.
   */
  retainAcknowledgedMs?: number;
  /** Messages looked at per pruning step (one short synchronous store call between event-loop turns). Default 500. */
  pruneBatchSize?: number;
};

/** How often acknowledgements start a pruning pass (each pass goes on, batch by batch, to its end). */
const PRUNE_INTERVAL_MS = 1_000;

/*
 * Semantics (mirroring the JetStream adapter: one stream, durable pull consumers with
 * DeliverPolicy.All, explicit ack, max_ack_pending 1):
 *
 * - Every published message is appended to one ordered log (all subjects interleaved, like a
 *   stream) in the bus's store. It is removed once every durable whose filter matches it has
 *   acknowledged it (as a JetStream interest stream would) and it was published more than
 *   `retainAcknowledgedMs` ago; one no durable wants (none exists yet for its subject) is kept. The
 *   JetStream stream keeps everything, so a durable created later sees the same messages on both
 *   buses except those every other interested durable acknowledged over that retention ago (a new
 *   durable of the app comes with `continueFrom`, or for a subject no durable wanted: nothing it
 *   would get is removed). Pruning runs in small batches between event-loop turns, started by
 *   acknowledgements (at most once a second) and by opening the bus. With a store on disk, the
 *   log and each durable's position survive the process: a bus opened again on it delivers what was
 *   published and not acknowledged before (a message being handled at a crash comes again, its
 *   deliveryCount from 1), and drops a duplicate of one published within the window.
 * - A durable consumer seen for the first time starts at the beginning of the log, so it also
 *   receives messages published before it was created; or, with `continueFrom` naming a durable
 *   that exists, where that durable stands (its first message not yet acknowledged).
 * - Each durable delivers the messages matching its filter in log order, one at a time. A handler
 *   that returns acknowledges the message; one that throws gets the same message again after a
 *   backoff (deliveryCount + 1), and later messages wait behind it.
 * - stop() lets a running handler finish (its outcome still counts) and starts no new one. A later
 *   consume() with the same durable name resumes after the last acknowledged message, with the
 *   filter it passes. Only one active consumer per durable name at a time (BusArgumentError
 *   otherwise; JetStream would instead share the durable between them).
 */

type DurableState = {
  name: string;
  /** Index in the log of the first message not yet acknowledged or skipped. */
  cursor: number;
  /** The cursor as the store has it. */
  saved: number;
  /** Its filter as last consumed; undefined (every subject) for one kept before filters were. */
  filter: string | undefined;
  /** Deliveries so far of the message at `cursor`, kept across consumers of this durable. */
  deliveriesAtCursor: number;
  active: ActiveConsumer | undefined;
};

type ActiveConsumer = {
  stop(): Promise<void>;
  backlog(): number;
  wake(): void;
};

export function createInProcessBus(options: InProcessBusOptions = {}): Bus {
  const duplicateWindowMs = options.duplicateWindowMs ?? 120_000;
  const baseDelayMs = options.redeliveryDelayMs ?? defaultRedeliveryDelayMs;
  const maxDelayMs = options.maxRedeliveryDelayMs ?? defaultMaxRedeliveryDelayMs;
  const now = options.now ?? Date.now;

  const retainMs = Math.max(options.retainAcknowledgedMs ?? 86_400_000, duplicateWindowMs);
  const pruneBatchSize = Math.max(1, options.pruneBatchSize ?? 500);

  const store = options.store ?? createMemoryBusStore();
  const durables = new Map<string, DurableState>();
  const durableAt = (name: string, cursor: number, filter: string | undefined): DurableState => ({
    name,
    cursor,
    saved: cursor,
    filter,
    deliveriesAtCursor: 0,
    active: undefined,
  });
  for (const [name, { position, filter }] of store.durables()) durables.set(name, durableAt(name, position, filter));
  let closed = false;
  let closing: Promise<void> | undefined;

  /** The subjects kept messages may have that `filterSubject` matches (few: one per network and kind). */
  const subjectsOf = (filterSubject: string): string[] =>
    store.subjects().filter((subject) => subjectMatchesFilter(filterSubject, subject));

  /** The messages matching `filterSubject` at or after the durable's cursor (the one being handled included), counted by index. */
  const backlog = (durable: DurableState, filterSubject: string): number =>
    subjectsOf(filterSubject).reduce((sum, subject) => sum + store.countFrom(durable.cursor, subject), 0);

  /** Whether every durable that wants the message has acknowledged it (in the store), and one does. */
  const acknowledgedByAll = (position: number, subject: string): boolean => {
    let wanted = false;
    for (const durable of durables.values()) {
      if (durable.filter !== undefined && !subjectMatchesFilter(durable.filter, subject)) continue;
      if (durable.saved <= position) return false;
      wanted = true;
    }
    return wanted;
  };

  /** Where the pruning pass stands; it starts again from the first message kept at its end. */
  let pruneFrom = 0;
  /** Removes one batch of what every durable acknowledged; true when the pass has more to look at. */
  const pruneStep = (): boolean => {
    const cutoff = now() - retainMs;
    // Nothing at or past the furthest durable's stored position is acknowledged by all.
    const ceiling = Math.max(-1, ...[...durables.values()].map((durable) => durable.saved));
    const entries = store.subjectsFrom(Math.max(pruneFrom, store.firstPosition()), pruneBatchSize);
    const removable: number[] = [];
    let ended = entries.length < pruneBatchSize;
    for (const entry of entries) {
      if (entry.position >= ceiling || entry.publishedAt > cutoff) {
        ended = true;
        break;
      }
      if (acknowledgedByAll(entry.position, entry.subject)) removable.push(entry.position);
    }
    if (removable.length > 0) store.remove(removable);
    pruneFrom = ended ? 0 : (entries.at(-1)?.position ?? -1) + 1;
    return !ended;
  };
  let pruning = false;
  let prunedAt = Number.NEGATIVE_INFINITY;
  /** Starts a pruning pass unless one runs or one started less than a second ago (on the bus's clock). */
  const schedulePrune = (): void => {
    if (pruning || closed || now() - prunedAt < PRUNE_INTERVAL_MS) return;
    pruning = true;
    prunedAt = now();
    const step = (): void => {
      let more = false;
      try {
        if (!closed) more = pruneStep();
      } catch {
        // The store refused (the disk): the next pass tries again; delivery does not depend on it.
        pruneFrom = 0;
      }
      if (more) setImmediate(step);
      else pruning = false;
    };
    setImmediate(step);
  };

  /** Keeps the durable's cursor in the store (it may have moved past messages of other subjects). */
  const save = (durable: DurableState): void => {
    if (durable.saved === durable.cursor) return;
    store.setPosition(durable.name, durable.cursor);
    durable.saved = durable.cursor;
  };

  /** Moves the durable past the message at its cursor, in the store first; false (it comes again) when the store fails. */
  const acknowledge = (durable: DurableState): boolean => {
    durable.cursor += 1;
    try {
      save(durable);
    } catch {
      durable.cursor -= 1;
      return false;
    }
    durable.deliveriesAtCursor = 0;
    return true;
  };

  const startConsumer = (
    durable: DurableState,
    filterSubject: string,
    handler: MessageHandler,
    onAcknowledged: ((message: BusMessage) => void) | undefined,
  ): ActiveConsumer => {
    let stopped = false;
    let signal = createSignal();
    const wake = (): void => signal.fire();
    const stopSignal = createSignal();

    /** The message at the cursor once it is moved to the next one matching the filter (found by index); undefined at the end. */
    const nextMatching = (): StoredMessage | undefined => {
      if (durable.cursor >= store.length()) return undefined;
      let next: number | undefined;
      for (const subject of subjectsOf(filterSubject)) {
        const at = store.nextFrom(durable.cursor, subject);
        if (at !== undefined && (next === undefined || at < next)) next = at;
      }
      const target = next ?? store.length();
      if (target !== durable.cursor) {
        durable.cursor = target;
        durable.deliveriesAtCursor = 0;
      }
      return next === undefined ? undefined : store.at(next);
    };

    const deliver = async (stored: StoredMessage): Promise<BusMessage | undefined> => {
      durable.deliveriesAtCursor += 1;
      const message: BusMessage = {
        subject: stored.subject,
        data: stored.data.slice(),
        deliveryCount: durable.deliveriesAtCursor,
        ...(stored.messageId === undefined ? {} : { messageId: stored.messageId }),
      };
      try {
        await handler(message);
        return message;
      } catch {
        return undefined;
      }
    };

    const run = async (): Promise<void> => {
      // Deliver from a later turn of the event loop, never from inside consume().
      await Promise.resolve();
      while (!stopped) {
        const stored = nextMatching();
        if (stored === undefined) {
          try {
            save(durable);
          } catch {
            // It only spares the next start a scan past other subjects.
          }
          await signal.fired;
          signal = createSignal();
          continue;
        }
        const acknowledged = await deliver(stored);
        if (acknowledged !== undefined && acknowledge(durable)) {
          notifyAcknowledged(onAcknowledged, acknowledged);
          schedulePrune();
          continue;
        }
        if (stopped) break;
        const delayMs = redeliveryDelay(durable.deliveriesAtCursor, baseDelayMs, maxDelayMs);
        await Promise.race([sleep(delayMs), stopSignal.fired]);
      }
    };

    const running = run();
    let stopping: Promise<void> | undefined;
    const self: ActiveConsumer = {
      wake,
      backlog: () => backlog(durable, filterSubject),
      stop() {
        stopping ??= (async () => {
          stopped = true;
          stopSignal.fire();
          wake();
          await running;
          if (durable.active === self) durable.active = undefined;
        })();
        return stopping;
      },
    };
    return self;
  };

  // What was acknowledged before a restart goes too (the pass starts on a later turn).
  if (durables.size > 0) schedulePrune();

  return {
    async publish(subject: string, data: Uint8Array, publishOptions?: PublishOptions): Promise<void> {
      if (closed) throw new BusClosedError();
      assertPublishSubject(subject);
      const messageId = publishOptions?.messageId;
      const at = now();
      if (messageId !== undefined) {
        const publishedAt = store.lastPublishedAt(messageId);
        if (publishedAt !== undefined && at - publishedAt < duplicateWindowMs) return;
      }
      store.append({ subject, data, messageId, publishedAt: at });
      for (const durable of durables.values()) durable.active?.wake();
    },

    async consume(consumerOptions: ConsumerOptions, handler: MessageHandler): Promise<Consumer> {
      if (closed) throw new BusClosedError();
      const { durableName, filterSubject } = consumerOptions;
      assertDurableName(durableName);
      assertSubjectFilter(filterSubject);
      assertContinueFrom(durableName, consumerOptions.continueFrom);
      let durable = durables.get(durableName);
      if (durable === undefined) {
        const predecessor =
          consumerOptions.continueFrom === undefined ? undefined : durables.get(consumerOptions.continueFrom);
        durable = durableAt(durableName, predecessor?.cursor ?? 0, filterSubject);
        store.setPosition(durableName, durable.cursor);
        store.setFilter(durableName, filterSubject);
        durables.set(durableName, durable);
      }
      if (durable.active !== undefined) {
        throw new BusArgumentError(`durable consumer "${durableName}" is already being consumed; stop it first`);
      }
      if (durable.filter !== filterSubject) {
        // As JetStream updates the consumer's filter: what it keeps for this durable follows it.
        store.setFilter(durableName, filterSubject);
        durable.filter = filterSubject;
      }
      const active = startConsumer(durable, filterSubject, handler, consumerOptions.onAcknowledged);
      durable.active = active;
      return {
        stop: () => active.stop(),
        drained: async () => active.backlog() === 0,
        backlog: async () => active.backlog(),
      };
    },

    async deleteDurable(durableName: string): Promise<void> {
      if (closed) throw new BusClosedError();
      assertDurableName(durableName);
      if (durables.get(durableName)?.active !== undefined) {
        throw new BusArgumentError(`durable consumer "${durableName}" is being consumed; stop it before deleting it`);
      }
      store.deleteDurable(durableName);
      durables.delete(durableName);
      schedulePrune();
    },

    close(): Promise<void> {
      closed = true;
      closing ??= (async () => {
        await Promise.all([...durables.values()].map((durable) => durable.active?.stop()));
        store.close();
      })();
      return closing;
    },
  };
}

type Signal = { fired: Promise<void>; fire(): void };

function createSignal(): Signal {
  let fire: () => void = () => undefined;
  const fired = new Promise<void>((resolve) => {
    fire = resolve;
  });
  return { fired, fire };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => {
    setTimeout(resolve, ms).unref();
  });
}
