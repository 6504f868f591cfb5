import './admin.css';

/** Reserved / free / unavailable nodes as one horizontal bar, with the numbers for screen readers. */
export function UsageBar({ total, reserved, free, unavailable }: { total: number; reserved: number; free: number; unavailable: number }) {
  const pct = (n: number) => (total > 0 ? `${(100 * n) / total}%` : '0%');
  const label = `${reserved} reserved, ${free} free, ${unavailable} unavailable of ${total} nodes`;
  return (
    <div className="usage" role="img" aria-label={label} title={label}>
      <span className="u-reserved" style={{ width: pct(reserved) }} />
      <span className="u-free" style={{ width: pct(free) }} />
      <span className="u-unavailable" style={{ width: pct(unavailable) }} />
    </div>
  );
}

export function UsageLegend({ planned = false }: { planned?: boolean }) {
  return (
    <div className="usage-legend" aria-hidden="true">
      <span>
        <i className="u-reserved" />
        {planned ? 'running reservation' : 'reserved'}
      </span>
      {planned ? (
        <span>
          <i className="u-planned" />
          planned start of a queued GPR (marker: latest promised start)
        </span>
      ) : (
        <>
          <span>
            <i className="u-free" />
            free
          </span>
          <span>
            <i className="u-unavailable" />
            unavailable
          </span>
        </>
      )}
    </div>
  );
}

export function Percent({ value }: { value: number | null | undefined }) {
  if (value == null) return <span className="muted">—</span>;
  return <>{Math.round(value)} %</>;
}
