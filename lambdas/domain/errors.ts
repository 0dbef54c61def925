/**
 * An error that no retry can fix (a malformed message, an unknown entity). A
 * consumer sends the message to its DLQ at once, with this cause, instead of
 * burning the queue's receive count on it. Every other error is transient.
 */
export class PermanentError extends Error {
  constructor(
    readonly permanentCause: PermanentCause,
    message: string,
  ) {
    super(message);
    this.name = 'PermanentError';
  }
}

export type PermanentCause = 'SchemaViolation' | 'UnknownEntity' | 'InjectedPoison';
