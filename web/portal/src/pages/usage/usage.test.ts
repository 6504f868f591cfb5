import { describe, expect, it } from 'vitest';
import { csvFileName, everyDay, gpuHours, lastDays } from './usage';

describe('usage helpers', () => {
  it('covers the last N UTC days, today included', () => {
    expect(lastDays(new Date('2026-11-27T23:30:00Z'), 30)).toEqual({ from: '2026-10-29', to: '2026-11-27' });
    expect(lastDays(new Date('2026-03-01T00:10:00Z'), 1)).toEqual({ from: '2026-03-01', to: '2026-03-01' });
  });

  it('gives every day of the range a bar, zero where nothing was used', () => {
    const days = everyDay('2026-02-27', '2026-03-02', [{ group: { day: '2026-03-01' }, reservedGpuHours: 4, usedGpuHours: 3, waitingGpuHours: 1 }]);
    expect(days.map((d) => d.day)).toEqual(['2026-02-27', '2026-02-28', '2026-03-01', '2026-03-02']);
    expect(days[2]).toEqual({ day: '2026-03-01', reserved: 4, used: 3, waiting: 1 });
    expect(days[0]).toEqual({ day: '2026-02-27', reserved: 0, used: 0, waiting: 0 });
    expect(everyDay('2026-03-02', '2026-03-01', [])).toEqual([]);
  });

  it('names a CSV after what it holds', () => {
    expect(csvFileName('team a', ['USER', 'GPU_SHAPE'], '2026-11-01', '2026-11-30')).toBe('egs-usage-team-a-by-user-gpu-shape-2026-11-01-to-2026-11-30.csv');
    expect(csvFileName('all', [], '2026-11-01', '2026-11-01')).toBe('egs-usage-all-totals-2026-11-01-to-2026-11-01.csv');
  });

  it('shows small figures with a decimal and large ones whole', () => {
    expect(gpuHours(0.26)).toBe('0.3');
    expect(gpuHours(1234.4)).toBe((1234).toLocaleString());
  });
});
