import type { JsonObject } from '../shared/json.ts';
import type { ChainContent, ChainLink } from './event-chain.ts';

/** Every record belongs to exactly one tenant environment. */
export type Environment = 'test' | 'live';

/** Metadata carried by every event in the log. */
export type EventMetadata = {
  organizationId: string;
  environment: Environment;
  /** Who caused it: `api_key:<id>`, `system:matcher`, `system:timer`, `cli`, ... */
  actor: string;
  correlationId: string;
  causationId?: string;
  /** The client's address, when a request caused it (API or dashboard). */
  clientAddress?: string;
  /** When the fact happened, ISO 8601 (from the injected clock). */
  occurredAt: string;
};

/** An event about to be appended. */
export type NewEvent = {
  /** uuid; chosen by the writer so retries of one append keep the same id. */
  id: string;
  type: string;
  data: JsonObject;
  metadata: EventMetadata;
};

/** An event as read back from the log. */
export type RecordedEvent = NewEvent & {
  streamId: string;
  /** 0-based position of the event inside its stream. */
  revision: number;
  /** Position in the global log; strictly increasing in log order. */
  position: bigint;
};

/**
 * What the writer believes about the stream: `no_stream` (it must not exist), `any` (no check),
 * or the revision of the stream's last event.
 */
export type ExpectedRevision = 'no_stream' | 'any' | number;

export type AppendResult = {
  /** Revision of the last event written. */
  nextExpectedRevision: number;
  /** Global position of the last event written. */
  position: bigint;
};

/** Thrown when the expected revision does not match the stream. */
export class WrongExpectedRevisionError extends Error {
  override readonly name = 'WrongExpectedRevisionError';
  constructor(
    readonly streamId: string,
    readonly expected: ExpectedRevision,
    readonly actual: number | 'no_stream',
  ) {
    super(`stream ${streamId}: expected revision ${String(expected)}, found ${String(actual)}`);
  }
}

/**
 * An event as the hash chain covers it (see event-chain.ts): its position, the content its hash is
 * over, and the link stored with it (null when it carries none). Unparsed: checking a chain reads
 * no event's values.
 */
export type ChainedEvent = { position: bigint; content: ChainContent; link: ChainLink | null };

/**
 * Where the chain starts. A log written before Weir chained its events keeps them as they are
 * (history is never rewritten): the chain starts after them, and its first `previous` is their seal.
 */
export type ChainStart = {
  /** Position of the last event written before the chain existed; null when it starts with the log's first event. */
  unchainedThrough: bigint | null;
  /** `foldChain(GENESIS_HASH, …)` over those events (GENESIS_HASH when none): the first chained event's `previous`. */
  seal: string;
};

/** The hash chain as the log stores it, for the auditors' checks (appends link their events themselves). */
export type EventChainReader = {
  /** Like `readAll`: the events after `after` in log order, as the chain covers them. */
  read(after: bigint | null, limit: number): Promise<ChainedEvent[]>;
  /** The chain's starting point, or null when the log holds no record of it. */
  start(): Promise<ChainStart | null>;
  /** The last event's position and chain hash (the seal when it was written before the chain), or null on an empty log. */
  head(): Promise<{ position: bigint; hash: string } | null>;
};

/**
 * Every store hands out its events deep-frozen (readStream and readAll): an event read is shared by
 * its readers (SQLite's recent events), so a reader that changed one would change them all; a copy
 * is the reader's to make.
 */
export type EventStore = {
  /** Append atomically: all events or none. Rejects with WrongExpectedRevisionError on a stale revision. */
  append(streamId: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult>;
  /** All events of one stream in order; [] when it does not exist. */
  readStream(streamId: string): Promise<RecordedEvent[]>;
  /** Up to `limit` events of the whole log with position strictly after `after` (null = from the start). */
  readAll(after: bigint | null, limit: number): Promise<RecordedEvent[]>;
  /** Position of the last event in the log, or null when the log is empty. */
  headPosition(): Promise<bigint | null>;
  /**
   * Calls `listener` (without arguments) whenever new events may be in the log, including events
   * appended by another process. Returns an unsubscribe function.
   */
  onAppended(listener: () => void): () => void;
  /** Every append links its events into one hash chain over the global log; this reads it back. */
  chain: EventChainReader;
  close(): Promise<void>;
};
