// Times and durations as the portal shows them: absolute times in the viewer's zone, relative
// times rounded to what matters ("in ~2 h 10 m"), and the gateway's ISO 8601 durations.

const UNITS: [number, string][] = [
  [86_400, 'd'],
  [3_600, 'h'],
  [60, 'm'],
  [1, 's'],
];

/** `PT2H30M`, `P1DT4H`, `PT0.5S` → seconds; `null` for anything else. */
export function parseIsoDuration(text: string | null | undefined): number | null {
  if (!text) return null;
  const m = /^P(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$/.exec(text);
  if (!m || text === 'P' || text.endsWith('T')) return null;
  const [, d, h, min, s] = m.map((v) => (v === undefined ? 0 : Number(v)));
  return d * 86_400 + h * 3_600 + min * 60 + s;
}

/** Seconds as the two largest units: `2 h 10 m`, `45 s`, `3 d 4 h`. */
export function formatDuration(totalSeconds: number): string {
  let rest = Math.max(0, Math.round(totalSeconds));
  if (rest === 0) return '0 s';
  const parts: string[] = [];
  for (const [size, unit] of UNITS) {
    if (rest >= size && parts.length < 2) {
      parts.push(`${Math.floor(rest / size)} ${unit}`);
      rest %= size;
    } else if (parts.length > 0) {
      break; // keep the units adjacent: "1 h 0 m 5 s" reads as "1 h"
    }
  }
  return parts.join(' ');
}

/** A gap to `target` from `now`: "in ~2 h 10 m", "~5 m ago", "now" (within 30 s). */
export function formatRelative(target: Date | string, now: Date = new Date()): string {
  const at = typeof target === 'string' ? new Date(target) : target;
  const seconds = (at.getTime() - now.getTime()) / 1000;
  if (Math.abs(seconds) < 30) return 'now';
  // Under a minute of precision past an hour is noise: round to minutes there.
  const shown = Math.abs(seconds) >= 3_600 ? Math.round(Math.abs(seconds) / 60) * 60 : Math.abs(seconds);
  const text = formatDuration(shown);
  return seconds > 0 ? `in ~${text}` : `~${text} ago`;
}

const LOCAL = new Intl.DateTimeFormat(undefined, {
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
});

/** An absolute time in the viewer's zone, e.g. "Nov 22, 14:05". */
export function formatLocal(at: Date | string | null | undefined): string {
  if (!at) return '—';
  return LOCAL.format(typeof at === 'string' ? new Date(at) : at);
}

/** Hours and minutes from a form → the gateway's duration syntax (`2h30m`); `null` if not positive. */
export function durationInput(hours: number, minutes = 0): string | null {
  if (!Number.isFinite(hours) || !Number.isFinite(minutes) || hours < 0 || minutes < 0) return null;
  const total = Math.round(hours * 60 + minutes);
  if (total <= 0) return null;
  const h = Math.floor(total / 60);
  const m = total % 60;
  return `${h ? `${h}h` : ''}${m ? `${m}m` : ''}`;
}
