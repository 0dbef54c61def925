import { IdempotencyConfig, IdempotencyItemAlreadyExistsError } from '@aws-lambda-powertools/idempotency';
import type { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { idempotencyStore } from '@exactly-once/runtime/aws/idempotency-store';

/** A store's setup may synthesize a stack and create its tables or queues (the emulator side) while other suites load both cores. */
const STORE_SETUP_MS = 180_000;
/**
 * The idempotency store contract: Powertools' DynamoDB persistence layer,
 * built by the deployed adapter (packages/runtime/src/aws/idempotency-store.ts) and
 * configured as POST /orders configures it, on a low-level client given by the
 * caller: the simulation's in-memory DynamoDB (unit project) and DynamoDB
 * Local with the template's Idempotency table (integration project). It pins
 * what the simulated API relies on: the put's condition (key absent, record
 * expired, or in progress past its in-progress expiry) evaluated on the stored
 * record, the old record returned with the failure (ALL_OLD), completion, and
 * deletion. The time is Powertools' own, Date.now, moved by the test.
 */
export interface IdempotencyTableStore {
  client: DynamoDBClient;
  table: string;
  drop?: () => Promise<void>;
}

const EXPIRES_AFTER_SECONDS = 60;
const IN_PROGRESS_MS = 10_000;

let sequence = 0;

export function describeIdempotencyStoreContract(name: string, makeStore: () => Promise<IdempotencyTableStore>): void {
  describe(`idempotency store contract: ${name}`, () => {
    let tables: IdempotencyTableStore;
    let now: number;

    beforeAll(async () => {
      tables = await makeStore();
    }, STORE_SETUP_MS);
    afterAll(async () => {
      await tables.drop?.();
    });
    beforeEach(() => {
      now = Date.now();
      jest.spyOn(Date, 'now').mockImplementation(() => now);
    });
    afterEach(() => {
      jest.restoreAllMocks();
    });

    /** A store as POST /orders configures one: keyed on `scope`, the payload checked on `fingerprint`. */
    const store = (): DynamoDBPersistenceLayer => {
      const persistence = idempotencyStore(tables.table, tables.client);
      persistence.configure({
        config: new IdempotencyConfig({
          eventKeyJmesPath: 'scope',
          payloadValidationJmesPath: 'fingerprint',
          expiresAfterSeconds: EXPIRES_AFTER_SECONDS,
        }),
        keyPrefix: 'contract',
      });
      return persistence;
    };
    const request = (fingerprint = 'fp-1') => {
      sequence += 1;
      return { scope: `caller\nkey-${process.pid}-${now}-${sequence}`, fingerprint };
    };
    /** The record a refused put reports (from ALL_OLD), or the put's success as undefined. */
    const putInProgress = async (persistence: DynamoDBPersistenceLayer, data: { scope: string }) => {
      try {
        await persistence.saveInProgress(data, IN_PROGRESS_MS);
        return undefined;
      } catch (error) {
        if (!(error instanceof IdempotencyItemAlreadyExistsError)) throw error;
        return error.existingRecord ?? 'refused without the old record';
      }
    };

    test('the first put of a key wins; a second is refused with the record in progress, as stored', async () => {
      const persistence = store();
      const data = request();

      const first = await putInProgress(persistence, data);
      const second = await putInProgress(store(), data);

      expect(first).toBeUndefined();
      expect(second).toMatchObject({ status: 'INPROGRESS', inProgressExpiryTimestamp: now + IN_PROGRESS_MS });
    });

    test('a completed record is refused to a new put and carries the stored answer (the replay)', async () => {
      const persistence = store();
      const data = request();
      const answer = { statusCode: 201, body: '{"orderId":"ord_1"}' };
      await persistence.saveInProgress(data, IN_PROGRESS_MS);

      await persistence.saveSuccess(data, answer);
      now += IN_PROGRESS_MS + 1; // past the in-progress expiry: a completed record still holds
      const existing = await putInProgress(store(), data);
      const read = await store().getRecord(data);

      expect(existing).toMatchObject({ status: 'COMPLETED' });
      expect(existing !== undefined && typeof existing !== 'string' && existing.getResponse()).toEqual(answer);
      expect(read.getResponse()).toEqual(answer);
    });

    test('a record in progress is refused until its in-progress expiry, then taken over', async () => {
      const data = request();
      await store().saveInProgress(data, IN_PROGRESS_MS);
      const started = now;

      now = started + IN_PROGRESS_MS - 1;
      const before = await putInProgress(store(), data);
      now = started + IN_PROGRESS_MS + 1;
      const after = await putInProgress(store(), data);
      const taken = await putInProgress(store(), data);

      expect(before).toMatchObject({ status: 'INPROGRESS' });
      expect(after).toBeUndefined();
      expect(taken).toMatchObject({ inProgressExpiryTimestamp: now + IN_PROGRESS_MS });
    });

    test('a completed record past its expiry is taken over by a new put', async () => {
      const persistence = store();
      const data = request();
      await persistence.saveInProgress(data, IN_PROGRESS_MS);
      await persistence.saveSuccess(data, { statusCode: 201 });

      now += (EXPIRES_AFTER_SECONDS + 2) * 1000;
      const after = await putInProgress(store(), data);

      expect(after).toBeUndefined();
    });

    test('the refused put carries the stored payload hash: another body under the key fails validation', async () => {
      const data = request('fp-1');
      await store().saveInProgress(data, IN_PROGRESS_MS);
      const other = { ...data, fingerprint: 'fp-2' };
      const persistence = store();

      const existing = await putInProgress(persistence, other);

      expect(existing).toMatchObject({ status: 'INPROGRESS' });
      expect(() =>
        persistence.processExistingRecord(existing as Parameters<typeof persistence.processExistingRecord>[0], other),
      ).toThrow(expect.objectContaining({ name: 'IdempotencyValidationError' }) as Error);
      expect(() =>
        persistence.processExistingRecord(existing as Parameters<typeof persistence.processExistingRecord>[0], data),
      ).not.toThrow();
    });

    test('a deleted record (the call failed) frees the key for the next put', async () => {
      const persistence = store();
      const data = request();
      await persistence.saveInProgress(data, IN_PROGRESS_MS);

      await persistence.deleteRecord(data);
      const again = await putInProgress(store(), data);

      expect(again).toBeUndefined();
    });
  });
}
