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

/** A new organization with both environments and one secret key for each, shown only here. */
export async function createOrganization(commands: CommandHandler, name: string): Promise<CreatedOrganization> {
  const organizationId = newId();
  const keys = {} as CreatedOrganization['keys'];
  let position = 0n;
  for (const environment of ['test', 'live'] as Environment[]) {
    const ctx = { organizationId, environment, actor: 'cli' };
    const org = await commands.handle(
      organizationAggregate,
      organizationRecordId(organizationId, environment),
      { type: 'CreateOrganization', id: organizationId, environment, name },
      ctx,
    );
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
      ctx,
    );
    keys[environment] = { id, secretKey };
    for (const p of [org.position, key.position]) if (p !== null && p > position) position = p;
  }
  return { organizationId, name, keys, position };
}
