import { IdempotencyItemAlreadyExistsError, IdempotencyItemNotFoundError } from '@aws-lambda-powertools/idempotency';
import { BasePersistenceLayer, IdempotencyRecord } from '@aws-lambda-powertools/idempotency/persistence';
import { idempotentCommand, type BodyResult } from '@exactly-once/runtime';
import { json, type CommandInput } from '@exactly-once/runtime/api';
import { apiEvent, lambdaContext } from '../support/api-events';

/**
 * The mechanism's idempotent POST on a made-up command (a booking): the same key twice runs the
 * command once and replays its answer; every refusal stores nothing and runs nothing.
 */

/** Powertools' records in memory, refusing a put over a live record as DynamoDB's condition does. */
class MemoryPersistence extends BasePersistenceLayer {
  readonly records = new Map<string, IdempotencyRecord>();

  protected async _getRecord(key: string): Promise<IdempotencyRecord> {
    const record = this.records.get(key);
    if (record === undefined) throw new IdempotencyItemNotFoundError(key);
    return record;
  }

  protected async _putRecord(record: IdempotencyRecord): Promise<void> {
    const existing = this.records.get(record.idempotencyKey);
    if (existing !== undefined && !existing.isExpired())
      throw new IdempotencyItemAlreadyExistsError(`${record.idempotencyKey} exists`, existing);
    this.records.set(record.idempotencyKey, record);
  }

  protected async _updateRecord(record: IdempotencyRecord): Promise<void> {
    this.records.set(record.idempotencyKey, record);
  }

  protected async _deleteRecord(record: IdempotencyRecord): Promise<void> {
    this.records.delete(record.idempotencyKey);
  }
}

interface Booking {
  roomId: string;
  nights: number;
}

function parseBooking(body: string | null | undefined): BodyResult<Booking> {
  const value = JSON.parse(body ?? 'null') as Partial<Booking> | null;
  if (typeof value?.roomId !== 'string') return { ok: false, errors: [{ field: 'roomId', message: 'Required.' }] };
  if (typeof value.nights !== 'number') return { ok: false, errors: [{ field: 'nights', message: 'Required.' }] };
  return { ok: true, value: { roomId: value.roomId, nights: value.nights } };
}

class RoomTaken extends Error {}

function setUp(run?: (input: CommandInput<Booking>) => Promise<void>) {
  const store = new MemoryPersistence();
  const runs: CommandInput<Booking>[] = [];
  const handler = idempotentCommand<Booking>({
    route: 'POST /bookings',
    keyPrefix: 'create-booking',
    parseBody: parseBooking,
    run: async (input) => {
      runs.push(input);
      await run?.(input);
      return json(201, { bookingId: `bk_${runs.length}`, ...input.request });
    },
    persistenceStore: store,
    keyExpirySeconds: 86_400,
    isKeyReused: (error) => error instanceof RoomTaken,
  });
  const post = (
    body: unknown,
    headers: Record<string, string> = { 'Idempotency-Key': 'k-1' },
    caller?: string | null,
  ) =>
    handler(
      apiEvent({ method: 'POST', path: '/bookings', body: JSON.stringify(body), headers, caller }),
      lambdaContext(),
    );
  return { store, runs, post };
}

const BOOKING = { roomId: 'r-1', nights: 2 };

test('the same key and body twice: the command runs once, the retry gets the stored answer marked replayed', async () => {
  // Arrange
  const { runs, post } = setUp();

  // Act
  const first = await post(BOOKING);
  const retry = await post({ nights: 2, roomId: 'r-1' }); // the same body, its keys in another order

  // Assert
  expect(first.statusCode).toBe(201);
  expect(retry).toMatchObject({ statusCode: 201, body: first.body, headers: { 'Idempotent-Replayed': 'true' } });
  expect(runs).toHaveLength(1);
  expect(runs[0]).toMatchObject({ caller: 'arn:aws:iam::123456789012:user/alice', idempotencyKey: 'k-1' });
});

test('the same key with another body: 422, the command not run again', async () => {
  // Arrange
  const { runs, post } = setUp();
  await post(BOOKING);

  // Act
  const reused = await post({ ...BOOKING, nights: 3 });

  // Assert
  expect(reused.statusCode).toBe(422);
  expect(JSON.parse(reused.body)).toMatchObject({ title: 'Idempotency-Key reused' });
  expect(runs).toHaveLength(1);
});

test('the same key from two callers is two commands', async () => {
  // Arrange
  const { runs, post } = setUp();

  // Act
  await post(BOOKING, undefined, 'arn:aws:iam::123456789012:user/alice');
  await post(BOOKING, undefined, 'arn:aws:iam::123456789012:user/bob');

  // Assert
  expect(runs.map((r) => r.caller)).toEqual([
    'arn:aws:iam::123456789012:user/alice',
    'arn:aws:iam::123456789012:user/bob',
  ]);
});

test('a retry while the first still runs: 409 with Retry-After, the command run once', async () => {
  // Arrange
  let release!: () => void;
  const { runs, post } = setUp(() => new Promise<void>((resolve) => (release = resolve)));
  const first = post(BOOKING);
  await new Promise((resolve) => setImmediate(resolve));

  // Act
  const concurrent = await post(BOOKING);
  release();

  // Assert
  expect(concurrent).toMatchObject({ statusCode: 409, headers: { 'Retry-After': '1' } });
  expect((await first).statusCode).toBe(201);
  expect(runs).toHaveLength(1);
});

test.each([
  ['no caller identity', 403, 'Forbidden', { caller: null }],
  ['no Idempotency-Key', 400, 'Invalid Idempotency-Key', { headers: {} }],
  ['two Idempotency-Key values', 400, 'Invalid Idempotency-Key', { headers: { 'Idempotency-Key': 'a,b' } }],
  ['a body that fails validation', 400, 'Invalid request body', { body: { roomId: 'r-1' } }],
] as const)('%s: %i %s, nothing run and no record stored', async (_name, status, title, request) => {
  // Arrange
  const { store, runs, post } = setUp();
  const options = request as { caller?: null; headers?: Record<string, string>; body?: unknown };

  // Act
  const answer = await post(options.body ?? BOOKING, options.headers, options.caller);

  // Assert
  expect(answer.statusCode).toBe(status);
  expect(answer.headers['Content-Type']).toBe('application/problem+json');
  expect(JSON.parse(answer.body)).toMatchObject({ status, title });
  expect(runs).toEqual([]);
  expect(store.records.size).toBe(0);
});

test('the body refused names each field, and the corrected body under the same key is accepted', async () => {
  // Arrange
  const { runs, post } = setUp();

  // Act
  const refused = await post({ roomId: 'r-1' });
  const corrected = await post(BOOKING);

  // Assert
  expect(JSON.parse(refused.body).errors).toEqual([{ field: 'nights', message: 'Required.' }]);
  expect(corrected.statusCode).toBe(201);
  expect(runs).toHaveLength(1);
});

test("the command's own finding that the key was reused is 422; a bug is 500 without details", async () => {
  // Arrange
  const taken = setUp(async () => {
    throw new RoomTaken();
  });
  const broken = setUp(async () => {
    throw new TypeError('undefined is not a function');
  });

  // Act
  const reused = await taken.post(BOOKING);
  const bug = await broken.post(BOOKING);

  // Assert
  expect(reused.statusCode).toBe(422);
  expect(bug.statusCode).toBe(500);
  expect(bug.body).not.toContain('undefined is not a function');
});
