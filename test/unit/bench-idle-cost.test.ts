import { idleCost, idleCostLine } from '@exactly-once/tools/bench/idle-cost';
import { IDLE_UNIT_PRICES, UNIT_PRICES } from '@exactly-once/tools/proof-kit/prices';
import type { CfnTemplate } from '@exactly-once/tools/local-runtime/template/model';

/** A small template with one of each item the idle cost reads. */
const template: CfnTemplate = {
  Resources: {
    DepthAlarm: { Type: 'AWS::CloudWatch::Alarm', Properties: { Period: 60, MetricName: 'Depth' } },
    // A metric-math alarm is billed per metric it reads.
    RatioAlarm: {
      Type: 'AWS::CloudWatch::Alarm',
      Properties: {
        Metrics: [
          { Id: 'a', MetricStat: { Period: 300 } },
          { Id: 'b', MetricStat: { Period: 300 } },
          { Id: 'ratio', Expression: 'a / b' },
        ],
      },
    },
    FastAlarm: { Type: 'AWS::CloudWatch::Alarm', Properties: { Period: 10 } },
    Board: { Type: 'AWS::CloudWatch::Dashboard', Properties: {} },
    Key: { Type: 'AWS::KMS::Key', Properties: { EnableKeyRotation: true } },
    SweepFn: { Type: 'AWS::Lambda::Function', Properties: { MemorySize: 512, Architectures: ['arm64'], Timeout: 60 } },
    Schedule: {
      Type: 'AWS::Events::Rule',
      Properties: { ScheduleExpression: 'rate(5 minutes)', Targets: [{ Arn: { 'Fn::GetAtt': ['SweepFn', 'Arn'] } }] },
    },
    SweepLogs: { Type: 'AWS::Logs::LogGroup', Properties: { RetentionInDays: 7 } },
    OtherLogs: { Type: 'AWS::Logs::LogGroup', Properties: {} },
  },
};

describe('bench idle cost', () => {
  const invocations = (730 * 60) / 5; // a 730-hour month at one run every 5 minutes

  it('prices alarm metrics, dashboards, keys and each scheduled invocation from the template and one measured run', () => {
    const cost = idleCost(template, { SweepFn: { durationMs: 100, readUnits: 16, logBytes: 1_000 } });

    const byItem = Object.fromEntries(cost.lines.map((l) => [l.item, l]));
    expect(byItem.alarms.count).toBe(3);
    expect(byItem.alarms.dollarsPerMonth).toBeCloseTo(3 * 0.1 + 0.3, 10);
    expect(byItem.dashboards.dollarsPerMonth).toBe(3);
    expect(byItem['KMS keys'].dollarsPerMonth).toBe(1);
    const scheduled =
      (invocations / 1e6) * UNIT_PRICES.lambdaRequestsPerMillion +
      invocations * 0.1 * 0.5 * UNIT_PRICES.lambdaArmGbSecond +
      ((invocations * 16) / 1e6) * UNIT_PRICES.dynamoDbReadsPerMillion +
      ((invocations * 1_000) / 1024 ** 3) * IDLE_UNIT_PRICES.cloudWatchLogsIngestionPerGb;
    expect(byItem['scheduled invocations'].dollarsPerMonth).toBeCloseTo(scheduled, 10);
    expect(byItem['log groups'].count).toBe(2);
    expect(cost.totalPerMonth).toBeCloseTo(0.6 + 3 + 1 + scheduled, 10);
    expect(cost.notCounted).toEqual([]);
  });

  it('leaves out of the total what one invocation did not measure, and says so', () => {
    const cost = idleCost(template);

    expect(cost.totalPerMonth).toBeCloseTo(0.6 + 3 + 1 + (invocations / 1e6) * 0.2, 10);
    expect(cost.notCounted).toEqual([
      'SweepFn duration (one invocation not measured; at most its timeout, 60 s)',
      'SweepFn DynamoDB reads (not measured)',
      'SweepFn log ingestion (not measured)',
    ]);
  });

  it('prints one line: the total, each item with its arithmetic, and what is not counted', () => {
    const line = idleCostLine(idleCost(template, { SweepFn: { durationMs: 100, readUnits: 16, logBytes: 1_000 } }));

    expect(line).toMatch(
      /^bench: idle cost \$4\.6\d per month from the template = alarms 3 = \$0\.60 \(3 standard alarm metrics x \$0\.10 \+ 1 high-resolution x \$0\.30\); dashboards 1 = \$3\.00/,
    );
    expect(line).toContain('rate(5 minutes): 8,760 invocations/month');
    expect(line).toContain('retention 7 days (1), never expire (1)');
    expect(line).not.toContain('not counted');
  });
});
