import {
  GENESIS_HASH,
  chainHashV1,
  contentDigest,
  linkHash,
  linkHashV1,
  tenantOfContent,
  tenantTag,
} from '../event-store/event-chain.ts';
import type { ChainLink } from '../event-store/event-chain.ts';
import type { ChainStart, ChainedEvent, EventStore } from '../event-store/event-store.ts';
import { CHECKPOINT_STREAM, checkpointMessage, readCheckpoints, type LoggedCheckpoint } from './checkpoints.ts';
import { yieldToEventLoop } from '../shared/yield-to-event-loop.ts';
import { signatureHolds } from './operator-key.ts';

export type ChainProblemKind =
  /** The event's content no longer hashes to the hash stored with it: edited. */
  | 'content_changed'
  /** The event does not follow the one before it: events removed, inserted or reordered before it. */
  | 'link_broken'
  /** An event after the chain's start carries no link: written behind Weir's back, or its link taken away. */
  | 'link_missing'
  /** The events written before the chain started no longer fold to the seal recorded then. */
  | 'seal_broken'
  /** The log holds no record of where its chain starts. */
  | 'start_missing'
  /** A checkpoint whose signature does not hold, or that the operator's key did not sign. */
  | 'checkpoint_forged'
  /** The chain's hash at a checkpoint's position is not the hash it signed. */
  | 'checkpoint_mismatch'
  /** No event at a checkpoint's position any more (removed, or the log cut short). */
  | 'checkpoint_position_missing'
  /** An event of the checkpoint stream that does not hold a checkpoint. */
  | 'checkpoint_malformed';

/** One finding; `position` is the log position it is located at (null when the whole log is concerned). */
export type ChainProblem = { kind: ChainProblemKind; position: string | null; message: string };

export type ChainReport = {
  /** Whether every link, the seal and every checkpoint hold. */
  holds: boolean;
  events: number;
  /** Events written before the chain started: not linked one by one, vouched for as a whole by the seal. */
  unchainedEvents: number;
  /** The last unchained position (null: the chain starts at the log's first event). */
  unchainedThrough: string | null;
  /** The log's last position and the chain hash there, as recomputed. */
  head: { position: string; hash: string } | null;
  checkpoints: { checked: number; latest: LoggedCheckpoint | null };
  /**
   * Events after the highest position a checkpoint signed (all of them when none did), checkpoints'
   * own events aside: the chain alone cannot tell whether events were cut from the log's end there.
   */
  unsigned: number;
  /** The earliest problem in log order: the first broken link. */
  firstProblem: ChainProblem | null;
  /** The first `MAX_LISTED` problems in log order; `problemCount` counts them all. */
  problems: ChainProblem[];
  problemCount: number;
};

export type ChainProgress = { events: number; position: bigint; head: bigint | null };

const MAX_LISTED = 100;
const BATCH = 1000;

/**
 * An event whose content is withheld (another tenant's, in an export bundle): its place, its link,
 * the digest of its content and its tenant tag, from which its link is recomputed (digest null: not
 * given, taken as written; tenant null: a chain v1 link, which binds no tenant).
 */
export type WithheldEvent = {
  position: bigint;
  content: null;
  digest: string | null;
  tenant: string | null;
  link: ChainLink | null;
};

/**
 * The hash of `event` after `previous` (null when neither its content nor its digest is at hand).
 * An event held in full is recomputed v2 and, when that is not `written`, v1 (an event appended
 * before the tenant tag); a withheld one as its line says: v2 with its tag, v1 without.
 */
const hashAfter = (previous: string, event: ChainedEvent | WithheldEvent, written: string | null): string | null => {
  if (event.content === null) {
    if (event.digest === null) return null;
    return event.tenant === null ? linkHashV1(previous, event.digest) : linkHash(previous, event.digest, event.tenant);
  }
  const digest = contentDigest(event.content);
  const v2 = linkHash(previous, digest, tenantTag(previous, tenantOfContent(event.content)));
  if (v2 === written || written === null) return v2;
  const v1 = linkHashV1(previous, digest);
  return v1 === written ? v1 : v2;
};

/** The hash of `event` after `previous` in the seal of the events written before the chain (v1, see foldChain). */
const sealedAfter = (previous: string, event: ChainedEvent | WithheldEvent): string | null => {
  if (event.content !== null) return chainHashV1(previous, event.content);
  return event.digest === null ? null : linkHashV1(previous, event.digest);
};

