import type { Aggregate } from './aggregate.ts';
import { InvalidStateError } from '../shared/errors.ts';
import type { Environment } from '../event-store/event-store.ts';

/** What the log keeps of an API key: never the secret, only its hash and last four characters. */
export type ApiKey = {
  id: string;
  organizationId: string;
  environment: Environment;
  name: string;
  secretHash: string;
  last4: string;
  createdAt: string;
  updatedAt: string;
  deleted: boolean;
};

export type ApiKeyEvent =
  | {
      type: 'ApiKeyIssued';
      data: {
        id: string;
        organizationId: string;
        environment: Environment;
        name: string;
        secretHash: string;
        last4: string;
        at: string;
      };
    }
  | { type: 'ApiKeyRegenerated'; data: { secretHash: string; previousSecretHash: string; last4: string; at: string } }
  | { type: 'ApiKeyDeleted'; data: { secretHash: string; at: string } };

export type ApiKeyCommand =
  | {
      type: 'IssueApiKey';
      id: string;
      organizationId: string;
      environment: Environment;
      name: string;
      secretHash: string;
      last4: string;
    }
  | { type: 'RegenerateApiKey'; secretHash: string; last4: string }
  | { type: 'DeleteApiKey' };

export function evolveApiKey(key: ApiKey | null, event: ApiKeyEvent): ApiKey | null {
  switch (event.type) {
    case 'ApiKeyIssued': {
      const { at, ...rest } = event.data;
      return { ...rest, createdAt: at, updatedAt: at, deleted: false };
    }
    case 'ApiKeyRegenerated':
      return key && { ...key, secretHash: event.data.secretHash, last4: event.data.last4, updatedAt: event.data.at };
    case 'ApiKeyDeleted':
      return key && { ...key, deleted: true, updatedAt: event.data.at };
  }
}

export const apiKeyAggregate: Aggregate<ApiKey | null, ApiKeyEvent, ApiKeyCommand> = {
  category: 'api_key',
  initialState: () => null,
  evolve: evolveApiKey,
  decide(key, command, { now }) {
    if (command.type === 'IssueApiKey') {
      if (key) return [];
      const { type: _type, ...data } = command;
      return [{ type: 'ApiKeyIssued', data: { ...data, at: now } }];
    }
    if (!key || key.deleted) throw new InvalidStateError('api key does not exist', 'resource_missing');
    if (command.type === 'RegenerateApiKey') {
      return [
        {
          type: 'ApiKeyRegenerated',
          data: { secretHash: command.secretHash, previousSecretHash: key.secretHash, last4: command.last4, at: now },
        },
      ];
    }
    return [{ type: 'ApiKeyDeleted', data: { secretHash: key.secretHash, at: now } }];
  },
};
