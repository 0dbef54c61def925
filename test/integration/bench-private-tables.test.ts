import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { createPrivateTables } from '@exactly-once/tools/bench/tables';
import { benchTestClient, createBenchTables } from '../support/bench-tables';

/**
 * The bench's direct writes (the emulator limit, the consumer comparison) go to
 * copies of the stack's tables that no stream carries to the running pipeline.
 */
describe('bench private tables', () => {
  test("each copy has its table's keys and global indexes, no stream, and is dropped after", async () => {
    const stack = await createBenchTables();
    const client = benchTestClient();
    const stackTables = stack.tables;
    try {
      const direct = await createPrivateTables(client, stackTables, 'bench-test');

      for (const [role, name] of Object.entries(stackTables)) {
        const copy = direct.tables[role as keyof typeof stackTables];
        const [{ Table: original }, { Table: copied }] = await Promise.all(
          [name, copy].map((TableName) => client.send(new DescribeTableCommand({ TableName }))),
        );
        expect(copy).not.toBe(name);
        expect(direct.originalOf(copy)).toBe(name);
        expect(copied?.KeySchema).toEqual(original?.KeySchema);
        const indexes = (t: typeof original) =>
          (t?.GlobalSecondaryIndexes ?? []).map((i) => ({
            name: i.IndexName,
            keys: i.KeySchema,
            projection: i.Projection,
          }));
        expect(indexes(copied)).toEqual(indexes(original));
        expect(copied?.StreamSpecification?.StreamEnabled ?? false).toBe(false);
      }
      // The stack's entity table does have a stream: that is what the copies leave out.
      const { Table: entities } = await client.send(new DescribeTableCommand({ TableName: stackTables.entities }));
      expect(entities?.StreamSpecification?.StreamEnabled).toBe(true);

      await direct.drop();

      for (const copy of Object.values(direct.tables))
        await expect(client.send(new DescribeTableCommand({ TableName: copy }))).rejects.toThrow(
          expect.objectContaining({ name: 'ResourceNotFoundException' }),
        );
    } finally {
      client.destroy();
      await stack.drop();
    }
  });
});
