import { fork, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { SpanStore } from '../spans';

/** What a failed invocation reports, in Lambda's shape. */
export interface InvocationError {
  errorType: string;
  errorMessage: string;
  stackTrace?: string[];
}

export type InvocationResult =
  | { ok: true; requestId: string; payload: unknown }
  | {
      ok: false;
      requestId: string;
      error: InvocationError;
      reason: 'error' | 'timeout' | 'crash' | 'init' | 'throttle';
    };

export type LogSink = (source: string, line: string) => void;

export interface EnvironmentOptions {
  /** Prefix of every log line, e.g. the function's construct path. */
  name: string;
  env: Record<string, string>;
  cwd: string;
  log: LogSink;
  /** How long the init may take (Lambda: 10 s, then retried within the function's timeout: function-host.ts). */
  initTimeoutMs?: number;
  /** Hide CloudWatch embedded-metric-format lines (Powertools metrics) from the log. */
  hideMetrics?: boolean;
  /** Receives every embedded-metric-format line (what CloudWatch would turn into metrics). */
  onMetrics?: (line: string) => void;
  /** Hide the span lines (packages/runtime/src/trace/spans.ts) from the log: one per hop per order. */
  hideSpans?: boolean;
  /** Receives every span line. */
  onSpan?: (line: string) => void;
}

interface Pending {
  requestId: string;
  settle: (result: InvocationResult) => void;
}

const WORKER = path.join(__dirname, 'worker.js');

/**
 * One execution environment: a child process running `worker.js` for one
 * function. It runs one invocation at a time; a timeout kills it (SIGKILL, as
 * Lambda stops the sandbox) and a crash ends it, failing only the invocation
 * it was running. The host discards an environment once it is dead.
 */
export class ExecutionEnvironment {
  readonly ready: Promise<InvocationError | undefined>;
  private readonly child: ChildProcess;
  private pending?: Pending;
  private exited = false;
  private killed = false;

  constructor(private readonly options: EnvironmentOptions) {
    this.child = fork(WORKER, [], {
      cwd: options.cwd,
      env: options.env,
      // Not the parent's flags: under tsx or jest they would load a TypeScript loader into the function.
      execArgv: [],
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      serialization: 'json',
    });
    this.pipeLogs(this.child.stdout!);
    this.pipeLogs(this.child.stderr!);
    this.ready = new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.kill();
        resolve({
          errorType: 'Runtime.InitTimeout',
          errorMessage: `Init phase did not finish within ${(options.initTimeoutMs ?? 10_000) / 1000} s`,
        });
      }, options.initTimeoutMs ?? 10_000);
      this.child.on('message', (message: { type: string; error?: InvocationError }) => {
        if (message.type === 'ready') resolve(undefined);
        if (message.type === 'init-error') resolve(message.error);
        if (message.type !== 'result') clearTimeout(timer);
      });
      this.child.once('exit', (code, signal) => {
        clearTimeout(timer);
        resolve({
          errorType: 'Runtime.ExitError',
          errorMessage: `Runtime exited during init with ${signal ?? `exit status ${code}`}`,
        });
      });
    });
    this.child.on(
      'message',
      (message: { type: string; requestId?: string; ok?: boolean; payload?: unknown; error?: InvocationError }) => {
        if (message.type !== 'result' || this.pending === undefined || message.requestId !== this.pending.requestId)
          return;
        const { requestId } = this.pending;
        this.settle(
          message.ok
            ? { ok: true, requestId, payload: message.payload }
            : { ok: false, requestId, error: message.error!, reason: 'error' },
        );
      },
    );
    this.child.once('exit', (code, signal) => {
      this.exited = true;
      if (this.pending === undefined) return;
      const { requestId } = this.pending;
      const status = signal !== null ? `signal ${signal}` : `exit status ${code}`;
      this.settle({
        ok: false,
        requestId,
        reason: 'crash',
        error: {
          errorType: 'Runtime.ExitError',
          errorMessage: `RequestId: ${requestId} Error: Runtime exited with error: ${status}`,
        },
      });
    });
  }

  get alive(): boolean {
    return !this.exited && !this.killed;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  invoke(
    requestId: string,
    event: unknown,
    timeoutMs: number,
    context: Record<string, unknown>,
  ): Promise<InvocationResult> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        const seconds = (timeoutMs / 1000).toFixed(2);
        this.settle({
          ok: false,
          requestId,
          reason: 'timeout',
          error: {
            errorType: 'Sandbox.Timedout',
            errorMessage: `RequestId: ${requestId} Error: Task timed out after ${seconds} seconds`,
          },
        });
        this.kill();
      }, timeoutMs);
      this.pending = {
        requestId,
        settle: (result) => {
          clearTimeout(timer);
          resolve(result);
        },
      };
      if (this.exited) {
        this.settle({
          ok: false,
          requestId,
          reason: 'crash',
          error: { errorType: 'Runtime.ExitError', errorMessage: 'Runtime exited before the invocation' },
        });
        return;
      }
      this.child.send({ type: 'invoke', requestId, event, deadline: Date.now() + timeoutMs, context });
    });
  }

  kill(): void {
    this.killed = true;
    if (!this.exited) this.child.kill('SIGKILL');
  }

  /** Resolves once the process is gone. */
  stop(): Promise<void> {
    if (this.exited) return Promise.resolve();
    return new Promise((resolve) => {
      this.child.once('exit', () => resolve());
      this.kill();
    });
  }

  private settle(result: InvocationResult): void {
    const pending = this.pending;
    this.pending = undefined;
    pending?.settle(result);
  }

  private pipeLogs(stream: NodeJS.ReadableStream): void {
    readline.createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => {
      const isMetrics = line.startsWith('{') && line.includes('"CloudWatchMetrics"');
      if (isMetrics) this.options.onMetrics?.(line);
      if (this.options.hideMetrics && isMetrics) return;
      const isSpan = !isMetrics && SpanStore.isSpanLine(line);
      if (isSpan) this.options.onSpan?.(line);
      if (this.options.hideSpans && isSpan) return;
      this.options.log(this.options.name, line);
    });
  }
}
