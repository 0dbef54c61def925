import { providerEnvNames } from '@exactly-once/runtime/env-names';
import { CONFIGURED_PROVIDERS } from '../support/providers';
import { synthStack } from '../support/synth';

/**
 * The shop's external providers, per stage: its configuration reads them from the `providers`
 * context (cdk.json or the command line), a configured provider reaches its consumer (the warehouse
 * fulfilment's, the mail loyalty's) as an endpoint and the name of the SSM SecureString parameter holding
 * its API key. (What ExactlyOnce does with any stack's providers: consumer-providers.test.ts; every
 * provider of the application's consumers, whatever the domain, and the refusals of bad settings:
 * application-providers.test.ts.)
 * @reachesExample asserts the example's providers (warehouse, mail): removed with the example (npm run new:domain).
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
