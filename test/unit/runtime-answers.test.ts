import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { assertLocalRuntimeAnswers, type StackOutputs } from '@exactly-once/tools/stack';

/**
 * The tools that need `npm start` check it answers before they use it, and say in one line what is
 * wrong and what to do, instead of `fetch failed` or `connect ECONNREFUSED` from deep inside a call.
 */
let server: Server;
let openUrl: string;

beforeAll(async () => {
  server = createServer((socket) => socket.end());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  openUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** A port that was just free: nothing listens there. */
async function closedUrl(): Promise<string> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

const local = (endpoints: StackOutputs['endpoints']): StackOutputs => ({
  kind: 'local',
  name: 'ExactlyOnce-dev',
  region: 'us-east-1',
  outputs: {},
  endpoints,
});

test('a runtime that stopped: one line naming the URL, the outputs file and npm start', async () => {
  const gone = await closedUrl();

  const checked = assertLocalRuntimeAnswers(local({ dynamodb: openUrl, sqs: gone }), '/work/x/.local/outputs.json');

  await expect(checked).rejects.toThrow(
    new RegExp(`^No local runtime answers at ${gone} \\(from .*outputs\\.json\\): start it with npm start$`),
  );
});

test('an API that stopped answering is named too', async () => {
  const gone = await closedUrl();

  const checked = assertLocalRuntimeAnswers(
    local({ dynamodb: openUrl, sqs: openUrl }),
    'outputs.json',
    `${gone}/local/`,
  );

  await expect(checked).rejects.toThrow(`No local runtime answers at ${gone}/local/`);
});

test('a runtime that answers passes; a deployed stack is not probed', async () => {
  await expect(
    assertLocalRuntimeAnswers(local({ dynamodb: openUrl, sqs: openUrl }), 'o.json', openUrl),
  ).resolves.toBeUndefined();
  await expect(
    assertLocalRuntimeAnswers({ kind: 'aws', name: 'S', outputs: {}, endpoints: { dynamodb: await closedUrl() } }),
  ).resolves.toBeUndefined();
});
