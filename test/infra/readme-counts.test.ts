import * as fs from 'node:fs';
import * as path from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { readConfig } from '../../lib/config';
import { ExactlyOnceStack } from '../../lib/shop/shop-stack';
import { CONSUMERS } from '../../lambdas/shop/consumers';
import { EXAMPLE_CONSUMERS } from '../support/consumer-list';
import { cdkContext, defaultStackTemplate } from '../support/synth';

/**
 * The README's "What it creates" and "What it costs" count what the default stack synthesizes with the
 * consumers the repository ships with (fulfilment and loyalty). A consumer added to the list
 * (`npm run new:consumer`) is not counted there: it adds functions, queues and alarms to a fork's stack,
 * not to the README's. A change to what the shipped stack creates fails here and says which number to change.
 */
const README = fs.readFileSync(path.join(__dirname, '..', '..', 'README.md'), 'utf8');
const onlyShipped = CONSUMERS.length === EXAMPLE_CONSUMERS.length;

function shippedStackTemplate(): Record<string, unknown> {
  if (onlyShipped) return defaultStackTemplate();
  const app = new App({ context: cdkContext() });
  const stack: Stack = new ExactlyOnceStack(app, 'ShippedStack', {
    config: readConfig(app),
    consumers: EXAMPLE_CONSUMERS,
  });
  return Template.fromStack(stack).toJSON();
}

const resources = Object.values(
  (shippedStackTemplate() as { Resources: Record<string, { Type: string; Properties?: Record<string, unknown> }> })
    .Resources,
);
const count = (type: string) => resources.filter((r) => r.Type === type).length;

/** Every number the README puts before `words`, e.g. `9 functions`. */
function claimed(words: string): number[] {
  return [...README.matchAll(new RegExp(`(\\d+) ${words}`, 'g'))].map((m) => Number(m[1]));
}

test("the functions the README counts are the stack's (its own functions, not the CDK's custom-resource handlers)", () => {
  const own = resources.filter(
    (r) => r.Type === 'AWS::Lambda::Function' && String(r.Properties?.Runtime ?? '').startsWith('nodejs24'),
  ).length;

  expect(claimed('functions')).toEqual([own]);
});

test("the DynamoDB tables and the CloudWatch alarms the README counts are the stack's", () => {
  expect(claimed('DynamoDB tables')).toEqual([count('AWS::DynamoDB::Table')]);
  expect(claimed('CloudWatch alarms')).toEqual([count('AWS::CloudWatch::Alarm')]);
  expect(claimed('alarms\\s+on \\d+ alarm metrics')).toEqual([count('AWS::CloudWatch::Alarm')]);
  // A metric math alarm is billed per metric it reads.
  const alarmMetrics = resources
    .filter((r) => r.Type === 'AWS::CloudWatch::Alarm')
    .reduce(
      (n, r) =>
        n +
        Math.max(
          1,
          ((r.Properties?.Metrics as { MetricStat?: unknown }[] | undefined) ?? []).filter((m) => m.MetricStat).length,
        ),
      0,
    );
  expect(claimed('alarm metrics\\s+x \\$0.10')).toEqual([alarmMetrics]);
});
