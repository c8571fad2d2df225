/** A message as a bus consumer receives it. */
export type BusMessage = {
  subject: string;
  data: Uint8Array;
  /** Set by the publisher; the bus drops a second message with the same id (within its window). */
  messageId?: string;
  /** How many times this message has been delivered, starting at 1. */
  deliveryCount: number;
};

export type PublishOptions = { messageId?: string };

export type ConsumerOptions = {
  /** Durable consumer name: a consumer that reconnects under the same name resumes where it acked. */
  durableName: string;
  /** Subject filter with NATS wildcards (`*` one token, `>` the rest). */
  filterSubject: string;
  /**
   * Another durable this one takes over from: when this durable does not exist yet and that one
   * does, this one starts right after the last message that one acknowledged in order, instead of
   * at the first message kept. For splitting one durable into several with narrower filters (each
   * inside the old filter) without delivering again what the old one handled; delete the old one
   * once every new one exists. Ignored when this durable exists or that one does not.
   */
  continueFrom?: string;
  /**
   * Called once the bus has acknowledged a message this consumer's handler returned for (on
   * JetStream: once the server confirmed the ack), so a `drained()` asked from here on counts it
   * as handled. Whatever it throws is ignored.
   */
  onAcknowledged?: (message: BusMessage) => void;
};

/**
 * Handler outcome: returning normally acknowledges the message; throwing makes the bus deliver it
 * again later (at least once semantics).
 */
export type MessageHandler = (message: BusMessage) => Promise<void>;

export type Consumer = {
  stop(): Promise<void>;
  /**
   * True when every message matching this durable's filter that was published (its publish
   * resolved) before the call has been handled and acknowledged: none is waiting to be delivered,
   * being handled, or waiting for redelivery. Asks the server on JetStream.
   */
  drained(): Promise<boolean>;
  /**
   * How many messages `drained()` waits for: those matching the filter not delivered yet, being
   * handled, or waiting for redelivery (0 exactly when drained). Asks the server on JetStream.
   */
  backlog(): Promise<number>;
};

export type Bus = {
  publish(subject: string, data: Uint8Array, options?: PublishOptions): Promise<void>;
  consume(options: ConsumerOptions, handler: MessageHandler): Promise<Consumer>;
  /**
   * Removes a durable consumer and where it stood; nothing happens when there is none by that name.
   * Refused (BusArgumentError) while this bus consumes it.
   */
  deleteDurable(durableName: string): Promise<void>;
  close(): Promise<void>;
  /** False while the connection to its server is lost (it reconnects on its own); a bus without a server has none. */
  connected?(): boolean;
};

/** Tells `onAcknowledged` (when one was given) that `message` was acknowledged; what it throws is ignored. */
export function notifyAcknowledged(onAcknowledged: ConsumerOptions['onAcknowledged'], message: BusMessage): void {
  try {
    onAcknowledged?.(message);
  } catch {
    // Not the bus's business.
  }
}
