import { retryDelayMs } from './backoff';

it('doubles from half a second up to ten, with jitter', () => {
  const mid = () => 0.5;
  expect([0, 1, 2, 3, 4, 5, 9].map((a) => retryDelayMs(a, mid))).toEqual([500, 1000, 2000, 4000, 8000, 10000, 10000]);
  expect(retryDelayMs(0, () => 0)).toBe(400);
  expect(retryDelayMs(0, () => 1)).toBe(600);
});
