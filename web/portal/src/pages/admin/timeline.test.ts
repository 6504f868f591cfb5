import { fraction, hourTicks, layoutTimeline, tickStepHours, type TimelineItem } from './timeline';

const H = 3_600_000;
const from = Date.UTC(2025, 0, 10, 12, 0, 0);
const to = from + 48 * H;
const item = (id: string, startH: number, endH: number, nodes = 1, kind: TimelineItem['kind'] = 'running'): TimelineItem => ({
  id,
  label: id,
  kind,
  start: from + startH * H,
  end: from + endH * H,
  nodes,
});

describe('fraction', () => {
  it('maps the window to 0–1 and clamps outside it', () => {
    expect(fraction(from, from, to)).toBe(0);
    expect(fraction(from + 24 * H, from, to)).toBe(0.5);
    expect(fraction(from - H, from, to)).toBe(0);
    expect(fraction(to + H, from, to)).toBe(1);
    expect(fraction(from, from, from)).toBe(0);
  });
});

describe('layoutTimeline', () => {
  it('places bars by time and clips those running since before the window', () => {
    const { bars, rows } = layoutTimeline([item('a', -5, 12, 2), item('b', 24, 36, 1, 'planned')], from, to, 4);
    const a = bars.find((b) => b.id === 'a')!;
    const b = bars.find((b) => b.id === 'b')!;
    expect(a.x).toBe(0);
    expect(a.width).toBeCloseTo(12 / 48);
    expect(a.clippedStart).toBe(true);
    expect(a.clippedEnd).toBe(false);
    expect(b.x).toBe(0.5);
    expect(b.width).toBe(0.25);
    expect(rows).toBe(4);
  });

  it('stacks overlapping reservations on separate node rows and reuses freed rows', () => {
    const { bars, rows } = layoutTimeline(
      [item('a', 0, 10, 2), item('b', 2, 8, 1), item('c', 10, 20, 3, 'planned'), item('d', 9, 12, 1, 'planned')],
      from,
      to,
      0,
    );
    const at = Object.fromEntries(bars.map((b) => [b.id, b]));
    expect(at.a.row).toBe(0);
    expect(at.a.rows).toBe(2);
    expect(at.b.row).toBe(2); // a holds rows 0–1
    expect(at.d.row).toBe(2); // b ended at 8 h
    // c needs 3 adjacent rows at 10 h: 0–1 are free again but 2 is d's until 12 h.
    expect(at.c.row).toBe(3);
    expect(rows).toBe(6);
  });

  it('never gives two concurrent bars the same row', () => {
    const items = [item('a', 0, 30, 2), item('b', 1, 5, 3), item('c', 4, 40, 1), item('d', 6, 7, 4, 'planned'), item('e', 0, 30, 1)];
    const { bars } = layoutTimeline(items, from, to, 8);
    for (const x of bars) {
      for (const y of bars) {
        if (x === y) continue;
        const overlapTime = x.start < y.end && y.start < x.end;
        const overlapRows = x.row < y.row + y.rows && y.row < x.row + x.rows;
        expect(overlapTime && overlapRows).toBe(false);
      }
    }
  });

  it('drops what ended before the window and counts what starts after it', () => {
    const { bars, hidden } = layoutTimeline([item('old', -10, -1), item('later', 50, 60, 1, 'planned'), item('now', 1, 2)], from, to);
    expect(bars.map((b) => b.id)).toEqual(['now']);
    expect(hidden).toBe(1);
  });

  it('marks bars that run past the end and places the promise marker', () => {
    const planned = { ...item('p', 40, 60, 2, 'planned'), promise: from + 44 * H };
    const { bars } = layoutTimeline([planned], from, to);
    expect(bars[0].clippedEnd).toBe(true);
    expect(bars[0].x + bars[0].width).toBeCloseTo(1);
    expect(bars[0].promiseX).toBeCloseTo(44 / 48);
  });

  it('puts running bars before planned ones that start at the same time', () => {
    const { bars } = layoutTimeline([item('q', 0, 5, 1, 'planned'), item('r', 0, 5, 1, 'running')], from, to);
    expect(bars.find((b) => b.id === 'r')!.row).toBe(0);
    expect(bars.find((b) => b.id === 'q')!.row).toBe(1);
  });
});

describe('hour ticks', () => {
  it('chooses a step so labels stay readable', () => {
    expect(tickStepHours(from, from + 12 * H)).toBe(1);
    expect(tickStepHours(from, from + 48 * H)).toBe(3);
    expect(tickStepHours(from, from + 7 * 24 * H)).toBe(12);
  });

  it('sits on whole local hours, in order, inside the window, with midnights marked', () => {
    const start = from + 17 * 60_000; // not on the hour
    const ticks = hourTicks(start, start + 48 * H, 3);
    expect(ticks.length).toBeGreaterThan(10);
    for (const t of ticks) {
      const d = new Date(t.at);
      expect(d.getMinutes()).toBe(0);
      expect(t.at).toBeGreaterThanOrEqual(start);
      expect(t.x).toBeGreaterThanOrEqual(0);
      expect(t.x).toBeLessThanOrEqual(1);
      expect(t.midnight).toBe(d.getHours() === 0);
      if (!t.midnight) expect(d.getHours() % 3).toBe(0);
    }
    for (let i = 1; i < ticks.length; i++) expect(ticks[i].at).toBeGreaterThan(ticks[i - 1].at);
    expect(ticks.filter((t) => t.midnight).length).toBe(2);
  });
});
