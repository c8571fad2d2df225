import { type CommandContext } from '../../actors/command-handler.ts';
import { USER_ENVIRONMENT, userAggregate, type UserCommand } from '../../actors/user.ts';
import {
  TEAM_POLICIES,
  USER_CREDENTIALS,
  type TeamPolicyDoc,
  type UserCredentialDoc,
  type UserDoc,
} from '../../projections/team.projection.ts';
import { InvalidStateError } from '../../shared/errors.ts';
import type { DashboardDeps } from '../context.ts';
import { generateRecoveryCodes, hashRecoveryCode, normalizeRecoveryCode } from './recovery-codes.ts';
import { generateTotpSecret, verifyTotp } from './totp.ts';

/** What two-factor sign-in needs of the dashboard's dependencies. */
export type TwoFactorDeps = Pick<DashboardDeps, 'commands' | 'projections' | 'readStore' | 'secretBox' | 'clock'>;

/** Where a user turns two-factor on or off; the only page (with sign-out) open to one who must turn it on. */
export const SECURITY_PATH = '/dashboard/settings/security';

const ENROLMENT_TICKET_MS = 15 * 60_000;

async function runUserCommand(deps: TwoFactorDeps, user: UserDoc, clientAddress: string, command: UserCommand) {
  const ctx: CommandContext = {
    organizationId: user.organizationId,
    environment: USER_ENVIRONMENT,
    actor: `user:${user.id}`,
    clientAddress,
  };
  const result = await deps.commands.handle(userAggregate, user.id, command, ctx);
  if (result.position !== null) await deps.projections.waitFor(result.position);
}

/**
 * A value sealed with the master key for one purpose, to carry through a form: the browser holds it
 * but can neither read nor change it, and it is refused after `maxAgeMs` on Weir's clock.
 */
export function sealTicket(deps: Pick<TwoFactorDeps, 'secretBox' | 'clock'>, purpose: string, payload: object): string {
  return deps.secretBox.seal(JSON.stringify({ purpose, issuedAt: deps.clock.now(), payload }));
}

export function openTicket<T>(
  deps: Pick<TwoFactorDeps, 'secretBox' | 'clock'>,
  purpose: string,
  ticket: string | null | undefined,
  maxAgeMs: number,
): T | null {
  if (!ticket) return null;
  try {
    const opened = JSON.parse(deps.secretBox.open(ticket)) as { purpose: string; issuedAt: number; payload: T };
    const age = deps.clock.now() - opened.issuedAt;
    return opened.purpose === purpose && age >= 0 && age <= maxAgeMs ? opened.payload : null;
  } catch {
    return null;
  }
}

/** A new secret to enrol, and the sealed ticket that carries it (bound to the user) to the confirming POST. */
export function startEnrolment(deps: TwoFactorDeps, user: UserDoc): { secret: string; ticket: string } {
  const secret = generateTotpSecret();
  return { secret, ticket: sealTicket(deps, 'totp-enrol', { userId: user.id, secret }) };
}

/** The secret of an enrolment ticket this user was given in the last 15 minutes, or null. */
export function enrolmentSecret(deps: TwoFactorDeps, user: UserDoc, ticket: string | null): string | null {
  const payload = openTicket<{ userId: string; secret: string }>(deps, 'totp-enrol', ticket, ENROLMENT_TICKET_MS);
  return payload && payload.userId === user.id ? payload.secret : null;
}

/** Ten new recovery codes for a user: as shown (once) and as the log keeps them. */
function newRecoveryCodes(user: UserDoc): { codes: string[]; hashes: string[] } {
  const codes = generateRecoveryCodes();
  return { codes, hashes: codes.map((c) => hashRecoveryCode(user.id, normalizeRecoveryCode(c)!)) };
}

/**
 * Turns two-factor on once a code from the new secret is right: the secret is sealed, ten recovery
 * codes are made and kept as hashes. Answers the codes (to show once), or null when the code is wrong.
 */
