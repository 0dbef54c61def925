/**
 * AWS's refusal of a call, in the SDK's words, does not say what to do. A redrive (the DLQ tool) and the
 * proof kit's faults on a deployed stack send to the consumers' queues, which only the stack's producers and
 * the operator roles named at deploy time may do (the queue policies); anything else they call needs the
 * caller's own IAM permissions. This turns the refusal into the one line that says so.
 */
const DENIED = new Set(['AccessDenied', 'AccessDeniedException', 'AuthorizationError', 'UnauthorizedOperation']);

/**
 * Whether an error is AWS refusing the caller (by its SDK error name or code).
 *
 * @example
 *   if (isAccessDenied(error)) throw error; // every further call would be refused alike
 */
export function isAccessDenied(error: unknown): error is Error {
  const e = error as { name?: unknown; Code?: unknown; code?: unknown } | null;
  return e !== null && typeof e === 'object' && [e.name, e.Code, e.code].some((n) => DENIED.has(String(n)));
}

/**
 * The one line for an AccessDenied, or undefined for any other error.
 *
 * @example
 *   accessDeniedLine(error, 'dlq') ?? `dlq: ${error.message}`;
 */
export function accessDeniedLine(error: unknown, tool: string): string | undefined {
  if (!isAccessDenied(error)) return undefined;
  return (
    `${tool}: AWS refused the call (${error.name}). Only the stack's producers and the roles named at deploy time ` +
    `may send to a consumer's queue: deploy with -c operatorRoleArns=arn:aws:iam::<account>:role/<your role> ` +
    `and run as that role (docs/deploying.md); other calls need that role's own permissions`
  );
}
