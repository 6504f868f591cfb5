import { EMPTY_FEED, addItems, bellLabel, fromAlert, fromEvent, markAllRead, unreadCount, type FeedItem } from './feed';

const ev = (id: number, sec: number) =>
  fromEvent({ id: `e${id}`, kind: 'PROVISIONED', message: `event ${id}`, createdAt: new Date(sec * 1000).toISOString(), gpr: { id: 'gpr1', name: 'train' } });

describe('bell feed', () => {
  it('adds items newest first, unread', () => {
    const s = addItems(addItems(EMPTY_FEED, [ev(1, 10)]), [ev(2, 20)]);
    expect(s.items.map((i) => i.key)).toEqual(['event:e2', 'event:e1']);
    expect(unreadCount(s)).toBe(2);
  });
  it('ignores repeats (replays after a reconnect)', () => {
    const s = addItems(EMPTY_FEED, [ev(1, 10)]);
    expect(addItems(s, [ev(1, 10)])).toBe(s);
  });
  it('keeps at most the limit, dropping the oldest and their unread marks', () => {
    let s = EMPTY_FEED;
    for (let i = 0; i < 60; i++) s = addItems(s, [ev(i, i)]);
    expect(s.items).toHaveLength(50);
    expect(s.items[0].key).toBe('event:e59');
    expect(s.items[49].key).toBe('event:e10');
    expect(unreadCount(s)).toBe(50);
  });
  it('marks all read, and only new items are unread after', () => {
    let s = addItems(EMPTY_FEED, [ev(1, 10), ev(2, 11)]);
    s = markAllRead(s);
    expect(unreadCount(s)).toBe(0);
    expect(markAllRead(s)).toBe(s);
    s = addItems(s, [ev(3, 12)]);
    expect([...s.unread]).toEqual(['event:e3']);
  });
  it('merges alerts: raised and cleared are separate items', () => {
    const base = { id: 'a1', kind: 'OVER_TEMPERATURE', severity: 'CRITICAL', message: 'GPU 3 at 91 °C', raisedAt: '2025-01-01T00:00:10Z', gpr: null, gpu: { id: 'g3' } };
    const raised = fromAlert({ ...base, open: true });
    const cleared = fromAlert({ ...base, open: false, clearedAt: '2025-01-01T00:01:00Z', resolution: 'below 82 °C' });
    expect(raised.key).not.toBe(cleared.key);
    expect(cleared.at).toBe('2025-01-01T00:01:00Z');
    expect(cleared.message).toContain('Cleared');
    const s = addItems(addItems(EMPTY_FEED, [raised]), [cleared, ev(1, 1735689630)]);
    expect(s.items.map((i: FeedItem) => i.key)).toEqual(['alert:a1:cleared', 'event:e1', 'alert:a1:raised']);
    expect(raised.gpuId).toBe('g3');
  });
  it('labels the button with the unread count', () => {
    expect(bellLabel(0)).toBe('Notifications');
    expect(bellLabel(3)).toBe('Notifications (3 unread)');
  });
});
