/**
 * A setting the operator gave cannot be used; its message names the setting and says what to fix.
 * The command line prints the message alone (exit 2), never a stack trace.
 */
export class SettingError extends Error {}
