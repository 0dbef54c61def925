/**
 * `running`'s outcome, or the signal's reason once it aborts, whichever comes
 * first. The work itself is not stopped here (its own calls take the signal);
 * a late outcome of it is observed, never left as an unhandled rejection.
 */
export function beforeAbort<T>(running: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    running.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
