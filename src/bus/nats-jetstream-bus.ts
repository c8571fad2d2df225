import {
  AckPolicy,
  DeliverPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  jetstream,
  jetstreamManager,
  StorageType,
  type ConsumerConfig,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
} from '@nats-io/jetstream';
import { connect, nanos, type NatsConnection } from '@nats-io/transport-node';
import {
  notifyAcknowledged,
  type Bus,
  type BusMessage,
  type Consumer,
  type ConsumerOptions,
  type MessageHandler,
  type PublishOptions,
} from './bus.ts';
import { BusArgumentError, BusClosedError, BusConnectionError, BusPublishError } from './errors.ts';
import { defaultMaxRedeliveryDelayMs, defaultRedeliveryDelayMs, redeliveryDelay } from './redelivery.ts';
import {
  assertContinueFrom,
  assertDurableName,
  assertPublishSubject,
  assertSubjectFilter,
  subjectMatchesFilter,
} from './subject.ts';

export type NatsJetStreamBusOptions = {
  /** NATS server URL(s), e.g. `nats://127.0.0.1:4222`. */
  servers: string | string[];
  /** JetStream stream holding the bus messages. Default `WEIR_CHAIN`. */
  streamName?: string;
  /** Subjects the stream captures; publishing outside them is an error. Default `['chain.>']`. */
  subjects?: string[];
  /** The stream drops a second message with the same messageId within this window. Default 2 minutes. */
  duplicateWindowMs?: number;
  /** A delivered message not acked within this time is redelivered. Default 5 s (extended while the handler runs). */
  ackWaitMs?: number;
  /** Delay before redelivering a message whose handler threw. Default 50 ms, doubled per failure. */
  redeliveryDelayMs?: number;
  /** Ceiling of the redelivery backoff. Default 1 s. */
  maxRedeliveryDelayMs?: number;
  /** Connection name shown in NATS monitoring. Default `weir-bus`. */
  connectionName?: string;
  /**
   * Trouble that happens outside any call: the connection dropping (the client reconnects by itself),
   * a consumer's message loop failing, an ack lost. Default console.error.
   */
  onError?: (error: Error) => void;
  /**
   * Lines about a durable consumer whose state (the consumer info `drained()` reads) cannot be
   * read: one when reads start failing, one when they answer again. Default console.warn.
   */
  log?: (line: string) => void;
};

/*
 * One JetStream stream (file storage, duplicate window) holds every bus message. Each durable name
 * is a durable pull consumer on it: DeliverPolicy.All (or, with `continueFrom`, StartSequence
 * after the other durable's ack floor), explicit ack, filter subject, and
 * max_ack_pending 1, so the server hands out one message at a time and a message that was nak'd
 * (handler threw) blocks the ones after it until it is acked: ordered, at least once.
 *
 * stop() drains the consumer's inbox subscription (unsubscribe, confirmed by the server, while
 * still accepting what was already sent), lets a running handler finish and acks/naks it, and
 * naks (without delay) a message that arrived after the stop, so the next consumer of the durable
 * gets it at once instead of after ackWaitMs (its deliveryCount then counts that delivery too).
 */
