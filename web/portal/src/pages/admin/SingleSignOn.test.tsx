import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { SingleSignOn } from './SingleSignOn';
import { mockClient, renderPage } from '../user/testing';

function setup(rules: unknown[], created: unknown = { rule: { id: 'r2' }, userErrors: [] }) {
  const mock = mockClient((name) => {
    if (name === 'AdminSsoRules') return { ssoGroupRules: rules, slices: { nodes: [{ id: 's1', name: 'nlp-research' }, { id: 's2', name: 'vision' }] } };
    if (name === 'AdminSsoCreateRule') return { createSsoGroupRule: created };
    if (name === 'AdminSsoDeleteRule') return { deleteSsoGroupRule: { rule: { id: 'r1' }, userErrors: [] } };
    throw new Error(name);
  });
  renderPage(mock.client, '/admin/sso', [{ path: '/admin/sso', element: <SingleSignOn /> }]);
  return mock;
}

const rule = { id: 'r1', group: 'platform', role: null, grantsAdmin: true, createdAt: '2030-01-01T10:00:00Z', slice: null };

describe('SingleSignOn', () => {
  it('lists the rules and adds one granting a slice role', async () => {
    const user = userEvent.setup();
    const { calls } = setup([rule]);
    expect(await screen.findByRole('table', { name: 'Group rules' })).toHaveTextContent('platform');
    const form = screen.getByRole('form', { name: 'Add a group rule' });
    await user.type(within(form).getByLabelText('Group'), 'ml-team');
    await user.selectOptions(within(form).getByLabelText('Slice'), 'vision');
    await user.selectOptions(within(form).getByLabelText('Role'), 'EDITOR');
    await user.click(within(form).getByRole('button', { name: 'Add rule' }));
    await waitFor(() =>
      expect(calls.find((c) => c.name === 'AdminSsoCreateRule')?.variables).toEqual({ input: { group: 'ml-team', sliceId: 's2', role: 'EDITOR' } }),
    );
  });

  it('asks for the admin role without a slice, and shows a refusal', async () => {
    const user = userEvent.setup();
    const { calls } = setup([], { rule: null, userErrors: [{ field: ['input', 'group'], message: 'a group name of 1–256 characters' }] });
    const form = await screen.findByRole('form', { name: 'Add a group rule' });
    await user.type(within(form).getByLabelText('Group'), 'admins');
    await user.selectOptions(within(form).getByLabelText('Grants'), 'admin');
    expect(within(form).queryByLabelText('Slice')).toBeNull();
    await user.click(within(form).getByRole('button', { name: 'Add rule' }));
    await waitFor(() => expect(calls.find((c) => c.name === 'AdminSsoCreateRule')?.variables).toEqual({ input: { group: 'admins', grantsAdmin: true } }));
    expect(await screen.findByText(/1–256 characters/)).toBeInTheDocument();
  });
});
