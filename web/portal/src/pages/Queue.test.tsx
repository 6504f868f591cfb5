import { act, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { getOperationAST, type DocumentNode } from 'graphql';
import { Queue } from './Queue';
import { mockClient, renderPage } from './user/testing';

const subs = new Map<string, { vars: unknown; onData: (d: unknown) => void }>();
vi.mock('../api/live', () => ({
  useLive: (doc: DocumentNode, vars: unknown, onData: (d: unknown) => void) => {
    subs.set(getOperationAST(doc)?.name?.value ?? '', { vars, onData });
    return null;
  },
}));
vi.mock('../session', () => ({
  useSession: () => ({ viewer: { id: 'u1', name: 'alice', role: 'USER', memberships: [{ role: 'EDITOR', slice: { id: 's2', name: 'b' } }] } }),
}));

const waiting = (id: string, name: string, queuePosition: number, version = 1) => ({
  id, name, phase: 'QUEUED', version, priority: 120, nodeCount: 2, gpusPerNode: null, gpuShape: 'H100', instanceType: null,
  duration: 'PT2H30M', queuePosition, estimatedStartAt: new Date(Date.now() + 3_600_000).toISOString(),
  startNoLaterThan: new Date(Date.now() + 7_200_000).toISOString(), requester: { id: 'u1', name: 'alice' },
});
const running = {
  id: 'r1', name: 'serving', phase: 'PROVISIONED', version: 4, priority: 200, nodeCount: 1, gpusPerNode: null, gpuShape: null,
  instanceType: null, assignedGpuShape: 'A100', assignedInstanceType: 'a2', duration: 'PT1H', approvalReason: null,
  provisionedAt: new Date(Date.now() - 600_000).toISOString(), exitAt: new Date(Date.now() + 3_000_000).toISOString(),
  createdAt: new Date().toISOString(), assignedCluster: { id: 'c1', name: 'east' }, requester: { id: 'u2', name: 'bob' },
};

function setup(path: string) {
  const mock = mockClient((name) => {
    switch (name) {
      case 'QueueSlices':
        return { slices: { nodes: [{ id: 's1', name: 'a', viewerRole: 'VIEWER' }, { id: 's2', name: 'b', viewerRole: 'EDITOR' }] } };
      case 'QueueOthers':
        return { gprs: { nodes: [running] } };
      case 'QueueUpdate':
        return { updateGpr: { gpr: null, userErrors: [{ field: ['input', 'version'], message: 'changed since you read it', code: 'CONFLICT' }] } };
      case 'UserGprActionsCancel':
        return { cancelGpr: { gpr: { id: 'q1', phase: 'CANCELLED', version: 2 }, userErrors: [] } };
      case 'UserGprActionsEarlyRelease':
        return { earlyReleaseGpr: { gpr: { id: 'r1', phase: 'RELEASING', version: 5, exitAt: null }, userErrors: [] } };
    }
    throw new Error(name);
  });
  renderPage(mock.client, path, [
    { path: '/queue', element: <Queue /> },
    { path: '/queue/:sliceId', element: <Queue /> },
  ]);
  return mock;
}

describe('Queue', () => {
  beforeEach(() => subs.clear());

  it('goes to the first slice of mine', async () => {
    setup('/queue');
    await waitFor(() => expect(screen.getByLabelText('Slice')).toHaveValue('s2'));
    expect(subs.get('QueueLive')?.vars).toEqual({ sliceId: 's2' });
  });

  it('shows the live queue, edits with the version read, cancels after confirming', async () => {
    const mock = setup('/queue/s2');
    expect(screen.getByRole('heading', { name: 'Queue' })).toBeInTheDocument();
    await waitFor(() => expect(subs.get('QueueLive')).toBeDefined());
    act(() => subs.get('QueueLive')!.onData({ queueChanged: [waiting('q1', 'llama-a', 1, 7), waiting('q2', 'llama-b', 2)] }));
    const table = screen.getByRole('table', { name: 'Queue' });
    const row = within(table).getByRole('row', { name: /llama-a/ });
    expect(row).toHaveTextContent('2 × H100');
    expect(row).toHaveTextContent(/in ~1 h/);

    await userEvent.click(within(row).getByRole('button', { name: 'Edit' }));
    const form = screen.getByRole('form', { name: 'Edit llama-a' });
    expect(within(form).getByLabelText('Duration hours')).toHaveValue(2);
    expect(within(form).getByLabelText('Duration minutes')).toHaveValue(30);
    await userEvent.clear(within(form).getByLabelText('Priority'));
    await userEvent.type(within(form).getByLabelText('Priority'), '180');
    await userEvent.click(within(form).getByRole('button', { name: 'Save changes' }));
    expect(await within(form).findByText('changed since you read it')).toBeInTheDocument();
    expect(mock.calls.find((c) => c.name === 'QueueUpdate')?.variables).toEqual({ input: { id: 'q1', version: 7, priority: 180 } });

    await userEvent.click(within(row).getByRole('button', { name: 'Cancel' }));
    expect(mock.calls.some((c) => c.name === 'UserGprActionsCancel')).toBe(false);
    await userEvent.click(within(row).getByRole('button', { name: 'Confirm' }));
    await waitFor(() => expect(mock.calls.find((c) => c.name === 'UserGprActionsCancel')?.variables).toEqual({ input: { id: 'q1' } }));
  });

  it('lists running GPRs with time left and early release, refreshed on slice events', async () => {
    const mock = setup('/queue/s2');
    const table = await screen.findByRole('table', { name: 'Running' });
    const row = within(table).getByRole('row', { name: /serving/ });
    expect(row).toHaveTextContent(/0:49:\d\d|0:50:00/);
    await userEvent.click(within(row).getByRole('button', { name: 'Early release' }));
    await userEvent.click(within(row).getByRole('button', { name: 'Confirm' }));
    await waitFor(() => expect(mock.calls.some((c) => c.name === 'UserGprActionsEarlyRelease')).toBe(true));

    const before = mock.calls.filter((c) => c.name === 'QueueOthers').length;
    act(() => subs.get('QueueEvents')!.onData({ gprEvents: { id: 'e9', kind: 'RELEASING', gpr: { id: 'r1' } } }));
    await waitFor(() => expect(mock.calls.filter((c) => c.name === 'QueueOthers').length).toBeGreaterThan(before));
  });

  it('hides actions from viewers', async () => {
    setup('/queue/s1');
    await waitFor(() => expect(subs.get('QueueLive')).toBeDefined());
    act(() => subs.get('QueueLive')!.onData({ queueChanged: [waiting('q1', 'llama-a', 1)] }));
    await screen.findByRole('table', { name: 'Running' });
    expect(screen.queryByRole('button', { name: 'Edit' })).not.toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Early release' })).not.toBeInTheDocument();
  });
});
