import { durationInput, formatDuration, formatRelative, parseIsoDuration } from './time';

describe('parseIsoDuration', () => {
  it('reads the gateway durations', () => {
    expect(parseIsoDuration('PT2H30M')).toBe(9_000);
    expect(parseIsoDuration('P1DT4H')).toBe(100_800);
    expect(parseIsoDuration('PT0.5S')).toBe(0.5);
    expect(parseIsoDuration('PT0S')).toBe(0);
  });
  it('refuses what is not a duration', () => {
    expect(parseIsoDuration('2h')).toBeNull();
    expect(parseIsoDuration('P')).toBeNull();
    expect(parseIsoDuration('PT')).toBeNull();
    expect(parseIsoDuration(null)).toBeNull();
  });
});

describe('formatDuration', () => {
  it('shows the two largest adjacent units', () => {
    expect(formatDuration(7_800)).toBe('2 h 10 m');
    expect(formatDuration(45)).toBe('45 s');
    expect(formatDuration(3 * 86_400 + 4 * 3_600 + 59)).toBe('3 d 4 h');
    expect(formatDuration(3_605)).toBe('1 h');
    expect(formatDuration(0)).toBe('0 s');
    expect(formatDuration(-5)).toBe('0 s');
  });
});

describe('formatRelative', () => {
  const now = new Date('2026-11-22T12:00:00Z');
  it('says how far ahead, rounded to minutes past an hour', () => {
    expect(formatRelative(new Date('2026-11-22T14:10:20Z'), now)).toBe('in ~2 h 10 m');
    expect(formatRelative('2026-11-22T12:05:00Z', now)).toBe('in ~5 m');
  });
  it('says how long ago, and "now" when close', () => {
    expect(formatRelative('2026-11-22T11:55:00Z', now)).toBe('~5 m ago');
    expect(formatRelative('2026-11-22T12:00:10Z', now)).toBe('now');
  });
});

describe('durationInput', () => {
  it('builds the gateway syntax', () => {
    expect(durationInput(2, 30)).toBe('2h30m');
    expect(durationInput(1.5)).toBe('1h30m');
    expect(durationInput(0, 45)).toBe('45m');
    expect(durationInput(4)).toBe('4h');
  });
  it('refuses empty and negative durations', () => {
    expect(durationInput(0)).toBeNull();
    expect(durationInput(-1)).toBeNull();
    expect(durationInput(Number.NaN)).toBeNull();
  });
});
