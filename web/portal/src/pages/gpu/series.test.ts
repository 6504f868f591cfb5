import { columns, mergePoints, rangeByKey, stats, toPoint, type Point } from './series';

const p = (t: number, util = t): Point => ({ t, util, memUtil: 0, memUsedMib: 0, temperature: 0, power: 0 });

describe('mergePoints', () => {
  it('appends a live point after the last one', () => {
    const out = mergePoints([p(10), p(11)], [p(12)], 60, 12);
    expect(out.map((x) => x.t)).toEqual([10, 11, 12]);
  });
  it('never duplicates a timestamp; the newer copy wins', () => {
    const out = mergePoints([p(10), p(11)], [p(11, 99), p(11, 100)], 60, 12);
    expect(out.map((x) => x.t)).toEqual([10, 11]);
    expect(out[1].util).toBe(100);
  });
  it('sorts out-of-order arrivals (history after live)', () => {
    const out = mergePoints([p(20)], [p(5), p(15), p(10)], 60, 20);
    expect(out.map((x) => x.t)).toEqual([5, 10, 15, 20]);
  });
  it('drops points older than the range', () => {
    const out = mergePoints([p(0), p(50), p(100)], [p(101)], 60, 101);
    expect(out.map((x) => x.t)).toEqual([50, 100, 101]);
    expect(mergePoints([p(1)], [p(2)], 10, 100)).toEqual([]);
  });
  it('returns the same array when nothing changed', () => {
    const pts = [p(10), p(11)];
    expect(mergePoints(pts, [], 60, 20)).toBe(pts);
    const empty: Point[] = [];
    expect(mergePoints(empty, [], 60, 20)).toBe(empty);
  });
});

describe('helpers', () => {
  it('converts samples to whole seconds', () => {
    expect(toPoint({ time: '2025-01-01T00:00:05.700Z', util: 1, memUtil: 2, memUsedMib: 3, temperature: 4, power: 5 }).t).toBe(1735689605);
  });
  it('builds uPlot columns', () => {
    expect(columns([p(1, 5), p(2, 6)], (x) => x.util)).toEqual([[1, 2], [5, 6]]);
  });
  it('summarises values', () => {
    expect(stats([1, 2, 3])).toEqual({ min: 1, max: 3, avg: 2 });
    expect(stats([])).toBeNull();
  });
  it('picks ranges by key with a default', () => {
    expect(rangeByKey('1h').seconds).toBe(3600);
    expect(rangeByKey('nope').key).toBe('5m');
    expect(rangeByKey('1h').step).toBe('PT1M');
  });
});
