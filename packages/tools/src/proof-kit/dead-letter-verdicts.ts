import type { Message } from '@aws-sdk/client-sqs';
import { eventIdOf } from '../dlq/messages';
import { envelopeOccurredAt } from '../dlq/horizon';
import { EVENT_ID_REUSED_CAUSE, OCCURRED_IN_FUTURE_CAUSE } from '../dlq/causes';
import type { Violation } from './domain';

/** What one dead-letter queue holds for one cause, and whether the kit expected it there (its own poison). */
export interface DeadLetterTally {
  queue: string;
  cause: string;
  count: number;
  expected: boolean;
}

/**
 * Invariant 4 of verify.ts, the dead letters: each queue's messages counted by the cause the consumer
 * recorded; only the kit's own poison is expected there. Another run's messages are listed, not judged.
 */
export function judgeDeadLetters(
  queues: readonly { name: string; messages: Message[] }[],
  runId: string,
  isPoison: (body: string) => boolean,
): { violations: Violation[]; deadLetters: DeadLetterTally[] } {
  const violations: Violation[] = [];
  const deadLetters: DeadLetterTally[] = [];
  for (const { name, messages } of queues) {
    const byCause = new Map<string, { count: number; expected: boolean }>();
    for (const message of messages) {
      const body = message.Body ?? '';
      // Not this run's (an earlier run, or other traffic on the same stack): listed, not judged.
      if (runId !== '' && !isPoison(body) && !body.includes(`${runId}-`)) {
        const label = 'from before this run (not judged)';
        const entry = byCause.get(label) ?? { count: 0, expected: true };
        entry.count += 1;
        byCause.set(label, entry);
        continue;
      }
      const poison = isPoison(body);
      const cause = message.MessageAttributes?.failureCause?.StringValue ?? 'moved after maxReceiveCount';
      const label = poison ? `poison (${cause})` : cause;
      // Poison belongs in a DLQ however it got there: copied with its cause, or moved by SQS after
      // maxReceiveCount when crashes kept failing its batch (then possibly next to its copies).
      const entry = byCause.get(label) ?? { count: 0, expected: poison };
      entry.count += 1;
      byCause.set(label, entry);
      if (cause === EVENT_ID_REUSED_CAUSE) {
        // Caught, not swallowed: still never a pass. A person compares the two events (the runbook).
        const stored = message.MessageAttributes?.storedFingerprint?.StringValue ?? '?';
        const delivered = message.MessageAttributes?.deliveredFingerprint?.StringValue ?? '?';
        violations.push({
          invariant: 'event-id-reused',
          detail: `${name}: message ${message.MessageId}: another event under eventId ${eventIdOf(body) ?? '?'} (stored fingerprint ${stored}, delivered ${delivered}): for a person to look at`,
        });
      } else if (cause === OCCURRED_IN_FUTURE_CAUSE) {
        // Refused, not applied: its producer's clock is wrong. A person fixes the clock, then redrives it.
        violations.push({
          invariant: 'occurred-in-future',
          detail: `${name}: message ${message.MessageId}: eventId ${eventIdOf(body) ?? '?'} stamped ${envelopeOccurredAt(body) ?? '?'}, beyond the clock-skew margin: for a person to look at`,
        });
      } else if (!poison) {
        violations.push({
          invariant: 'dlq',
          detail: `${name}: message ${message.MessageId} (${cause}): ${body.slice(0, 160)}`,
        });
      }
    }
    for (const [cause, { count, expected }] of byCause) deadLetters.push({ queue: name, cause, count, expected });
  }
  return { violations, deadLetters };
}
