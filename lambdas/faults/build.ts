/**
 * Which optional code a bundle carries. The bundler replaces each of these
 * `process.env.<name>` reads with a literal (lib/exactly-once/function-defaults.ts,
 * `bundleDefines`), so in a bundle built without it the guarded code is dead
 * and esbuild drops it, modules included: a deployment without fault injection
 * has no fault code to switch on. Write the guard as
 * `process.env.FAULT_INJECTION_BUILD === 'true'` at the place of use: esbuild
 * folds a literal comparison, but not a constant imported from another module.
 * Outside a bundle (unit tests run the source) the guards read the real
 * environment, which leaves them off.
 *
 * - `FAULT_INJECTION_BUILD`: `-c faultInjection=true` (never prod): the plan
 *   source and the fault decorators.
 * - `INBOX_BYPASS_BUILD`: the local runtime's build only (`-c localRuntime=true`):
 *   the switch that turns a consumer's inbox claim off, which proves the proof
 *   kit's verification can fail. No deployable bundle carries it.
 */
export const BUILD_FLAGS = ['FAULT_INJECTION_BUILD', 'INBOX_BYPASS_BUILD'] as const;
export type BuildFlag = (typeof BUILD_FLAGS)[number];
