// Time series for the GPU dashboard: history points and live samples merged by timestamp
// (seconds), sorted, without duplicates, trimmed to the selected range.

export interface MetricValues {
  util: number;
  memUtil: number;
  memUsedMib: number;
  temperature: number;
  power: number;
}

export interface Point extends MetricValues {
  /** Unix seconds. */
  t: number;
}

export interface Range {
  key: string;
  label: string;
  seconds: number;
  /** ISO 8601 step for `Gpu.metrics`: 1 s inside the last 10 minutes, whole minutes beyond. */
  step: string;
}

export const RANGES: Range[] = [
  { key: '5m', label: '5 min', seconds: 300, step: 'PT1S' },
  { key: '10m', label: '10 min', seconds: 600, step: 'PT1S' },
  { key: '1h', label: '1 h', seconds: 3600, step: 'PT1M' },
  { key: '6h', label: '6 h', seconds: 6 * 3600, step: 'PT1M' },
  { key: '24h', label: '24 h', seconds: 24 * 3600, step: 'PT5M' },
];

export function rangeByKey(key: string | null | undefined): Range {
  return RANGES.find((r) => r.key === key) ?? RANGES[0];
}

export function toSeconds(iso: string): number {
  return Math.floor(new Date(iso).getTime() / 1000);
}

export function toPoint(s: MetricValues & { time: string }): Point {
  return { t: toSeconds(s.time), util: s.util, memUtil: s.memUtil, memUsedMib: s.memUsedMib, temperature: s.temperature, power: s.power };
}

/**
 * `existing` (sorted) plus `incoming`, sorted by time, one point per second (a newer copy of a
 * timestamp replaces the older), with points older than `nowSec - rangeSec` dropped.
 * Returns `existing` itself when nothing changed (cheap re-render checks).
 */
export function mergePoints(existing: readonly Point[], incoming: readonly Point[], rangeSec: number, nowSec: number): Point[] {
  const cutoff = nowSec - rangeSec;
  const fresh = incoming.filter((p) => Number.isFinite(p.t) && p.t >= cutoff);
  const firstKept = existing.findIndex((p) => p.t >= cutoff);
  const base = firstKept === -1 ? (existing.length === 0 ? (existing as Point[]) : []) : firstKept === 0 ? (existing as Point[]) : existing.slice(firstKept);
  if (fresh.length === 0) return base;
  // Common case: one live point after the last one.
  if (fresh.length === 1 && (base.length === 0 || fresh[0].t > base[base.length - 1].t)) return [...base, fresh[0]];
  const byTime = new Map<number, Point>();
  for (const p of base) byTime.set(p.t, p);
  for (const p of fresh) byTime.set(p.t, p);
  return [...byTime.values()].sort((a, b) => a.t - b.t);
}

export type MetricKey = 'util' | 'memory' | 'temperature' | 'power';

/** uPlot's columnar data for one metric: [times, values]. */
export function columns(points: readonly Point[], pick: (p: Point) => number): [number[], number[]] {
  const xs = new Array<number>(points.length);
  const ys = new Array<number>(points.length);
  for (let i = 0; i < points.length; i++) {
    xs[i] = points[i].t;
    ys[i] = pick(points[i]);
  }
  return [xs, ys];
}

export function stats(values: readonly number[]): { min: number; max: number; avg: number } | null {
  if (values.length === 0) return null;
  let min = Infinity;
  let max = -Infinity;
  let sum = 0;
  for (const v of values) {
    if (v < min) min = v;
    if (v > max) max = v;
    sum += v;
  }
  return { min, max, avg: sum / values.length };
}
