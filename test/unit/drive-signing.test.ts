import { SignatureV4 } from '@smithy/signature-v4';
import { NodeSha256 } from '@exactly-once/tools/local-runtime/api/sha256';
import { SIGNATURE_WINDOW_MS } from '@exactly-once/tools/local-runtime/api/verify-signature';
import { drive, type PreparedRequest, type SegmentSender } from '@exactly-once/tools/proof-kit/drive';
import type { PlannedRequest } from '@exactly-once/tools/proof-kit/plan';
import { RequestSigner, type AwsCredentialIdentity } from '@exactly-once/tools/proof-kit/request-signer';

/**
 * The driver signs each request the moment it sends it, with credentials its
 * source refreshes during the run: on AWS a signature older than 5 minutes is
 * refused, and SSO or assumed-role credentials expire during a long run. A
 * fake sender stands in for autocannon and moves a fake clock per request.
 */

const T0 = Date.UTC(2026, 5, 1, 12, 0, 0);
const CALLER = 'arn:aws:iam::123456789012:user/load';

const plan = (n: number): PlannedRequest[] =>
  Array.from({ length: n }, (_, index) => ({
    index,
    kind: 'create',
    method: 'POST',
    path: '/orders',
    caller: CALLER,
    idempotencyKey: `k${index}`,
    body: { customerId: 'c1' },
  })) as unknown as PlannedRequest[];

const amzDateMs = (value: string) =>
  Date.UTC(
    +value.slice(0, 4),
    +value.slice(4, 6) - 1,
    +value.slice(6, 8),
    +value.slice(9, 11),
    +value.slice(11, 13),
    +value.slice(13, 15),
  );

/** Sends one request per `stepMs` of fake time, recording when each was signed, sent and by whom. */
function slowSender(clock: { now: number }, stepMs: number) {
  const sent: { signedAt: number; sentAt: number; accessKeyId: string }[] = [];
  const send: SegmentSender = async (segment) => {
    for (let r: PreparedRequest | undefined = segment.take(); r !== undefined; r = segment.take()) {
      sent.push({
        signedAt: amzDateMs(r.headers['x-amz-date']),
        sentAt: clock.now,
        accessKeyId: /Credential=([^/]+)\//.exec(r.headers.authorization)![1],
      });
      segment.answered(r, 201, '{}', false, clock.now);
      clock.now += stepMs;
    }
    return { errors: 0, timeouts: 0, non2xx: 0, latency: { p50: 0, p99: 0 } };
  };
  return { sent, send };
}

test('at 1 request every 10 s, no request of a 2,000-request segment is sent with a signature older than 5 minutes', async () => {
  const clock = { now: T0 };
  const { sent, send } = slowSender(clock, 10_000);

  await drive(plan(60), {
    apiUrl: 'https://api.example/api/',
    region: 'eu-west-1',
    callers: [{ arn: CALLER, credentials: { accessKeyId: 'AKIALOAD', secretAccessKey: 's' } }],
    connections: 1,
    now: () => clock.now,
    sendSegment: send,
  });

  expect(sent).toHaveLength(60);
  // 60 requests take 10 minutes here: signed ahead of time, the last 30 would be refused by API Gateway.
  expect(Math.max(...sent.map((s) => s.sentAt - s.signedAt))).toBeLessThan(SIGNATURE_WINDOW_MS);
});

test('credentials that expire during the run are replaced by what their provider hands out next', async () => {
  const clock = { now: T0 };
  const { sent, send } = slowSender(clock, 60_000);
  // The SDK's provider is memoized: the same credentials until they near expiry, then new ones.
  let issued = 0;
  const expiresAt = new Map<string, number>();
  let current: AwsCredentialIdentity | undefined;
  const provider = async () => {
    if (current === undefined || current.expiration!.getTime() - clock.now < 5 * 60_000) {
      issued += 1;
      current = {
        accessKeyId: `ASIASESSION${issued}`,
        secretAccessKey: 's',
        sessionToken: `t${issued}`,
        expiration: new Date(clock.now + 15 * 60_000),
      };
      expiresAt.set(current.accessKeyId, clock.now + 15 * 60_000);
    }
    return current;
  };

  await drive(plan(40), {
    apiUrl: 'https://api.example/api/',
    region: 'eu-west-1',
    callers: [{ arn: CALLER, credentials: provider }],
    connections: 1,
    segmentSize: 5,
    now: () => clock.now,
    sendSegment: send,
  });

  // 40 minutes of requests on 15-minute credentials: no request signed with credentials already expired.
  expect(sent.filter((s) => s.sentAt >= expiresAt.get(s.accessKeyId)!)).toEqual([]);
  expect(new Set(sent.map((s) => s.accessKeyId)).size).toBeGreaterThan(1);
});

test("the driver's signature is the SDK signer's, byte for byte", async () => {
  const credentials = { accessKeyId: 'AKIAEXAMPLE', secretAccessKey: 'secret', sessionToken: 'token' };
  const headers = {
    host: 'abc.execute-api.eu-west-1.amazonaws.com',
    'content-type': 'application/json',
    'idempotency-key': '"k 1"',
  };
  const body = '{"customerId":"c1","items":[]}';
  const path = "/api/orders/o%201/it's";
  const ours = new RequestSigner('eu-west-1', credentials, () => T0);
  await ours.refresh();
  const sdk = new SignatureV4({ service: 'execute-api', region: 'eu-west-1', sha256: NodeSha256, credentials });

  const mine = ours.sign({ method: 'POST', path, query: { a: 'b c', z: '1' }, headers, body });
  const theirs = await sdk.sign(
    { method: 'POST', protocol: 'https:', hostname: headers.host, path, query: { z: '1', a: 'b c' }, headers, body },
    { signingDate: new Date(T0) },
  );

  expect(mine.authorization).toBe(theirs.headers.authorization);
});
