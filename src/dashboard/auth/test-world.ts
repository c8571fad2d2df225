import type { ExecutionContext } from 'ava';
import { createCommandHandler } from '../../actors/command-handler.ts';
import { createSqliteEventStore } from '../../event-store/sqlite-event-store.ts';
import { ALL_PROJECTIONS } from '../../projections/all-projections.ts';
import { createProjectionRunner } from '../../projections/projection-runner.ts';
import { USERS, type UserDoc } from '../../projections/team.projection.ts';
import { createEmbeddedReadStore } from '../../read-store/embedded-read-store.ts';
import { createManualClock } from '../../shared/clock.ts';
import { createOrganization } from '../../tenancy/create-organization.ts';
import { createUser } from '../../tenancy/create-user.ts';

/** A log with one organization, its read models and commands on a manual clock: what the auth tests run on. */
export async function authWorld(t: ExecutionContext) {
  const clock = createManualClock(Date.parse('2026-01-01T00:00:00.000Z'));
  const eventStore = createSqliteEventStore({ path: ':memory:' });
  const readStore = createEmbeddedReadStore({});
  const commands = createCommandHandler({ eventStore, clock });
  const projections = createProjectionRunner({ eventStore, readStore, projections: ALL_PROJECTIONS, clock });
  await projections.start();
  t.teardown(async () => {
    await projections.stop();
    await eventStore.close();
  });
  const settled = async () => {
    const head = await eventStore.headPosition();
    if (head !== null) await projections.waitFor(head);
  };
  const { organizationId } = await createOrganization(commands, 'Acme');
  /** A user of the organization, as the read model has it. */
  const user = async (email: string, role = 'owner', password = 'correct horse battery') => {
    const { userId } = await createUser(commands, { organizationId, email, role, password, actor: 'cli' });
    await settled();
    return (await readStore.collection<UserDoc>(USERS).get(userId))!;
  };
  return { clock, eventStore, readStore, commands, projections, settled, organizationId, user };
}
