import type { Collection } from '../read-store/read-store.ts';
import type { TimerDoc } from './collections.ts';

/** A timer a record's state asks for (without its `_id`), or null for none. */
export type WantedTimer = Pick<
  TimerDoc,
  'kind' | 'recordId' | 'organizationId' | 'environment' | 'fireAt' | 'version' | 'args'
> | null;

/**
 * Make timer `id` what the record's state asks for: put it when it is missing or its fire time or
 * arguments changed, delete it when it is no longer wanted, and otherwise leave it (and its
 * `version`) alone, so an unrelated event never re-arms a timer already spent at its scheduling.
 */
export async function setTimer(timers: Collection<TimerDoc>, id: string, wanted: WantedTimer): Promise<void> {
  const existing = await timers.get(id);
  if (wanted === null) {
    if (existing) await timers.delete(id);
    return;
  }
  if (
    existing &&
    existing.fireAt === wanted.fireAt &&
    JSON.stringify(existing.args ?? null) === JSON.stringify(wanted.args ?? null)
  )
    return;
  await timers.put({ ...wanted, _id: id });
}
