import type { Emulator } from '@exactly-once/tools/local-runtime/emulators';

export default async function teardown(): Promise<void> {
  const emulators = ((globalThis as Record<string, unknown>).__EMULATORS__ ?? []) as Emulator[];
  await Promise.all(emulators.map((e) => e.stop()));
}
