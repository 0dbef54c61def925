import { App } from 'aws-cdk-lib';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { consumerId } from '../../lambdas/exactly-once/consumer-spec';
import { providerEnvNames } from '../../lambdas/exactly-once/env-names';
import { CONSUMERS } from '../../lambdas/shop/consumers';
import { readConfig } from '../../lib/shop/config';
import { ExactlyOnceStack } from '../../lib/shop/shop-stack';
import { unusedConsumerName } from '../support/consumer-list';
import { CONFIGURED_PROVIDERS } from '../support/providers';
import { cdkContext, configError, synthStack } from '../support/synth';

/**
 * The consumers' external providers, per stage: a configured provider reaches its consumer as an
 * endpoint and the name of the SSM SecureString parameter holding its API key (never the key), and
 * the consumer may read that one parameter; a bad value stops synth with one line.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a template's properties are untyped JSON
type Json = any;
type Resource = { Type: string; Properties: Record<string, Json> };

function resourcesOf(template: Record<string, unknown>): Record<string, Resource> {
  return template.Resources as Record<string, Resource>;
}

function consumerFunction(template: Record<string, unknown>, consumerId: string): [string, Resource] {
  const found = Object.entries(resourcesOf(template)).find(
    ([id, r]) => r.Type === 'AWS::Lambda::Function' && id.startsWith(`Pipelines${consumerId}ConsumerFn`),
  );
  if (found === undefined) throw new Error(`no ${consumerId} consumer function`);
  return found;
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

const resourceText = (resource: unknown): string => JSON.stringify(resource);

describe('a dev stack with both providers configured', () => {
  const template = synthStack({ providers: CONFIGURED_PROVIDERS }).template.toJSON();
  const [, fulfilment] = consumerFunction(template, 'Fulfilment');
  const [, loyalty] = consumerFunction(template, 'Loyalty');

  test('each consumer gets its own provider: endpoint and API-key parameter name, nothing of the other', () => {
    const warehouse = providerEnvNames('warehouse');
    const mail = providerEnvNames('mail');

    expect(envOf(fulfilment)).toMatchObject({
      [warehouse.endpoint]: 'https://warehouse.example/v1/instructions',
      [warehouse.apiKeyParameter]: '/exactly-once/dev/warehouse-api-key',
    });
    expect(envOf(loyalty)).toMatchObject({
      [mail.endpoint]: 'https://mail.example/v1/messages',
      [mail.apiKeyParameter]: '/exactly-once/dev/mail-api-key',
    });
    expect(Object.keys(envOf(fulfilment))).not.toContain(mail.endpoint);
    expect(Object.keys(envOf(loyalty))).not.toContain(warehouse.endpoint);
  });

  test('a consumer may read its one API-key parameter, by its ARN, and no other', () => {
    const statements = ssmStatementsOf(template, fulfilment);

    expect(statements).toHaveLength(1);
    expect(resourceText(statements[0].Resource)).toMatch(/:parameter\/exactly-once\/dev\/warehouse-api-key"/);
    expect(resourceText(statements[0].Resource)).not.toMatch(/\*/);
    expect(resourceText(ssmStatementsOf(template, loyalty))).not.toMatch(/warehouse-api-key/);
  });
});

test('without providers a consumer has no provider variables and no SSM grant: the recording double stands in', () => {
  const template = synthStack().template.toJSON();
  const [, fulfilment] = consumerFunction(template, 'Fulfilment');

  expect(
    Object.keys(envOf(fulfilment)).filter((name) => /^PROVIDER_.*_(ENDPOINT|API_KEY_PARAMETER)$/.test(name)),
  ).toEqual([]);
  expect(ssmStatementsOf(template, fulfilment)).toEqual([]);
});

test.each([
  [
    'an http endpoint on a public host',
    { warehouse: { endpoint: 'http://warehouse.example/x', apiKeyParameter: '/k' } },
    /endpoint must be an https:\/\/ URL/,
  ],
  [
    'an endpoint with credentials',
    { warehouse: { endpoint: 'https://u:p@warehouse.example/x', apiKeyParameter: '/k' } },
    /without credentials or query/,
  ],
  [
    'an endpoint with a query',
    { warehouse: { endpoint: 'https://warehouse.example/x?key=secret', apiKeyParameter: '/k' } },
    /without credentials or query/,
  ],
  [
    'a parameter name without its leading slash',
    { warehouse: { endpoint: 'https://w.example', apiKeyParameter: 'k' } },
    /apiKeyParameter must be an SSM parameter name starting with \//,
  ],
  [
    'a bad provider name',
    { Warehouse: { endpoint: 'https://w.example', apiKeyParameter: '/k' } },
    /providers\.dev\.Warehouse: a provider name is/,
  ],
  [
    'settings that are not an object',
    { warehouse: 'https://w.example' },
    /providers\.dev\.warehouse must be \{ endpoint, apiKeyParameter \}/,
  ],
])('%s stops synth with a one-line ConfigError', (_what, forDev, message) => {
  const error = configError(cdkContext({ providers: { dev: forDev } }));

  expect(error).toMatch(message);
  expect(error).not.toMatch(/\n/);
});

test('providers given on the command line as JSON are read like cdk.json', () => {
  const app = new App({ context: cdkContext({ providers: JSON.stringify(CONFIGURED_PROVIDERS) }) });

  expect(readConfig(app).providers).toEqual(CONFIGURED_PROVIDERS.dev);
});

/** Every provider a consumer on the list calls, in list order. */
const CALLED = [...new Set(CONSUMERS.flatMap((c) => c.providers ?? []))];

test('a configured provider that no consumer calls stops synth', () => {
  const sms = unusedConsumerName(
    'sms',
    CALLED.map((name) => ({ name })),
  );
  const create = () =>
    synthStack({ providers: { dev: { [sms]: { endpoint: 'https://sms.example', apiKeyParameter: '/k' } } } });

  expect(create).toThrow(`Provider "${sms}" is configured, but no consumer calls it (known: ${CALLED.join(', ')})`);
});

test('prod warns, per consumer, about each provider it calls through the recording double', () => {
  const app = new App({
    context: cdkContext({ stage: 'prod', providers: { prod: { mail: CONFIGURED_PROVIDERS.dev.mail } } }),
  });
  const stack = new ExactlyOnceStack(app, 'ProdStack', { config: readConfig(app) });

  const warnings = Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('recording test double'));

  // Every consumer that calls a provider other than mail: fulfilment (warehouse), and any added to the list.
  const unconfigured = CONSUMERS.filter((c) => (c.providers ?? []).some((p) => p !== 'mail'));
  expect(warnings.map((w) => w.id)).toEqual(
    unconfigured.map((c) => `/ProdStack/Default/Pipelines/${consumerId(c.name)}Consumer`),
  );
  const fulfilment = warnings.find((w) => w.id === '/ProdStack/Default/Pipelines/FulfilmentConsumer');
  expect(JSON.stringify(fulfilment?.entry.data)).toMatch(/providers\.prod\.warehouse/);
  expect(JSON.stringify(fulfilment?.entry.data)).not.toMatch(/providers\.prod\.mail/);
});
