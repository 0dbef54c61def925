import { compareUnderFaults } from '@exactly-once/tools/bench/fault-comparison';
import { createBenchTables } from '../support/bench-tables';

/**
 * The bench's fault comparison against DynamoDB Local: on one seeded schedule,
 * this design's consumer (the mechanism's generic entity effect, on the
 * transactional inbox and on the sequenced ledger) applies every message once, the plain at-least-once consumer applies the faulted ones twice,
 * and the Powertools-wrapped one twice where the process died between the effect
 * and its completion record (the in-progress lock expired before the redelivery).
 * No example is involved: the bench's events and consumers are its own.
 */
describe('bench fault comparison', () => {
  test('same schedule: this consumer 0 double effects on either ledger, plain and Powertools above 0', async () => {
    const stack = await createBenchTables();
    try {
      const result = await compareUnderFaults({
        endpoint: process.env.TEST_DYNAMODB_ENDPOINT!,
        region: 'us-east-1',
        tables: stack.tables,
        messages: 40,
        concurrency: 20,
        seed: 7,
        faultShare: 0.5,
      });

      // The seed gives this schedule every fault at least once (else the assertions below prove less).
      expect(Object.values(result.faults).every((n) => n > 0)).toBe(true);
      for (const side of Object.values(result.sides)) {
        expect(side.missing).toBe(0);
        expect(side.unacked).toBe(0);
      }
      expect(result.sides.ours.double).toBe(0);
      expect(result.sides.sequenced.double).toBe(0);
      // Plain: every fault applies the effect again.
      expect(result.sides.plain.double).toBe(Object.values(result.faults).reduce((sum, n) => sum + n, 0));
      // Powertools: exactly the deaths between effect and completion.
      expect(result.sides.powertools.double).toBe(result.faults['crash-before-completion']);
    } finally {
      await stack.drop();
    }
  }, 60_000);
});
