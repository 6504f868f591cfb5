// The bell's feed: GPR events and alerts merged newest first, at most `limit` items, each
// once (a reconnect that replays an item does not repeat it), with unread tracking.

export type FeedSource = 'event' | 'alert';

export interface FeedItem {
  /** Unique per item: `event:<id>`, `alert:<id>:raised` / `alert:<id>:cleared`. */
  key: string;
  source: FeedSource;
  /** ISO time. */
  at: string;
  /** e.g. `PROVISIONED`, `OVER_TEMPERATURE`. */
  kind: string;
  message: string;
  severity?: string | null;
  gprId?: string | null;
  gprName?: string | null;
  gpuId?: string | null;
  /** Alerts: false once cleared. */
  open?: boolean;
}

export interface FeedState {
  items: FeedItem[];
  unread: ReadonlySet<string>;
}

export const FEED_LIMIT = 50;

export const EMPTY_FEED: FeedState = { items: [], unread: new Set() };

function time(item: FeedItem): number {
  const t = new Date(item.at).getTime();
  return Number.isFinite(t) ? t : 0;
}

/** Adds items (unread), newest first, dropping repeats and the oldest beyond `limit`. */
export function addItems(state: FeedState, incoming: readonly FeedItem[], limit = FEED_LIMIT): FeedState {
  const known = new Set(state.items.map((i) => i.key));
  const fresh: FeedItem[] = [];
  for (const item of incoming) {
    if (known.has(item.key)) continue;
    known.add(item.key);
    fresh.push(item);
  }
  if (fresh.length === 0) return state;
  const items = [...fresh, ...state.items]
    .map((item, i) => ({ item, i }))
    // Newest first; equal times keep arrival order (newer arrivals first).
    .sort((a, b) => time(b.item) - time(a.item) || a.i - b.i)
    .slice(0, limit)
    .map((x) => x.item);
  const kept = new Set(items.map((i) => i.key));
  const unread = new Set<string>();
  for (const key of state.unread) if (kept.has(key)) unread.add(key);
  for (const item of fresh) if (kept.has(item.key)) unread.add(item.key);
  return { items, unread };
}

export function markAllRead(state: FeedState): FeedState {
  return state.unread.size === 0 ? state : { items: state.items, unread: new Set() };
}

export function unreadCount(state: FeedState): number {
  return state.unread.size;
}

export function bellLabel(unread: number): string {
  return unread === 0 ? 'Notifications' : `Notifications (${unread} unread)`;
}

export interface EventLike {
  id: string;
  kind: string;
  message: string;
  createdAt: string;
  actor?: string | null;
  gpr?: { id: string; name: string } | null;
}

export function fromEvent(e: EventLike): FeedItem {
  return {
    key: `event:${e.id}`,
    source: 'event',
    at: e.createdAt,
    kind: e.kind,
    message: e.message,
    gprId: e.gpr?.id ?? null,
    gprName: e.gpr?.name ?? null,
  };
}

export interface AlertLike {
  id: string;
  kind: string;
  severity: string;
  message: string;
  open: boolean;
  raisedAt: string;
  clearedAt?: string | null;
  resolution?: string | null;
  gpr?: { id: string; name: string } | null;
  gpu?: { id: string } | null;
}

export function fromAlert(a: AlertLike): FeedItem {
  const cleared = !a.open;
  return {
    key: `alert:${a.id}:${cleared ? 'cleared' : 'raised'}`,
    source: 'alert',
    at: cleared ? (a.clearedAt ?? a.raisedAt) : a.raisedAt,
    kind: a.kind,
    message: cleared ? `Cleared: ${a.message}${a.resolution ? ` (${a.resolution})` : ''}` : a.message,
    severity: a.severity,
    gprId: a.gpr?.id ?? null,
    gprName: a.gpr?.name ?? null,
    gpuId: a.gpu?.id ?? null,
    open: a.open,
  };
}

/** `OVER_TEMPERATURE` → `over temperature`. */
export function kindLabel(kind: string): string {
  return kind.replace(/_/g, ' ').toLowerCase();
}
