import {
  localRoleSessionToken,
  signedFetch,
  type SignedRequestOptions,
} from '@exactly-once/tools/local-runtime/api/sign';
import type { LocalRuntime } from '@exactly-once/tools/local-runtime/runtime';
import type { PlannedRequest } from '@exactly-once/tools/proof-kit/plan';
import { applicationDomain, oneCreate, roleCaller } from './application-domain';
import { startSynthesizedStack } from './fixtures';

/**
 * The caller is the principal, not the session, through the application's stack (lib/app-stack.ts) as
 * `npm start` runs it, with creates of its domain built by its proof plug-in: a workload whose role
 * credentials rotate between a request and its retry (new session name, new access key) stays in its
 * key space, so its retry is a replay; another role is another caller, to whom the first one's entity is
 * invisible: the same key makes its own. Whatever the domain: a fork keeps these.
 */
const { proof } = applicationDomain();
let runtime: LocalRuntime;
let base: string;

beforeAll(async () => {
  runtime = await startSynthesizedStack();
  base = runtime.outputs.apiUrl!;
}, 180_000);

afterAll(async () => {
  await runtime?.stop();
});

type Credentials = Pick<SignedRequestOptions, 'accessKeyId' | 'sessionToken'>;

/** Temporary credentials of one session of a role, as STS would hand them out (each session its own key). */
function roleSession(role: string, session: string): Credentials {
  return {
    accessKeyId: `ASIA${session.toUpperCase().replace(/[^A-Z0-9]/g, '')}`,
    sessionToken: localRoleSessionToken(role, session),
  };
}

/** Sends a planned create with these credentials: its status, headers and body. */
async function send(request: PlannedRequest, credentials: Credentials) {
  const response = await signedFetch(`${base}${request.path}`, {
    method: request.method,
    body: JSON.stringify(request.body),
    headers: { 'Idempotency-Key': `"${request.idempotencyKey}"` },
    ...credentials,
  });
  return { status: response.status, headers: response.headers, body: await response.text() };
}

const runOf = (what: string) => `${what}${Date.now().toString(36)}`;
const idOf = (body: string) => proof.idOf(JSON.parse(body) as Record<string, unknown>);

test('same role, two sessions, one Idempotency-Key: one entity, the second answer is its replay', async () => {
  // Arrange
  const create = oneCreate(proof, roleCaller('EntityWriter', 'ecs-task-a'), runOf('rotating'));

  // Act
  const first = await send(create, roleSession('EntityWriter', 'ecs-task-a'));
  const retryAfterRotation = await send(create, roleSession('EntityWriter', 'ecs-task-b'));

  // Assert
  expect(first.status).toBe(201);
  expect(first.headers.get('idempotent-replayed')).toBeNull();
  expect(retryAfterRotation.status).toBe(201);
  expect(retryAfterRotation.headers.get('idempotent-replayed')).toBe('true');
  expect(retryAfterRotation.body).toBe(first.body);
  expect(idOf(first.body)).toBe(proof.entityIdOf(roleCaller('EntityWriter', 'any-session'), create.idempotencyKey!));
}, 30_000);

test("another role is another caller: the first one's entity is invisible to it, and the same key makes its own", async () => {
  // Arrange
  const create = oneCreate(proof, roleCaller('EntityWriter', 's1'), runOf('two-roles'));
  const writer = await send(create, roleSession('EntityWriter', 's1'));

  // Act
  const other = await send(create, roleSession('ReportingJob', 's1'));

  // Assert
  expect(writer.status).toBe(201);
  expect(other.status).toBe(201);
  expect(other.headers.get('idempotent-replayed')).toBeNull();
  expect(other.body).not.toBe(writer.body);
  expect(idOf(other.body)).not.toBe(idOf(writer.body));
  expect(idOf(other.body)).toBe(proof.entityIdOf(roleCaller('ReportingJob', 's1'), create.idempotencyKey!));
}, 30_000);

test('a role session token that names no session is no caller: 403 problem, and its key made nothing', async () => {
  // Arrange
  const create = oneCreate(proof, roleCaller('EntityWriter', 'later'), runOf('no-session'));

  // Act
  const refused = await send(create, { accessKeyId: 'ASIANOSESSION', sessionToken: 'local-role:EntityWriter' });
  const afterwards = await send(create, roleSession('EntityWriter', 'later'));

  // Assert: the refusal left no record under the key, so the first real create is no replay.
  expect(refused.status).toBe(403);
  expect(refused.headers.get('content-type')).toBe('application/problem+json');
  expect(JSON.parse(refused.body)).toMatchObject({ status: 403, title: 'Forbidden' });
  expect(afterwards.status).toBe(201);
  expect(afterwards.headers.get('idempotent-replayed')).toBeNull();
}, 30_000);
