import type { Aggregate } from './aggregate.ts';
import { InvalidStateError } from '../shared/errors.ts';
import type { Environment } from '../event-store/event-store.ts';

/**
 * What a key may do: `full`, everything its environment allows; `read`, GET requests only; `audit`,
 * reading plus the auditors' routes (`/api/v1/audit/*`). Keys issued before scopes are `full`.
 */
export const API_KEY_SCOPES = ['full', 'read', 'audit'] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

/** What the log keeps of an API key: never the secret, only its hash and last four characters. */
export type ApiKey = {
  id: string;
  organizationId: string;
  environment: Environment;
  name: string;
  scope: ApiKeyScope;
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
        /** Absent: a full key (and every key issued before scopes). */
        scope?: ApiKeyScope;
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
      scope?: ApiKeyScope;
      secretHash: string;
      last4: string;
    }
  | { type: 'RegenerateApiKey'; secretHash: string; last4: string }
  | { type: 'DeleteApiKey' };

export function evolveApiKey(key: ApiKey | null, event: ApiKeyEvent): ApiKey | null {
  switch (event.type) {
    case 'ApiKeyIssued': {
      const { at, scope, ...rest } = event.data;
      return { ...rest, scope: scope ?? 'full', createdAt: at, updatedAt: at, deleted: false };
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
      const { type: _type, scope, ...data } = command;
      // A full key's event is written as before scopes existed.
      return [{ type: 'ApiKeyIssued', data: { ...data, ...(scope && scope !== 'full' ? { scope } : {}), at: now } }];
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
