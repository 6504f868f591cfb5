import { act, screen, within } from '@testing-library/react';
import { getOperationAST, type DocumentNode } from 'graphql';
import { Home } from './Home';
import { mockClient, renderPage } from './user/testing';

const subs = new Map<string, (d: unknown) => void>();
vi.mock('../api/live', () => ({
  useLive: (doc: DocumentNode, _vars: unknown, onData: (d: unknown) => void) => {
    subs.set(getOperationAST(doc)?.name?.value ?? '', onData);
    return null;
  },
}));
vi.mock('../session', () => ({
  useSession: () => ({ viewer: { id: 'u1', name: 'alice', role: 'USER', memberships: [] } }),
}));

const alert = (id: string, open: boolean, raisedAt: string, message: string) => ({
  id, kind: 'OVER_TEMPERATURE', severity: 'WARNING', message, open, raisedAt, slice: { id: 's1', name: 'research' }, gpr: null, node: { id: 'n1', name: 'node-a' },
});
const gpr = (id: string, name: string, phase: string, requester: string, nodes: { id: string; gpusPerNode: number }[] = []) => ({
  id, name, phase, priority: 100, nodeCount: 1, gpusPerNode: null, gpuShape: 'H100', assignedGpuShape: null, queuePosition: phase === 'QUEUED' ? 1 : null,
  estimatedStartAt: null, exitAt: null, createdAt: '2030-01-01T00:00:00Z', requester: { id: requester, name: requester }, slice: { id: 's1', name: 'research' }, nodes,
});

it('shows my slices with GPUs in use, my GPRs by phase and live open alerts', async () => {
  const mock = mockClient(() => ({
    slices: { nodes: [{ id: 's1', name: 'research', viewerRole: 'EDITOR', gpuSummary: null }, { id: 's2', name: 'ops', viewerRole: 'VIEWER', gpuSummary: { gpuCount: 4, averageUtilization: 12 } }] },
    gprs: {
      totalCount: 3,
      nodes: [
        gpr('g1', 'train-1', 'PROVISIONED', 'u1', [{ id: 'n1', gpusPerNode: 8 }]),
        gpr('g2', 'train-2', 'QUEUED', 'u1'),
        gpr('g3', 'other', 'QUEUED', 'u2'),
      ],
    },
    alerts: { nodes: [alert('a1', true, '2030-01-01T10:00:00Z', 'hot GPU')] },
  }));
  renderPage(mock.client, '/home', [{ path: '/home', element: <Home /> }]);
  const slices = await screen.findByRole('table', { name: 'My slices' });
  expect(within(slices).getByRole('row', { name: /research/ })).toHaveTextContent('8');
  expect(within(slices).getByRole('link', { name: 'New GPR in research' })).toHaveAttribute('href', '/gprs/new?slice=s1');
  expect(within(slices).queryByRole('link', { name: 'New GPR in ops' })).not.toBeInTheDocument();
  const phases = screen.getByRole('list', { name: 'GPRs by phase' });
  expect(phases).toHaveTextContent('queued 1');
  expect(phases).toHaveTextContent('provisioned 1');
  const active = screen.getByRole('table', { name: 'Active GPRs' });
  expect(within(active).getByRole('link', { name: 'train-1' })).toHaveAttribute('href', '/gprs/g1');
  expect(within(active).queryByText('other')).not.toBeInTheDocument();

  const alerts = screen.getByRole('list', { name: 'Open alerts' });
  expect(alerts).toHaveTextContent('hot GPU');
  act(() => subs.get('HomeAlerts')!({ alerts: alert('a2', true, '2030-01-01T11:00:00Z', 'new one') }));
  expect(within(alerts).getAllByRole('listitem')[0]).toHaveTextContent('new one');
  act(() => subs.get('HomeAlerts')!({ alerts: alert('a1', false, '2030-01-01T10:00:00Z', 'hot GPU') }));
  expect(alerts).not.toHaveTextContent('hot GPU');
});
