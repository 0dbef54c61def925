import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { mkdtempSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { consumerConfigFromEnv, consumerWiring } from '@exactly-once/runtime/wiring/consumer-wiring';
import { RecordingProvider } from '@exactly-once/runtime/aws/recording-provider';
import { RetryLater } from '@exactly-once/runtime/errors';
import { providerEnvNames } from '@exactly-once/runtime/env-names';
import { useUnitEnvironment } from '../support/handlers';

/**
 * A deployed consumer's provider, from its environment: a configured provider is an HTTP call to
 * its endpoint, with the API key read from its SSM SecureString parameter (decrypted, once per
 * container for the cache's lifetime) and the event's key in `Idempotency-Key`; a provider the
 * stage does not configure is the recording double.
 */
const ssm = mockClient(SSMClient);
const MAIL = providerEnvNames('mail');
const received: IncomingHttpHeaders[] = [];
/** The key the provider accepts; any other gets 401. */
let acceptedKey = 'key-from-ssm';
let server: Server;
let endpoint: string;

const CONSUMER_ENV = {
  EFFECTS_TABLE_NAME: 'effects',
  PROVIDER_LOG_TABLE_NAME: 'provider-log',
  INBOX_TTL_SECONDS: '100',
  DEDUPE_HORIZON_SECONDS: '50',
  QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/probe',
  DEAD_LETTER_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/probe-dlq',
};

beforeAll(async () => {
  server = createServer((request, response) => {
    received.push(request.headers);
    request.resume();
    const ok = request.headers.authorization === `Bearer ${acceptedKey}`;
    request.on('end', () => response.writeHead(ok ? 201 : 401, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mail/messages`;
});

// fetch keeps its connection to the server open for the next call: close it from the server's side, or
// server.close waits on it and the open socket keeps Jest's worker from exiting.
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  received.length = 0;
  acceptedKey = 'key-from-ssm';
  ssm.reset();
  useUnitEnvironment(CONSUMER_ENV);
  delete process.env[MAIL.endpoint];
  delete process.env[MAIL.apiKeyParameter];
  delete process.env[MAIL.apiKeyFile];
});

const wiringFor = (providers: string[]) =>
  consumerWiring(consumerConfigFromEnv({ consumer: 'probe', fifo: false, providers }), {
    documents: {} as never,
    sqs: {} as never,
  });

test('a configured provider is called over HTTP with the key from its parameter, read once for many calls', async () => {
  process.env[MAIL.endpoint] = endpoint;
  process.env[MAIL.apiKeyParameter] = '/probe/mail-api-key';
  ssm.on(GetParameterCommand).resolves({ Parameter: { Name: '/probe/mail-api-key', Value: 'key-from-ssm' } });
  const mail = wiringFor(['mail']).provider('mail');

  await mail.send('probe:event-1', { to: 'someone@example.com' });
  await mail.send('probe:event-2', { to: 'someone@example.com' });

  expect(received.map((h) => [h['idempotency-key'], h.authorization])).toEqual([
    ['probe:event-1', 'Bearer key-from-ssm'],
    ['probe:event-2', 'Bearer key-from-ssm'],
  ]);
  expect(ssm.commandCalls(GetParameterCommand).map((c) => c.args[0].input)).toEqual([
    { Name: '/probe/mail-api-key', WithDecryption: true },
  ]);
});

test('a rotated key: the 401 is retried, and the retry reads the parameter again and sends the new key', async () => {
  process.env[MAIL.endpoint] = endpoint;
  process.env[MAIL.apiKeyParameter] = '/probe/rotated-key';
  ssm
    .on(GetParameterCommand)
    .resolvesOnce({ Parameter: { Name: '/probe/rotated-key', Value: 'old-key' } })
    .resolves({ Parameter: { Name: '/probe/rotated-key', Value: 'new-key' } });
  acceptedKey = 'new-key';
  const mail = wiringFor(['mail']).provider('mail');

  const first = await mail.send('probe:event-5', {}).catch((error: unknown) => error);
  await mail.send('probe:event-5', {});

  expect(first).toBeInstanceOf(RetryLater);
  expect(received.map((h) => h.authorization)).toEqual(['Bearer old-key', 'Bearer new-key']);
  expect(ssm.commandCalls(GetParameterCommand)).toHaveLength(2);
});

test('an endpoint without its API-key parameter stops the consumer at cold start, naming the variable', () => {
  process.env[MAIL.endpoint] = endpoint;

  expect(() => wiringFor(['mail'])).toThrow(`Missing required environment variable ${MAIL.apiKeyParameter}`);
});

test('a provider the stage does not configure is the recording double, and no parameter is read', () => {
  const mail = wiringFor(['mail']).provider('mail');

  expect(mail).toBeInstanceOf(RecordingProvider);
  expect(ssm.commandCalls(GetParameterCommand)).toEqual([]);
});

test("the local runtime's key file stands in for the parameter: read once, and SSM is never called", async () => {
  const file = join(mkdtempSync(join(tmpdir(), 'provider-key-')), 'key');
  writeFileSync(file, 'key-from-file\n');
  acceptedKey = 'key-from-file';
  process.env[MAIL.endpoint] = endpoint;
  process.env[MAIL.apiKeyFile] = file;
  const mail = wiringFor(['mail']).provider('mail');

  await mail.send('probe:event-3', {});
  writeFileSync(file, 'changed');
  await mail.send('probe:event-4', {});

  expect(received.map((h) => h.authorization)).toEqual(['Bearer key-from-file', 'Bearer key-from-file']);
  expect(ssm.commandCalls(GetParameterCommand)).toEqual([]);
});
