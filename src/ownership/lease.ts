import type { Clock } from '../shared/clock.ts';
import type { LeaseStore } from './lease-store.ts';

/** A write refused because this instance no longer holds the lease it was made under. */
export class LeaseLostError extends Error {
  override readonly name = 'LeaseLostError';
  constructor(
    readonly key: string,
    reason: string,
  ) {
    super(`lease ${key} is no longer held here (${reason}): the write was refused`);
  }
}

export type LeaseEvents = {
  /** This instance now holds the lease (at `revision`). */
  onAcquired?: (revision: number) => void;
  /** This instance lost the lease: its work must stop at once. */
  onLost?: (reason: string) => void;
};

export type Lease = {
  readonly key: string;
  readonly owner: string;
  /** Whether this instance holds the lease, as far as its last renewal knows. */
  held(): boolean;
  /** The revision of this instance's last write of the lease (its fencing token); null while not held. */
  revision(): number | null;
  /**
   * Runs `write` only after a revision-checked renewal proved the lease is still this instance's;
   * a stale owner (its revision moved, or its entry expired) gets LeaseLostError and `write` never
   * runs. The proof holds for a TTL from then, which bounds how long `write` may take to be safe.
   */
  fence<T>(write: () => Promise<T>): Promise<T>;
  /** One step now: renew when held, else try to acquire (also what the schedule runs). */
  tick(): Promise<void>;
  /** The first step, then one every `renewEveryMs` on the clock. */
  start(): Promise<void>;
  /** Lets go of the lease (a revision-checked write) and keeps stepping: another may take it at once. */
  release(): Promise<void>;
  /** Stops stepping and releases the lease, so another takes it at its next step. */
  stop(): Promise<void>;
};

/**
 * A TTL lease on a key of a LeaseStore: acquire is create-if-absent (or over a released entry),
 * renew is an update with the revision last written, so two owners can never both renew. Steps
 * run one at a time on the injected clock; an owner that cannot renew (store unreachable) gives
 * the lease up once a TTL has passed since its last renewal, as the store will have expired it.
 */
export function createLease(
  deps: {
    store: LeaseStore;
    key: string;
    owner: string;
    clock: Clock;
    /** Default a third of the TTL: two renewals may fail before the entry expires. */
    renewEveryMs?: number;
    log?: (line: string) => void;
  } & LeaseEvents,
): Lease {
  const { store, key, owner, clock } = deps;
  const renewEveryMs = deps.renewEveryMs ?? Math.max(1, Math.floor(store.ttlMs / 3));
  const log = deps.log ?? (() => {});
  let revision: number | null = null;
  let renewedAt = 0;
  let steps: Promise<unknown> = Promise.resolve();
  let cancel: (() => void) | null = null;
  let stopped = false;

  /** Store operations one at a time: a fence and a renewal with the same revision would refuse each other. */
  const serial = <T>(step: () => Promise<T>): Promise<T> => {
    const next = steps.then(step, step);
    steps = next.catch(() => undefined);
    return next;
  };

  const lose = (reason: string) => {
    if (revision === null) return;
    revision = null;
    log(`lease ${key}: lost (${reason})`);
    deps.onLost?.(reason);
  };

  /** True when the lease was renewed (proven still this instance's) just now. */
  const renew = async (): Promise<boolean> => {
    if (revision === null) return false;
    const at = clock.now();
    let next: number | null;
    try {
      next = await store.write(key, { owner, released: false }, revision);
    } catch (error) {
      if (clock.now() - renewedAt >= store.ttlMs) lose(`not renewed within its TTL: ${(error as Error).message}`);
      else log(`lease ${key}: renewal failed, trying again: ${(error as Error).message}`);
      return false;
    }
    if (next === null) {
      lose('its revision moved: it expired or another instance took it over');
      return false;
    }
    revision = next;
    renewedAt = at;
    return true;
  };

  const acquire = async (): Promise<void> => {
    const current = await store.read(key);
    // Free: never written, expired, released, or this owner's own entry (a renewal it lost track of).
    if (current && !current.released && current.owner !== owner) return;
    const at = clock.now();
    const next = await store.write(key, { owner, released: false }, current?.revision ?? 0);
    if (next === null || stopped) return;
    revision = next;
    renewedAt = at;
    log(`lease ${key}: acquired (revision ${next})`);
    deps.onAcquired?.(next);
  };

  const step = () =>
    serial(async () => {
      if (stopped) return;
      if (revision !== null) await renew();
      else await acquire().catch((error: unknown) => log(`lease ${key}: cannot acquire: ${(error as Error).message}`));
    });

  const schedule = () => {
    if (stopped) return;
    cancel = clock.schedule(clock.now() + renewEveryMs, () => {
      cancel = null;
      void step().finally(schedule);
    });
  };

  return {
    key,
    owner,
    held: () => revision !== null,
    revision: () => revision,
    async fence(write) {
      await serial(async () => {
        if (revision === null) throw new LeaseLostError(key, 'not held');
        if (!(await renew())) throw new LeaseLostError(key, 'its revision-checked renewal did not succeed');
      });
      return write();
    },
    tick: step,
    async start() {
      await step();
      schedule();
    },
    release: () => release(),
    async stop() {
      if (stopped) return;
      stopped = true;
      cancel?.();
      await release();
    },
  };

  function release() {
    return serial(async () => {
      if (revision === null) return;
      const held = revision;
      revision = null;
      await store
        .write(key, { owner, released: true }, held)
        .catch((error: unknown) =>
          log(`lease ${key}: cannot release (it expires by itself): ${(error as Error).message}`),
        );
      log(`lease ${key}: released`);
    });
  }
}
