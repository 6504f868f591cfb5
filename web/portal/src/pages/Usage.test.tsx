import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { Usage } from './Usage';
import { mockClient, renderPage } from './user/testing';

const role = { current: 'USER' };
vi.mock('../session', () => ({
  useSession: () => ({ viewer: { id: 'u1', name: 'olivia', role: role.current, memberships: [] } }),
}));

const group = (extra = {}) => ({ day: null, sliceName: null, user: null, gpuShape: null, clusterName: null, priority: null, ...extra });
const report = {
  refreshedAt: '2030-01-01T10:00:00Z',
  days: [{ group: group({ day: '2030-01-01' }), reservedGpuHours: 40, usedGpuHours: 28, waitingGpuHours: 24 }],
  totals: [{ reservedGpuHours: 40, usedGpuHours: 28, waitingGpuHours: 24, gprsStarted: 2 }],
  rows: [{ group: group({ user: 'alice' }), reservedGpuHours: 40, usedGpuHours: 28, waitingGpuHours: 24, gprsStarted: 2 }],
  waits: [{ group: group({ gpuShape: 'H100', priority: 100 }), started: 2, meanWaitSeconds: 2700, maxWaitSeconds: 5400, within1hPercent: 50, within24hPercent: 100 }],
  utilisation: [{ group: group({ clusterName: 'gpu-east' }), gpuHours: 0.3, busyGpuHours: 0.1, utilisationPercent: 50, heldGpuHours: 0.3, heldUtilisationPercent: 50 }],
};

function setup(memberships: unknown[]) {
  const mock = mockClient((name) => {
    if (name === 'UsageScopes') return { viewer: { memberships } };
    if (name === 'UsageAdminSlices') return { slices: { nodes: [{ id: 's1', name: 'team-a' }] } };
    if (name === 'UsageReport') return { usage: report };
    if (name === 'UsageCsv') return { usage: { usageCsv: 'user,used_gpu_hours\nalice,28\n' } };
    if (name === 'RefreshUsage') return { refreshUsage: { refreshedAt: '2030-01-01T10:01:00Z', userErrors: [] } };
    throw new Error(name);
  });
  renderPage(mock.client, '/usage', [{ path: '/usage', element: <Usage /> }]);
  return mock;
}

describe('Usage', () => {
  it("shows a slice owner their slice's GPU-hours, waits and utilisation, and exports the table as CSV", async () => {
    role.current = 'USER';
    const user = userEvent.setup();
    const saved: Blob[] = [];
    URL.createObjectURL = (b: Blob) => {
      saved.push(b);
      return 'blob:usage';
    };
    URL.revokeObjectURL = () => {};
    const { calls } = setup([
      { role: 'OWNER', slice: { id: 's1', name: 'team-a' } },
      { role: 'EDITOR', slice: { id: 's2', name: 'team-b' } },
    ]);
    const table = await screen.findByRole('table', { name: 'Usage by user' });
    expect(within(table).getByText('alice')).toBeInTheDocument();
    expect(within(table).getAllByRole('cell').map((c) => c.textContent)).toEqual(['alice', '28.0', '40.0', '24.0', '2']);
    const report = calls.find((c) => c.name === 'UsageReport');
    expect(report?.variables).toMatchObject({ slice: 's1', by: ['USER'] });
    // Only the owned slice is offered, and no "all slices".
    expect(screen.getByLabelText('Slice').querySelectorAll('option')).toHaveLength(1);
    expect(screen.getByRole('table', { name: 'Waits by shape and priority' })).toHaveTextContent('50.0 %');
    expect(screen.getByRole('img', { name: /GPU-hours per day/ })).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Roll up now' })).toBeNull();
    await user.click(screen.getByRole('button', { name: 'Download CSV' }));
    await waitFor(() => expect(saved).toHaveLength(1));
    const text = await new Promise<string>((done) => {
      const reader = new FileReader();
      reader.onload = () => done(reader.result as string);
      reader.readAsText(saved[0]);
    });
    expect(text).toBe('user,used_gpu_hours\nalice,28\n');
    expect(calls.find((c) => c.name === 'UsageCsv')?.variables).toMatchObject({ slice: 's1', by: ['USER'] });
  });

  it('tells a user who owns no slice that reports are for owners', async () => {
    role.current = 'USER';
    const { calls } = setup([{ role: 'EDITOR', slice: { id: 's2', name: 'team-b' } }]);
    expect(await screen.findByText(/you own no slice/)).toBeInTheDocument();
    expect(calls.some((c) => c.name === 'UsageReport')).toBe(false);
  });

  it('starts an admin on every slice grouped by slice, and rolls up on request', async () => {
    role.current = 'ADMIN';
    const user = userEvent.setup();
    const { calls } = setup([]);
    await screen.findByRole('table', { name: 'Usage by slice' });
    expect(calls.find((c) => c.name === 'UsageReport')?.variables).toMatchObject({ slice: null, by: ['SLICE'] });
    await user.click(screen.getByRole('button', { name: 'Roll up now' }));
    await waitFor(() => expect(calls.some((c) => c.name === 'RefreshUsage')).toBe(true));
  });
});
