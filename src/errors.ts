/**
 * An error caused by what the user asked for or by their environment (bad
 * id, bad config, missing agent). The CLI prints its message alone, no stack.
 */
export class UserError extends Error {
  constructor(
    message: string,
    readonly exitCode = 2,
  ) {
    super(message);
    this.name = 'UserError';
  }
}
