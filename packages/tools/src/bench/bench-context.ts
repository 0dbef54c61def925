import * as os from 'node:os';
import type { ConsumerSpec } from '@exactly-once/runtime/consumer-spec';
import type { ProofDomain } from '../proof-kit/domain';
import type { CpuMeter } from './cpu';
import type { EmulatorLimit } from './emulator-limit';
import type { BenchRuntime } from './runtime';
import type { BenchTables, PrivateTables } from './tables';
import type { BenchProfile } from './profiles';

/**
 * What every phase of a bench run shares: the runtime, the domain and profile, where lines go, the
 * tables (the stack's by role and their private copies), the CPU meter and the tables' labels.
 */
export interface BenchContext {
  runtime: BenchRuntime;
  domain: ProofDomain;
  profile: BenchProfile;
  print: (line: string) => void;
  tables: BenchTables;
  direct: PrivateTables;
  consumerSpecs: readonly ConsumerSpec[];
  /** CPU seconds of this process and every runtime process (the JVM, fauxqs, the function environments). */
  cpu: CpuMeter;
  /** Tables by role, the entity table by the domain's noun (`orders`, `effects`, `idempotency`, `providerLog`). */
  label: (name: string) => string;
}

/** The one-minute load average, as the first and last lines give it. */
export const loadAverage = () => os.loadavg()[0].toFixed(1);

/** A piece of work and the CPU seconds it took (this process and the runtime's, as the meter counts). */
export async function cpuSpan<T>(cpu: CpuMeter, work: () => Promise<T>): Promise<{ result: T; cpuSeconds: number }> {
  const before = cpu.read();
  const result = await work();
  return { result, cpuSeconds: cpu.read() - before };
}

/** The emulator limit as the run reports it: the mean of the measurements before and after the pipeline. */
export interface BenchLimit extends EmulatorLimit {
  ordersPerCpuSecond: number;
  beforePipeline: number;
  afterPipeline: number;
}
