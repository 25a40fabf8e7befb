/**
 * A mistake in how a command was called (unknown option, invalid value). Entry points print its
 * message with the usage and exit 2, so scripts can tell "called wrongly" from "failed" (exit 1).
 */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export const USAGE_EXIT_CODE = 2;
