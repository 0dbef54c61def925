/** Where every line the runtime prints goes: `[source] line`. Tests pass their own sink to capture it. */
export type Logger = (source: string, line: string) => void;

export function consoleLogger(): Logger {
  const useColor = process.stdout.isTTY === true && process.env.NO_COLOR === undefined;
  const palette = [36, 33, 35, 32, 34, 91, 92, 93, 94, 95, 96];
  const colors = new Map<string, number>();
  return (source, line) => {
    if (!useColor) {
      process.stdout.write(`[${source}] ${line}\n`);
      return;
    }
    if (!colors.has(source)) colors.set(source, palette[colors.size % palette.length]);
    process.stdout.write(`\u001b[${colors.get(source)}m[${source}]\u001b[0m ${line}\n`);
  };
}
