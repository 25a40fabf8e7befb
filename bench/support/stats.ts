/** Small statistics and formatting helpers for the benchmark (no dependencies). */

/** Nearest-rank percentile of already sorted values; NaN for none. */
export function percentileOfSorted(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

export const sortedCopy = (values: readonly number[]): number[] => [...values].sort((a, b) => a - b);

export const percentile = (values: readonly number[], p: number): number => percentileOfSorted(sortedCopy(values), p);

export const median = (values: readonly number[]): number => percentile(values, 50);

export type Distribution = { n: number; p50: number; p90: number; p99: number; max: number; mean: number };

export function distribution(values: readonly number[]): Distribution {
  const sorted = sortedCopy(values);
  const mean = sorted.reduce((sum, v) => sum + v, 0) / (sorted.length || 1);
  return {
    n: sorted.length,
    p50: round(percentileOfSorted(sorted, 50)),
    p90: round(percentileOfSorted(sorted, 90)),
    p99: round(percentileOfSorted(sorted, 99)),
    max: round(sorted[sorted.length - 1] ?? Number.NaN),
    mean: round(mean),
  };
}

/** Rounds to `digits` decimals, keeping the JSON readable. */
export const round = (value: number, digits = 2): number => {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
};

export const ratio = (value: number, reference: number): number => round(value / reference, 2);

/** Fisher-Yates on a copy. */
export function shuffled<T>(items: readonly T[]): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i -= 1) {
    const j = Math.floor(Math.random() * (i + 1));
    [copy[i], copy[j]] = [copy[j], copy[i]];
  }
  return copy;
}

/** A plain-text table: the first row is the header; numbers are right-aligned. */
export function table(rows: (string | number)[][]): string {
  const cells = rows.map((row) => row.map((cell) => (typeof cell === 'number' ? formatNumber(cell) : cell)));
  const widths = cells[0].map((_, column) => Math.max(...cells.map((row) => (row[column] ?? '').length)));
  const line = (row: string[], raw: (string | number)[]) =>
    row
      .map((cell, column) =>
        typeof raw[column] === 'number' ? cell.padStart(widths[column]) : cell.padEnd(widths[column]),
      )
      .join('  ');
  const [header, ...body] = cells;
  return [
    line(header, rows[0]),
    widths.map((w) => '-'.repeat(w)).join('  '),
    ...body.map((row, i) => line(row, rows[i + 1])),
  ].join('\n');
}

function formatNumber(value: number): string {
  if (Number.isNaN(value)) return '-';
  if (Number.isInteger(value)) return String(value);
  return value.toFixed(Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 2);
}

export const kib = (bytes: number): number => round(bytes / 1024, 1);
export const mib = (bytes: number): number => round(bytes / (1024 * 1024), 1);
