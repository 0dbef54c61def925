/** A message copied to the DLQ, with why it failed in `attributes`. */
export interface DeadLetterMessage {
  body: string;
  messageId: string;
  groupId?: string;
  attributes: Record<string, string>;
}

/** What a consumer can do with a message besides acking or failing it (see adapters/sqs-message-control). */
export interface MessageControl {
  changeVisibility(receiptHandle: string, seconds: number): Promise<void>;
  sendToDeadLetterQueue(message: DeadLetterMessage): Promise<void>;
}

/** The consumer's own count of failed tries of a message (see adapters/dynamodb-try-counter). */
export interface TryCounter {
  /** Counts one more failed try and returns the count so far, 1 on the first. */
  recordFailedTry(consumer: string, messageId: string): Promise<number>;
}
