import type { FaultPlan } from '../domain/faults';

/** Where the current run's fault plan comes from (an SSM parameter on AWS, a file locally). */
export interface FaultSource {
  current(): Promise<FaultPlan>;
}
