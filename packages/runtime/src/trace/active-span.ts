import { AsyncLocalStorage } from 'node:async_hooks';
import type { TraceContext } from './trace-context';

/**
 * The span the calling code runs in, per asynchronous context: records handled side by side in one
 * invocation each see their own. Its own module so the logger (runtime/observability.ts) can read it
 * without importing the span recorder, which logs through that logger.
 *
 * @example
 * ```ts
 * const traceId = activeSpanStore.getStore()?.traceId;
 * ```
 */
export const activeSpanStore = new AsyncLocalStorage<TraceContext>();
