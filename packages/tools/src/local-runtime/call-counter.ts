import * as http from 'node:http';

/**
 * A counting pass-through proxy in front of an emulator. The functions (and the
 * SQS pollers, whose receives and deletes AWS bills too) talk to the emulators
 * through it, so the proof kit can report requests per order as a deployed
 * stack would be billed for them. The kit's own checks bypass it.
 */
export interface CallCounts {
  /** Requests by operation, e.g. { PutItem: 12, TransactWriteItems: 4 }. */
  byOperation: Record<string, number>;
  /** DynamoDB write request units: a transactional item costs two (AWS pricing). */
  writeUnits: number;
  /** DynamoDB read request units (strongly consistent reads, one per item or query page here). */
  readUnits: number;
  /** The same units by table name, so a cost can be broken down per table. */
  byTable: Record<string, { writeUnits: number; readUnits: number }>;
  total: number;
}

export interface CountingProxy {
  endpoint: string;
  counts: CallCounts;
  stop(): Promise<void>;
}

const DYNAMODB_WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem']);
const DYNAMODB_READS = new Set(['GetItem', 'Query', 'Scan']);
const DYNAMODB_BATCHES: Record<string, { field: string; unitsPerItem: number; kind: 'writeUnits' | 'readUnits' }> = {
  // A transactional item costs two units (AWS pricing); a batch item one, like its single-item request.
  TransactWriteItems: { field: 'TransactItems', unitsPerItem: 2, kind: 'writeUnits' },
  BatchWriteItem: { field: 'RequestItems', unitsPerItem: 1, kind: 'writeUnits' },
  BatchGetItem: { field: 'RequestItems', unitsPerItem: 1, kind: 'readUnits' },
};

export async function startCountingProxy(target: string): Promise<CountingProxy> {
  const upstream = new URL(target);
  const counts: CallCounts = { byOperation: {}, writeUnits: 0, readUnits: 0, byTable: {}, total: 0 };
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      count(counts, String(req.headers['x-amz-target'] ?? ''), body);
      const forward = http.request(
        {
          host: upstream.hostname,
          port: upstream.port,
          path: req.url,
          method: req.method,
          headers: { ...req.headers, host: upstream.host },
          agent,
        },
        (upstreamRes) => {
          res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.headers);
          upstreamRes.pipe(res);
        },
      );
      forward.on('error', () => {
        if (!res.headersSent) res.writeHead(502);
        res.end();
      });
      // A client that gives up (an aborted long poll) must abort upstream too: otherwise the
      // emulator completes the receive and the messages go in flight to nobody.
      res.on('close', () => {
        if (!res.writableFinished) forward.destroy();
      });
      forward.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    counts,
    stop: () =>
      new Promise((resolve) => {
        agent.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Counts one request made outside the proxy (the runtime's own pollers). */
export function countCall(counts: CallCounts, operation: string): void {
  counts.byOperation[operation] = (counts.byOperation[operation] ?? 0) + 1;
  counts.total += 1;
}

function count(counts: CallCounts, target: string, body: Buffer): void {
  const operation = target.includes('.') ? target.slice(target.lastIndexOf('.') + 1) : queryAction(body);
  countCall(counts, operation);
  const single = DYNAMODB_WRITES.has(operation)
    ? 'writeUnits'
    : DYNAMODB_READS.has(operation)
      ? 'readUnits'
      : undefined;
  const batch = DYNAMODB_BATCHES[operation];
  if (single === undefined && batch === undefined) return;
  const input = parseJson(body);
  const add = (table: string, kind: 'writeUnits' | 'readUnits', units: number) => {
    counts[kind] += units;
    const entry = (counts.byTable[table] ??= { writeUnits: 0, readUnits: 0 });
    entry[kind] += units;
  };
  if (single !== undefined) {
    add(String(input?.TableName ?? 'unknown'), single, 1);
    return;
  }
  for (const table of batchTables(input?.[batch.field], operation === 'TransactWriteItems'))
    add(table, batch.kind, batch.unitsPerItem);
}

function parseJson(body: Buffer): Record<string, unknown> | undefined {
  try {
    return JSON.parse(body.toString('utf8')) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/**
 * One table name per item: a transaction lists items each naming its table
 * (`[{ Put: { TableName } }, ...]`); a batch maps table names to lists of
 * requests (BatchWriteItem) or to `{ Keys }` (BatchGetItem). An unreadable
 * body counts as one item of an unknown table.
 */
function batchTables(value: unknown, transactional: boolean): string[] {
  if (transactional && Array.isArray(value))
    return value.map((item) => {
      const inner = Object.values(item as Record<string, { TableName?: string }>)[0];
      return String(inner?.TableName ?? 'unknown');
    });
  if (!transactional && value !== null && typeof value === 'object')
    return Object.entries(value as Record<string, unknown>).flatMap(([table, requests]) => {
      const list = Array.isArray(requests) ? requests : ((requests as { Keys?: unknown[] }).Keys ?? []);
      return list.map(() => table);
    });
  return ['unknown'];
}

/** SQS's older query protocol names the operation in the form body. */
function queryAction(body: Buffer): string {
  const match = /(?:^|&)Action=([A-Za-z]+)/.exec(body.toString('utf8'));
  return match === null ? 'unknown' : match[1];
}
