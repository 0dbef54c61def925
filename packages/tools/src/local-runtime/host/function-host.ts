import { randomUUID } from 'node:crypto';
import { DeliveryEvidence } from './delivery-evidence';
import { ExecutionEnvironment, type InvocationResult, type LogSink } from './execution-environment';

/** Lambda's bound on an on-demand environment's init phase. */
export const LAMBDA_INIT_TIMEOUT_MS = 10_000;
const INIT_TIMEOUT = 'Runtime.InitTimeout';

export interface HostedFunction {
  /** AWS_LAMBDA_FUNCTION_NAME and the name in ARNs. */
  functionName: string;
  /** Log prefix. */
  displayName: string;
  arn: string;
  codeDir: string;
  handler: string;
  runtime: string;
  timeoutSeconds: number;
  memoryMb: number;
  /** The template environment, references already resolved. */
  environment: Record<string, string>;
  reservedConcurrency?: number;
  logFormat?: string;
}

export interface HostOptions {
  region: string;
  /** AWS_ENDPOINT_URL_<SERVICE> values, e.g. { DYNAMODB: 'http://127.0.0.1:8000' }. */
  endpoints: Record<string, string>;
  log: LogSink;
  /** Local cap on environments per function when it has no reserved concurrency (memory, not Lambda, is the limit here). */
  maxConcurrency?: number;
  /** Warm environments idle this long are stopped, as Lambda reclaims them. */
  idleTimeoutMs?: number;
  /** How long an environment's first init may take before it is retried within the function's timeout (Lambda: 10 s). */
  initTimeoutMs?: number;
  hideMetrics?: boolean;
  onMetrics?: (line: string) => void;
  hideSpans?: boolean;
  onSpan?: (line: string) => void;
}

/**
 * What a caller does when the function is at its concurrency limit:
 * - 'wait': queue (pollers and async invocations: Lambda retries throttles for them);
 * - 'throttle': fail at once with TooManyRequestsException (synchronous
 *   invocations over *reserved* concurrency, as Lambda does). Over the local
 *   cap alone, every caller waits: that limit is the laptop's, not Lambda's.
 */
export type OnLimit = 'wait' | 'throttle';

/**
 * Hosts one function like Lambda: environments (child processes) are created
 * on demand, reused warm, one invocation at a time each; at most
 * `reservedConcurrency` (or the local cap) run at once.
 */
export class FunctionHost {
  readonly limit: number;
  private readonly idle: { env: ExecutionEnvironment; timer: NodeJS.Timeout }[] = [];
  private readonly all = new Set<ExecutionEnvironment>();
  private readonly waiters: (() => void)[] = [];
  private running = 0;
  private stopped = false;
  /** Invocation counters, for tests and the summary; busyMs sums invocation time (the bench's Lambda GB-s). */
  readonly stats = { invocations: 0, errors: 0, timeouts: 0, crashes: 0, throttles: 0, coldStarts: 0, busyMs: 0 };
  /** Evidence that delivery faults fired (redelivery while running, an event under a new message id). */
  readonly deliveries = new DeliveryEvidence();

  constructor(
    readonly fn: HostedFunction,
    private readonly options: HostOptions,
  ) {
    this.limit = fn.reservedConcurrency ?? options.maxConcurrency ?? 4;
  }

  get active(): number {
    return this.running;
  }

  async invoke(event: unknown, onLimit: OnLimit = 'wait'): Promise<InvocationResult> {
    const requestId = randomUUID();
    if (this.stopped) return this.fail(requestId, 'throttle', 'Runtime.Stopped', 'The local runtime is stopping');
    const delivered = this.deliveries.begin(event);
    let result: InvocationResult | undefined;
    try {
      result = await this.invokeWhenFree(requestId, event, onLimit);
      return result;
    } finally {
      delivered(result?.ok ? { ok: true, payload: result.payload } : { ok: false });
    }
  }

  private async invokeWhenFree(requestId: string, event: unknown, onLimit: OnLimit): Promise<InvocationResult> {
    if (this.running >= this.limit) {
      if (onLimit === 'throttle' && this.fn.reservedConcurrency !== undefined) {
        this.stats.throttles++;
        return this.fail(requestId, 'throttle', 'TooManyRequestsException', 'Rate Exceeded. (reserved concurrency)');
      }
      await new Promise<void>((resolve) => this.waiters.push(resolve));
      if (this.stopped) return this.fail(requestId, 'throttle', 'Runtime.Stopped', 'The local runtime is stopping');
    }
    this.running++;
    this.stats.invocations++;
    try {
      let env = await this.acquire();
      let initError = await env.ready;
      let timeoutMs = this.fn.timeoutSeconds * 1000;
      if (initError?.errorType === INIT_TIMEOUT && !this.stopped) {
        // Lambda does not fail an invocation whose cold init outran its 10 s: it runs the init again at
        // that invocation, within the function's timeout, which the init and the handler then share.
        // Failing it here instead made a busy laptop answer 502 where AWS answers late.
        env.kill();
        this.all.delete(env);
        this.options.log(
          this.fn.displayName,
          `INIT_REPORT Status: timeout; init retried within the function's ${this.fn.timeoutSeconds} s timeout`,
        );
        const retriedAt = performance.now();
        env = this.start(timeoutMs);
        initError = await env.ready;
        timeoutMs = Math.max(1, timeoutMs - (performance.now() - retriedAt));
      }
      if (initError !== undefined) {
        env.kill();
        this.all.delete(env);
        // Killed in its init by the runtime stopping: nothing to report on the way out.
        if (this.stopped) return { ok: false, requestId, reason: 'init', error: initError };
        this.stats.errors++;
        this.options.log(
          this.fn.displayName,
          `INIT_REPORT Status: error ${initError.errorType}: ${initError.errorMessage}`,
        );
        return { ok: false, requestId, reason: 'init', error: initError };
      }
      const invokedAt = performance.now();
      const result = await env.invoke(requestId, event, timeoutMs, this.context());
      this.stats.busyMs += performance.now() - invokedAt;
      this.account(result);
      if (env.alive) this.release(env);
      else this.all.delete(env);
      return result;
    } finally {
      this.running--;
      this.waiters.shift()?.();
    }
  }