export async function enableTwoFactor(
  deps: TwoFactorDeps,
  user: UserDoc,
  clientAddress: string,
  secret: string,
  code: string,
): Promise<string[] | null> {
  const step = verifyTotp(secret, code, deps.clock.now());
  if (step === null) return null;
  const { codes, hashes } = newRecoveryCodes(user);
  await runUserCommand(deps, user, clientAddress, {
    type: 'EnableTwoFactor',
    secretSealed: deps.secretBox.seal(secret),
    recoveryCodeHashes: hashes,
    step,
  });
  return codes;
}

/** Ten new recovery codes in place of the old ones (spent or not, they stop working); answers them, to show once. */
export async function renewRecoveryCodes(deps: TwoFactorDeps, user: UserDoc, clientAddress: string): Promise<string[]> {
  const { codes, hashes } = newRecoveryCodes(user);
  await runUserCommand(deps, user, clientAddress, { type: 'RenewRecoveryCodes', recoveryCodeHashes: hashes });
  return codes;
}

export const disableTwoFactor = (deps: TwoFactorDeps, user: UserDoc, clientAddress: string): Promise<void> =>
  runUserCommand(deps, user, clientAddress, { type: 'DisableTwoFactor' });

/** Only a TOTP code (the re-authentication of a sensitive action takes no recovery code). */
export type SecondFactorKind = 'totp' | 'any';

/**
 * Whether `input` is the user's second factor now: a TOTP code of the current step (or one either
 * side) not used before, or, with `kind: 'any'`, an unspent recovery code. Its use is recorded, so
 * it works once; a wrong or spent code answers false and records nothing.
 */
export async function verifySecondFactor(
  deps: TwoFactorDeps,
  user: UserDoc,
  clientAddress: string,
  input: string,
  kind: SecondFactorKind = 'any',
): Promise<boolean> {
  const credential = await deps.readStore.collection<UserCredentialDoc>(USER_CREDENTIALS).get(user.id);
  const twoFactor = credential?.twoFactor;
  if (!twoFactor) return false;
  let command: UserCommand;
  if (/^\s*\d{3}\s?\d{3}\s*$/.test(input)) {
    const step = verifyTotp(deps.secretBox.open(twoFactor.secretSealed), input, deps.clock.now());
    if (step === null || step <= twoFactor.lastStep) return false;
    command = { type: 'UseTwoFactorCode', step };
  } else {
    const normalized = kind === 'any' ? normalizeRecoveryCode(input) : null;
    if (!normalized) return false;
    command = { type: 'UseRecoveryCode', hash: hashRecoveryCode(user.id, normalized) };
  }
  try {
    await runUserCommand(deps, user, clientAddress, command);
    return true;
  } catch (error) {
    // Spent meanwhile (the same code in two requests at once): only one of them gets in.
    if (error instanceof InvalidStateError) return false;
    throw error;
  }
}

/** Whether the user's organization requires two-factor sign-in. */
export async function twoFactorRequired(deps: Pick<TwoFactorDeps, 'readStore'>, organizationId: string) {
  return (
    (await deps.readStore.collection<TeamPolicyDoc>(TEAM_POLICIES).get(organizationId))?.twoFactorRequired === true
  );
}

/** Whether this user must turn two-factor on before anything else: the organization requires it and theirs is off. */
export async function mustEnrol(deps: Pick<TwoFactorDeps, 'readStore'>, user: UserDoc): Promise<boolean> {
  return !user.twoFactorEnabled && (await twoFactorRequired(deps, user.organizationId));
}

/** The paths open to a user who must enrol first: the security page (and its live updates), signing out, the environment switch. */
export const openWhileEnrolling = (path: string): boolean =>
  path === SECURITY_PATH ||
  path.startsWith(`${SECURITY_PATH}/`) ||
  ['/dashboard/logout', '/dashboard/environment', '/dashboard/events'].includes(path);
