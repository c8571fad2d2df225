import { USER_CREDENTIALS, USERS, type UserCredentialDoc, type UserDoc } from '../../projections/team.projection.ts';
import type { EventStore } from '../../event-store/event-store.ts';
import type { ProjectionRunner } from '../../projections/projection-runner.ts';
import type { ReadStore } from '../../read-store/read-store.ts';
import type { SignInThrottle } from './throttle.ts';
import { verifyPassword } from './password.ts';

/**
 * The user whose email and password these are, or null; throttled per account and address (a 429
 * while either has spent its failures, before the password is looked at). A wrong email costs the
 * same hashing as a wrong password.
 */
export async function verifyCredentials(
  deps: { readStore: ReadStore; eventStore: EventStore; projections: ProjectionRunner; signInThrottle: SignInThrottle },
  input: { email: string; password: string; clientAddress: string },
): Promise<UserDoc | null> {
  const email = input.email.trim().toLowerCase();
  deps.signInThrottle.check(email, input.clientAddress);
  const [user] = await deps.readStore
    .collection<UserDoc>(USERS)
    .find({ emailLower: email, removed: false }, { limit: 1 });
  const credential = user ? await deps.readStore.collection<UserCredentialDoc>(USER_CREDENTIALS).get(user.id) : null;
  if (user && credential && (await verifyPassword(credential.passwordHash, input.password))) return user;
  if (!credential) await verifyPassword(null, input.password);
  deps.signInThrottle.failed(email, input.clientAddress);
  return null;
}
