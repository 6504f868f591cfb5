// Pure helpers of the Usage page: the default range, a day per bar (missing days read 0), and
// the file a CSV export is saved as.

export interface DayFigures {
  day: string;
  reserved: number;
  used: number;
  waiting: number;
}

/** YYYY-MM-DD of a date, in UTC (the rollups' days are UTC days). */
export const utcDay = (d: Date) => d.toISOString().slice(0, 10);

/** The last `days` UTC days up to `now`'s, both ends included. */
export function lastDays(now: Date, days: number): { from: string; to: string } {
  const from = new Date(now.getTime() - (days - 1) * 86_400_000);
  return { from: utcDay(from), to: utcDay(now) };
}

/** A usage row grouped by day, as both the Usage page and the dashboard ask for it. */
export interface DayRow {
  group: { day?: string | null };
  reservedGpuHours: number;
  usedGpuHours: number;
  waitingGpuHours: number;
}

/** One entry per day of the range, in order; days without rows read 0 (capped at 366 days). */
export function everyDay(from: string, to: string, rows: readonly DayRow[]): DayFigures[] {
  const byDay = new Map(
    rows.map((r) => [r.group.day ?? '', { day: r.group.day ?? '', reserved: r.reservedGpuHours, used: r.usedGpuHours, waiting: r.waitingGpuHours }]),
  );
  const out: DayFigures[] = [];
  const end = Date.parse(`${to}T00:00:00Z`);
  for (let at = Date.parse(`${from}T00:00:00Z`); at <= end && out.length < 366; at += 86_400_000) {
    const day = utcDay(new Date(at));
    out.push(byDay.get(day) ?? { day, reserved: 0, used: 0, waiting: 0 });
  }
  return out;
}

/** e.g. `egs-usage-team-a-by-user-2026-11-01-to-2026-11-30.csv`. */
export function csvFileName(scope: string, by: readonly string[], from: string, to: string): string {
  const what = by.length ? `by-${by.map((b) => b.toLowerCase().replace(/_/g, '-')).join('-')}` : 'totals';
  const safe = scope.replace(/[^a-z0-9-]+/gi, '-').toLowerCase();
  return `egs-usage-${safe}-${what}-${from}-to-${to}.csv`;
}

/** A number of hours as the tables show it. */
export const gpuHours = (h: number) => (h >= 100 ? Math.round(h).toLocaleString() : h.toFixed(1));
