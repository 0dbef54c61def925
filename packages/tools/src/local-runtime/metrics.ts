/**
 * Collects the Powertools metrics the functions emit as CloudWatch embedded
 * metric format (EMF) lines on stdout, where CloudWatch would extract them on
 * AWS. Sums per metric name and dimension set, e.g.
 * `DuplicateSuppressed{consumer=loyalty}`, for the proof kit and tests.
 */
export class MetricStore {
  private readonly sums = new Map<string, number>();

  record(line: string): void {
    let emf: Record<string, unknown>;
    try {
      emf = JSON.parse(line);
    } catch {
      return;
    }
    const directives = (
      emf._aws as { CloudWatchMetrics?: { Dimensions?: string[][]; Metrics?: { Name: string }[] }[] } | undefined
    )?.CloudWatchMetrics;
    for (const directive of directives ?? []) {
      const dimensionNames = (directive.Dimensions ?? [[]])[0] ?? [];
      const labels = dimensionNames.filter((d) => d !== 'service').map((d) => `${d}=${String(emf[d])}`);
      for (const metric of directive.Metrics ?? []) {
        const raw = emf[metric.Name];
        const value = Array.isArray(raw) ? raw.reduce((a: number, b) => a + Number(b), 0) : Number(raw ?? 0);
        const key = labels.length > 0 ? `${metric.Name}{${labels.join(',')}}` : metric.Name;
        this.sums.set(key, (this.sums.get(key) ?? 0) + value);
      }
    }
  }

  snapshot(): Record<string, number> {
    return Object.fromEntries(this.sums);
  }
}
