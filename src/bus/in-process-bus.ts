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
};

/*
 * Semantics (mirroring the JetStream adapter: one stream, durable pull consumers with
 * DeliverPolicy.All, explicit ack, max_ack_pending 1):
 *
 * - Every published message is appended to one ordered log (all subjects interleaved, like a
 *   stream) in the bus's store and kept there. Nothing is ever evicted. With a store on disk, the
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

  const store = options.store ?? createMemoryBusStore();
  const durables = new Map<string, DurableState>();
  const durableAt = (name: string, cursor: number): DurableState => ({
    name,
    cursor,
    saved: cursor,
    deliveriesAtCursor: 0,
    active: undefined,
  });
  for (const [name, cursor] of store.durables()) durables.set(name, durableAt(name, cursor));
  let closed = false;
  let closing: Promise<void> | undefined;

  /** The messages matching `filterSubject` at or after the durable's cursor (the one being handled included). */
  const backlog = (durable: DurableState, filterSubject: string): number =>
    store.subjectsFrom(durable.cursor).filter((subject) => subjectMatchesFilter(filterSubject, subject)).length;

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

    /** The message at the cursor once it is moved to the next one matching the filter; undefined at the end. */
    const nextMatching = (): StoredMessage | undefined => {
      while (durable.cursor < store.length()) {
        const candidate = store.at(durable.cursor);
        if (candidate !== undefined && subjectMatchesFilter(filterSubject, candidate.subject)) return candidate;
        durable.cursor += 1;
        durable.deliveriesAtCursor = 0;
      }
      return undefined;
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
        durable = durableAt(durableName, predecessor?.cursor ?? 0);
        store.setPosition(durableName, durable.cursor);
        durables.set(durableName, durable);
      }
      if (durable.active !== undefined) {
        throw new BusArgumentError(`durable consumer "${durableName}" is already being consumed; stop it first`);
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
