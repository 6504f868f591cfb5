import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { MaintenanceWindows, isoToLocal, localToIso } from './MaintenanceWindows';
import { mockClient, renderPage } from '../user/testing';

const nodes = [
  { id: 'n1', name: 'h100-0' },
  { id: 'n2', name: 'h100-1' },
];
const planned = { id: 'w1', state: 'PLANNED', startsAt: '2030-01-01T10:00:00Z', endsAt: '2030-01-01T12:00:00Z', reason: 'PSU swap', createdBy: 'admin', node: nodes[1] };

function setup(windows: unknown[], result: unknown = { window: { id: 'w2' }, userErrors: [] }) {
  const mock = mockClient((name) => {
    if (name === 'AdminMaintenanceWindows') return { maintenanceWindows: windows };
    if (name === 'AdminPlanMaintenance') return { planMaintenance: result };
    if (name === 'AdminCancelMaintenance') return { cancelMaintenance: { window: { id: 'w1' }, userErrors: [] } };
    throw new Error(name);
  });
  renderPage(mock.client, '/admin/clusters', [{ path: '/admin/clusters', element: <MaintenanceWindows clusterId="c1" nodes={nodes} onChange={() => {}} /> }]);
  return mock;
}

describe('MaintenanceWindows', () => {
  it('lists the windows and cancels one after asking', async () => {
    const user = userEvent.setup();
    const { calls } = setup([planned]);
    const table = await screen.findByRole('table', { name: 'Maintenance windows' });
    expect(table).toHaveTextContent('h100-1');
    expect(table).toHaveTextContent('PSU swap');
    expect(table).toHaveTextContent('planned');
    await user.click(within(table).getByRole('button', { name: 'Cancel' }));
    await user.click(within(screen.getByRole('group', { name: 'Cancel the window on h100-1?' })).getByRole('button', { name: 'Confirm' }));
    await waitFor(() => expect(calls.find((c) => c.name === 'AdminCancelMaintenance')?.variables).toEqual({ input: { id: 'w1' } }));
  });

  it('plans a window on the chosen node from local times, and shows a refusal', async () => {
    const user = userEvent.setup();
    const refusal = { window: null, userErrors: [{ field: ['input', 'startsAt'], message: 'overlaps a window on this node' }] };
    const { calls } = setup([], refusal);
    expect(await screen.findByText('No maintenance planned on this cluster.')).toBeInTheDocument();
    const form = screen.getByRole('form', { name: 'Plan maintenance' });
    await user.selectOptions(within(form).getByLabelText('Node'), 'h100-1');
    await user.clear(within(form).getByLabelText('From'));
    await user.type(within(form).getByLabelText('From'), '2030-01-02T08:00');
    await user.clear(within(form).getByLabelText('Until'));
    await user.type(within(form).getByLabelText('Until'), '2030-01-02T09:30');
    await user.type(within(form).getByLabelText('Reason'), 'firmware');
    await user.click(within(form).getByRole('button', { name: 'Plan maintenance' }));
    await waitFor(() =>
      expect(calls.find((c) => c.name === 'AdminPlanMaintenance')?.variables).toEqual({
        input: { nodeId: 'n2', startsAt: new Date('2030-01-02T08:00').toISOString(), endsAt: new Date('2030-01-02T09:30').toISOString(), reason: 'firmware' },
      }),
    );
    expect(await screen.findByText(/overlaps a window on this node/)).toBeInTheDocument();
  });
});

describe('local times', () => {
  it('round-trip to the minute and refuse nonsense', () => {
    const at = new Date(2030, 0, 2, 8, 5);
    expect(isoToLocal(at)).toBe('2030-01-02T08:05');
    expect(localToIso(isoToLocal(at))).toBe(at.toISOString());
    expect(localToIso('')).toBeNull();
    expect(localToIso('not a time')).toBeNull();
  });
});
