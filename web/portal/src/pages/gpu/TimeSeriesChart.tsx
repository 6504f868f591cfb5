// One uPlot time-series chart that follows its container's width (ResizeObserver), with an
// optional dashed threshold line, and a caption with the point count and last sample time.
import { useEffect, useMemo, useRef } from 'react';
import uPlot from 'uplot';
import { stats } from './series';

export interface TimeSeriesChartProps {
  /** e.g. "Utilisation": the region is labelled "Utilisation chart". */
  title: string;
  /** For test ids: `points-<id>`. */
  id: string;
  unit: string;
  xs: number[];
  ys: number[];
  color: string;
  /** Fixed y range, e.g. [0, 100] for %. */
  yRange?: [number, number];
  threshold?: { value: number; label: string } | null;
  height?: number;
  /** Digits after the point in the caption. */
  digits?: number;
}

const TIME = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });

export function TimeSeriesChart({ title, id, unit, xs, ys, color, yRange, threshold, height = 200, digits = 0 }: TimeSeriesChartProps) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const hasThreshold = threshold != null;

  const data = useMemo<uPlot.AlignedData>(() => {
    if (!hasThreshold) return [xs, ys];
    return [xs, ys, xs.map(() => threshold!.value)];
  }, [xs, ys, hasThreshold, threshold?.value]); // eslint-disable-line react-hooks/exhaustive-deps

  // Create once per shape of chart (threshold on/off); data updates go through setData.
  useEffect(() => {
    const el = box.current;
    if (!el || typeof ResizeObserver === 'undefined') return;
    const series: uPlot.Series[] = [
      {},
      { label: title, stroke: color, width: 2, fill: `${color}22`, value: (_u, v) => (v == null ? '—' : `${v.toFixed(digits)} ${unit}`) },
    ];
    if (hasThreshold) series.push({ label: threshold!.label, stroke: '#c0262d', width: 1, dash: [6, 4], points: { show: false } });
    const opts: uPlot.Options = {
      width: Math.max(200, el.clientWidth),
      height,
      series,
      scales: {
        x: { time: true },
        y: yRange
          ? { range: yRange }
          : { range: (_u, min, max) => [Math.min(0, min), max <= 0 ? 1 : max * 1.1] },
      },
      // Compact tick labels (80k, not 80000) so they fit the axis at any chart width.
      axes: [{}, { values: (_u, ticks) => ticks.map((t) => (Math.abs(t) >= 10_000 ? `${t / 1000}k` : `${t}`)), size: 50 }],
      legend: { show: true, live: true },
      cursor: { drag: { x: false, y: false } },
    };
    const u = new uPlot(opts, data, el);
    plot.current = u;
    const ro = new ResizeObserver((entries) => {
      const width = Math.floor(entries[0].contentRect.width);
      if (width > 0 && Math.abs(width - u.width) > 1) u.setSize({ width, height });
    });
    ro.observe(el);
    return () => {
      ro.disconnect();
      u.destroy();
      plot.current = null;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [hasThreshold, height, title, color, unit, digits, yRange?.[0], yRange?.[1]]);

  useEffect(() => {
    plot.current?.setData(data);
  }, [data]);

  const last = xs.length ? xs[xs.length - 1] : null;
  const lastValue = ys.length ? ys[ys.length - 1] : null;
  const s = stats(ys);
  return (
    <figure className="ts-chart" role="region" aria-label={`${title} chart`}>
      <figcaption>
        <span className="ts-title">{title}</span>
        {lastValue !== null && (
          <span className="ts-now">
            {lastValue.toFixed(digits)} {unit}
          </span>
        )}
        <span className="muted">
          <span data-testid={`points-${id}`}>{xs.length}</span> points
          {last !== null && <> · last {TIME.format(new Date(last * 1000))}</>}
          {s && (
            <>
              {' '}
              · min {s.min.toFixed(digits)} / avg {s.avg.toFixed(digits)} / max {s.max.toFixed(digits)} {unit}
            </>
          )}
          {threshold && (
            <>
              {' '}
              · {threshold.label} {threshold.value} {unit}
            </>
          )}
        </span>
      </figcaption>
      <div ref={box} className="ts-plot" aria-hidden="true" />
      {xs.length === 0 && <p className="empty">No samples in this range yet.</p>}
    </figure>
  );
}
