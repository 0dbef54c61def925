import { ChangeMessageVisibilityCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MessageControl } from '@exactly-once/runtime/consumer/ports';
import { consumerFaults } from '@exactly-once/runtime/faults/consumer-faults';
import { FAULT_FILE_ENV } from '@exactly-once/runtime/faults/names';
import { parseFaultPlan } from '@exactly-once/runtime/faults/plan';
import type { FaultSource } from '@exactly-once/runtime/faults/source';
import { consumerWiring } from '@exactly-once/runtime/wiring/consumer-wiring';
import { localBackoffCapOf, type FaultSettings } from '@exactly-once/tools/proof-kit/faults';
import { probeConsumerConfig } from '../support/probe-consumer-config';

// A local fault run caps the consumers' backoff while its faults are on: a message the faults fail five times
// in a row would otherwise back off a minute (2 s doubling), and the run's drain would wait for it.

const NOW = Date.parse('2030-01-01T00:00:00.000Z');
const inAMinute = new Date(NOW + 60_000).toISOString();
const sourceOf = (raw: object): FaultSource => ({ current: async () => parseFaultPlan(raw, 0, NOW) });

/** The backoffs a consumer's decorated message control set, under the plan `raw`. */
async function backoffsUnder(raw: object, asked: number[]): Promise<number[]> {
  const set: number[] = [];
  const inner: MessageControl = {
    changeVisibility: async (_handle, seconds) => void set.push(seconds),
    sendToDeadLetterQueue: async () => undefined,
  };
  const faults = consumerFaults('probe', { source: sourceOf(raw) });
  await faults.refresh();
  const control = faults.control(inner);
  for (const seconds of asked) await control.changeVisibility('handle', seconds);
  return set;
}

test('a backoff above the cap is the cap; one below it, and a release (0), are unchanged', async () => {
  const set = await backoffsUnder({ backoffCapSeconds: 4, expiresAt: inAMinute }, [64, 4, 3, 0]);

  expect(set).toEqual([4, 4, 3, 0]);
});

test('without a plan, or a plan past its expiry, the backoff is as deployed', async () => {
  const asked = [64, 300];

  const [none, expired] = await Promise.all([
    backoffsUnder({}, asked),
    backoffsUnder({ backoffCapSeconds: 4, expiresAt: new Date(NOW - 1).toISOString() }, asked),
  ]);

  expect({ none, expired }).toEqual({ none: asked, expired: asked });
});

test.each([
  [4, 4],
  [300, 300],
  [0, undefined],
  [301, undefined],
  [2.5, undefined],
  ['4', undefined],
])('a plan caps at whole seconds from 1 to the deployed 300: %s -> %s', (asked, read) => {
  expect(parseFaultPlan({ backoffCapSeconds: asked, expiresAt: inAMinute }, 0, NOW).backoffCapSeconds).toBe(read);
});

test('the kit sets the cap on the local target only, and never on a run that proves the budget outlasts an outage', () => {
  const settings: FaultSettings = { enabled: ['transient'], rate: 0.1, slowSeconds: 0, poisonPerQueue: 0 };

  const caps = {
    local: localBackoffCapOf({ ...settings, localBackoffCapSeconds: 4 }, { kind: 'local' }),
    deployed: localBackoffCapOf({ ...settings, localBackoffCapSeconds: 4 }, { kind: 'aws' }),
    asDeployed: localBackoffCapOf({ ...settings, localBackoffCapSeconds: 0 }, { kind: 'local' }),
    outage: localBackoffCapOf({ ...settings, localBackoffCapSeconds: 4, consumerOutageSeconds: 60 }, { kind: 'local' }),
  };

  expect(caps).toEqual({ local: { backoffCapSeconds: 4 }, deployed: {}, asDeployed: {}, outage: {} });
});

describe("a consumer's wiring caps the backoff it sends to SQS in a fault-injection build", () => {
  const config = probeConsumerConfig();
  const sqs = mockClient(SQSClient);
  const saved = { ...process.env };
  let folder: string;

  beforeEach(() => {
    sqs.reset();
    folder = mkdtempSync(join(tmpdir(), 'backoff-cap-'));
    const plan = join(folder, 'plan.json');
    writeFileSync(plan, JSON.stringify({ backoffCapSeconds: 4, expiresAt: new Date(Date.now() + 60_000) }));
    process.env[FAULT_FILE_ENV] = plan;
  });
  afterEach(() => {
    process.env = { ...saved };
    rmSync(folder, { recursive: true, force: true });
  });

  const backoffSentFor = async (seconds: number) => {
    const documents = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' }));
    const wiring = consumerWiring(config, { documents, sqs: new SQSClient({ region: 'us-east-1' }) });
    await wiring.refreshFaults();
    await wiring.settings.control.changeVisibility('handle', seconds);
    return sqs.commandCalls(ChangeMessageVisibilityCommand).map((c) => c.args[0].input.VisibilityTimeout);
  };

  test('a fault-injection build under a capped plan: 64 s becomes 4 s', async () => {
    process.env.FAULT_INJECTION_BUILD = 'true';

    expect(await backoffSentFor(64)).toEqual([4]);
  });

  test('with FAULT_INJECTION_BUILD unset the wiring reads no plan: the same plan changes nothing', async () => {
    delete process.env.FAULT_INJECTION_BUILD;

    expect(await backoffSentFor(64)).toEqual([64]);
  });
});
