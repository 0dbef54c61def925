import {
  apiMethods,
  managedPolicyArnsOfRole,
  referencedIds,
  resourcesOfType,
  roleOfFunction,
  statementsOfRole,
} from '../support/template';
import {
  applicationStack,
  everyProviderConfigured,
  literalEnvironment,
  wiredTo,
  type ApplicationStack,
} from './application-stack';

/**
 * Least privilege on the application's stack (lib/app-stack.ts), whatever its domain: every function's
 * role reaches only what the function is wired to (the tables, queues and parameters its environment
 * names, the source its mappings read, its log group and dead-letter target), with no `*` resource on a
 * data action and no wildcard action; every route needs SigV4 and a GET route's function only reads.
 * Checked with every setting that adds grants on (providers, fault injection). (The example's own
 * grants, action by action: its stack tests.)
 */

/** Actions that name no resource of the stack, so `*` is the only resource they take: X-Ray tracing and listing streams. */
const RESOURCELESS_ACTIONS = new Set(['xray:PutTelemetryRecords', 'xray:PutTraceSegments', 'dynamodb:ListStreams']);
const DYNAMODB_READS = new Set([
  'dynamodb:GetItem',
  'dynamodb:Query',
  'dynamodb:BatchGetItem',
  'dynamodb:ConditionCheckItem',
]);

const plain = applicationStack();
const SETTINGS: [string, Record<string, unknown>][] = [
  ['the default dev stack', {}],
  [
    'with every provider configured and fault injection on',
    {
      providers: everyProviderConfigured(plain.consumers),
      faultInjection: 'true',
    },
  ],
];
const stackWith = (context: Record<string, unknown>) =>
  Object.keys(context).length === 0 ? plain : applicationStack(context);

/** Every function of the template, with the role it runs as. */
const functionsOf = ({ template }: ApplicationStack) =>
  resourcesOfType(template, 'AWS::Lambda::Function').map(([id]) => ({ id, role: roleOfFunction(template, id) }));

describe.each(SETTINGS)('%s', (_what, context) => {
  const app = stackWith(context);

  test("every function's role reaches only what the function is wired to, and no data action takes `*`", () => {
    // Arrange
    const functions = functionsOf(app);

    // Act: each resource a statement allows that the function is not wired to, as `function: actions on resource`.
    const beyond = functions.flatMap(({ id, role }) => {
      const wired = wiredTo(app.template, id);
      const names = literalEnvironment(app.template, id);
      return statementsOfRole(app.template, role)
        .filter((statement) => statement.Effect === 'Allow')
        .flatMap((statement) =>
          statement.Resource.filter((resource) => {
            if (resource === '*') return !statement.Action.every((action) => RESOURCELESS_ACTIONS.has(action));
            const ids = referencedIds(resource).filter((ref) => !ref.startsWith('AWS::'));
            // An ARN built from a name (an SSM parameter's): the function's environment must carry that name.
            if (ids.length === 0)
              return !names.some((name) => name.startsWith('/') && JSON.stringify(resource).includes(name));
            return !ids.every((ref) => wired.has(ref));
          }).map((resource) => `${id}: ${statement.Action.join(',')} on ${JSON.stringify(resource)}`),
        );
    });

    // Assert
    expect(functions.length).toBeGreaterThanOrEqual(app.consumers.length + 3);
    expect(beyond).toEqual([]);
  });

  test('no role is allowed a wildcard action or holds a managed policy', () => {
    // Arrange
    const functions = functionsOf(app);

    // Act
    const wildcards = functions.flatMap(({ id, role }) =>
      statementsOfRole(app.template, role)
        .flatMap((statement) => statement.Action)
        .filter((action) => action.includes('*'))
        .map((action) => `${id}: ${action}`),
    );
    const managed = functions.flatMap(({ role }) => managedPolicyArnsOfRole(app.template, role));

    // Assert
    expect(wildcards).toEqual([]);
    expect(managed).toEqual([]);
  });
});

test("every route needs SigV4 (AWS_IAM) and no API key; a GET route's function reads its tables and never writes", () => {
  // Arrange
  const methods = apiMethods(plain.template);

  // Act
  const unsigned = methods
    .filter((m) => m.properties.AuthorizationType !== 'AWS_IAM' || (m.properties.ApiKeyRequired ?? false) !== false)
    .map((m) => m.route);
  const writesOnGet = methods
    .filter((m) => m.route.startsWith('GET ') && m.functionId !== undefined)
    .flatMap((m) =>
      statementsOfRole(plain.template, roleOfFunction(plain.template, m.functionId!))
        .flatMap((statement) => statement.Action)
        .filter((action) => action.startsWith('dynamodb:') && !DYNAMODB_READS.has(action))
        .map((action) => `${m.route}: ${action}`),
    );

  // Assert
  expect(methods.length).toBeGreaterThan(0);
  expect(unsigned).toEqual([]);
  expect(writesOnGet).toEqual([]);
});
