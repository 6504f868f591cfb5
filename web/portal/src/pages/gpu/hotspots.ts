// Hot-spot classification of GPUs: how close each one runs to its temperature threshold and
// power limit, so tables can sort, highlight and explain them (with words, not colour only).

export type Level = 'hot' | 'warm' | 'ok' | 'unknown';

/** EGS's built-in temperature threshold, °C (`ThresholdSource.BUILT_IN`). */
export const DEFAULT_TEMPERATURE_C = 87;
/** Warm this close below the temperature threshold, °C (the gateway's hysteresis). */
export const TEMPERATURE_WARM_MARGIN_C = 5;
/** Warm at this share of the power limit. */
export const POWER_WARM_RATIO = 0.9;

// Board power limits of common models, W: used when the node reports no power threshold.
const MODEL_POWER_LIMITS: [RegExp, number][] = [
  [/B200/i, 1000],
  [/H200/i, 700],
  [/H100.*PCIE/i, 350],
  [/H100/i, 700],
  [/A100.*PCIE/i, 300],
  [/A100/i, 400],
  [/L40S/i, 350],
  [/L40/i, 300],
  [/A10G/i, 300],
  [/A10\b|A10-/i, 150],
  [/L4\b|L4-/i, 72],
  [/T4\b|T4-/i, 70],
  [/V100/i, 300],
];

export function modelPowerLimit(model: string | null | undefined): number | null {
  if (!model) return null;
  for (const [re, watts] of MODEL_POWER_LIMITS) if (re.test(model)) return watts;
  return null;
}

export interface Thresholds {
  temperatureC: number;
  /** null: no known power limit. */
  powerW: number | null;
  /** Whether they came from the node (configured) or from defaults. */
  source: 'node' | 'default';
}

export function thresholdsFor(
  node: { temperatureThresholdCelsius?: number | null; powerThresholdWatts?: number | null; gpuShape?: string | null } | null | undefined,
  model?: string | null,
): Thresholds {
  const t = node?.temperatureThresholdCelsius ?? null;
  const p = node?.powerThresholdWatts ?? null;
  return {
    temperatureC: t ?? DEFAULT_TEMPERATURE_C,
    powerW: p ?? modelPowerLimit(model ?? node?.gpuShape),
    source: t !== null || p !== null ? 'node' : 'default',
  };
}

export interface SampleLike {
  temperature: number;
  power: number;
  util?: number;
}

export interface Classification {
  level: Level;
  temperature: Level;
  power: Level;
  /** Short words for screen readers and colour-blind eyes, e.g. "over temperature". */
  reasons: string[];
  /** For ordering: the larger of temperature/threshold and power/limit (0 without a sample). */
  score: number;
}

const RANK: Record<Level, number> = { unknown: 0, ok: 1, warm: 2, hot: 3 };

export function worst(a: Level, b: Level): Level {
  return RANK[a] >= RANK[b] ? a : b;
}

export function classifyTemperature(celsius: number | null | undefined, threshold: number): Level {
  if (celsius === null || celsius === undefined || !Number.isFinite(celsius)) return 'unknown';
  if (celsius > threshold) return 'hot';
  if (celsius >= threshold - TEMPERATURE_WARM_MARGIN_C) return 'warm';
  return 'ok';
}

export function classifyPower(watts: number | null | undefined, limit: number | null): Level {
  if (watts === null || watts === undefined || !Number.isFinite(watts)) return 'unknown';
  if (limit === null || limit <= 0) return 'ok';
  if (watts > limit) return 'hot';
  if (watts >= limit * POWER_WARM_RATIO) return 'warm';
  return 'ok';
}

export function classify(sample: SampleLike | null | undefined, th: Thresholds): Classification {
  if (!sample) return { level: 'unknown', temperature: 'unknown', power: 'unknown', reasons: [], score: 0 };
  const temperature = classifyTemperature(sample.temperature, th.temperatureC);
  const power = classifyPower(sample.power, th.powerW);
  const reasons: string[] = [];
  if (temperature === 'hot') reasons.push('over temperature');
  else if (temperature === 'warm') reasons.push('near temperature limit');
  if (power === 'hot') reasons.push('over power');
  else if (power === 'warm') reasons.push('near power limit');
  const score = Math.max(sample.temperature / th.temperatureC, th.powerW ? sample.power / th.powerW : 0);
  return { level: worst(temperature, power), temperature, power, reasons, score };
}

/** CSS class for a level: `hot`, `warm` or none. */
export function levelClass(level: Level): string | undefined {
  return level === 'hot' || level === 'warm' ? level : undefined;
}

/** Text that goes with a highlighted value, so meaning never rests on colour. */
export function levelWord(level: Level): string {
  return level === 'hot' ? 'over' : level === 'warm' ? 'near' : '';
}

// ---- Table filters, kept in the URL ----

export interface GpuFilters {
  cluster: string;
  shape: string;
  health: string;
  hot: boolean;
  q: string;
}

export const EMPTY_FILTERS: GpuFilters = { cluster: '', shape: '', health: '', hot: false, q: '' };

export function filtersFromParams(params: URLSearchParams): GpuFilters {
  return {
    cluster: params.get('cluster') ?? '',
    shape: params.get('shape') ?? '',
    health: params.get('health') ?? '',
    hot: params.get('hot') === '1',
    q: params.get('q') ?? '',
  };
}

export function filtersToParams(f: GpuFilters): URLSearchParams {
  const p = new URLSearchParams();
  if (f.cluster) p.set('cluster', f.cluster);
  if (f.shape) p.set('shape', f.shape);
  if (f.health) p.set('health', f.health);
  if (f.hot) p.set('hot', '1');
  if (f.q.trim()) p.set('q', f.q);
  return p;
}

export interface GpuRowLike {
  uuid: string;
  model: string;
  latestSample?: SampleLike | null;
  node?: {
    name: string;
    gpuShape: string;
    health: string;
    temperatureThresholdCelsius?: number | null;
    powerThresholdWatts?: number | null;
    cluster?: { id: string; name: string } | null;
  } | null;
}

export function matchesFilters(row: GpuRowLike, f: GpuFilters, cls?: Classification): boolean {
  if (f.cluster && row.node?.cluster?.id !== f.cluster) return false;
  if (f.shape && row.node?.gpuShape !== f.shape && row.model !== f.shape) return false;
  if (f.health && row.node?.health !== f.health) return false;
  if (f.hot) {
    const c = cls ?? classify(row.latestSample, thresholdsFor(row.node, row.model));
    if (c.level !== 'hot' && c.level !== 'warm') return false;
  }
  const q = f.q.trim().toLowerCase();
  if (q) {
    const hay = [row.uuid, row.model, row.node?.name ?? '', row.node?.gpuShape ?? ''].join(' ').toLowerCase();
    if (!q.split(/\s+/).every((word) => hay.includes(word))) return false;
  }
  return true;
}

/** Stable hot-spots-first order: hot, then warm, then by score; GPUs without a sample last. */
export function hotSpotsFirst<T extends GpuRowLike>(rows: readonly T[]): T[] {
  const scored = rows.map((row, i) => ({ row, i, c: classify(row.latestSample, thresholdsFor(row.node, row.model)) }));
  scored.sort((a, b) => RANK[b.c.level] - RANK[a.c.level] || b.c.score - a.c.score || a.i - b.i);
  return scored.map((s) => s.row);
}

/** "GPU-3f2a…c91d" style short uuid. */
export function shortUuid(uuid: string): string {
  const body = uuid.replace(/^GPU-/i, '');
  return body.length <= 12 ? uuid : `${body.slice(0, 8)}…${body.slice(-4)}`;
}
