/** Delay before retry `attempt` (0-based): 0.5 s doubling to 10 s, with ±20% jitter so a
 * restarted gateway is not hit by every browser at once. */
export function retryDelayMs(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(10_000, 500 * 2 ** Math.max(0, attempt));
  return Math.round(base * (0.8 + 0.4 * random()));
}
