import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { Events, KINDS } from './Events';
import { mockClient, renderPage } from './user/testing';

const ev = (n: number, kind = 'QUEUED') => ({
  id: `e${n}`,
  kind,
  message: `event ${n}`,
  actor: 'alice',
  createdAt: `2030-01-01T10:0${n}:00Z`,
  gpr: { id: 'g1', name: 'train-1' },
  slice: { id: 's1', name: 'research' },
});

function setup(path = '/events') {
  const mock = mockClient((name, vars) => {
    if (name === 'EventsSlices') return { slices: { nodes: [{ id: 's1', name: 'research' }] } };
    if (name === 'EventsSearch') {
      // Oldest first within a page, as the API answers `last`.
      const nodes = vars.before ? [ev(1, 'CREATED')] : [ev(2), ev(3, 'PROVISIONED')];
      return { gprEvents: { totalCount: 3, pageInfo: { hasPreviousPage: !vars.before, startCursor: vars.before ? 'c1' : 'c2' }, nodes } };
    }
    throw new Error(name);
  });
  renderPage(mock.client, path, [{ path: '/events', element: <Events /> }]);
  return mock;
}

describe('Events', () => {
  it('lists the newest first, pages back to older ones, and sends the filters from the URL and the form', async () => {
    const user = userEvent.setup();
    const { calls } = setup('/events?text=hot&kind=PROVISIONED&slice=s1');
    const table = await screen.findByRole('table', { name: 'Events' });
    expect(within(table).getAllByRole('row').slice(1).map((r) => r.textContent)).toEqual([
      expect.stringContaining('event 3'),
      expect.stringContaining('event 2'),
    ]);
    expect(calls.find((c) => c.name === 'EventsSearch')?.variables).toMatchObject({ text: 'hot', kinds: ['PROVISIONED'], sliceId: 's1', before: null });

    await user.click(screen.getByRole('button', { name: 'Older events' }));
    await waitFor(() => expect(within(screen.getByRole('table', { name: 'Events' })).getAllByRole('row')).toHaveLength(2));
    expect(screen.getByRole('table', { name: 'Events' })).toHaveTextContent('event 1');
    expect(calls.filter((c) => c.name === 'EventsSearch').at(-1)?.variables).toMatchObject({ before: 'c2' });

    await user.clear(screen.getByLabelText('Text'));
    await user.type(screen.getByLabelText('Text'), 'replaced');
    await user.click(screen.getByRole('button', { name: 'Search' }));
    await waitFor(() => expect(calls.filter((c) => c.name === 'EventsSearch').at(-1)?.variables).toMatchObject({ text: 'replaced', before: null }));
  });

  it('offers every kind the API has, once', () => {
    const sdl = readFileSync(resolve(__dirname, '../../../../schema/schema.graphql'), 'utf8');
    const body = /enum GprEventKind \{([^}]*)\}/.exec(sdl)![1];
    const inSchema = body.split('\n').map((l) => l.trim()).filter((l) => /^[A-Z0-9_]+$/.test(l));
    expect([...KINDS].sort()).toEqual(inSchema.sort());
  });
});
