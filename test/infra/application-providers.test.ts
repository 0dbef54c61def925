import { App } from 'aws-cdk-lib';
import { consumerOutputNames } from '@exactly-once/runtime/consumer-spec';
import { providerEnvNames, ENV } from '@exactly-once/runtime/env-names';
import { STACK_OUTPUTS } from '@exactly-once/runtime/stack-outputs';
import { readConfig } from '../../lib/config';
import { cdkContext, configError } from '../support/synth';
import { pipelineOf, referencedId, resourceById, roleOfFunction, statementsOfRole } from '../support/template';
import { applicationStack, everyProviderConfigured, type ApplicationStack } from './application-stack';

/**
 * The consumers' external providers on the application's stack (lib/app-stack.ts), whatever its domain:
 * every provider a consumer spec names reaches that consumer, configured, as its endpoint and the name
 * of the SSM parameter holding its API key (which it alone may read), or, unconfigured, as the recording
 * double's table; each consumer has the outputs the tools find it by; a provider no consumer names, and
 * a bad provider setting, stop synth with one line. (The example's providers by name: its own tests.)
 */
const plain = applicationStack();
const PROVIDERS = everyProviderConfigured(plain.consumers);
const configured = applicationStack({ providers: PROVIDERS });

const withProviders = (app: ApplicationStack) => app.consumers.filter((spec) => (spec.providers ?? []).length > 0);
const consumerFn = (app: ApplicationStack, name: string) => pipelineOf(app.template, name).functionId;
const envOf = (app: ApplicationStack, functionId: string) =>
  (resourceById(app.template, functionId).Properties?.Environment as { Variables: Record<string, unknown> }).Variables;
const ssmResources = (app: ApplicationStack, functionId: string): string[] =>
  statementsOfRole(app.template, roleOfFunction(app.template, functionId))
    .filter((s) => s.Effect === 'Allow' && s.Action.some((a) => a.startsWith('ssm:')))
    .flatMap((s) => s.Resource.map((r) => JSON.stringify(r)));
const everyProvider = Object.keys(PROVIDERS.dev);

test("each consumer gets the endpoint and API-key parameter name of each provider it names, and nothing of another's", () => {
  // Act
  const envs = configured.consumers.map((spec) => ({
    spec,
    env: envOf(configured, consumerFn(configured, spec.name)),
  }));

  // Assert
  for (const { spec, env } of envs) {
    const named = spec.providers ?? [];
    for (const provider of named)
      expect(env).toMatchObject({
        [providerEnvNames(provider).endpoint]: PROVIDERS.dev[provider].endpoint,
        [providerEnvNames(provider).apiKeyParameter]: PROVIDERS.dev[provider].apiKeyParameter,
      });
    const others = everyProvider
      .filter((provider) => !named.includes(provider))
      .map((p) => providerEnvNames(p).endpoint);
    expect({ consumer: spec.name, others: Object.keys(env).filter((name) => others.includes(name)) }).toEqual({
      consumer: spec.name,
      others: [],
    });
  }
});

test("each consumer may read the API-key parameter of each provider it names, by its ARN, and no other provider's", () => {
  // Act
  const grants = configured.consumers.map((spec) => ({
    spec,
    resources: ssmResources(configured, consumerFn(configured, spec.name)).filter((r) => r.includes('-api-key')),
  }));

  // Assert
  for (const { spec, resources } of grants) {
    const named = spec.providers ?? [];
    expect({ consumer: spec.name, parameters: resources.length }).toEqual({
      consumer: spec.name,
      parameters: named.length,
    });
    for (const provider of named)
      expect(resources.join('\n')).toContain(`:parameter${PROVIDERS.dev[provider].apiKeyParameter}"`);
    for (const resource of resources) expect(resource).not.toContain('*');
  }
});

test('unconfigured, a consumer that names a provider records its calls through the recording double, whose table the tools find by an output', () => {
  // Act
  const outputs = plain.template.toJSON().Outputs as Record<string, { Value: unknown }>;
  const providerLog = referencedId(outputs[STACK_OUTPUTS.providerLogTableName]?.Value);

  // Assert
  expect(providerLog).toBeDefined();
  for (const spec of withProviders(plain)) {
    const fn = consumerFn(plain, spec.name);
    expect({ consumer: spec.name, table: referencedId(envOf(plain, fn)[ENV.providerLogTable]) }).toEqual({
      consumer: spec.name,
      table: providerLog,
    });
    const updates = statementsOfRole(plain.template, roleOfFunction(plain.template, fn)).filter(
      (s) => s.Action.includes('dynamodb:UpdateItem') && s.Resource.some((r) => referencedId(r) === providerLog),
    );
    expect({ consumer: spec.name, updates: updates.length }).toEqual({ consumer: spec.name, updates: 1 });
    expect(ssmResources(plain, fn).filter((r) => r.includes('-api-key'))).toEqual([]);
  }
});

test('each consumer has the outputs the tools find it by: its queue and its DLQ', () => {
  // Act
  const outputs = Object.keys(plain.template.toJSON().Outputs as Record<string, unknown>);

  // Assert
  for (const { name } of plain.consumers) {
    const names = consumerOutputNames(name);
    expect(outputs).toEqual(expect.arrayContaining([names.queueUrl, names.deadLetterQueueUrl]));
    expect(() => pipelineOf(plain.template, name)).not.toThrow();
  }
});

test('a configured provider that no consumer names stops synth, naming the ones they do', () => {
  // Arrange
  const providers = {
    dev: { ...PROVIDERS.dev, 'nobody-calls': { endpoint: 'https://x.example', apiKeyParameter: '/k' } },
  };

  // Act
  const synth = () => applicationStack({ providers });

  // Assert
  expect(synth).toThrow(`Provider "nobody-calls" is configured, but no consumer calls it (known: `);
});

test.each([
  [
    'an http endpoint on a public host',
    { endpoint: 'http://p.example/x', apiKeyParameter: '/k' },
    /endpoint must be an https:\/\/ URL/,
  ],
  [
    'an endpoint with credentials',
    { endpoint: 'https://u:p@p.example/x', apiKeyParameter: '/k' },
    /without credentials or query/,
  ],
  [
    'an endpoint with a query',
    { endpoint: 'https://p.example/x?key=secret', apiKeyParameter: '/k' },
    /without credentials or query/,
  ],
  [
    'a parameter name without its leading slash',
    { endpoint: 'https://p.example', apiKeyParameter: 'k' },
    /apiKeyParameter must be an SSM parameter name starting with \//,
  ],
  [
    'settings that are not an object',
    'https://p.example',
    /providers\.dev\.some-provider must be \{ endpoint, apiKeyParameter \}/,
  ],
])('%s stops synth with a one-line ConfigError', (_what, settings, message) => {
  // Act
  const error = configError(cdkContext({ providers: { dev: { 'some-provider': settings } } }));

  // Assert
  expect(error).toMatch(message);
  expect(error).not.toMatch(/\n/);
});

test('a bad provider name stops synth with a one-line ConfigError', () => {
  // Act
  const error = configError(
    cdkContext({ providers: { dev: { Provider: { endpoint: 'https://p.example', apiKeyParameter: '/k' } } } }),
  );

  // Assert
  expect(error).toMatch(/providers\.dev\.Provider: a provider name is/);
  expect(error).not.toMatch(/\n/);
});

test('providers given on the command line as JSON are read like cdk.json', () => {
  // Arrange
  const app = new App({ context: cdkContext({ providers: JSON.stringify(PROVIDERS) }) });

  // Act
  const { providers } = readConfig(app);

  // Assert
  expect(providers).toEqual(PROVIDERS.dev);
});
