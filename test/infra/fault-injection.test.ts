import { consumerId } from '@exactly-once/runtime/consumer-spec';
import { PROBE_STACK_CONSUMERS, synthProbeStack } from '../exactly-once/fixtures/probe-stack';
import { functionsWithFaultVariables, resourcesOfType } from '../support/template';

/**
 * Fault injection is opt-in at synth: only `-c faultInjection=true` (or the
 * local runtime's `-c localRuntime=true`) deploys the switch, points the relay
 * and the consumers at it and adds the alarm that says a plan is active; prod
 * refuses both (test/infra/stage-config.test.ts). (That the bundles carry no fault code: bundles.test.ts.)
 */
type Synth = ReturnType<typeof synthProbeStack>;

const faultAlarms = ({ template }: Synth) =>
  resourcesOfType(template, 'AWS::CloudWatch::Alarm').filter(([, alarm]) =>
    JSON.stringify(alarm.Properties).includes('FaultPlanActive'),
  );

const localRuntimeRule = ({ template }: Synth) =>
  (template.toJSON() as { Rules?: Record<string, unknown> }).Rules?.LocalRuntimeOnly;

const outputs = ({ template }: Synth) => Object.keys((template.toJSON() as { Outputs?: object }).Outputs ?? {});

let byDefault: Synth;
let withFaults: Synth;

beforeAll(() => {
  byDefault = synthProbeStack();
  withFaults = synthProbeStack({ settings: { faultInjection: true } });
});

describe('by default', () => {
  test('there is no SSM parameter, no fault variable on any function, no fault alarm and no output', () => {
    expect(resourcesOfType(byDefault.template, 'AWS::SSM::Parameter')).toEqual([]);
    expect(functionsWithFaultVariables(byDefault.template)).toEqual([]);
    expect(faultAlarms(byDefault)).toEqual([]);
    expect(outputs(byDefault)).not.toContain('FaultParameterName');
  });

  test('the template deploys: no local-runtime-only rule', () => {
    expect(localRuntimeRule(byDefault)).toBeUndefined();
  });
});

describe('with fault injection on', () => {
  test('the switch exists, and exactly the relay and every consumer read it', () => {
    const parameters = resourcesOfType(withFaults.template, 'AWS::SSM::Parameter');

    expect(parameters).toHaveLength(1);
    expect(parameters[0][1].Properties?.Value).toBe('{}');
    const readers = functionsWithFaultVariables(withFaults.template);
    expect(readers).toHaveLength(1 + PROBE_STACK_CONSUMERS.length);
    expect(readers).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^OutboxRelay/),
        ...PROBE_STACK_CONSUMERS.map((c) =>
          expect.stringMatching(new RegExp(`^Pipelines${consumerId(c.name)}Consumer`)),
        ),
      ]),
    );
    expect(outputs(withFaults)).toContain('FaultParameterName');
  });

  test('an alarm fires on the first invocation under a plan, to the alarm topic, and names its runbook', () => {
    const alarms = faultAlarms(withFaults);

    expect(alarms).toHaveLength(1);
    const alarm = alarms[0][1].Properties as Record<string, unknown>;
    expect(alarm).toMatchObject({
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
      AlarmDescription: expect.stringContaining('Runbook: docs/runbook.md#fault-plan-changed'),
      AlarmActions: [expect.anything()],
    });
    // The relay and every consumer, each under the dimensions it emits with (service: the stack's name).
    const dimensions = (
      alarm.Metrics as { MetricStat?: { Metric: { Dimensions: { Name: string; Value: string }[] } } }[]
    )
      .filter((m) => m.MetricStat !== undefined)
      .map((m) =>
        m
          .MetricStat!.Metric.Dimensions.map((d) => `${d.Name}=${d.Value}`)
          .sort()
          .join(','),
      );
    expect(dimensions.sort()).toEqual(
      [...PROBE_STACK_CONSUMERS.map((c) => `consumer=${c.name},service=ProbeStack`), 'service=ProbeStack'].sort(),
    );
  });

  test('is still deployable: the local runtime rule comes only with -c localRuntime=true', () => {
    const local = synthProbeStack({ settings: { localRuntime: true } });

    expect(localRuntimeRule(withFaults)).toBeUndefined();
    expect(localRuntimeRule(local)).toEqual({
      Assertions: [
        {
          Assert: { 'Fn::Equals': ['local-runtime-build', 'deployable'] },
          AssertDescription: expect.stringContaining('must not be deployed'),
        },
      ],
    });
    expect(resourcesOfType(local.template, 'AWS::SSM::Parameter')).toHaveLength(1);
  });
});
