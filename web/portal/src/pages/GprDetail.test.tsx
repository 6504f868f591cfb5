import { act, screen, waitFor, within } from '@testing-library/react';
import { getOperationAST, type DocumentNode } from 'graphql';
import { GprDetail } from './GprDetail';
import { mockClient, renderPage } from './user/testing';

type Sub = { vars: Record<string, unknown> | null; onData: (d: unknown) => void; resume?: (v: Record<string, unknown>) => Record<string, unknown> };
const subs = new Map<string, Sub>();
vi.mock('../api/live', () => ({
  useLive: (doc: DocumentNode, vars: Record<string, unknown> | null, onData: (d: unknown) => void, opts?: { resume?: Sub['resume'] }) => {
    subs.set(getOperationAST(doc)?.name?.value ?? '', { vars, onData, resume: opts?.resume });
    return null;
  },
}));

vi.mock('../session', () => ({ useSession: () => ({ viewer: { id: 'u1', name: 'alice', role: 'USER', memberships: [] } }) }));

const ev = (id: string, sequence: number, kind: string, message: string) => ({ id, sequence, kind, message, actor: 'system', createdAt: '2030-01-01T10:00:00Z' });

function gpr(phase: string) {
  const start = new Date(Date.now() - 3_600_000).toISOString();
  const end = new Date(Date.now() + 2 * 3_600_000 + 65_000).toISOString();
  return {
    gpr: {
      id: 'g1', name: 'train-1', phase, version: 3, reason: null, approval: 'NOT_REQUIRED', approvalReason: null,
      priority: 150, priorityBand: 'MEDIUM', nodeCount: 2, gpusPerNode: null, gpuShape: 'H100', instanceType: null,
      assignedGpuShape: 'H100', assignedInstanceType: 'p5', assignedCluster: { id: 'c1', name: 'east' }, preferredClusters: [],
      duration: 'PT3H', idleTimeout: null, preemptible: true, createdAt: start, earliestStartAt: null,
      provisionedAt: phase === 'PROVISIONED' ? start : null, exitAt: phase === 'PROVISIONED' ? end : null, completedAt: null,
      extendedBy: 'PT0S', extensionRequested: null,
      estimatedStartAt: null, estimatedStartMovesOn: null, startRange: null, startNoLaterThan: null, startNoLaterThanMovesLaterOn: null,
      queuePosition: null, releaseReason: null, kubernetesResource: null, preemptedBy: null,
      slice: { id: 's1', name: 'research', viewerRole: 'EDITOR' }, requester: { id: 'u1', name: 'alice' }, labels: [],
      nodes: [{ id: 'n1', name: 'node-a', instanceType: 'p5', gpuShape: 'H100', gpusPerNode: 8, health: 'HEALTHY', state: 'RESERVED', utilization: 50, cluster: { id: 'c1', name: 'east' } }],
      provisioningSteps: [{ operation: 'PROVISION', step: 'HAND_OVER', status: 'DONE', message: 'handed over', attempts: 1, startedAt: start, finishedAt: start }],
    },
  };
}

