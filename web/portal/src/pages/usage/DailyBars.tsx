// GPU-hours per day as bars: reserved (light) behind used (solid), waiting beside them. SVG,
// scaled to the largest day; each day's figures are in its tooltip.
import type { DayFigures } from './usage';
import { gpuHours } from './usage';

const HEIGHT = 160;

export function DailyBars({ days, label }: { days: readonly DayFigures[]; label: string }) {
  const top = Math.max(1, ...days.map((d) => Math.max(d.reserved, d.used, d.waiting)));
  const slot = 24;
  const width = Math.max(1, days.length) * slot;
  const y = (v: number) => HEIGHT - (v / top) * (HEIGHT - 4);
  return (
    <figure className="daily-bars">
      <svg role="img" aria-label={label} viewBox={`0 0 ${width} ${HEIGHT + 18}`} preserveAspectRatio="none" width="100%" height={HEIGHT + 18}>
        {days.map((d, i) => {
          const x = i * slot;
          const title = `${d.day}: reserved ${gpuHours(d.reserved)}, used ${gpuHours(d.used)}, waiting ${gpuHours(d.waiting)} GPU-hours`;
          return (
            <g key={d.day} data-testid={`day-${d.day}`}>
              <title>{title}</title>
              <rect x={x + 2} width={13} y={y(d.reserved)} height={HEIGHT - y(d.reserved)} className="bar-reserved" />
              <rect x={x + 4} width={9} y={y(d.used)} height={HEIGHT - y(d.used)} className="bar-used" />
              <rect x={x + 16} width={5} y={y(d.waiting)} height={HEIGHT - y(d.waiting)} className="bar-waiting" />
              {(days.length - 1 - i) % 7 === 0 && (
                <text x={i === days.length - 1 ? x + slot : x + 2} y={HEIGHT + 14} textAnchor={i === days.length - 1 ? 'end' : 'start'} className="bar-label">
                  {d.day.slice(5)}
                </text>
              )}
            </g>
          );
        })}
      </svg>
      <figcaption className="muted">
        <span className="swatch bar-reserved" /> reserved <span className="swatch bar-used" /> used <span className="swatch bar-waiting" /> waiting (GPU-hours
        per UTC day; the busiest day is {gpuHours(top)})
      </figcaption>
    </figure>
  );
}
