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
  total: number;
}

export interface CountingProxy {
  endpoint: string;
  counts: CallCounts;
  stop(): Promise<void>;
}

const DYNAMODB_WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem']);
const DYNAMODB_READS = new Set(['GetItem', 'Query', 'Scan']);

export async function startCountingProxy(target: string): Promise<CountingProxy> {
  const upstream = new URL(target);
  const counts: CallCounts = { byOperation: {}, writeUnits: 0, readUnits: 0, total: 0 };
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
  if (DYNAMODB_WRITES.has(operation)) counts.writeUnits += 1;
  if (DYNAMODB_READS.has(operation)) counts.readUnits += 1;
  if (operation === 'TransactWriteItems' || operation === 'BatchWriteItem') {
    const items = itemCount(body, operation === 'TransactWriteItems' ? 'TransactItems' : 'RequestItems');
    counts.writeUnits += operation === 'TransactWriteItems' ? 2 * items : items;
  }
}

function itemCount(body: Buffer, field: string): number {
  try {
    const value = JSON.parse(body.toString('utf8'))[field];
    if (Array.isArray(value)) return value.length;
    return Object.values(value as Record<string, unknown[]>).reduce((n, list) => n + list.length, 0);
  } catch {
    return 1;
  }
}

/** SQS's older query protocol names the operation in the form body. */
function queryAction(body: Buffer): string {
  const match = /(?:^|&)Action=([A-Za-z]+)/.exec(body.toString('utf8'));
  return match === null ? 'unknown' : match[1];
}
