/** Names the stack and the fault code share (no imports: the CDK app reads this module too). */

/** Set by the stack on the functions that take faults: the SSM parameter holding the plan. */
export const FAULT_PARAMETER_ENV = 'FAULT_PARAMETER_NAME';
/** Set by the local runtime on every function: the file holding the plan. */
export const FAULT_FILE_ENV = 'FAULT_INJECTION_FILE';
/** The metric a function emits on each invocation that runs under a plan; the fault-plan alarm watches it. */
export const FAULT_PLAN_ACTIVE_METRIC = 'FaultPlanActive';
