import type { EventStore } from '../../src/event-store/event-store.ts';
import type { Clock } from '../../src/shared/clock.ts';

/** The sweep events of a checkout session's stream, in order: [type, transaction hash]. */
export async function sweepEventsOf(eventStore: EventStore, checkoutSessionId: string): Promise<[string, string][]> {
  return (await eventStore.readStream(`checkout_session-${checkoutSessionId}`)).flatMap((event): [string, string][] => {
    const data = event.data as {
      broadcast?: { transactionHash: string };
      sweep?: { transactionHash: string };
      transactionHash?: string;
    };
    if (event.type === 'SweepBroadcast') return [[event.type, data.broadcast!.transactionHash]];
    if (event.type === 'FundsSwept') return [[event.type, data.sweep!.transactionHash]];
    if (event.type === 'SweepDropped') return [[event.type, data.transactionHash!]];
    return [];
  });
}

/** `clock` for a processor, recording in `scheduled` each time it asks to be woken (its next look). */
export function recordingClock(clock: Clock): { clock: Clock; scheduled: number[] } {
  const scheduled: number[] = [];
  return {
    clock: {
      now: () => clock.now(),
      schedule: (at, fire) => {
        scheduled.push(at);
        return clock.schedule(at, fire);
      },
    },
    scheduled,
  };
}
