import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { useEmulatedEffects, type EmulatedEffects } from '../support/emulated-effects';
import { sequencedLedgerCases } from '../support/sequenced-ledger-cases';

/**
 * The sequenced ledger (packages/runtime/src/aws/sequenced-ledger.ts) under the generic effect, on
 * DynamoDB Local with the Effects table of the mechanism's construct: the same cases as the unit test
 * on the in-memory DynamoDB (test/unit/sequenced-ledger.test.ts), on the real conditions and
 * ReturnValuesOnConditionCheckFailure.
 */

let documents: DynamoDBDocumentClient;
let raw: EmulatedEffects['raw'];
let effectsTable: string;
useEmulatedEffects((db) => ({ documents, raw, effectsTable } = db));

sequencedLedgerCases({
  documents: () => documents,
  raw: () => raw,
  tableName: () => effectsTable,
  enforcesKeySize: true,
});
