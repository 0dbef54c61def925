/** Runs `work(i)` for i in [0, count) with at most `concurrency` in flight; returns the elapsed milliseconds. */
export async function runPool(count: number, concurrency: number, work: (i: number) => Promise<void>): Promise<number> {
  const started = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      await work(i);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, count)) }, worker));
  return performance.now() - started;
}
