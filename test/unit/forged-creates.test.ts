import { forgedCreates } from '@exactly-once/tools/proof-kit/faults';
import type { PlannedRequest } from '@exactly-once/tools/proof-kit/plan';
import { PROBE_PROOF } from '../support/neutral-proof-domain';

/**
 * Which creates the `forged-first` fault forges: the plan's last ones, never its first, which meet a
 * cold runtime and may never be accepted (then no real event exists for the forged copy to replace,
 * and the run shows no evidence of the fault).
 */

const CALLER = 'arn:aws:iam::000000000000:user/AKIALOADTEST0001';
const create = (index: number, key: string, op: PlannedRequest['op'] = 'new'): PlannedRequest => ({
  index,
  op,
  caller: CALLER,
  method: 'POST',
  path: '/things',
  idempotencyKey: key,
  body: { amount: 1, ownerId: `run-o-${index}` },
});

test('it forges the last creates of the plan, one per key, in plan order, never the first ones', () => {
  const plan = [
    create(0, 'run-0'),
    create(1, 'run-1'),
    create(2, 'run-2'),
    create(3, 'run-3'),
    // A concurrent retry of the last create: the same event, so one forged copy for both.
    create(4, 'run-3', 'retry-concurrent'),
  ];

  const chosen = forgedCreates(plan, 2, PROBE_PROOF);

  expect(chosen.map((r) => r.idempotencyKey)).toEqual(['run-2', 'run-3']);
});

test('a request that builds no forged event (a read) is passed over; a domain that forges nothing gets none', () => {
  const read: PlannedRequest = { index: 2, op: 'read', caller: CALLER, method: 'GET', path: '/things/x' };
  const plan = [create(0, 'run-0'), create(1, 'run-1'), read];

  expect(forgedCreates(plan, 1, PROBE_PROOF).map((r) => r.idempotencyKey)).toEqual(['run-1']);
  expect(forgedCreates(plan, 1, {})).toEqual([]);
});
