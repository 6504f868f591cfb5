// Layout arithmetic of the schedule timeline, kept free of React so it can be tested: where a
// reservation sits on the time axis, which node rows it takes, and where the hour ticks go.

export type BarKind = 'running' | 'planned';

export interface TimelineItem {
  id: string;
  label: string;
  kind: BarKind;
  /** Epoch milliseconds. */
  start: number;
  end: number;
  /** Nodes it holds (or will hold): its height in node rows. */
  nodes: number;
  /** Planned bars: the promised latest start (epoch ms), drawn as a marker. */
  promise?: number | null;
}

export type PlacedBar<T extends TimelineItem = TimelineItem> = T & Placement;

export interface Placement {
  /** Left edge and width as fractions (0–1) of the window. */
  x: number;
  width: number;
  /** First node row it takes (0 at the top) and how many. */
  row: number;
  rows: number;
  /** The bar goes on before / after the window. */
  clippedStart: boolean;
  clippedEnd: boolean;
  /** Promise marker as a fraction of the window, when inside it. */
  promiseX: number | null;
}

export interface Layout<T extends TimelineItem = TimelineItem> {
  bars: PlacedBar<T>[];
  /** Rows needed: at least `capacity`, more when bars overlap beyond it. */
  rows: number;
  /** Bars that start or run after the window's end, left out. */
  hidden: number;
}

const clamp01 = (v: number) => Math.min(1, Math.max(0, v));

/** Position of a time within [from, to] as a fraction, clamped. */
export function fraction(at: number, from: number, to: number): number {
  if (to <= from) return 0;
  return clamp01((at - from) / (to - from));
}

/**
 * Places items in the window [from, to] on node rows. Each item takes `nodes` adjacent rows
 * for its time span; items are packed first-fit, earliest first (running before planned at the
 * same start), so concurrent reservations stack like the pool's nodes do. Items wholly outside
 * the window are dropped (those after it counted in `hidden`).
 */
export function layoutTimeline<T extends TimelineItem>(items: readonly T[], from: number, to: number, capacity = 0): Layout<T> {
  const visible: T[] = [];
  let hidden = 0;
  for (const item of items) {
    const end = Math.max(item.end, item.start);
    if (end <= from && item.start < from) continue; // over before the window
    if (item.start >= to) {
      hidden++;
      continue;
    }
    visible.push({ ...item, end });
  }
  visible.sort((a, b) => a.start - b.start || (a.kind === b.kind ? 0 : a.kind === 'running' ? -1 : 1) || a.id.localeCompare(b.id));

  // For each row, the time until which it is taken.
  const busyUntil: number[] = [];
  const bars: PlacedBar<T>[] = [];
  for (const item of visible) {
    const span = Math.max(1, Math.round(item.nodes));
    const start = Math.max(item.start, from);
    let row = 0;
    for (; ; row++) {
      let fits = true;
      for (let r = row; r < row + span; r++) {
        if ((busyUntil[r] ?? -Infinity) > start) {
          fits = false;
          row = r; // the loop's row++ moves past the blocking row
          break;
        }
      }
      if (fits) break;
    }
    for (let r = row; r < row + span; r++) busyUntil[r] = Math.max(item.end, start + 1);
    const x = fraction(item.start, from, to);
    const promiseX = item.promise != null && item.promise >= from && item.promise <= to ? fraction(item.promise, from, to) : null;
    bars.push({
      ...item,
      x,
      width: Math.max(0, fraction(item.end, from, to) - x),
      row,
      rows: span,
      clippedStart: item.start < from,
      clippedEnd: item.end > to,
      promiseX,
    });
  }
  return { bars, rows: Math.max(capacity, busyUntil.length), hidden };
}

export interface Tick {
  at: number;
  x: number;
  /** "14:00", or the date at local midnight ("Tue 12"). */
  label: string;
  midnight: boolean;
}

const HOUR = 3_600_000;

/** Hours between labelled ticks so that about `maxTicks` fit the window. */
export function tickStepHours(from: number, to: number, maxTicks = 16): number {
  const hours = (to - from) / HOUR;
  for (const step of [1, 2, 3, 6, 12, 24]) if (hours / step <= maxTicks) return step;
  return 24 * Math.ceil(hours / 24 / maxTicks);
}

/** Ticks at whole local hours that are multiples of `step` (local midnight always included). */
export function hourTicks(from: number, to: number, step = tickStepHours(from, to)): Tick[] {
  const ticks: Tick[] = [];
  const d = new Date(from);
  d.setMinutes(0, 0, 0);
  if (d.getTime() < from) d.setHours(d.getHours() + 1);
  const time = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
  const day = new Intl.DateTimeFormat(undefined, { weekday: 'short', day: 'numeric' });
  // Stepping by local hours (not by 3,600,000 ms) keeps ticks on whole hours across DST changes.
  for (let guard = 0; d.getTime() <= to && guard < 10_000; guard++) {
    const hour = d.getHours();
    const midnight = hour === 0;
    if (midnight || hour % step === 0) {
      const at = d.getTime();
      ticks.push({ at, x: fraction(at, from, to), label: midnight ? day.format(d) : time.format(d), midnight });
    }
    d.setHours(hour + 1);
  }
  return ticks;
}

/** Epoch ms of an ISO time, or null. */
export function ms(iso: string | null | undefined): number | null {
  if (!iso) return null;
  const t = Date.parse(iso);
  return Number.isNaN(t) ? null : t;
}
