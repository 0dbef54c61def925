import { formatInventory, inventorySummary } from '@exactly-once/tools/local-runtime/template/inventory';

/**
 * `npm start` prints what it leaves out in one line of counts before `Ready`; the logical ids (a few
 * kilobytes on the example's stack) come with `--details`.
 */
const notEmulated = [
  { type: 'AWS::IAM::Role', count: 12, reason: 'permissions are not enforced locally' },
  { type: 'AWS::SNS::Topic', count: 1, reason: 'alarm notifications are printed instead' },
];
const partial = [
  { logicalId: 'FulfilmentErrorsAlarm', reason: 'alarms on AWS/Lambda metrics' },
  { logicalId: 'LoyaltyErrorsAlarm', reason: 'alarms on AWS/Lambda metrics' },
  { logicalId: 'Nightly', reason: 'cron(0 3 * * ? *) schedules' },
];

test('the summary is one line of counts that names no logical id and says where the details are', () => {
  const summary = inventorySummary(notEmulated, partial)!;

  expect(summary).toBe(
    'Not emulated locally: 13 resources of 2 types; skipped: 3 resources for 2 reasons (npm start -- --details lists them)',
  );
  expect(summary).not.toMatch(/FulfilmentErrorsAlarm|Nightly/);
  // The details still name every one.
  expect(formatInventory(notEmulated, partial).join('\n')).toMatch(/FulfilmentErrorsAlarm, LoyaltyErrorsAlarm/);
});

test('nothing left out: no line at all', () => {
  expect(inventorySummary([], [])).toBeUndefined();
});
