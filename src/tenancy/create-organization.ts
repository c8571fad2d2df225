import { apiKeyAggregate } from '../actors/api-key.ts';
import type { CommandHandler } from '../actors/command-handler.ts';
import { organizationAggregate, organizationRecordId } from '../actors/organization.ts';
import type { Environment } from '../event-store/event-store.ts';
import { newId } from '../shared/ids.ts';
import { generateApiKey, hashSecret } from './secrets.ts';

export type CreatedOrganization = {
  organizationId: string;
  name: string;
  keys: { test: { id: string; secretKey: string }; live: { id: string; secretKey: string } };
  /** Log position of the last event written. */
  position: bigint;
};

/**
 * A new organization, in both environments, without keys (the dashboard's first run: keys are
 * made on its Developers screen, where they are shown once).
 */
export async function recordOrganization(
  commands: CommandHandler,
  name: string,
  actor: string,
): Promise<{ organizationId: string; position: bigint | null }> {
  const organizationId = newId();
  let position: bigint | null = null;
  for (const environment of ['test', 'live'] as Environment[]) {
    const result = await commands.handle(
      organizationAggregate,
      organizationRecordId(organizationId, environment),
      { type: 'CreateOrganization', id: organizationId, environment, name },
      { organizationId, environment, actor },
    );
    position = result.position ?? position;
  }
  return { organizationId, position };
}

/** A new organization with both environments and one secret key for each, shown only here. */
export async function createOrganization(commands: CommandHandler, name: string): Promise<CreatedOrganization> {
  const recorded = await recordOrganization(commands, name, 'cli');
  const { organizationId } = recorded;
  const keys = {} as CreatedOrganization['keys'];
  let position = recorded.position ?? 0n;
  for (const environment of ['test', 'live'] as Environment[]) {
    const secretKey = generateApiKey(environment);
    const id = newId();
    const key = await commands.handle(
      apiKeyAggregate,
      id,
      {
        type: 'IssueApiKey',
        id,
        organizationId,
        environment,
        name: `${environment} key`,
        secretHash: hashSecret(secretKey),
        last4: secretKey.slice(-4),
      },
      { organizationId, environment, actor: 'cli' },
    );
    keys[environment] = { id, secretKey };
    if (key.position !== null && key.position > position) position = key.position;
  }
  return { organizationId, name, keys, position };
}