export async function createNatsJetStreamBus(options: NatsJetStreamBusOptions): Promise<Bus> {
  const streamName = options.streamName ?? 'WEIR_CHAIN';
  const subjects = options.subjects ?? ['chain.>'];
  const duplicateWindowMs = options.duplicateWindowMs ?? 120_000;
  // Short, so a message held by a consumer that died is redelivered within seconds; a handler
  // that runs longer keeps its message by signalling progress (see keepAlive below).
  const ackWaitMs = options.ackWaitMs ?? 5_000;
  const baseDelayMs = options.redeliveryDelayMs ?? defaultRedeliveryDelayMs;
  const maxDelayMs = options.maxRedeliveryDelayMs ?? defaultMaxRedeliveryDelayMs;
  const onError = options.onError ?? ((error: Error) => console.error(error));
  const log = options.log ?? ((line: string) => console.warn(`[bus] ${line}`));
  const servers = Array.isArray(options.servers) ? options.servers : [options.servers];
  const where = `NATS at ${servers.map(withoutCredentials).join(', ')}`;

  if (servers.length === 0) throw new BusArgumentError('createNatsJetStreamBus: no NATS server URL given');
  for (const subject of subjects) assertSubjectFilter(subject);

  let nc: NatsConnection;
  try {
    nc = await connect({
      servers,
      name: options.connectionName ?? 'weir-bus',
      maxReconnectAttempts: -1,
    });
  } catch (error) {
    throw new BusConnectionError(`cannot connect to ${where}: ${messageOf(error)}`, { cause: error });
  }

  let jsm: JetStreamManager;
  try {
    jsm = await jetstreamManager(nc);
    await ensureStream(jsm, { streamName, subjects, duplicateWindowMs });
  } catch (error) {
    await nc.close().catch(() => undefined);
    throw new BusConnectionError(`cannot set up JetStream stream "${streamName}" on ${where}: ${messageOf(error)}`, {
      cause: error,
    });
  }
  const js: JetStreamClient = jetstream(nc);
  let connected = true;
  void reportConnectionTrouble(nc, where, onError, (now) => {
    connected = now;
  });

  /** Each consumer this bus runs, with its durable name. */
  const activeConsumers = new Map<Consumer, string>();
  let closing: Promise<void> | undefined;

  const assertOpen = (): void => {
    if (closing !== undefined || nc.isClosed()) throw new BusClosedError(`the bus on ${where} is closed`);
  };

  const consumerInfo = (durableName: string) =>
    jsm.consumers.info(streamName, durableName).catch((error: unknown) => {
      if (isApiError(error, JetStreamApiCodes.ConsumerNotFound)) return undefined;
      throw error;
    });

  /** Where a new durable starts: after what `continueFrom` acknowledged in order when it exists, else at the first message kept. */
  const startOf = async (continueFrom: string | undefined): Promise<Partial<ConsumerConfig>> => {
    const predecessor = continueFrom === undefined ? undefined : await consumerInfo(continueFrom);
    if (predecessor === undefined) return { deliver_policy: DeliverPolicy.All };
    return { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: predecessor.ack_floor.stream_seq + 1 };
  };

  const ensureConsumer = async (
    durableName: string,
    filterSubject: string,
    continueFrom: string | undefined,
  ): Promise<void> => {
    const config = {
      ack_wait: nanos(ackWaitMs),
      max_ack_pending: 1,
      max_deliver: -1,
      filter_subject: filterSubject,
    } satisfies Partial<ConsumerConfig>;
    const existing = await consumerInfo(durableName);
    if (existing === undefined) {
      await jsm.consumers.add(streamName, {
        ...config,
        ...(await startOf(continueFrom)),
        durable_name: durableName,
        ack_policy: AckPolicy.Explicit,
      });
    } else if (
      existing.config.filter_subject !== filterSubject ||
      existing.config.ack_wait !== config.ack_wait ||
      existing.config.max_ack_pending !== config.max_ack_pending
    ) {
      await jsm.consumers.update(streamName, durableName, config);
    }
  };

  const runConsumer = (
    durableName: string,
    messages: ConsumerMessages,
    handler: MessageHandler,
    onAcknowledged: ((message: BusMessage) => void) | undefined,
  ): Consumer => {
    let stopping = false;

    const handle = async (jsMsg: JsMsg): Promise<void> => {
      const deliveryCount = jsMsg.info.deliveryCount;
      const messageId = jsMsg.headers?.get('Nats-Msg-Id');
      const message: BusMessage = {
        subject: jsMsg.subject,
        data: new Uint8Array(jsMsg.data),
        deliveryCount,
        ...(messageId === undefined || messageId === '' ? {} : { messageId }),
      };
      // Tell the server we are still working so a slow handler does not get its message redelivered.
      const keepAlive = setInterval(() => jsMsg.working(), Math.max(1_000, Math.floor(ackWaitMs / 2)));
      keepAlive.unref();
      let succeeded: boolean;
      try {
        await handler(message);
        succeeded = true;
      } catch {
        succeeded = false;
      } finally {
        clearInterval(keepAlive);
      }
      if (succeeded) {
        // Wait for the server to confirm, so a consumer started after stop() never sees this message again.
        const acked = await jsMsg.ackAck().catch((error: unknown) => {
          const detail = `ack of ${jsMsg.subject} (stream sequence ${jsMsg.seq}) on ${where} failed; it will be redelivered`;
          onError(new BusConnectionError(`${detail}: ${messageOf(error)}`, { cause: error }));
          return false;
        });
        if (acked) notifyAcknowledged(onAcknowledged, message);
      } else {
        jsMsg.nak(stopping ? undefined : redeliveryDelay(deliveryCount, baseDelayMs, maxDelayMs));
      }
    };

    /** Messages the server sent after stop() began; nak'd once the inbox is closed. */
    const notHandled: JsMsg[] = [];

    // The pull requests of consume() (batch 1, as max_messages is 1) are published lazily, when the
    // iterator is advanced past the message that used up the previous one. So while a handler runs
    // no pull request of ours is open on the server, and once stop() has begun the loop never
    // advances the iterator past a message: it leaves. No pull request is then published after
    // the unsubscribe, where it would outlive this consumer on the server (nats-server 2.9 drops a
    // redelivery it tries to hand to such a request until ack_wait expires).
    const loop = (async () => {
      try {
        for await (const jsMsg of messages) {
          if (stopping) {
            notHandled.push(jsMsg);
            break;
          }
          await handle(jsMsg);
          if (stopping) break;
        }
      } catch (error) {
        if (!stopping) {
          onError(new BusConnectionError(`consumer loop on ${where} ended: ${messageOf(error)}`, { cause: error }));
        }
      }
    })();

    let stopped: Promise<void> | undefined;
    /** Whether the last read of the durable's state failed: logged when that starts and when it ends, not per call. */
    let unreadable = false;
    const durable = `durable consumer "${durableName}" of stream "${streamName}" on ${where}`;
    /** The durable's messages not delivered yet (`num_pending`) and delivered but not acked (`num_ack_pending`: being handled, or nak'd and waiting for redelivery). */
    const backlog = async (): Promise<number> => {
      // The stream has every message whose publish resolved.
      let info: Awaited<ReturnType<typeof jsm.consumers.info>>;
      try {
        info = await jsm.consumers.info(streamName, durableName);
      } catch (error) {
        if (!unreadable) {
          unreadable = true;
          log(`cannot read the state of ${durable}: ${messageOf(error)}; drained() fails until it can`);
        }
        throw new BusConnectionError(`cannot read ${durable}: ${messageOf(error)}`, { cause: error });
      }
      if (unreadable) {
        unreadable = false;
        log(`the state of ${durable} can be read again; drained() answers again`);
      }
      return info.num_pending + info.num_ack_pending;
    };
    const consumer: Consumer = {
      backlog,
      drained: async () => (await backlog()) === 0,
      stop() {
        stopped ??= (async () => {
          stopping = true;
          // Unsubscribe at once (a running handler finishes meanwhile), but keep accepting what the
          // server sent before it saw the unsubscribe; the loop ends at the first such message, after
          // the running handler, or, if there is neither, when the drain has completed.
          await drainInbox(messages, nc);
          messages.stop();
          await loop;
          // Hand what this consumer received but never handled back to the durable at once.
          for (const jsMsg of notHandled) jsMsg.nak();
          if (!nc.isClosed()) await nc.flush().catch(() => undefined);
          activeConsumers.delete(consumer);
        })();
        return stopped;
      },
    };
    activeConsumers.set(consumer, durableName);
    return consumer;
  };

  return {
    connected: () => connected,
    async publish(subject: string, data: Uint8Array, publishOptions?: PublishOptions): Promise<void> {
      assertOpen();
      assertPublishSubject(subject);
      if (!subjects.some((filter) => subjectMatchesFilter(filter, subject))) {
        throw new BusArgumentError(
          `subject "${subject}" is not captured by stream "${streamName}" (subjects: ${subjects.join(', ')})`,
        );
      }
      const messageId = publishOptions?.messageId;
      try {
        await js.publish(subject, data, messageId === undefined ? undefined : { msgID: messageId });
      } catch (error) {
        throw new BusPublishError(`publish to "${subject}" on ${where} failed: ${messageOf(error)}`, { cause: error });
      }
    },

    async consume(consumerOptions: ConsumerOptions, handler: MessageHandler): Promise<Consumer> {
      assertOpen();
      const { durableName, filterSubject, continueFrom } = consumerOptions;
      assertDurableName(durableName);
      assertSubjectFilter(filterSubject);
      assertContinueFrom(durableName, continueFrom);
      let messages: ConsumerMessages;
      try {
        await ensureConsumer(durableName, filterSubject, continueFrom);
        const jsConsumer = await js.consumers.get(streamName, durableName);
        messages = await jsConsumer.consume({ max_messages: 1 });
      } catch (error) {
        throw new BusConnectionError(
          `cannot start durable consumer "${durableName}" (${filterSubject}) on stream "${streamName}" at ${where}: ${messageOf(error)}`,
          { cause: error },
        );
      }
      return runConsumer(durableName, messages, handler, consumerOptions.onAcknowledged);
    },

    async deleteDurable(durableName: string): Promise<void> {
      assertOpen();
      assertDurableName(durableName);
      if ([...activeConsumers.values()].includes(durableName)) {
        throw new BusArgumentError(`durable consumer "${durableName}" is being consumed; stop it before deleting it`);
      }
      try {
        await jsm.consumers.delete(streamName, durableName);
      } catch (error) {
        if (isApiError(error, JetStreamApiCodes.ConsumerNotFound)) return;
        throw new BusConnectionError(
          `cannot delete durable consumer "${durableName}" of stream "${streamName}" at ${where}: ${messageOf(error)}`,
          { cause: error },
        );
      }
    },

    close(): Promise<void> {
      closing ??= (async () => {
        await Promise.all([...activeConsumers.keys()].map((consumer) => consumer.stop()));
        if (!nc.isClosed()) await nc.drain();
      })();
      return closing;
    },
  };
}

