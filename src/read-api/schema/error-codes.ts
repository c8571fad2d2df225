/**
 * How a zod message carries the API error code it answers with: `withCode` marks it, `messageAndCode`
 * reads it back (route.ts for the 400 answered, validation-codes.ts for the codes the document lists).
 */
const CODE_MARK = '\u001f';

/** A zod message that carries its API error code; read back by `messageAndCode`. */
export const withCode = (message: string, code = 'parameter_invalid') => `${code}${CODE_MARK}${message}`;

export function messageAndCode(message: string): { message: string; code: string } {
  const at = message.indexOf(CODE_MARK);
  if (at < 0) return { message, code: 'parameter_invalid' };
  return { code: message.slice(0, at), message: message.slice(at + 1) };
}
