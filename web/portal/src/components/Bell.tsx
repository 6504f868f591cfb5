// The notification bell: GPR events and alerts the caller may see, live, newest first (the
// latest 50), with an unread count. Events resume after the last id seen across reconnects.
import { useCallback, useEffect, useId, useRef, useState } from 'react';
import { Link, useNavigate } from 'react-router-dom';
import { graphql } from '../gql';
import { useLive } from '../api/live';
import { formatLocal, formatRelative } from '../lib/time';
import { useNow } from './ui';
import {
  EMPTY_FEED,
  addItems,
  bellLabel,
  fromAlert,
  fromEvent,
  kindLabel,
  markAllRead,
  unreadCount,
  type FeedItem,
  type FeedState,
} from './bell/feed';
import './bell/bell.css';

const BellEvents = graphql(`
  subscription BellEvents($after: ID) {
    gprEvents(after: $after) {
      id
      kind
      message
      actor
      createdAt
      gpr {
        id
        name
      }
    }
  }
`);

const BellAlerts = graphql(`
  subscription BellAlerts {
    alerts {
      id
      kind
      severity
      message
      open
      raisedAt
      clearedAt
      resolution
      gpr {
        id
        name
      }
      gpu {
        id
      }
    }
  }
`);

export function Bell() {
  const [feed, setFeed] = useState<FeedState>(EMPTY_FEED);
  const [open, setOpen] = useState(false);
  const [query, setQuery] = useState('');
  const navigate = useNavigate();
  const lastEventId = useRef<string | null>(null);
  const button = useRef<HTMLButtonElement>(null);
  const wrap = useRef<HTMLDivElement>(null);
  const panel = useRef<HTMLDivElement>(null);
  const panelId = useId();
  const now = useNow(15_000);

  const onEvent = useCallback((d: { gprEvents: Parameters<typeof fromEvent>[0] }) => {
    lastEventId.current = d.gprEvents.id;
    setFeed((f) => addItems(f, [fromEvent(d.gprEvents)]));
  }, []);
  const onAlert = useCallback((d: { alerts: Parameters<typeof fromAlert>[0] }) => {
    setFeed((f) => addItems(f, [fromAlert(d.alerts)]));
  }, []);
  const resumeEvents = useCallback(
    (prev: { after?: string | null }) => (lastEventId.current ? { ...prev, after: lastEventId.current } : prev),
    [],
  );
  const eventsError = useLive(BellEvents, {}, onEvent, { resume: resumeEvents });
  const alertsError = useLive(BellAlerts, {}, onAlert);

  const close = useCallback((refocus: boolean) => {
    setOpen(false);
    if (refocus) button.current?.focus();
  }, []);

  // Click outside closes; Escape closes and returns focus to the button.
  useEffect(() => {
    if (!open) return;
    const onDown = (e: MouseEvent | TouchEvent) => {
      if (wrap.current && !wrap.current.contains(e.target as Node)) close(false);
    };
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') {
        e.preventDefault();
        close(true);
      }
    };
    document.addEventListener('mousedown', onDown);
    document.addEventListener('touchstart', onDown);
    document.addEventListener('keydown', onKey);
    panel.current?.focus();
    return () => {
      document.removeEventListener('mousedown', onDown);
      document.removeEventListener('touchstart', onDown);
      document.removeEventListener('keydown', onKey);
    };
  }, [open, close]);

  const unread = unreadCount(feed);
  const error = eventsError ?? alertsError;
  return (
    <div className="bell" ref={wrap}>
      <button
        ref={button}
        type="button"
        aria-label={bellLabel(unread)}
        aria-expanded={open}
        aria-controls={open ? panelId : undefined}
        aria-haspopup="dialog"
        onClick={() => setOpen((o) => !o)}
      >
        <svg className="bell-icon" aria-hidden="true" viewBox="0 0 24 24" width="16" height="16">
          <path fill="currentColor" d="M12 22a2.5 2.5 0 0 0 2.45-2h-4.9A2.5 2.5 0 0 0 12 22Zm7-6V11a7 7 0 0 0-5.5-6.84V3.5a1.5 1.5 0 0 0-3 0v.66A7 7 0 0 0 5 11v5l-2 2v1h18v-1l-2-2Z" />
        </svg>
        {unread > 0 && (
          <span className="bell-count" aria-hidden="true">
            {unread > 99 ? '99+' : unread}
          </span>
        )}
      </button>
      {open && (
        <div className="bell-panel" id={panelId} role="dialog" aria-label="Notifications" tabIndex={-1} ref={panel}>
          <header>
            <h2>Notifications</h2>
            <button type="button" disabled={unread === 0} onClick={() => setFeed(markAllRead)}>
              Mark all read
            </button>
          </header>
          <form
            role="search"
            aria-label="Search events"
            className="bell-search"
            onSubmit={(e) => {
              e.preventDefault();
              const text = query.trim();
              close(false);
              navigate(text ? `/events?text=${encodeURIComponent(text)}` : '/events');
            }}
          >
            <input type="search" aria-label="Search all events" placeholder="Search all events" value={query} maxLength={200} onChange={(e) => setQuery(e.target.value)} />
            <button type="submit">Search</button>
          </form>
          {error && <p className="error">Live notifications refused: {error}</p>}
          {feed.items.length === 0 ? (
            <p className="empty">Nothing yet. GPR events and alerts appear here as they happen.</p>
          ) : (
            <ul aria-label="Latest notifications">
              {feed.items.map((item) => (
                <BellItem key={item.key} item={item} unread={feed.unread.has(item.key)} now={now} onNavigate={() => close(false)} />
              ))}
            </ul>
          )}
        </div>
      )}
    </div>
  );
}

function BellItem({ item, unread, now, onNavigate }: { item: FeedItem; unread: boolean; now: Date; onNavigate: () => void }) {
  return (
    <li className={unread ? 'unread' : undefined}>
      <div className="meta">
        {unread && <span className="badge">new</span>}
        {item.source === 'alert' ? (
          <span className={`badge ${item.severity === 'CRITICAL' ? 'sev-critical' : item.severity === 'WARNING' ? 'sev-warning' : ''}`}>
            {item.open === false ? 'cleared' : (item.severity ?? 'alert').toLowerCase()}
          </span>
        ) : (
          <span className="badge">event</span>
        )}
        <span>{kindLabel(item.kind)}</span>
        <time dateTime={item.at} title={new Date(item.at).toString()}>
          {formatRelative(item.at, now)} · {formatLocal(item.at)}
        </time>
      </div>
      <div>{item.message}</div>
      {(item.gprId || item.gpuId) && (
        <div className="meta">
          {item.gprId && (
            <Link to={`/gprs/${encodeURIComponent(item.gprId)}`} onClick={onNavigate}>
              GPR {item.gprName ?? item.gprId}
            </Link>
          )}
          {item.gpuId && (
            <Link to={`/gpus/${encodeURIComponent(item.gpuId)}`} onClick={onNavigate}>
              GPU dashboard
            </Link>
          )}
        </div>
      )}
    </li>
  );
}
