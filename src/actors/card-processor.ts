import type { Aggregate } from './aggregate.ts';
import { InvalidStateError } from '../shared/errors.ts';

/**
 * The card processor account an organization connects for card payments (spec, item 9): its
 * publishable key as given, its secret key only sealed (see tenancy/secrets.ts) with the last four
 * characters to recognise it by. One record per organization and environment.
 */
export type CardProcessor = {
  provider: 'stripe';
  publishableKey: string;
  sealedSecretKey: string;
  secretKeyLast4: string;
  connectedAt: string;
  updatedAt: string;
};

export type CardProcessorEvent =
  | {
      type: 'CardProcessorKeysSet';
      data: { provider: 'stripe'; publishableKey: string; sealedSecretKey: string; secretKeyLast4: string; at: string };
    }
  | { type: 'CardProcessorKeysRemoved'; data: { at: string } };

export type CardProcessorCommand =
  | {
      type: 'SetCardProcessorKeys';
      provider: 'stripe';
      publishableKey: string;
      sealedSecretKey: string;
      secretKeyLast4: string;
    }
  | { type: 'RemoveCardProcessorKeys' };

export function evolveCardProcessor(state: CardProcessor | null, event: CardProcessorEvent): CardProcessor | null {
  switch (event.type) {
    case 'CardProcessorKeysSet': {
      const { at, ...keys } = event.data;
      return { ...keys, connectedAt: state?.connectedAt ?? at, updatedAt: at };
    }
    case 'CardProcessorKeysRemoved':
      return null;
  }
}

export const cardProcessorAggregate: Aggregate<CardProcessor | null, CardProcessorEvent, CardProcessorCommand> = {
  category: 'card_processor',
  initialState: () => null,
  evolve: evolveCardProcessor,
  decide(state, command, { now }) {
    if (command.type === 'SetCardProcessorKeys') {
      const { type: _type, ...keys } = command;
      return [{ type: 'CardProcessorKeysSet', data: { ...keys, at: now } }];
    }
    if (!state) throw new InvalidStateError('no card processor is connected', 'resource_missing');
    return [{ type: 'CardProcessorKeysRemoved', data: { at: now } }];
  },
};
