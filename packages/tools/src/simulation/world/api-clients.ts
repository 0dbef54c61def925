import type { APIGatewayProxyEvent } from 'aws-lambda';
import { callerOf } from '@exactly-once/runtime/api/http';
import type { PlannedRequest } from '../../proof-kit/plan';
import type { SimulationOptions } from './options';
import { idempotentPostEvent, type ApiClient, type ApiCommand, type ApiPost } from './port';
import type { World } from './world';

/** A client retries a 409 (its key in flight) this many times: past a crashed attempt's 10 s in-progress record. */
const MAX_IN_FLIGHT_RETRIES = 20;

/** Who the API says is calling: the real `callerOf` on the request context that identity produces. */
export function apiCallerOf(userArn: string): string {
  const event = { requestContext: { identity: { userArn } } };
  const caller = callerOf(event as unknown as APIGatewayProxyEvent);
  if (caller === undefined) throw new Error('callerOf found no caller on a simulated request');
  return caller;
}

type Answer = { status: number | 'no-response'; body: string | undefined; replayed: boolean };

/**
 * One POST of a client's intent through the domain's deployed handler, then what the client does with
 * the answer: retry the same key after no answer or a 5xx, and after a 409 (in flight) once its
 * Retry-After has passed; a retry may come from a new session (credential rotation); an answer may be
 * lost (response-lost). `request.done()` runs once the client is through with this chain of tries.
 */
export function postIntent(
  world: World<SimulationOptions>,
  client: ApiClient,
  request: ApiPost,
  op: PlannedRequest['op'],
  attempt: number,
  continuesChain: boolean,
): void {
  const { scheduler } = world;
  const index = world.plan.length;
  if (!continuesChain) client.chains += 1;
  if (attempt > 1 && scheduler.chance(world.options.faults.credentialRotation)) {
    client.session += 1;
    scheduler.fault('credential-rotation', `${client.caller} now signs as session ${client.session}`);
  }
  // The intent is the client's, whatever session signs it (the verification groups by plan.caller).
  world.plan.push({
    index,
    op,
    caller: client.caller,
    method: 'POST',
    path: request.path,
    idempotencyKey: client.key,
    body: request.body,
  });
  const invocation = world.invocation(request.kind, request.timeoutSeconds);
  const startedAt = scheduler.now;
  const userArn = world.signerOf(client.caller, client.session);
  scheduler.trace(`${invocation.name} ${userArn} POST ${request.path} key=${client.key} (${op}, attempt ${attempt})`);
  const handler = request.handler(invocation);
  const context = world.contextOf(invocation, request.timeoutSeconds);
  invocation
    .run(() => handler(idempotentPostEvent(userArn, client.key, request.path, request.body), context))
    .then(
      (response): Answer => {
        if (response.statusCode === 500 && !invocation.crashed)
          world.unexpectedErrors.push(`${invocation.name}: 500 ${response.body}`);
        return {
          status: response.statusCode as number | 'no-response',
          body: response.body as string | undefined,
          replayed: response.headers?.['Idempotent-Replayed'] === 'true',
        };
      },
      (error): Answer => ({ status: request.statusOf(error, invocation.name), body: undefined, replayed: false }),
    )
    .then((answer) => {
      if (invocation.crashed || invocation.timedOut)
        answer = { status: 'no-response', body: undefined, replayed: false };
      else if (answer.status !== 'no-response' && scheduler.chance(world.options.faults.responseLost)) {
        scheduler.fault('response-lost', `${invocation.name} ${client.key}`);
        answer = { status: 'no-response', body: undefined, replayed: false };
      }
      world.observations.push({
        index,
        status: answer.status,
        body: answer.body,
        replayed: answer.replayed,
        startedAt,
        latencyMs: scheduler.now - startedAt,
      });
      scheduler.trace(
        `${invocation.name} answered ${answer.status}${answer.replayed ? ' (replayed)' : ''} to ${client.caller} key=${client.key}`,
      );
      if (answer.status === 201) client.created = true;
      else if (answer.status === 409 && attempt < MAX_IN_FLIGHT_RETRIES) {
        // In flight elsewhere (or a crashed attempt's record, until its in-progress expiry): Retry-After 1 s.
        scheduler.at(scheduler.between(1000, 2000), () =>
          world.post(client, request, 'retry-sequential', attempt + 1, true),
        );
        return;
      } else if ((answer.status === 'no-response' || answer.status >= 500) && attempt < 8) {
        // The retry continues this chain: the client is still busy with the key.
        scheduler.at(scheduler.between(200, 2000 * attempt), () =>
          world.post(client, request, 'retry-sequential', attempt + 1, true),
        );
        return;
      }
      client.chains -= 1;
      if (client.chains === 0) request.done();
    });
}

/** A client retries a command that got no answer or a 5xx until this many attempts. */
const MAX_COMMAND_ATTEMPTS = 8;

/**
 * One attempt of a client's command (port.ts `ApiCommand`): recorded in the plan, run on an invocation
 * of its own, its answer observed and traced; no answer or a 5xx is tried again after a growing pause
 * (up to {@link MAX_COMMAND_ATTEMPTS}), anything else ends in `command.done`.
 */
export function sendCommand<R>(
  world: World<SimulationOptions>,
  client: ApiClient,
  command: ApiCommand<R>,
  attempt: number,
): void {
  const { scheduler } = world;
  const index = world.plan.length;
  const { op, method, path } = command;
  world.plan.push({ index, op, caller: client.caller, method, path, entityKey: client.key });
  const invocation = world.invocation(command.kind);
  const caller = world.callerOf(client.caller, client.session);
  scheduler.trace(`${invocation.name} ${caller} ${method} ${path} key=${client.key} (attempt ${attempt})`);
  command
    .run(invocation, caller)
    .then(
      (result) => command.answer(result),
      (error) => command.statusOf(error, invocation.name),
    )
    .then((answered) => {
      const status = invocation.crashed ? 'no-response' : answered;
      world.observations.push({ index, status, replayed: false, startedAt: scheduler.now, latencyMs: 0 });
      scheduler.trace(`${invocation.name} answered ${status} to ${command.what} key=${client.key}`);
      if ((status === 'no-response' || status >= 500) && attempt < MAX_COMMAND_ATTEMPTS)
        scheduler.at(scheduler.between(200, 2000 * attempt), () => sendCommand(world, client, command, attempt + 1));
      else command.done(status);
    });
}
