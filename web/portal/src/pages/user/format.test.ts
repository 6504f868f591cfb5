import { applyAlert, countByPhase, formatCountdown, gpusBySlice, gpusHeld, mergeEvents, secondsUntil, windowProgress } from './format';

describe('formatCountdown', () => {
  it('ticks in seconds and shows days past a day', () => {
    expect(formatCountdown(0)).toBe('0:00:00');
    expect(formatCountdown(-5)).toBe('0:00:00');
    expect(formatCountdown(3_600 * 2 + 5 * 60 + 9.8)).toBe('2:05:09');
    expect(formatCountdown(86_400 + 3 * 3_600)).toBe('1 d 03:00:00');
  });
});

describe('times', () => {
  const now = new Date('2030-01-01T10:00:00Z');
  it('measures seconds until a time', () => {
    expect(secondsUntil('2030-01-01T10:01:00Z', now)).toBe(60);
    expect(secondsUntil(null, now)).toBeNull();
  });
  it('measures window progress, clamped', () => {
    expect(windowProgress('2030-01-01T09:00:00Z', '2030-01-01T11:00:00Z', now)).toBe(0.5);
    expect(windowProgress('2030-01-01T11:00:00Z', '2030-01-01T12:00:00Z', now)).toBe(0);
    expect(windowProgress(null, '2030-01-01T12:00:00Z', now)).toBeNull();
  });
});

describe('countByPhase', () => {
  it('counts in lifecycle order', () => {
    const gprs = ['COMPLETED', 'QUEUED', 'PROVISIONED', 'QUEUED'].map((phase) => ({ phase }));
    expect(countByPhase(gprs)).toEqual([
      ['QUEUED', 2],
      ['PROVISIONED', 1],
      ['COMPLETED', 1],
    ]);
  });
});

describe('GPUs held', () => {
  it('counts GPUs of the nodes held now, per slice', () => {
    const a = { phase: 'PROVISIONED', gpusPerNode: null, slice: { id: 's1' }, nodes: [{ gpusPerNode: 8 }, { gpusPerNode: 8 }] };
    const b = { phase: 'PROVISIONED', gpusPerNode: 2, slice: { id: 's1' }, nodes: [{ gpusPerNode: 8 }] };
    const c = { phase: 'QUEUED', gpusPerNode: null, slice: { id: 's2' }, nodes: [] };
    expect(gpusHeld(a)).toBe(16);
    expect(gpusHeld(b)).toBe(2);
    expect(gpusBySlice([a, b, c])).toEqual(new Map([['s1', 18], ['s2', 0]]));
  });
});

describe('mergeEvents', () => {
  it('appends new events once, in sequence order', () => {
    const e = (id: string, sequence: number) => ({ id, sequence });
    const start = [e('a', 1), e('b', 2)];
    const merged = mergeEvents(start, [e('b', 2), e('d', 4), e('c', 3)]);
    expect(merged.map((x) => x.id)).toEqual(['a', 'b', 'c', 'd']);
    expect(mergeEvents(merged, [e('a', 1)])).toBe(merged);
  });
});

describe('applyAlert', () => {
  it('adds open alerts newest first and drops cleared ones', () => {
    const a = { id: 'a', open: true, raisedAt: '2030-01-01T10:00:00Z' };
    const b = { id: 'b', open: true, raisedAt: '2030-01-01T11:00:00Z' };
    let list = applyAlert([a], b);
    expect(list.map((x) => x.id)).toEqual(['b', 'a']);
    list = applyAlert(list, { ...a, open: false });
    expect(list.map((x) => x.id)).toEqual(['b']);
  });
});
