import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { Workspaces } from './Workspaces';
import { mockClient, renderPage } from './user/testing';

const role = { current: 'USER' };
vi.mock('../session', () => ({
  useSession: () => ({ viewer: { id: 'u1', name: 'dana', role: role.current, memberships: [] } }),
}));

const request = (state: string, extra = {}) => ({
  id: 'r1',
  name: 'support-ft',
  purpose: 'fine-tune for support',
  state,
  requester: 'dana',
  maxNodesPerGpr: 2,
  gpuHourQuota: null,
  decidedBy: null,
  decisionReason: null,
  createdAt: '2030-01-01T10:00:00Z',
  namespaces: [{ clusterName: 'gpu-east', name: 'support-ft' }],
  slice: null,
  ...extra,
});

function setup(requests: unknown[]) {
  const mock = mockClient((name) => {
    if (name === 'Workspaces') return { workspaceRequests: requests, workspaceClusters: [{ id: 'c1', name: 'gpu-east' }] };
    if (name === 'RequestWorkspace') return { requestWorkspace: { request: { id: 'r2' }, userErrors: [] } };
    if (name === 'PersonalWorkspacePolicy') return { personalWorkspacePolicy: null };
    if (name === 'SetPersonalWorkspacePolicy') return { setPersonalWorkspacePolicy: { policy: { enabled: true }, userErrors: [] } };
    if (name === 'RejectWorkspaceRequest') return { rejectWorkspaceRequest: { request: null, userErrors: [{ field: ['input', 'reason'], message: 'say why' }] } };
    throw new Error(name);
  });
  renderPage(mock.client, '/workspaces', [{ path: '/workspaces', element: <Workspaces /> }]);
  return mock;
}

describe('Workspaces', () => {
  it('sends a request with the namespace defaulting to the slice name, and shows a rejection with its reason', async () => {
    role.current = 'USER';
    const user = userEvent.setup();
    const { calls } = setup([request('REJECTED', { decidedBy: 'admin', decisionReason: 'use the shared slice' })]);
    expect(await screen.findByRole('article', { name: 'Request support-ft' })).toHaveTextContent('admin: use the shared slice');
    const form = screen.getByRole('form', { name: 'Ask for a workspace' });
    await user.type(within(form).getByLabelText('Slice name'), 'eval');
    await user.type(within(form).getByLabelText('Purpose'), 'evaluate models');
    await user.click(within(form).getByRole('button', { name: 'Send request' }));
    await waitFor(() =>
      expect(calls.find((c) => c.name === 'RequestWorkspace')?.variables).toEqual({
        input: { name: 'eval', purpose: 'evaluate models', namespaces: [{ clusterId: 'c1', name: 'eval' }], maxNodesPerGpr: null },
      }),
    );
  });

  it('lets an admin decide on a pending request and shows why a rejection was refused', async () => {
    role.current = 'ADMIN';
    const user = userEvent.setup();
    setup([request('PENDING')]);
    const row = await screen.findByRole('article', { name: 'Request support-ft' });
    expect(screen.queryByRole('form', { name: 'Ask for a workspace' })).toBeNull();
    await user.click(within(row).getByRole('button', { name: 'Reject' }));
    expect(await within(row).findByText('say why')).toBeVisible();
  });

  it('lets an admin give every new user a private workspace of a size', async () => {
    role.current = 'ADMIN';
    const user = userEvent.setup();
    const { calls } = setup([]);
    const form = await screen.findByRole('form', { name: 'Private workspaces' });
    expect(screen.getByText(/Off: new users get no slice/)).toBeInTheDocument();
    await user.click(within(form).getByRole('checkbox'));
    await user.type(within(form).getByLabelText('Nodes per GPR'), '1');
    await user.type(within(form).getByLabelText('GPU-hour quota'), '200');
    await user.click(within(form).getByRole('button', { name: 'Save' }));
    await waitFor(() =>
      expect(calls.find((c) => c.name === 'SetPersonalWorkspacePolicy')?.variables).toEqual({
        input: { enabled: true, clusterId: 'c1', maxNodesPerGpr: 1, gpuHourQuota: 200 },
      }),
    );
  });
});
