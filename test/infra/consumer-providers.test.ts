import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { consumerId } from '@exactly-once/runtime/consumer-spec';
import { providerEnvNames } from '@exactly-once/runtime/env-names';
import { PROBE_STACK_CONSUMERS, synthProbeStack, type ProbeSettings } from '../exactly-once/fixtures/probe-stack';

/**
 * The consumers' external providers on a stack ExactlyOnce builds (the probe stack, whose two consumers
 * each call the provider named after it): a configured provider reaches its consumer as an endpoint and
 * the name of the SSM SecureString parameter holding its API key (never the key), and the consumer may
 * read that one parameter; a provider no consumer calls stops synth; prod warns of each one left to the
 * recording double. (How the shop's configuration reads them from context: providers.test.ts.)
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a template's properties are untyped JSON
type Json = any;
type Resource = { Type: string; Properties: Record<string, Json> };

const [STANDARD, FIFO] = PROBE_STACK_CONSUMERS;

/** A probe consumer's provider: an endpoint and the SSM parameter holding its API key. */
const endpointOf = (name: string) => ({
  endpoint: `https://${name}.example/v1/calls`,
  apiKeyParameter: `/exactly-once/dev/${name}-api-key`,
});
const CONFIGURED: ProbeSettings['providers'] = Object.fromEntries(
  PROBE_STACK_CONSUMERS.map(({ name }) => [name, endpointOf(name)]),
);

function resourcesOf(template: Record<string, unknown>): Record<string, Resource> {
  return template.Resources as Record<string, Resource>;
}

function consumerFunction(template: Record<string, unknown>, name: string): Resource {
  const found = Object.entries(resourcesOf(template)).find(
    ([id, r]) => r.Type === 'AWS::Lambda::Function' && id.startsWith(`Pipelines${consumerId(name)}ConsumerFn`),
  );
  if (found === undefined) throw new Error(`no ${name} consumer function`);
  return found[1];
}

const envOf = (fn: Resource): Record<string, unknown> => fn.Properties.Environment.Variables;

/** The SSM actions and resources the policies attached to a function's role allow. */
function ssmStatementsOf(template: Record<string, unknown>, fn: Resource): { Action: unknown; Resource: unknown }[] {
  const roleId = fn.Properties.Role['Fn::GetAtt'][0];
  return Object.values(resourcesOf(template))
    .filter((r) => r.Type === 'AWS::IAM::Policy' && r.Properties.Roles.some((role: Json) => role.Ref === roleId))
    .flatMap((r) => r.Properties.PolicyDocument.Statement)
    .filter((s: Json) => [s.Action].flat().some((a: string) => a.startsWith('ssm:')));
}

describe('a dev stack with both providers configured', () => {
  const template = synthProbeStack({ settings: { providers: CONFIGURED } }).template.toJSON();
  const standard = consumerFunction(template, STANDARD.name);
  const fifo = consumerFunction(template, FIFO.name);

  test('each consumer gets its own provider: endpoint and API-key parameter name, nothing of the other', () => {
    const ofStandard = providerEnvNames(STANDARD.name);
    const ofFifo = providerEnvNames(FIFO.name);

    expect(envOf(standard)).toMatchObject({
      [ofStandard.endpoint]: endpointOf(STANDARD.name).endpoint,
      [ofStandard.apiKeyParameter]: endpointOf(STANDARD.name).apiKeyParameter,
    });
    expect(envOf(fifo)).toMatchObject({
      [ofFifo.endpoint]: endpointOf(FIFO.name).endpoint,
      [ofFifo.apiKeyParameter]: endpointOf(FIFO.name).apiKeyParameter,
    });
    expect(Object.keys(envOf(standard))).not.toContain(ofFifo.endpoint);
    expect(Object.keys(envOf(fifo))).not.toContain(ofStandard.endpoint);
  });

  test('a consumer may read its one API-key parameter, by its ARN, and no other', () => {
    const statements = ssmStatementsOf(template, standard);

    expect(statements).toHaveLength(1);
    const resource = JSON.stringify(statements[0].Resource);
    expect(resource).toContain(`:parameter${endpointOf(STANDARD.name).apiKeyParameter}"`);
    expect(resource).not.toMatch(/\*/);
    expect(JSON.stringify(ssmStatementsOf(template, fifo))).not.toContain(endpointOf(STANDARD.name).apiKeyParameter);
  });
});

test('without providers a consumer has no provider variables and no SSM grant: the recording double stands in', () => {
  const template = synthProbeStack().template.toJSON();
  const standard = consumerFunction(template, STANDARD.name);

  expect(
    Object.keys(envOf(standard)).filter((name) => /^PROVIDER_.*_(ENDPOINT|API_KEY_PARAMETER)$/.test(name)),
  ).toEqual([]);
  expect(ssmStatementsOf(template, standard)).toEqual([]);
});

test('a configured provider that no consumer calls stops synth', () => {
  const create = () => synthProbeStack({ settings: { providers: { ...CONFIGURED, sms: endpointOf('sms') } } });

  expect(create).toThrow(
    `Provider "sms" is configured, but no consumer calls it (known: ${PROBE_STACK_CONSUMERS.map((c) => c.name).join(', ')})`,
  );
});

test('prod warns, per consumer, about each provider it calls through the recording double', () => {
  const { stack } = synthProbeStack({
    stage: 'prod',
    stackName: 'ProdStack',
    settings: { providers: { [FIFO.name]: endpointOf(FIFO.name) } },
  });

  const warnings = Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('recording test double'));

  // Only the standard consumer: the FIFO consumer's provider is configured.
  expect(warnings.map((w) => w.id)).toEqual([`/ProdStack/Default/Pipelines/${consumerId(STANDARD.name)}Consumer`]);
  expect(JSON.stringify(warnings[0].entry.data)).toContain(`providers.prod.${STANDARD.name}`);
  expect(JSON.stringify(warnings[0].entry.data)).not.toContain(`providers.prod.${FIFO.name}`);
});
