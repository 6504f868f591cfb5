import { act, render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { MemoryRouter, Route, Routes, useLocation } from 'react-router-dom';
import { print } from 'graphql';

const handlers = new Map<string, { onData: (d: unknown) => void; resume?: (v: unknown) => unknown }>();
vi.mock('../../api/live', () => ({
  useLive: (doc: unknown, _vars: unknown, onData: (d: unknown) => void, opts?: { resume?: (v: unknown) => unknown }) => {
    const name = /subscription (\w+)/.exec(print(doc as never))![1];
    handlers.set(name, { onData, resume: opts?.resume });
    return null;
  },
}));

import { Bell } from '../Bell';

function setup() {
  render(
    <MemoryRouter>
      <Bell />
      <p>outside</p>
    </MemoryRouter>,
  );
}

const event = (id: string) => ({
  gprEvents: { id, kind: 'PROVISIONED', message: `Provisioned ${id}`, actor: 'system', createdAt: new Date().toISOString(), gpr: { id: 'gpr-1', name: 'train' } },
});

describe('Bell', () => {
  it('counts unread items, opens a dialog, marks read, closes on Escape with focus back', async () => {
    const user = userEvent.setup();
    setup();
    expect(screen.getByRole('button', { name: 'Notifications' })).toHaveAttribute('aria-expanded', 'false');
    act(() => handlers.get('BellEvents')!.onData(event('e1')));
    act(() =>
      handlers.get('BellAlerts')!.onData({
        alerts: { id: 'a1', kind: 'OVER_POWER', severity: 'WARNING', message: 'GPU over power', open: true, raisedAt: new Date().toISOString(), clearedAt: null, resolution: null, gpr: null, gpu: { id: 'g1' } },
      }),
    );
    const button = screen.getByRole('button', { name: 'Notifications (2 unread)' });
    await user.click(button);
    expect(button).toHaveAttribute('aria-expanded', 'true');
    const dialog = screen.getByRole('dialog', { name: 'Notifications' });
    expect(dialog).toHaveTextContent('Provisioned e1');
    expect(dialog).toHaveTextContent('over power');
    expect(screen.getByRole('link', { name: 'GPR train' })).toHaveAttribute('href', '/gprs/gpr-1');
    await user.click(screen.getByRole('button', { name: 'Mark all read' }));
    expect(screen.getByRole('button', { name: 'Notifications' })).toBeInTheDocument();
    await user.keyboard('{Escape}');
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Notifications' })).toHaveFocus();
  });

  it('closes on a click outside', async () => {
    const user = userEvent.setup();
    setup();
    await user.click(screen.getByRole('button', { name: /Notifications/ }));
    expect(screen.getByRole('dialog')).toBeInTheDocument();
    await user.click(screen.getByText('outside'));
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
  });

  it('resumes GPR events after the last id seen', () => {
    setup();
    const h = handlers.get('BellEvents')!;
    expect(h.resume!({})).toEqual({});
    act(() => h.onData(event('e7')));
    expect(h.resume!({})).toEqual({ after: 'e7' });
  });

  it('searches every event from the panel: the Events page opens with the text', async () => {
    const user = userEvent.setup();
    function Where() {
      const at = useLocation();
      return <p>at {at.pathname + at.search}</p>;
    }
    render(
      <MemoryRouter initialEntries={['/home']}>
        <Bell />
        <Routes>
          <Route path="*" element={<Where />} />
        </Routes>
      </MemoryRouter>,
    );
    await user.click(screen.getByRole('button', { name: 'Notifications' }));
    await user.type(screen.getByRole('searchbox', { name: 'Search all events' }), 'node replaced');
    await user.click(screen.getByRole('button', { name: 'Search' }));
    expect(screen.getByText('at /events?text=node%20replaced')).toBeInTheDocument();
    expect(screen.queryByRole('dialog', { name: 'Notifications' })).not.toBeInTheDocument();
  });
});
