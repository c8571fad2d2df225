import type { Bus } from '../../../bus/bus.ts';
import { encodeChainMessage, type ChainMessage } from '../../chain-messages.ts';
import type { CheckpointStore } from './checkpoint.ts';
import { checkpointOf, type FollowerState } from './follower-state.ts';
import type { SyncPlan } from './sync-step.ts';

export type FollowerSink = {
  save(state: FollowerState): Promise<void>;
  publish(message: ChainMessage): Promise<void>;
  /**
   * Carries out a sync step's plan: the write-ahead checkpoint, each message, the checkpoint after.
   * `onState` gets the follower's state after each part, so a failure part way leaves the follower
   * where the checkpoint and the bus say it is.
   */
  apply(plan: SyncPlan, onState: (state: FollowerState) => void): Promise<void>;
  published(): { transfer: number; reorg: number; final: number };
};

/** The follower's sink: saves its checkpoint and publishes its messages on the bus (`chain.<network>.*`). */
export function createFollowerSink(deps: {
  network: string;
  chainId: number;
  bus: Bus;
  checkpoints: CheckpointStore;
  now(): Date;
}): FollowerSink {
  const { network, chainId, bus, checkpoints } = deps;
  const published = { transfer: 0, reorg: 0, final: 0 };

  const save = async (state: FollowerState): Promise<void> => {
    await checkpoints.set(network, checkpointOf(state, { network, chainId, now: deps.now() }));
  };

  const publish = async (message: ChainMessage): Promise<void> => {
    const { subject, data, messageId } = encodeChainMessage(message);
    await bus.publish(subject, data, { messageId });
    published[message.type] += 1;
  };

  return {
    save,
    publish,
    async apply(plan, onState) {
      if (plan.writeAhead !== null) {
        await save(plan.writeAhead);
        onState(plan.writeAhead);
      }
      for (const event of plan.events) {
        await publish(event.message);
        onState(event.state);
      }
      await save(plan.state);
      onState(plan.state);
    },
    published: () => ({ ...published }),
  };
}
