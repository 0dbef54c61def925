import * as net from 'node:net';
import * as os from 'node:os';
import {
  freePort,
  listTables,
  startDynamoDbLocal,
  startFauxqs,
  type Emulator,
} from '@exactly-once/tools/local-runtime/emulators';

/**
 * The emulators the runtime starts: fauxqs on loopback only and on a port it
 * binds itself; DynamoDB Local (which cannot bind port 0) retried on a new port
 * when the one picked was taken; its CORS closed to other origins.
 */
const started: Emulator[] = [];
let dynamo: Emulator | undefined;
afterAll(async () => {
  await Promise.all(started.map((e) => e.stop()));
});

/** This machine's first non-loopback IPv4 address, if it has one. */
const externalAddress = Object.values(os.networkInterfaces())
  .flat()
  .find((a) => a !== undefined && a.family === 'IPv4' && !a.internal)?.address;

function connects(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

(externalAddress === undefined ? test.skip : test)(
  "fauxqs answers on 127.0.0.1 and refuses connections on the machine's network address",
  async () => {
    const fauxqs = await startFauxqs();
    started.push(fauxqs);

    expect(await connects('127.0.0.1', fauxqs.port)).toBe(true);
    expect(await connects(externalAddress!, fauxqs.port)).toBe(false);
  },
);

test('DynamoDB Local started on a port someone else took in the meantime moves to another port', async () => {
  // Something binds the picked port before the JVM does (as another process could after freePort()).
  const squatter = net.createServer((socket) => socket.end('not dynamodb\n'));
  await new Promise<void>((resolve) => squatter.listen(0, '0.0.0.0', resolve));
  const taken = (squatter.address() as net.AddressInfo).port;
  const candidates = [taken];

  try {
    dynamo = await startDynamoDbLocal({ nextPort: async () => candidates.shift() ?? freePort() });
    started.push(dynamo);

    expect(dynamo.port).not.toBe(taken);
    const response = await listTables(dynamo.endpoint);
    expect(await response.json()).toEqual({ TableNames: [] });
  } finally {
    squatter.close();
  }
}, 60_000);

test('DynamoDB Local gives other origins no CORS access; its own loopback origin keeps it', async () => {
  if (dynamo === undefined) started.push((dynamo = await startDynamoDbLocal()));
  const endpoint = dynamo.endpoint;
  const preflight = (origin: string) =>
    fetch(endpoint, {
      method: 'OPTIONS',
      headers: {
        Origin: origin,
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'content-type',
      },
    });

  const foreign = await preflight('http://evil.example');
  const own = await preflight(endpoint);

  expect(foreign.headers.get('access-control-allow-origin')).toBeNull();
  expect(own.headers.get('access-control-allow-origin')).toBe(endpoint);
}, 60_000);

test('an emulator that exits before it is ready says why: the error carries its last output', async () => {
  // fauxqs asked for a port another process holds on loopback dies at once, printing its own error.
  const squatter = net.createServer();
  await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve));
  const taken = (squatter.address() as net.AddressInfo).port;

  try {
    const starting = startFauxqs({ port: taken });

    await expect(starting).rejects.toThrow(
      new RegExp(`^fauxqs exited before it was ready \\(is port ${taken} free\\?\\)\\. Its last output:\\n`),
    );
    await expect(starting).rejects.toThrow(/ {2}Error: listen EADDRINUSE/);
  } finally {
    squatter.close();
  }
});
