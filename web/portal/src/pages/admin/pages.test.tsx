import { render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { MemoryRouter } from 'react-router-dom';
import { Provider } from 'urql';
import { AdminDashboard } from './Dashboard';
import { Slices } from './Slices';
import { Clusters } from './Clusters';
import { mockClient } from './testClient';

const soon = (h: number) => new Date(Date.now() + h * 3_600_000).toISOString();
const c1 = { id: 'c1', name: 'east' };
const pool = (shape: string, total: number, free: number, reserved: number, unavailable: number) => ({
  cluster: c1,
  instanceType: 'p5',
  gpuShape: shape,
  gpusPerNode: 8,
  gpuMemoryMib: 81920,
  totalNodes: total,
  freeNodes: free,
  reservedNodes: reserved,
  unavailableNodes: unavailable,
});

const policy = { allowedShapes: [], maxNodesPerGpr: 4, priorityMin: 1, priorityMax: 200, maxDuration: 'PT24H', defaultIdleTimeout: null, autoEviction: true, requeueOnEviction: true };
const slice = {
  id: 's1',
  name: 'vision',
  description: 'CV team',
  createdAt: soon(-100),
  updatedAt: soon(-1),
  clusters: [c1],
  namespaces: [{ id: 'n1', name: 'vision-train', cluster: c1 }],
  members: [{ role: 'EDITOR', user: { id: 'u1', name: 'alice' } }],
  policy,
};

function show(ui: React.ReactNode, queries: Record<string, unknown>, mutations: Record<string, unknown> = {}) {
  const { client, calls } = mockClient(queries, mutations);
  render(
    <Provider value={client}>
      <MemoryRouter>{ui}</MemoryRouter>
    </Provider>,
  );
  return calls;
}

describe('admin pages', () => {
  it('dashboard: allocation by cluster and shape, queue depth, open alerts', () => {
    show(<AdminDashboard />, {
      AdminDashboard: {
        pools: [pool('H100', 10, 2, 7, 1), pool('A100', 4, 4, 0, 0)],
        nodes: { totalCount: 2, nodes: [{ id: 'x', gpuShape: 'H100', utilization: 80, cluster: { id: 'c1' } }, { id: 'y', gpuShape: 'A100', utilization: 20, cluster: { id: 'c1' } }] },
        queue: [{ id: 'g', name: 'g', nodeCount: 3, gpuShape: 'H100', instanceType: null, assignedGpuShape: 'H100', assignedInstanceType: 'p5', assignedCluster: c1 }],
        pending: { totalCount: 2 },
        alerts: { totalCount: 1, nodes: [{ id: 'a', kind: 'OVER_TEMPERATURE', severity: 'CRITICAL', message: 'GPU 3 at 91 °C', open: true, raisedAt: soon(-0.2), cluster: c1, node: { id: 'x', name: 'node-1' }, gpr: null, slice: null }] },
      },
    });
    expect(screen.getByRole('heading', { name: 'Dashboard' })).toBeInTheDocument();
    const byCluster = screen.getByRole('table', { name: 'Allocation by cluster' });
    expect(within(byCluster).getByRole('img', { name: '7 reserved, 6 free, 1 unavailable of 14 nodes' })).toBeInTheDocument();
    expect(within(byCluster).getByText('54 %')).toBeInTheDocument(); // 7 of 13 usable
    expect(within(byCluster).getByText('50 %')).toBeInTheDocument(); // utilisation
    const byShape = screen.getByRole('table', { name: 'Allocation by GPU shape' });
    expect(within(byShape).getByText('H100')).toBeInTheDocument();
    expect(within(screen.getByRole('table', { name: 'Queue depth by pool' })).getByText('east · p5 · H100')).toBeInTheDocument();
    expect(within(screen.getByRole('list', { name: 'Open alerts' })).getByText('GPU 3 at 91 °C')).toBeInTheDocument();
  });

  it('clusters: list and the chosen cluster with a pool schedule and nodes', () => {
    show(<Clusters />, {
      AdminClusters: {
        clusters: [{ ...c1, provider: 'SIMULATED', cloud: 'aws', region: 'us-east-1', health: 'HEALTHY', registrationStatus: 'REGISTERED', lastContactAt: soon(-0.01), pools: [pool('H100', 4, 1, 3, 0)] }],
      },
      AdminClusterDetail: {
        cluster: {
          ...c1,
          pools: [pool('H100', 4, 1, 3, 0)],
          nodes: {
            totalCount: 1,
            nodes: [{ id: 'n', name: 'node-1', instanceType: 'p5', gpuShape: 'H100', gpusPerNode: 8, gpuMemoryMib: 81920, health: 'HEALTHY', state: 'RESERVED', zone: null, utilization: 42, lastHeartbeatAt: soon(0), allocatedGpr: { id: 'g1', name: 'train', slice: { id: 's1', name: 'vision' } } }],
          },
        },
        queue: [],
        running: { nodes: [{ id: 'g1', name: 'train', phase: 'PROVISIONED', nodeCount: 3, duration: 'PT6H', gpuShape: null, instanceType: null, assignedGpuShape: 'H100', assignedInstanceType: 'p5', assignedCluster: { id: 'c1' }, slice: { id: 's1', name: 'vision' }, estimatedStartAt: null, startNoLaterThan: null, provisionedAt: soon(-1), exitAt: soon(5) }] },
      },
    });
    expect(screen.getByRole('heading', { name: 'Clusters' })).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'east' })).toHaveAttribute('aria-pressed', 'true');
    expect(screen.getByRole('link', { name: /^vision\/train × 3 nodes, running until/ })).toBeInTheDocument();
    const nodes = screen.getByRole('table', { name: 'Nodes of east' });
    expect(within(nodes).getByRole('link', { name: 'train' })).toHaveAttribute('href', '/gprs/g1');
  });

  it('slices: edit members and policy through the API', async () => {
    const calls = show(
      <Slices />,
      { AdminSlices: { slices: { nodes: [slice] }, users: [{ id: 'u1', name: 'alice' }, { id: 'u2', name: 'bob' }], clusters: [c1], pools: [{ gpuShape: 'H100' }] } },
      {
        AdminSlicesAddMember: { addSliceMember: { slice, userErrors: [] } },
        AdminSlicesSetPolicy: { setSlicePolicy: { slice: null, userErrors: [{ field: ['input', 'policy', 'priorityMax'], message: 'too high', code: 'INVALID_INPUT' }] } },
      },
    );
    const user = userEvent.setup();
    await user.click(screen.getByRole('button', { name: 'vision' }));
    await user.selectOptions(screen.getByLabelText('Role of alice'), 'OWNER');
    expect(calls.at(-1)).toEqual({ name: 'AdminSlicesAddMember', variables: { input: { sliceId: 's1', userId: 'u1', role: 'OWNER' } } });
    expect(screen.getByLabelText('Max duration (hours)')).toHaveValue(24);
    await user.click(screen.getByRole('checkbox', { name: 'H100' }));
    await user.click(screen.getByRole('button', { name: 'Save policy' }));
    expect(calls.at(-1)).toMatchObject({ name: 'AdminSlicesSetPolicy', variables: { input: { sliceId: 's1', policy: { allowedShapes: ['H100'], maxNodesPerGpr: 4, maxDuration: '24h' } } } });
    expect(await screen.findByText('too high')).toBeInTheDocument();
  });
});
