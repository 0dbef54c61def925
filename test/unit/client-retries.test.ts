import type { Observation } from '@exactly-once/tools/proof-kit/drive';
import {
  isUnknownOutcome,
  retryUnconfirmedCreates,
  unconfirmedCreates,
} from '@exactly-once/tools/proof-kit/client-retries';
import { ledgerOfRun } from '@exactly-once/tools/proof-kit/intents';
import type { PlannedRequest } from '@exactly-once/tools/proof-kit/plan';
import { checkInvariants } from '@exactly-once/tools/proof-kit/verify';
import { PROBE_CONSUMERS } from '../exactly-once/fixtures/probe-spec';
import { thingIdOf } from '../exactly-once/fixtures/probe-stack-things';
import { PROBE_PROOF, type ThingItem } from '../support/neutral-proof-domain';

/**
 * The proof kit's clients do what the API asks of one: a create that got no definite answer (no response,
 * 409, 502, 503, 504) is sent again under its Idempotency-Key until it gets one, and the verdict judges
 * every answer. Without it, a create applied behind a gateway timeout was "an entity no request got a 201
 * for", where a real client would have been told on its retry.
 */

const ALICE = 'arn:aws:iam::000000000000:user/AKIAALICE';
const create = (index: number, key: string, op: PlannedRequest['op'] = 'new'): PlannedRequest => ({
  index,
  op,
  caller: ALICE,
  method: 'POST',
  path: '/things',
  idempotencyKey: key,
  body: { key },
});
const PLAN: PlannedRequest[] = [
  create(0, 'k1'),
  create(1, 'k2'),
  create(2, 'k2', 'retry-sequential'),
  create(3, 'k3'),
  create(4, 'k4'),
  { index: 5, op: 'cancel', caller: ALICE, method: 'POST', path: '/things/t/undo', entityKey: 'k1' },
];
const thing = (key: string): ThingItem => ({
  entity: 'THING',
  thingId: thingIdOf(ALICE, key),
  status: 'HAPPENED',
  ownerId: 'o1',
  amount: 1,
});
const answer = (index: number, status: Observation['status'], startedAt = index): Observation => ({
  index,
  status,
  body: status === 201 ? JSON.stringify(thing(PLAN[index].idempotencyKey!)) : undefined,
  replayed: false,
  startedAt,
  latencyMs: 1,
});
const noWait = { waitsMs: [0, 0, 0], sleep: async () => undefined };

test('a key none of whose requests got a definite answer is retried once, by its first request; others never', () => {
  const observations = [
    answer(0, 201),
    answer(1, 'no-response'),
    answer(2, 502),
    answer(3, 422),
    answer(4, 500),
    answer(5, 503),
  ];

  const retried = unconfirmedCreates(PLAN, observations).map((p) => p.index);

  // k2's two requests got no answer a client can act on; k1 got its 201, k3 a refusal, k4 a 500 (a bug,
  // reported, never retried away); the undo (index 5) is no create.
  expect(retried).toEqual([1]);
  expect([409, 502, 503, 504, 'no-response'].every((s) => isUnknownOutcome(s as number))).toBe(true);
  // A 429 comes from the gateway before the function runs: an entity behind it is a finding, never retried away.
  expect([201, 400, 403, 422, 429, 500].some((s) => isUnknownOutcome(s))).toBe(false);
});

test('retries until the key is answered: a 503, then a 201; the answers are judged with the rest', async () => {
  const first = [answer(0, 201), answer(1, 504), answer(2, 409), answer(3, 201), answer(4, 201)];
  const sent: number[][] = [];
  const statuses: Observation['status'][] = [503, 201];
  const send = async (requests: readonly PlannedRequest[]) => {
    sent.push(requests.map((r) => r.index));
    const status = statuses.shift()!;
    return { observations: requests.map((r) => answer(r.index, status, 100 + sent.length)) };
  };

  const retried = await retryUnconfirmedCreates(PLAN, first, send, noWait);

  expect(sent).toEqual([[1], [1]]);
  expect({ resent: retried.resent, unconfirmed: retried.unconfirmed }).toEqual({ resent: 2, unconfirmed: 0 });
  expect(retried.observations.filter((o) => o.index === 1).map((o) => o.status)).toEqual([504, 503, 201]);
});

test('a key still unanswered when the waits are spent is counted unconfirmed, and nothing is sent for answered keys', async () => {
  let sends = 0;
  const send = async (requests: readonly PlannedRequest[]) => {
    sends += 1;
    return { observations: requests.map((r) => answer(r.index, 503)) };
  };

  const answered = await retryUnconfirmedCreates(
    PLAN,
    PLAN.map((p) => answer(p.index, 201)),
    send,
    noWait,
  );
  const unanswered = await retryUnconfirmedCreates(PLAN, [answer(0, 'no-response')], send, noWait);

  expect(answered).toMatchObject({ resent: 0, unconfirmed: 0 });
  expect(unanswered).toMatchObject({ resent: 3, unconfirmed: 1 });
  expect(sends).toBe(3);
});

test("the verdict: a create applied behind a 502 is confirmed by its retry's 201, and is a violation without it", () => {
  const judge = (observations: Observation[]) =>
    checkInvariants({
      runId: '',
      checkIntents: true,
      plan: PLAN,
      observations,
      entityIdOf: thingIdOf,
      isPoison: () => false,
      pendingOutbox: 0,
      entities: [thing('k1'), thing('k3')],
      effectItems: [],
      providerItems: [],
      deadLetterQueues: [],
      consumers: PROBE_CONSUMERS,
      domain: PROBE_PROOF,
    }).violations.filter((v) => v.invariant === 'orders' || v.invariant === 'replay');

  expect(judge([answer(0, 502), answer(3, 201)])).toEqual([
    { invariant: 'orders', detail: `${thingIdOf(ALICE, 'k1')} exists but no request for its key got a 201` },
  ]);
  expect(judge([answer(0, 502), answer(0, 201, 50), answer(3, 201)])).toEqual([]);
});

test("a retry's answers go to the intent ledger under their own planned request", () => {
  const records = ledgerOfRun([PLAN[1]], [answer(1, 201)]);

  expect(records).toEqual([expect.objectContaining({ caller: ALICE, key: 'k2', status: 201 })]);
});
