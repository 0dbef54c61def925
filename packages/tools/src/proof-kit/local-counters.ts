import type { CallCounts } from './report';
import type { Target } from './target';

/**
 * The local runtime counts, between the functions and the emulators, every
 * DynamoDB and SQS request and every Lambda invocation, and serves the totals
 * at `/__local/stats` on the API port. The kit reads them before and after a
 * run; the difference per order is what a deployed stack would be billed for.
 */
export function localCallCounters(target: Target): () => Promise<Omit<CallCounts, 'apiRequests'>> {
  const url = new URL('/__local/stats', target.apiUrl).toString();
  return async () => {
    try {
      const response = await fetch(url);
      if (!response.ok) return {};
      const stats = (await response.json()) as Omit<CallCounts, 'apiRequests'>;
      return {
        dynamodbWrites: stats.dynamodbWrites,
        dynamodbReads: stats.dynamodbReads,
        sqs: stats.sqs,
        lambdaInvocations: stats.lambdaInvocations,
        metrics: stats.metrics,
        functions: stats.functions,
      };
    } catch {
      return {}; // an older runtime without counters: calls are reported as not measured
    }
  };
}