async function ensureStream(
  jsm: JetStreamManager,
  { streamName, subjects, duplicateWindowMs }: { streamName: string; subjects: string[]; duplicateWindowMs: number },
): Promise<void> {
  const duplicateWindow = nanos(duplicateWindowMs);
  const existing = await jsm.streams.info(streamName).catch((error: unknown) => {
    if (isApiError(error, JetStreamApiCodes.StreamNotFound)) return undefined;
    throw error;
  });
  if (existing === undefined) {
    try {
      await jsm.streams.add({
        name: streamName,
        subjects,
        storage: StorageType.File,
        duplicate_window: duplicateWindow,
      });
      return;
    } catch (error) {
      // Another process may have created it in the meantime: fall through to the update.
      const created = await jsm.streams.info(streamName).catch(() => undefined);
      if (created === undefined) throw error;
    }
  }
  const current = existing ?? (await jsm.streams.info(streamName));
  const sameSubjects =
    current.config.subjects.length === subjects.length &&
    subjects.every((subject) => current.config.subjects.includes(subject));
  if (!sameSubjects || current.config.duplicate_window !== duplicateWindow) {
    await jsm.streams.update(streamName, { subjects, duplicate_window: duplicateWindow });
  }
}

/**
 * The client reconnects by itself (forever); say so when the connection drops or the server complains,
 * and tell `onConnection` when it is lost and back (for /health).
 */
