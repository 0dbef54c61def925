import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  factsOfLedger,
  LEDGER_MARK,
  ledgerOfRun,
  readLedgers,
  writeLedger,
  type IntentRecord,
} from '@exactly-once/tools/proof-kit/intents';
import type { PlannedRequest } from '@exactly-once/tools/proof-kit/plan';
import { checkInvariants } from '@exactly-once/tools/proof-kit/verify';
import { PROBE_CONSUMERS } from '../exactly-once/fixtures/probe-spec';
import { thingIdOf } from '../exactly-once/fixtures/probe-stack-things';
import { PROBE_PROOF, type ThingItem } from '../support/neutral-proof-domain';

/**
 * The intent ledger: what each generator asked for and was told, merged from
 * many workers' files, judged by the same checks as a run of the kit's own
 * driver: one entity per accepted key, none for a refused one.
 */

const ALICE = 'arn:aws:iam::000000000000:user/AKIAALICE';
const BOB = 'arn:aws:iam::000000000000:user/AKIABOB';
const thing = (caller: string, key: string): ThingItem => ({
  entity: 'THING',
  thingId: thingIdOf(caller, key),
  status: 'HAPPENED',
  ownerId: 'o1',
  amount: 1,
});
const accepted = (caller: string, key: string, replayed = false): IntentRecord => ({
  caller,
  key,
  status: 201,
  response: JSON.stringify(thing(caller, key)),
  requestSha256: 'aa',
  replayed,
  at: 1,
});
const refused = (caller: string, key: string, status = 422): IntentRecord => ({
  caller,
  key,
  status,
  requestSha256: 'bb',
  replayed: false,
  at: 1,
});

/** The verdict's intent checks (orders, replay) over a ledger and what the entity table holds. */
function judge(records: IntentRecord[], things: ThingItem[]) {
  const facts = factsOfLedger(records, (caller) => caller);
  const verification = checkInvariants({
    runId: '',
    checkIntents: true,
    ...facts,
    entityIdOf: thingIdOf,
    isPoison: () => false,
    pendingOutbox: 0,
    entities: things,
    effectItems: [],
    providerItems: [],
    deadLetterQueues: [],
    consumers: PROBE_CONSUMERS,
    domain: PROBE_PROOF,
  });
  return verification.violations.filter((v) => v.invariant === 'orders' || v.invariant === 'replay');
}

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ledger-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

test("the ledgers of two workers merge: one written as files are, one as CloudWatch Logs exports a worker's output", () => {
  const first = path.join(dir, 'worker-1.jsonl');
  const second = path.join(dir, 'worker-2.log');
  writeLedger([accepted(ALICE, 'k1')], first);
  fs.writeFileSync(
    second,
    `2026-06-01T12:00:00Z\tabc-123\tINFO\t${LEDGER_MARK}${JSON.stringify(refused(BOB, 'k2'))}\n\n`,
  );

  const records = readLedgers([first, second]);

  expect(records.map((r) => [r.caller, r.key, r.status])).toEqual([
    [ALICE, 'k1', 201],
    [BOB, 'k2', 422],
  ]);
});

test('a line that is not an intent record is an error naming its file and line, not a shorter ledger', () => {
  const file = path.join(dir, 'cut.jsonl');
  fs.writeFileSync(file, `${LEDGER_MARK}${JSON.stringify(accepted(ALICE, 'k1'))}\n{"caller":"x","ke`);

  expect(() => readLedgers([file])).toThrow(`${file}:2: not an intent record`);
});

test('accepted keys with their entity, a replay, and a refused key without one: no violation', () => {
  const ledger = [accepted(ALICE, 'k1'), accepted(ALICE, 'k1', true), refused(BOB, 'k2'), refused(ALICE, 'k3', 409)];

  expect(judge(ledger, [thing(ALICE, 'k1')])).toEqual([]);
});

test('an entity for a key the ledger shows refused is a violation', () => {
  const violations = judge([accepted(ALICE, 'k1'), refused(BOB, 'k2')], [thing(ALICE, 'k1'), thing(BOB, 'k2')]);

  expect(violations).toEqual([
    { invariant: 'orders', detail: `${thingIdOf(BOB, 'k2')} exists but no request for its key got a 201` },
  ]);
});

test('an accepted key without its entity is a violation', () => {
  const violations = judge([accepted(ALICE, 'k1'), accepted(BOB, 'k2')], [thing(ALICE, 'k1')]);

  expect(violations).toEqual([
    { invariant: 'orders', detail: `key ${BOB} k2: got 201 but ${thingIdOf(BOB, 'k2')} is missing` },
  ]);
});

test("a key's retry that sent another body and still got a 201 is a replay violation", () => {
  const retry = { ...accepted(ALICE, 'k1', true), requestSha256: 'cc' };

  expect(judge([accepted(ALICE, 'k1'), retry], [thing(ALICE, 'k1')])).toEqual([
    { invariant: 'replay', detail: `key ${ALICE} k1: 201 for 2 different request bodies` },
  ]);
});

test("the driver's run becomes ledger lines: keyed creates only, with what each was told", () => {
  const plan = [
    { index: 0, op: 'new', caller: ALICE, method: 'POST', path: '/things', idempotencyKey: 'k1', body: { a: 1 } },
    { index: 1, op: 'read', caller: ALICE, method: 'GET', path: '/things/t' },
  ] as PlannedRequest[];

  const records = ledgerOfRun(plan, [
    { index: 0, status: 201, body: '{"thingId":"t"}', replayed: false, startedAt: 5, latencyMs: 1 },
    { index: 1, status: 200, body: '{}', replayed: false, startedAt: 6, latencyMs: 1 },
  ]);

  expect(records).toEqual([
    {
      caller: ALICE,
      key: 'k1',
      status: 201,
      response: '{"thingId":"t"}',
      requestSha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      replayed: false,
      at: 5,
    },
  ]);
});