/** What the walk reads: the live log, or an export bundle where other tenants' events are withheld. */
export type ChainSource = {
  start(): Promise<ChainStart | null>;
  headPosition(): Promise<bigint | null>;
  /** Every event of the checkpoint stream with the checkpoint it holds (null: malformed). */
  checkpoints(): Promise<{ position: bigint; checkpoint: LoggedCheckpoint | null }[]>;
  /** The events in the order they are held, a page at a time. */
  pages(): AsyncIterable<(ChainedEvent | WithheldEvent)[]>;
};

/** The live log as a chain source. */
export const chainSourceOf = (eventStore: EventStore): ChainSource => ({
  start: () => eventStore.chain.start(),
  headPosition: () => eventStore.headPosition(),
  checkpoints: async () =>
    (await readCheckpoints(eventStore)).map(({ event, checkpoint }) => ({ position: event.position, checkpoint })),
  async *pages() {
    for (let after: bigint | null = null; ; ) {
      const page = await eventStore.chain.read(after, BATCH);
      if (page.length === 0) return;
      yield page;
      after = page.at(-1)!.position;
    }
  },
});

/** An event as a finding names it: its type and stream, or that its content is withheld (a bundle's other tenant). */
const eventAt = (position: bigint, event: ChainedEvent | WithheldEvent): string =>
  event.content === null
    ? `the withheld event at ${position}`
    : `the event at ${position} (${event.content.type} of ${event.content.streamId})`;

const describe = (checkpoint: LoggedCheckpoint): string =>
  checkpoint.loggedAt === null
    ? `the published checkpoint for position ${checkpoint.position}`
    : `the checkpoint at ${checkpoint.loggedAt} (for position ${checkpoint.position})`;

/** Log order of findings; those of the whole log (no position) first. */
export const byPosition = (a: { position: string | null }, b: { position: string | null }): number => {
  if (a.position === b.position) return 0;
  if (a.position === null) return -1;
  if (b.position === null) return 1;
  const x = BigInt(a.position);
  const y = BigInt(b.position);
  return x < y ? -1 : x > y ? 1 : 0;
};

/**
 * Walks the whole log in order, recomputes every event's hash from its content and the hash
 * before it, and checks the seal of the events written before the chain started and every signed
 * checkpoint. `trustedKeys`: the operator public keys a checkpoint must be signed with (empty: each
 * checkpoint's signature is checked against the key it names, which proves nothing about who).
 */