describe('GprDetail', () => {
  beforeEach(() => subs.clear());

  it('loads stored events, then appends live ones after the last, without repeats, and refreshes the GPR', async () => {
    let phase = 'PROVISIONED';
    const mock = mockClient((name, vars) => {
      if (name === 'GprDetail') return gpr(phase);
      if (name === 'GprDetailEvents') {
        return vars.after
          ? { gprEvents: { nodes: [ev('e3', 3, 'PROVISIONED', 'nodes handed over')], pageInfo: { hasNextPage: false, endCursor: 'c3' } } }
          : { gprEvents: { nodes: [ev('e1', 1, 'CREATED', 'created'), ev('e2', 2, 'QUEUED', 'queued')], pageInfo: { hasNextPage: true, endCursor: 'c2' } } };
      }
      throw new Error(name);
    });
    renderPage(mock.client, '/gprs/g1', [{ path: '/gprs/:gprId', element: <GprDetail /> }]);

    expect(await screen.findByRole('heading', { name: /train-1/ })).toBeInTheDocument();
    const timeline = await screen.findByRole('list', { name: 'Timeline' });
    expect(within(timeline).getAllByRole('listitem').map((li) => li.textContent)).toEqual([
      expect.stringContaining('CREATED'),
      expect.stringContaining('QUEUED'),
      expect.stringContaining('PROVISIONED'),
    ]);
    await waitFor(() => expect(subs.get('GprDetailLive')?.vars).toEqual({ gprId: 'g1', after: 'e3' }));

    phase = 'RELEASING';
    const before = mock.calls.filter((c) => c.name === 'GprDetail').length;
    act(() => {
      subs.get('GprDetailLive')!.onData({ gprEvents: ev('e3', 3, 'PROVISIONED', 'nodes handed over') });
      subs.get('GprDetailLive')!.onData({ gprEvents: ev('e4', 4, 'EARLY_RELEASED', 'released by alice') });
    });
    expect(within(timeline).getAllByRole('listitem')).toHaveLength(4);
    expect(within(timeline).getAllByRole('listitem')[3]).toHaveTextContent('EARLY_RELEASED released by alice');
    // A reconnect resumes after the last event received.
    expect(subs.get('GprDetailLive')!.resume!({ gprId: 'g1', after: 'e3' })).toEqual({ gprId: 'g1', after: 'e4' });
    await waitFor(() => expect(mock.calls.filter((c) => c.name === 'GprDetail').length).toBeGreaterThan(before));
    expect(await screen.findByText('releasing')).toBeInTheDocument();
  });

  it('shows a ticking time left, the nodes and the provisioning steps while provisioned', async () => {
    const mock = mockClient((name) =>
      name === 'GprDetail' ? gpr('PROVISIONED') : { gprEvents: { nodes: [], pageInfo: { hasNextPage: false, endCursor: null } } },
    );
    renderPage(mock.client, '/gprs/g1', [{ path: '/gprs/:gprId', element: <GprDetail /> }]);
    const left = await screen.findByLabelText('Time left');
    expect(left.textContent).toMatch(/^2:01:0\d$/);
    expect(screen.getByRole('table', { name: 'Nodes' })).toHaveTextContent('node-a');
    expect(screen.getByRole('table', { name: 'Provisioning steps' })).toHaveTextContent('HAND_OVER');
    expect(screen.getByRole('button', { name: 'Early release' })).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Cancel' })).not.toBeInTheDocument();
  });

  it('shows how much an extension may be before asking, then extends or asks an admin', async () => {
    const asked: Record<string, unknown>[] = [];
    const mock = mockClient((name, vars) => {
      if (name === 'GprDetail') return gpr('PROVISIONED');
      if (name === 'GprDetailEvents') return { gprEvents: { nodes: [], pageInfo: { hasNextPage: false, endCursor: null } } };
      if (name === 'UserExtendRoom') return { gprExtensionRoom: { maxNow: 'PT2H', withoutApproval: 'PT30M', limitedBy: 'a GPR of another slice is promised to start by 2030-01-01T12:00:00Z' } };
      if (name === 'UserExtendGpr') {
        asked.push(vars.input as Record<string, unknown>);
        const over = (vars.input as { by: string }).by !== '30m';
        return { extendGpr: { gpr: { id: 'g1', version: 4, exitAt: null, extendedBy: over ? 'PT0S' : 'PT30M', extensionRequested: over ? 'PT1H' : null }, userErrors: [] } };
      }
      throw new Error(name);
    });
    renderPage(mock.client, '/gprs/g1', [{ path: '/gprs/:gprId', element: <GprDetail /> }]);
    (await screen.findByRole('button', { name: 'Extend…' })).click();
    const group = await screen.findByRole('group', { name: 'Extend train-1' });
    expect(group).toHaveTextContent("Up to 2 h now, 30 m without an admin's approval");
    expect(group).toHaveTextContent('a GPR of another slice is promised');
    // Only what fits is offered; 30 minutes applies at once.
    const choice = within(group).getByRole('combobox') as HTMLSelectElement;
    expect(Array.from(choice.options).map((o) => o.textContent)).toEqual(['15 m', '30 m', '1 h', '2 h']);
    within(group).getByRole('button', { name: 'Extend' }).click();
    expect(await screen.findByText('Extended by 30 m.')).toBeInTheDocument();
    expect(asked).toEqual([{ id: 'g1', by: '30m' }]);
    // More than the grace asks an admin.
    (await screen.findByRole('button', { name: 'Extend…' })).click();
    const again = await screen.findByRole('group', { name: 'Extend train-1' });
    act(() => {
      const select = within(again).getByRole('combobox') as HTMLSelectElement;
      select.value = '60';
      select.dispatchEvent(new Event('change', { bubbles: true }));
    });
    within(again).getByRole('button', { name: 'Ask for approval' }).click();
    expect(await screen.findByText('Asked: an admin decides on the extension.')).toBeInTheDocument();
    expect(asked[1]).toEqual({ id: 'g1', by: '60m' });
  });
});
