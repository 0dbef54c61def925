import * as fs from 'node:fs';
import * as path from 'node:path';
import { probeStackTemplate } from '../exactly-once/fixtures/probe-stack';
import { headingAnchors } from '../support/markdown';

/**
 * Every alarm's description names the runbook section that says what to do
 * (`Runbook: docs/runbook.md#<anchor>`), and that section exists: the page a
 * notification links to is never missing.
 */
const RUNBOOK = 'docs/runbook.md';
const runbook = fs.readFileSync(path.join(__dirname, '..', '..', RUNBOOK), 'utf8');

type Alarm = { Properties: { AlarmDescription?: unknown } };

function alarms(): [string, Alarm][] {
  const resources = probeStackTemplate().Resources as Record<string, Alarm & { Type: string }>;
  return Object.entries(resources).filter(([, r]) => r.Type === 'AWS::CloudWatch::Alarm');
}

test('the runbook has one section per alarm kind, under the headings alarms link to', () => {
  const sections = headingAnchors(runbook);

  for (const anchor of [
    'dlq-not-empty',
    'dlq-oldest-age',
    'source-queue-age',
    'relay-iterator-age',
    'oldest-undispatched-outbox-item',
    'function-errors',
    'function-throttles',
    'api-5xx',
    'fault-plan-changed',
    'malformed-outbox-item',
    'consumer-deliveries-failing',
    'consumer-duration-near-deadline',
    'relay-dropped-records',
  ]) {
    expect({ anchor, exists: sections.has(anchor) }).toEqual({ anchor, exists: true });
  }
});

test('every alarm of the stack names a runbook section that exists', () => {
  const sections = headingAnchors(runbook);
  const found = alarms();

  expect(found.length).toBeGreaterThan(20);
  for (const [logicalId, alarm] of found) {
    const description = alarm.Properties.AlarmDescription;
    const anchor =
      typeof description === 'string' ? /Runbook: docs\/runbook\.md#([\w-]+)/.exec(description)?.[1] : undefined;
    expect({ logicalId, anchor, exists: anchor !== undefined && sections.has(anchor) }).toEqual({
      logicalId,
      anchor: expect.any(String),
      exists: true,
    });
  }
});

test('anchors are computed the way GitHub computes them', () => {
  expect([...headingAnchors('## API 5xx\n## Why a redrive is safe, and when it is not\n## API 5xx\n')]).toEqual([
    'api-5xx',
    'why-a-redrive-is-safe-and-when-it-is-not',
    'api-5xx-1',
  ]);
});
