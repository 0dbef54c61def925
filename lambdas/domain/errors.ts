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

/**
 * - SchemaViolation: the body is not an event the consumer can read;
 * - UnknownEntity: an event type the consumer does not take;
 * - DedupeHorizonPassed: the event is older than the consumer's dedupe horizon
 *   (domain/dedupe-horizon): its inbox claim may be gone, so only a person may
 *   decide to apply it;
 * - InjectedPoison: the proof kit's poison fault.
 */
export type PermanentCause = 'SchemaViolation' | 'UnknownEntity' | 'DedupeHorizonPassed' | 'InjectedPoison';
