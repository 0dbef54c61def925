/** What a refusal needs to know: the minimum (`>=22.22.2`) and the baseline (`24`). */
export interface NodeRequirement {
  engines: string;
  baseline: string;
}
export declare const UNSUPPORTED_NODE_EXIT: number;
export declare function projectNodeRequirement(root?: string): NodeRequirement;
export declare function nodeVersionProblem(found: string, requirement: NodeRequirement): string | undefined;
export declare function requireSupportedNode(
  found?: string,
  io?: { err: (line: string) => void; exit: (code: number) => void },
): void;
