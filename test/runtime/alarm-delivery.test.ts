import { AlarmEvaluator } from '@exactly-once/tools/local-runtime/alarms';
import { alarmDefinitions } from '@exactly-once/tools/local-runtime/template/alarms';
import type { CfnTemplate } from '@exactly-once/tools/local-runtime/template/model';
import { probeStackTemplate } from '../exactly-once/fixtures/probe-stack';

/**
 * The local runtime's alarms read a stack's real template (the neutral probe stack's, whose alarms
 * are the mechanism's) and say what a deployed alarm would do when it fires: notify its topic, or be
 * refused by the topic or key policy (the AlarmDelivery aspect's judgement, shared).
 * The evaluator is fed a queue depth directly: the emulator is not what is tested here.
 */
const TOPIC_ARN = 'arn:aws:sns:us-east-1:000000000000:alarm-topic';

type Statement = { Effect: string; Principal?: { Service?: unknown } };
const byCloudWatch = (s: Statement) => s.Principal?.Service === 'cloudwatch.amazonaws.com';

function stackTemplate(): CfnTemplate {
  return structuredClone(probeStackTemplate()) as unknown as CfnTemplate;
}

/** Drops CloudWatch's statements from every policy document of one resource type. */
function withoutCloudWatch(template: CfnTemplate, type: string, documentProperty: string): CfnTemplate {
  for (const resource of Object.values(template.Resources).filter((r) => r.Type === type)) {
    const document = resource.Properties![documentProperty] as { Statement: Statement[] };
    const before = document.Statement.length;
    document.Statement = document.Statement.filter((s) => !byCloudWatch(s));
    expect(document.Statement.length).toBe(before - 1);
  }
  return template;
}

/** Fires the stack's first DLQ-depth alarm and returns the line the runtime prints. */
async function fireDeadLetterAlarm(template: CfnTemplate): Promise<string> {
  const definition = alarmDefinitions(template).alarms.find((a) => a.metric === 'ApproximateNumberOfMessagesVisible');
  expect(definition).toBeDefined();
  const lines: string[] = [];
  const evaluator = new AlarmEvaluator(
    [{ definition: definition!, queueName: 'dlq', actions: [TOPIC_ARN] }],
    () => Promise.resolve({ ApproximateNumberOfMessagesVisible: 3, ApproximateAgeOfOldestMessage: 60 }),
    (line) => lines.push(line),
  );

  await evaluator.evaluate();

  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^ALARM /);
  return lines[0];
}

test('an alarm of the stack as built says which topic it would notify', async () => {
  const line = await fireDeadLetterAlarm(stackTemplate());

  expect(line).toContain(`would notify ${TOPIC_ARN}`);
  expect(line).not.toContain('could not publish');
});

test('with no topic policy statement for CloudWatch, it says plainly that CloudWatch could not publish, and why', async () => {
  const template = withoutCloudWatch(stackTemplate(), 'AWS::SNS::TopicPolicy', 'PolicyDocument');

  const line = await fireDeadLetterAlarm(template);

  expect(line).not.toContain('would notify');
  expect(line).toMatch(
    new RegExp(
      `CloudWatch could not publish to ${TOPIC_ARN}, so nobody would be told: no statement of the topic policy Monitoring\\S*AlarmTopic\\S* allows cloudwatch\\.amazonaws\\.com sns:Publish`,
    ),
  );
});

test('with a key policy that does not let CloudWatch use the topic key, it says so', async () => {
  const template = withoutCloudWatch(stackTemplate(), 'AWS::KMS::Key', 'KeyPolicy');

  const line = await fireDeadLetterAlarm(template);

  expect(line).not.toContain('would notify');
  expect(line).toMatch(
    /CloudWatch could not publish to .*: no statement of the key policy of Monitoring\S*TopicKey\S* allows cloudwatch\.amazonaws\.com kms:Decrypt .*kms:GenerateDataKey\*/,
  );
});