  /** Stops every environment of this function; waiting callers get a failure. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.waiters.splice(0).forEach((wake) => wake());
    for (const { timer } of this.idle.splice(0)) clearTimeout(timer);
    await Promise.all([...this.all].map((env) => env.stop()));
    this.all.clear();
  }

  /** Process ids of live environments (to measure memory, and to prove nothing is left behind). */
  pids(): number[] {
    return [...this.all].map((env) => env.pid).filter((pid): pid is number => pid !== undefined);
  }

  private async acquire(): Promise<ExecutionEnvironment> {
    while (this.idle.length > 0) {
      const { env, timer } = this.idle.pop()!;
      clearTimeout(timer);
      if (env.alive) return env;
      this.all.delete(env);
    }
    return this.start(this.options.initTimeoutMs ?? LAMBDA_INIT_TIMEOUT_MS);
  }

  /** A cold environment, its init bounded by `initTimeoutMs`. */
  private start(initTimeoutMs: number): ExecutionEnvironment {
    this.stats.coldStarts++;
    const env = new ExecutionEnvironment({
      name: this.fn.displayName,
      env: this.environment(),
      cwd: this.fn.codeDir,
      log: this.options.log,
      initTimeoutMs,
      hideMetrics: this.options.hideMetrics,
      onMetrics: this.options.onMetrics,
      hideSpans: this.options.hideSpans,
      onSpan: this.options.onSpan,
    });
    this.all.add(env);
    return env;
  }

  private release(env: ExecutionEnvironment): void {
    if (this.stopped) {
      void env.stop();
      return;
    }
    const timer = setTimeout(
      () => {
        const index = this.idle.findIndex((i) => i.env === env);
        if (index >= 0) this.idle.splice(index, 1);
        this.all.delete(env);
        void env.stop();
      },
      this.options.idleTimeoutMs ?? 10 * 60_000,
    );
    timer.unref();
    this.idle.push({ env, timer });
  }

  private account(result: InvocationResult): void {
    if (result.ok) return;
    // Cut by the runtime stopping (Ctrl-C, SIGTERM): not the function's failure, so no crash and no
    // `Runtime.ExitError ... signal SIGKILL` line on the way out. Its message comes back next start.
    if (this.stopped && result.reason === 'crash') return;
    this.stats.errors++;
    if (result.reason === 'timeout') this.stats.timeouts++;
    if (result.reason === 'crash') this.stats.crashes++;
    this.options.log(
      this.fn.displayName,
      `Invoke Error ${JSON.stringify({ errorType: result.error.errorType, errorMessage: result.error.errorMessage })}`,
    );
  }

  private fail(requestId: string, reason: 'throttle', errorType: string, errorMessage: string): InvocationResult {
    return { ok: false, requestId, reason, error: { errorType, errorMessage } };
  }

  private context(): Record<string, unknown> {
    return {
      functionName: this.fn.functionName,
      invokedFunctionArn: this.fn.arn,
      memoryLimitInMB: this.fn.memoryMb,
      logGroupName: `/aws/lambda/${this.fn.functionName}`,
      logStreamName: `packages/tools/src/local-runtime/[$LATEST]${randomUUID().replace(/-/g, '')}`,
    };
  }

  /**
   * Lambda's environment: the template's variables, then the reserved ones
   * Lambda sets itself (which a template cannot override), with dummy
   * credentials and the SDK pointed at the emulators. Nothing is inherited
   * from the runtime's own environment but PATH.
   */
  private environment(): Record<string, string> {
    const { fn, options } = this;
    const endpoints = Object.fromEntries(
      Object.entries(options.endpoints).map(([service, url]) => [`AWS_ENDPOINT_URL_${service}`, url]),
    );
    return {
      PATH: process.env.PATH ?? '/usr/tools/local-runtime/bin:/usr/bin:/bin',
      LANG: 'en_US.UTF-8',
      TZ: 'UTC',
      // The function runs on fn.runtime on AWS; the SDK's warning about the laptop's Node version is noise here.
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      ...fn.environment,
      ...endpoints,
      AWS_REGION: options.region,
      AWS_DEFAULT_REGION: options.region,
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      AWS_SESSION_TOKEN: 'local',
      AWS_LAMBDA_FUNCTION_NAME: fn.functionName,
      AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(fn.memoryMb),
      AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${fn.functionName}`,
      AWS_LAMBDA_LOG_STREAM_NAME: 'local',
      AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
      ...(fn.logFormat === 'JSON' ? { AWS_LAMBDA_LOG_FORMAT: 'JSON' } : {}),
      AWS_EXECUTION_ENV: `AWS_Lambda_${fn.runtime}`,
      LAMBDA_TASK_ROOT: fn.codeDir,
      _HANDLER: fn.handler,
    };
  }
}
