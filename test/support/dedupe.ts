import { dedupeWindow } from '@exactly-once/runtime/consumer/dedupe-horizon';

const DAY = 86_400;

/** The claim TTL and dedupe horizon the stack derives (packages/cdk/src/consumer-pipelines.ts): queue 4 d, DLQ 14 d, redrive 3 d. */
export const TEST_DEDUPE = dedupeWindow({
  sourceRetentionSeconds: 4 * DAY,
  deadLetterRetentionSeconds: 14 * DAY,
  redriveAllowanceSeconds: 3 * DAY,
});
