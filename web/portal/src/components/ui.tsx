// Small pieces every page uses, so loading, errors, times and confirmations look and behave
// the same everywhere.
import { useEffect, useState, type ReactNode } from 'react';
import type { CombinedError } from 'urql';
import { formatLocal, formatRelative } from '../lib/time';

/** Re-renders every `ms` so relative times stay true. */
export function useNow(ms = 15_000): Date {
  const [now, setNow] = useState(() => new Date());
  useEffect(() => {
    const id = setInterval(() => setNow(new Date()), ms);
    return () => clearInterval(id);
  }, [ms]);
  return now;
}

export function Loading({ what = 'Loading' }: { what?: string }) {
  return (
    <div className="loading" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" /> {what}…
    </div>
  );
}

export function ErrorBox({ error, retry }: { error: CombinedError | string | null | undefined; retry?: () => void }) {
  if (!error) return null;
  const message =
    typeof error === 'string'
      ? error
      : error.networkError
        ? 'The gateway cannot be reached; retrying when it is back.'
        : error.graphQLErrors.map((e) => e.message).join('; ');
  return (
    <div className="error" role="alert">
      {message}
      {retry && (
        <button type="button" className="link" onClick={retry}>
          Retry
        </button>
      )}
    </div>
  );
}

/** Field problems from a mutation payload's `userErrors`. */
export function UserErrors({ errors }: { errors: readonly { field?: readonly string[] | string | null; message: string }[] | undefined }) {
  if (!errors?.length) return null;
  return (
    <ul className="error" role="alert">
      {errors.map((e, i) => (
        <li key={i}>
          {e.field && (Array.isArray(e.field) ? e.field.length > 0 : true) && <b>{Array.isArray(e.field) ? e.field.join('.') : e.field}: </b>}
          {e.message}
        </li>
      ))}
    </ul>
  );
}

/** An absolute time in the viewer's zone with the relative one beside it; hover shows ISO. */
export function Time({ at, now }: { at: string | null | undefined; now?: Date }) {
  if (!at) return <span className="muted">—</span>;
  return (
    <time dateTime={at} title={new Date(at).toString()}>
      {formatLocal(at)} <span className="muted">({formatRelative(at, now)})</span>
    </time>
  );
}

/** When a waiting GPR is likely to start: between its range's 10th and 90th percentiles. */
export function LikelyStart({ range, now }: { range: { p10: string; p90: string } | null | undefined; now?: Date }) {
  if (!range) return null;
  return (
    <div className="hint likely" title="9 in 10 GPRs like it started within this range (learned from how past estimates turned out)">
      likely {formatRelative(range.p10, now)} – {formatRelative(range.p90, now)}
    </div>
  );
}

export function PhaseBadge({ phase }: { phase: string }) {
  return <span className={`badge phase-${phase.toLowerCase()}`}>{phase.replace(/_/g, ' ').toLowerCase()}</span>;
}

/** A button that asks before acting: the first press arms it, the second (or Confirm) acts. */
export function ConfirmButton({
  children,
  question,
  onConfirm,
  disabled,
  danger,
}: {
  children: ReactNode;
  question: string;
  onConfirm: () => void | Promise<void>;
  disabled?: boolean;
  danger?: boolean;
}) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  if (!asking) {
    return (
      <button type="button" className={danger ? 'danger' : undefined} disabled={disabled || busy} onClick={() => setAsking(true)}>
        {children}
      </button>
    );
  }
  return (
    <span className="confirm" role="group" aria-label={question}>
      <span>{question}</span>
      <button
        type="button"
        className={danger ? 'danger' : 'primary'}
        autoFocus
        disabled={busy}
        onClick={async () => {
          setBusy(true);
          try {
            await onConfirm();
          } finally {
            setBusy(false);
            setAsking(false);
          }
        }}
      >
        Confirm
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        Keep
      </button>
    </span>
  );
}

export function Card({ title, actions, children }: { title: ReactNode; actions?: ReactNode; children: ReactNode }) {
  return (
    <section className="card">
      <header>
        <h2>{title}</h2>
        {actions}
      </header>
      {children}
    </section>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="empty">{children}</p>;
}
