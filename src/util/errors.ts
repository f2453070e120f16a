/**
 * A UserError is a problem with the user's input (a file, a field, a flag), not a bug.
 * The CLI prints only its message and exits with a non-zero code; anything else is a bug
 * and gets a stack trace.
 */
export class UserError extends Error {
  constructor(message: string, readonly exitCode = 2) {
    super(message);
    this.name = 'UserError';
  }
}

export function isUserError(e: unknown): e is UserError {
  return e instanceof UserError;
}
