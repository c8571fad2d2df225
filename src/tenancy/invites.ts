import { randomBytes } from 'node:crypto';
import type { CommandHandler } from '../actors/command-handler.ts';
import { inviteOpen, userInviteAggregate } from '../actors/user-invite.ts';
import { USER_ENVIRONMENT } from '../actors/user.ts';
import type { ProjectionRunner } from '../projections/projection-runner.ts';
import { USER_INVITES, type UserInviteDoc } from '../projections/team.projection.ts';
import type { ReadStore } from '../read-store/read-store.ts';
import { isUuid } from '../shared/ids.ts';
import { createUser } from './create-user.ts';
import { hashSecret, secretsEqual } from './secrets.ts';

/** Where invite links lead: `/dashboard/invite/<invite id>.<secret>`. */
export const INVITE_PATH = '/dashboard/invite/';

/** A new secret for an invite's link, and the hash the log keeps instead. */
export function newInviteSecret(): { secret: string; hash: string } {
  const secret = randomBytes(32).toString('base64url');
  return { secret, hash: hashSecret(secret) };
}

export const inviteLink = (publicUrl: string, inviteId: string, secret: string): string =>
  `${publicUrl}${INVITE_PATH}${inviteId}.${secret}`;

const TOKEN = /^([0-9a-f-]{36})\.([A-Za-z0-9_-]{43})$/;

/**
 * The invite a link's token opens, with the hash of its secret: only while it is pending and not
 * past its expiry on `now` (Weir's clock). Null for anything else, whatever the reason, so a link
 * tells a stranger nothing.
 */
export async function openInvite(
  readStore: ReadStore,
  token: string,
  now: number,
): Promise<{ invite: UserInviteDoc; tokenHash: string } | null> {
  const match = TOKEN.exec(token);
  if (!match || !isUuid(match[1])) return null;
  const invite = await readStore.collection<UserInviteDoc>(USER_INVITES).get(match[1]!);
  const tokenHash = hashSecret(match[2]!);
  if (!invite || !secretsEqual(tokenHash, invite.tokenHash) || !inviteOpen(invite, now)) return null;
  return { invite, tokenHash };
}

/**
 * The invitee's answer: their user is made (email and role from the invite, name and password
 * theirs; the email's claim keeps a second acceptance from making a second user), then the invite
 * is spent; the invite record checks the link and the expiry again. Bad input throws before
 * anything is written.
 */
export async function acceptInvite(
  deps: { commands: CommandHandler; projections: ProjectionRunner },
  opened: { invite: UserInviteDoc; tokenHash: string },
  input: { name: string; password: string; clientAddress: string },
): Promise<{ userId: string }> {
  const { invite, tokenHash } = opened;
  const actor = `invite:${invite.id}`;
  const { userId } = await createUser(deps.commands, {
    organizationId: invite.organizationId,
    email: invite.email,
    name: input.name,
    role: invite.role,
    password: input.password,
    actor,
  });
  const accepted = await deps.commands.handle(
    userInviteAggregate,
    invite.id,
    { type: 'AcceptUserInvite', tokenHash, userId },
    { organizationId: invite.organizationId, environment: USER_ENVIRONMENT, actor, clientAddress: input.clientAddress },
  );
  if (accepted.position !== null) await deps.projections.waitFor(accepted.position);
  return { userId };
}
