/** Latency summaries and number formatting for the result tables. */

export interface LatencySummary {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: readonly number[], fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil(fraction * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))] ?? Number.NaN;
}

export function summarize(values: readonly number[]): LatencySummary {
  const sorted = [...values].sort((left, right) => left - right);
  const total = sorted.reduce((sum, value) => sum + value, 0);
  return {
    count: sorted.length,
    p50: percentile(sorted, 0.5),
    p90: percentile(sorted, 0.9),
    p99: percentile(sorted, 0.99),
    max: sorted.at(-1) ?? Number.NaN,
    mean: sorted.length > 0 ? total / sorted.length : Number.NaN,
  };
}

export function median(values: readonly number[]): number {
  return percentile(
    [...values].sort((left, right) => left - right),
    0.5,
  );
}

/** Milliseconds with a precision that suits the size. */
export function milliseconds(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  if (value < 10) return value.toFixed(2);
  if (value < 100) return value.toFixed(1);
  return Math.round(value).toString();
}

export function rate(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  return value < 100 ? value.toFixed(1) : Math.round(value).toString();
}

export function ratio(value: number): string {
  return Number.isFinite(value) ? `${value.toFixed(2)}×` : 'n/a';
}

export function megabytes(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

export function thousands(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

export function percent(fraction: number): string {
  return Number.isFinite(fraction) ? `${(fraction * 100).toFixed(1)}%` : 'n/a';
}
