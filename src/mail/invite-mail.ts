import { escapeHtml } from '../hosted/html.ts';

export type InviteMailInput = {
  organizationName: string;
  /** Who invited, as the mail names them (a user's name or email; absent for an API key). */
  invitedBy: string | null;
  role: string;
  link: string;
  expiresAt: string;
};

/** The mail that brings an invitee to the dashboard: who asks, the role, the one-time link and until when it works. */
export function renderInviteMail(input: InviteMailInput): { subject: string; text: string; html: string } {
  const who = input.invitedBy ? `${input.invitedBy} invites you` : 'You are invited';
  const until = `${input.expiresAt.slice(0, 16).replace('T', ' ')} UTC`;
  const subject = `Join ${input.organizationName} on Weir`;
  const text = [
    `${who} to join ${input.organizationName} on Weir as ${input.role}.`,
    '',
    'Set your password and join here (the link works once):',
    input.link,
    '',
    `It works until ${until}. If you did not expect this mail, ignore it.`,
  ].join('\n');
  const html = `<!doctype html><html><body>
<p>${escapeHtml(who)} to join <strong>${escapeHtml(input.organizationName)}</strong> on Weir as ${escapeHtml(input.role)}.</p>
<p><a href="${escapeHtml(input.link)}">Set your password and join</a> (the link works once).</p>
<p>It works until ${escapeHtml(until)}. If you did not expect this mail, ignore it.</p>
</body></html>`;
  return { subject, text, html };
}