export async function verifyChain(
  deps: ({ eventStore: EventStore } | { source: ChainSource }) & {
    trustedKeys: readonly string[];
    /** Checkpoints published outside the log (they hold even when the log's own are removed). */
    published?: readonly LoggedCheckpoint[];
    onProgress?: (progress: ChainProgress) => void;
  },
): Promise<ChainReport> {
  const { trustedKeys } = deps;
  const source = 'source' in deps ? deps.source : chainSourceOf(deps.eventStore);
  const problems: ChainProblem[] = [];
  const problem = (kind: ChainProblemKind, position: bigint | string | null, message: string) =>
    problems.push({ kind, position: position === null ? null : String(position), message });

  const start = await source.start();
  const logHead = await source.headPosition();
  if (start === null && logHead !== null)
    problem(
      'start_missing',
      null,
      'the log holds no record of where its chain starts (its start row or metadata is gone)',
    );

  // Checkpoints are read first, so each is checked when the walk passes its position.
  const checkpointsAt = new Map<string, LoggedCheckpoint[]>();
  let latest: LoggedCheckpoint | null = null;
  let checked = 0;
  let signedThrough: bigint | null = null;
  const logged = (await source.checkpoints()).flatMap(({ position, checkpoint }) => {
    if (checkpoint === null)
      problem('checkpoint_malformed', position, `the checkpoint event at ${position} holds no checkpoint`);
    return checkpoint ? [checkpoint] : [];
  });
  for (const checkpoint of [...logged, ...(deps.published ?? [])]) {
    checked += 1;
    if (checkpoint.loggedAt !== null) latest = checkpoint;
    const where = checkpoint.loggedAt;
    if (!signatureHolds(checkpoint.publicKey, checkpointMessage(checkpoint), checkpoint.signature))
      problem('checkpoint_forged', where, `${describe(checkpoint)} has a signature that does not hold`);
    else if (trustedKeys.length > 0 && !trustedKeys.includes(checkpoint.publicKey))
      problem(
        'checkpoint_forged',
        where,
        `${describe(checkpoint)} is signed by ${checkpoint.publicKey}, not the operator's key`,
      );
    if (signedThrough === null || BigInt(checkpoint.position) > signedThrough)
      signedThrough = BigInt(checkpoint.position);
    const atPosition = checkpointsAt.get(checkpoint.position) ?? [];
    atPosition.push(checkpoint);
    checkpointsAt.set(checkpoint.position, atPosition);
  }

  let events = 0;
  let unsigned = 0;
  let unchainedEvents = 0;
  /** Whether an event before the chain was withheld: then the seal cannot be recomputed (nor denied). */
  let sealUnknown = false;
  /** The fold over the unchained events so far. */
  let sealed = GENESIS_HASH;
  /** The hash the next chained event must follow; null until the walk reaches the chain. */
  let expected: string | null = null;
  let head: { position: string; hash: string } | null = null;
  const unchainedThrough = start?.unchainedThrough ?? null;

  const checkSeal = (at: bigint | null) => {
    if (sealUnknown || start === null || start.unchainedThrough === null || start.seal === sealed) return;
    problem(
      'seal_broken',
      at,
      `the ${unchainedEvents} events written before the chain started (through position ${start.unchainedThrough}) have changed since it started`,
    );
  };

  for await (const page of source.pages()) {
    for (const event of page) {
      events += 1;
      const { position, link } = event;
      // A checkpoint's own event comes after the position it signs: it is no gap in the signatures.
      if ((signedThrough === null || position > signedThrough) && event.content?.streamId !== CHECKPOINT_STREAM)
        unsigned += 1;
      let hashHere: string;
      const beforeChain =
        start !== null ? unchainedThrough !== null && position <= unchainedThrough : expected === null && link === null;
      if (beforeChain) {
        const next = sealedAfter(sealed, event);
        if (next === null) sealUnknown = true;
        else sealed = next;
        unchainedEvents += 1;
        hashHere = sealed;
      } else {
        if (expected === null) {
          // The first chained event: what came before must still fold to the seal it follows.
          checkSeal(unchainedThrough);
          expected = start?.seal ?? link?.previous ?? sealed;
          if (!sealUnknown && start === null && link !== null && link.previous !== sealed)
            problem(
              'seal_broken',
              position,
              `the events before position ${position} are not the ones it was chained to`,
            );
        }
        if (link === null) {
          problem(
            'link_missing',
            position,
            `${eventAt(position, event)} carries no link although the chain started before it`,
          );
          // A withheld event without a link: nothing to follow on from but the hash it should have.
          hashHere = hashAfter(expected, event, null) ?? expected;
          expected = hashHere;
        } else {
          if (link.previous !== expected)
            problem(
              'link_broken',
              position,
              `${eventAt(position, event)} does not follow the event before it: events were removed, inserted or reordered before it`,
            );
          // A withheld event without a digest is taken as written: nothing to recompute it from.
          hashHere = hashAfter(link.previous, event, link.hash) ?? link.hash;
          if (hashHere !== link.hash)
            problem(
              'content_changed',
              position,
              event.content === null
                ? `${eventAt(position, event)} does not hash to its link: its digest or link was changed`
                : `${eventAt(position, event)} is not what was written there: its content was changed`,
            );
          // On from the stored hash, so one damaged event is one finding, not every event after it.
          expected = link.hash;
        }
      }
      head = { position: String(position), hash: hashHere };
      const signed = checkpointsAt.get(String(position));
      if (signed) {
        checkpointsAt.delete(String(position));
        for (const checkpoint of signed)
          if (checkpoint.hash !== hashHere)
            problem(
              'checkpoint_mismatch',
              position,
              `the chain's hash at ${position} is not the one ${describe(checkpoint)} signed: the log up to ${position} was rewritten`,
            );
      }
    }
    deps.onProgress?.({ events, position: page.at(-1)!.position, head: logHead });
    // Inside `weir serve` (GET /audit/verify) requests go on meanwhile.
    await yieldToEventLoop();
  }
  if (expected === null) checkSeal(null);

  const last = head === null ? null : BigInt(head.position);
  for (const [position, signed] of checkpointsAt)
    for (const checkpoint of signed)
      problem(
        'checkpoint_position_missing',
        position,
        last === null || BigInt(position) > last
          ? `the log ends at ${last ?? 'nothing'}, before position ${position} that ${describe(checkpoint)} signed: events were removed from its end`
          : `no event at position ${position} that ${describe(checkpoint)} signed: it was removed`,
      );

  problems.sort(byPosition);
  return {
    holds: problems.length === 0,
    events,
    unchainedEvents,
    unchainedThrough: unchainedThrough === null ? null : String(unchainedThrough),
    head,
    checkpoints: { checked, latest },
    unsigned,
    firstProblem: problems[0] ?? null,
    problems: problems.slice(0, MAX_LISTED),
    problemCount: problems.length,
  };
}
