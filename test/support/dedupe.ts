import { dedupeWindow } from '../../lambdas/exactly-once/consumer/dedupe-horizon';

const DAY = 86_400;

/** The claim TTL and dedupe horizon the stack derives (lib/exactly-once/consumer-pipelines.ts): queue 4 d, DLQ 14 d, redrive 3 d. */
export const TEST_DEDUPE = dedupeWindow({
  sourceRetentionSeconds: 4 * DAY,
  deadLetterRetentionSeconds: 14 * DAY,
  redriveAllowanceSeconds: 3 * DAY,
});