async function reportConnectionTrouble(
  nc: NatsConnection,
  where: string,
  onError: (error: Error) => void,
  onConnection: (connected: boolean) => void,
): Promise<void> {
  try {
    for await (const status of nc.status()) {
      if (status.type === 'disconnect') {
        onConnection(false);
        onError(new BusConnectionError(`lost the connection to NATS at ${status.server}; reconnecting`));
      } else if (status.type === 'reconnect') {
        onConnection(true);
      } else if (status.type === 'error') {
        onError(new BusConnectionError(`NATS at ${where} reported: ${status.error.message}`, { cause: status.error }));
      }
    }
  } catch {
    // The status stream ends with the connection.
  }
}

/**
 * Unsubscribes the consumer's inbox by draining it: the client keeps accepting messages until the
 * server has confirmed the unsubscribe, so a message the server sent just before it (e.g. right
 * after the last ack) reaches the iterator (and is nak'd there) instead of being dropped by the
 * client and redelivered only after ack_wait. The iterator of consume() ends by itself once the
 * drain completes.
 *
 * The subscription is `PullConsumerMessagesImpl.sub` (public on that class in @nats-io/jetstream
 * 3.4.0, though not on the ConsumerMessages type); if it is ever missing, fall back to stop().
 */
async function drainInbox(messages: ConsumerMessages, nc: NatsConnection): Promise<void> {
  const subscription: unknown = Reflect.get(messages, 'sub');
  if (nc.isClosed() || nc.isDraining() || !isDrainable(subscription) || subscription.isClosed()) {
    messages.stop();
    return;
  }
  try {
    await subscription.drain();
  } catch {
    messages.stop();
  }
}

type Drainable = { drain(): Promise<void>; isClosed(): boolean };

function isDrainable(value: unknown): value is Drainable {
  return (
    typeof value === 'object' &&
    value !== null &&
    'drain' in value &&
    typeof value.drain === 'function' &&
    'isClosed' in value &&
    typeof value.isClosed === 'function'
  );
}

function isApiError(error: unknown, code: number): boolean {
  return error instanceof JetStreamApiError && error.code === code;
}

/** The server URL without its user name, password or token (`nats://***@host:4222`), safe to log. */
function withoutCredentials(server: string): string {
  return server.replace(/^([a-z][a-z0-9+.-]*:\/\/)?[^/@]*@/i, '$1***@');
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
