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

/**
 * A claim of a todo for a job that the store refused (it is held, or not
 * ready): model/backlog.ts claimRefusal says why.
 */
export class ClaimRefused extends UserError {
  constructor(message: string) {
    super(message);
    this.name = 'ClaimRefused';
  }
}

/**
 * SQLite found the state database damaged (a bad page, a header it cannot
 * read). The command stops with exit 3 and the message says what to do; the
 * store has already stopped writing (src/state/sqlite/damage.ts).
 */
export class StoreDamagedError extends UserError {
  constructor(message: string) {
    super(message, 3);
    this.name = 'StoreDamagedError';
  }
}
