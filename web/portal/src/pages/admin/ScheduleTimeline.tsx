// One pool's schedule: running reservations and planned starts of queued GPRs on a time axis
// from now to the horizon, one row per node, with hour ticks in local time.
import { useMemo, type MouseEvent } from 'react';
import { useNavigate } from 'react-router-dom';
import { formatLocal, formatRelative } from '../../lib/time';
import { hourTicks, layoutTimeline, type TimelineItem } from './timeline';
import './admin.css';

export interface ScheduleItem extends TimelineItem {
  /** Where the bar leads (the GPR's page). */
  href?: string;
}

const W = 1200;
const GUTTER = 64;
const AXIS = 26;
const ROW = 18;

export function ScheduleTimeline({
  title,
  items,
  from,
  to,
  capacity,
}: {
  title: string;
  items: readonly ScheduleItem[];
  from: number;
  to: number;
  capacity: number;
}) {
  const navigate = useNavigate();
  const layout = useMemo(() => layoutTimeline(items, from, to, capacity), [items, from, to, capacity]);
  const ticks = useMemo(() => hourTicks(from, to), [from, to]);
  const rows = Math.max(1, layout.rows);
  const height = AXIS + rows * ROW + 8;
  const plotW = W - GUTTER - 8;
  const X = (f: number) => GUTTER + f * plotW;
  const running = layout.bars.filter((b) => b.kind === 'running').length;
  const planned = layout.bars.length - running;
  const summary = `${title}: ${running} running, ${planned} planned in the next ${Math.round((to - from) / 3_600_000)} h on ${capacity} nodes`;
  const go = (href: string | undefined) => (e: MouseEvent) => {
    if (!href) return;
    e.preventDefault();
    navigate(href);
  };

  return (
    <figure className="timeline" style={{ margin: 0 }}>
      <svg viewBox={`0 0 ${W} ${height}`} role="group" aria-label={summary}>
        <defs>
          <pattern id="tl-hatch" width="8" height="8" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">
            <rect width="8" height="8" fill="#fff4d6" />
            <line x1="0" y1="0" x2="0" y2="8" stroke="#f0b45a" strokeWidth="4" />
          </pattern>
        </defs>
        {Array.from({ length: rows }, (_, r) => (
          <rect key={r} className={r % 2 ? undefined : 'row-bg'} x={GUTTER} y={AXIS + r * ROW} width={plotW} height={ROW} fill={r % 2 ? 'transparent' : undefined} />
        ))}
        <text x={4} y={AXIS + 12} fill="currentColor" className="muted">
          nodes
        </text>
        {ticks.map((t) => (
          <g key={t.at} className={`tick${t.midnight ? ' midnight' : ''}`} aria-hidden="true">
            <line x1={X(t.x)} x2={X(t.x)} y1={AXIS - 6} y2={height} />
            <text x={X(t.x) + 3} y={AXIS - 10}>
              {t.label}
            </text>
          </g>
        ))}
        {capacity > 0 && capacity < rows && (
          <line className="capacity" x1={GUTTER} x2={W} y1={AXIS + capacity * ROW} y2={AXIS + capacity * ROW}>
            <title>Pool capacity: {capacity} nodes</title>
          </line>
        )}
        {layout.bars.map((b) => {
          const x = X(b.x);
          const w = Math.max(3, b.width * plotW);
          const y = AXIS + b.row * ROW + 2;
          const h = b.rows * ROW - 4;
          const when =
            b.kind === 'running'
              ? `running until ${formatLocal(new Date(b.end))} (${formatRelative(new Date(b.end))})`
              : `planned ${formatLocal(new Date(b.start))} (${formatRelative(new Date(b.start))}) to ${formatLocal(new Date(b.end))}` +
                (b.promise ? `, starts no later than ${formatLocal(new Date(b.promise))}` : '');
          const name = `${b.label} × ${b.nodes} node${b.nodes === 1 ? '' : 's'}, ${when}`;
          return (
            <a key={b.id} className={`bar bar-${b.kind}`} href={b.href} onClick={go(b.href)} aria-label={name}>
              <title>{name}</title>
              <rect className="body" x={x} y={y} width={w} height={h} rx={3} />
              {w > 60 && (
                <text x={x + 5} y={y + Math.min(h, ROW) / 2 + 4}>
                  {b.clippedStart ? '◂ ' : ''}
                  {`${b.label} × ${b.nodes}`}
                  {b.clippedEnd ? ' ▸' : ''}
                </text>
              )}
              {b.promiseX != null && <line className="promise" x1={X(b.promiseX)} x2={X(b.promiseX)} y1={y - 2} y2={y + h + 2} />}
            </a>
          );
        })}
        <g className="now" aria-hidden="true">
          <line x1={GUTTER} x2={GUTTER} y1={AXIS - 14} y2={height} />
        </g>
      </svg>
      {layout.bars.length === 0 && <figcaption className="empty">Nothing running or planned in this window.</figcaption>}
      {layout.hidden > 0 && (
        <figcaption className="muted">
          {layout.hidden} more planned after {formatLocal(new Date(to))}.
        </figcaption>
      )}
    </figure>
  );
}
