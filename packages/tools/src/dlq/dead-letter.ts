/** A message in a DLQ, with what the consumer wrote about its failure. */
export interface DeadLetter {
  messageId: string;
  receiptHandle: string;
  body: string;
  sentAt?: string;
  groupId?: string;
  /** The consumer's failure attributes (failureCause, consumer, attempt, originalMessageId, ...). */
  attributes: Record<string, string>;
}
