import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { CreateGpr } from './CreateGpr';
import { mockClient, renderPage } from './user/testing';

vi.mock('../session', () => ({
  useSession: () => ({ viewer: { id: 'u1', name: 'alice', role: 'USER', memberships: [] } }),
}));

const slices = {
  slices: {
    nodes: [
      { id: 's-view', name: 'viewing', viewerRole: 'VIEWER', clusters: [], policy: policy([]) },
      { id: 's1', name: 'research', viewerRole: 'EDITOR', clusters: [{ id: 'c1', name: 'east' }, { id: 'c2', name: 'west' }], policy: policy([]) },
      { id: 's2', name: 'prod', viewerRole: 'OWNER', clusters: [{ id: 'c1', name: 'east' }], policy: policy(['H100']) },
    ],
  },
};
function policy(allowedShapes: string[]) {
  return {
    allowedShapes,
    priorityMin: 1,
    priorityMax: 200,
    maxDuration: 'PT24H',
    maxNodesPerGpr: 4,
    maxGpusPerGpr: null,
    defaultIdleTimeout: 'PT1H',
    maxIdleTimeout: null,
    autoEviction: true,
  };
}
const pools = {
  pools: [
    { gpuShape: 'H100', instanceType: 'p5', gpusPerNode: 8, freeNodes: 1, totalNodes: 4, cluster: { id: 'c1', name: 'east' } },
    { gpuShape: 'A100', instanceType: 'a2', gpusPerNode: 8, freeNodes: 0, totalNodes: 2, cluster: { id: 'c2', name: 'west' } },
  ],
};
const estimates = {
  waitTimeEstimates: [
    { cluster: { id: 'c1', name: 'east' }, instanceType: 'p5', gpuShape: 'H100', freeNodes: 0, healthyNodes: 4, estimatedStartAt: '2030-01-01T12:00:00Z', estimatedWait: 'PT2H', startNoLaterThan: '2030-01-01T14:00:00Z', startRange: { p10: '2030-01-01T11:00:00Z', p90: '2030-01-01T15:00:00Z' } },
    { cluster: { id: 'c2', name: 'west' }, instanceType: 'a2', gpuShape: 'A100', freeNodes: 2, healthyNodes: 2, estimatedStartAt: '2030-01-01T10:00:00Z', estimatedWait: 'PT0S', startNoLaterThan: '2030-01-01T10:00:00Z', startRange: { p10: '2030-01-01T10:00:00Z', p90: '2030-01-01T10:00:00Z' } },
  ],
};

const profiles = [
  { id: 't1', name: 'llm-finetune', description: 'One H100 node for half a day', nodeCount: 1, gpusPerNode: null, gpuShape: 'H100', instanceType: null, priority: 120, duration: 'PT12H', idleTimeout: 'PT30M' },
  { id: 't2', name: 'notebook', description: null, nodeCount: 1, gpusPerNode: 2, gpuShape: 'A100', instanceType: 'a2', priority: 101, duration: 'PT4H', idleTimeout: null },
];

function setup(path: string, createAnswer: unknown = { createGpr: { gpr: { id: 'g9', phase: 'QUEUED' }, userErrors: [] } }) {
  const mock = mockClient((name, vars) => {
    if (name === 'CreateGprSlices') return slices;
    if (name === 'CreateGprPools') return pools;
    if (name === 'CreateGprWaitTimes') return estimates;
    if (name === 'CreateGprSubmit') return createAnswer;
    if (name === 'CreateGprProfiles') return { gprTemplates: vars.sliceId === 's1' ? profiles : [] };
    throw new Error(`unexpected ${name}`);
  });
  renderPage(mock.client, path, [
    { path: '/gprs/new', element: <CreateGpr /> },
    { path: '/gprs/:id', element: <h1>Opened GPR</h1> },
  ]);
  return mock;
}

describe('CreateGpr', () => {
  it('offers only slices the user may create GPRs in and preselects ?slice=', async () => {
    setup('/gprs/new?slice=s2');
    const select = await screen.findByLabelText('Slice');
    expect(screen.getByRole('heading', { name: 'New GPR' })).toBeInTheDocument();
    await waitFor(() => expect(select).toHaveValue('s2'));
    expect(within(select).getAllByRole('option').map((o) => o.textContent)).toEqual(['research', 'prod']);
    // The policy's allowed shapes are the choices.
    expect(within(screen.getByLabelText('GPU shape')).getAllByRole('option').map((o) => o.textContent)).toEqual([
      'Any (the scheduler picks)',
      'H100',
    ]);
    for (const label of ['Name', 'Nodes', 'GPUs per node', 'Priority', 'Duration hours', 'Duration minutes', 'Idle timeout hours']) {
      expect(screen.getByLabelText(label)).toBeInTheDocument();
    }
    expect(screen.getByLabelText('Priority')).toHaveValue(100);
  });

  it('shows wait times soonest first and fills the form from a chosen row, by keyboard too', async () => {
    const { calls } = setup('/gprs/new?slice=s1');
    await waitFor(() => expect(screen.getByLabelText('Slice')).toHaveValue('s1'));
    await userEvent.clear(screen.getByLabelText('Nodes'));
    await userEvent.type(screen.getByLabelText('Nodes'), '2');
    await userEvent.click(screen.getByRole('button', { name: 'Get wait time' }));
    const table = await screen.findByRole('table', { name: 'Wait times' });
    const rows = within(table).getAllByRole('row').slice(1);
    expect(rows[0]).toHaveTextContent('west');
    expect(rows[1]).toHaveTextContent('east');
    // Each row says when it is likely to start: its range's p10 to p90.
    expect(within(rows[1]).getByTitle(/9 in 10 GPRs like it/)).toHaveTextContent(/likely .+ – .+/);
    expect(calls.find((c) => c.name === 'CreateGprWaitTimes')?.variables).toEqual({
      input: { sliceId: 's1', nodeCount: 2, priority: 100, duration: '1h', preferredClusterIds: [] },
    });

    rows[1].focus();
    fireEvent.keyDown(rows[1], { key: 'Enter' });
    expect(screen.getByLabelText('GPU shape')).toHaveValue('H100');
    expect(screen.getByLabelText('Instance type')).toHaveValue('p5');
    expect(screen.getByLabelText('Preferred cluster')).toHaveValue('c1');
    expect(rows[1]).toHaveAttribute('aria-current', 'true');
    expect(rows[1]).toHaveTextContent('Chosen');

    await userEvent.click(rows[0]);
    expect(screen.getByLabelText('GPU shape')).toHaveValue('A100');
    expect(rows[1]).not.toHaveAttribute('aria-current');
  });

  it('lists the gateway’s userErrors by the form and keeps the form', async () => {
    const { calls } = setup('/gprs/new', {
      createGpr: { gpr: null, userErrors: [{ field: ['input', 'name'], message: 'must be a DNS label', code: 'INVALID_INPUT' }] },
    });
    await waitFor(() => expect(screen.getByLabelText('Slice')).toHaveValue('s1'));
    await userEvent.type(screen.getByLabelText('Name'), 'Bad Name');
    await userEvent.click(screen.getByRole('button', { name: 'Submit GPR' }));
    expect(await screen.findByText('must be a DNS label')).toBeInTheDocument();
    expect(screen.getByLabelText('Name')).toHaveValue('Bad Name');
    expect(screen.getByLabelText('Name')).toHaveAttribute('aria-invalid', 'true');
    expect(screen.getByRole('heading', { name: 'New GPR' })).toBeInTheDocument();
    expect(calls.filter((c) => c.name === 'CreateGprSubmit')).toHaveLength(1);
  });

  it('checks the form before sending and opens the new GPR on success', async () => {
    const { calls } = setup('/gprs/new?slice=s1');
    await waitFor(() => expect(screen.getByLabelText('Slice')).toHaveValue('s1'));
    await userEvent.click(screen.getByRole('button', { name: 'Submit GPR' }));
    expect(await screen.findByText(/Give the GPR a name/)).toBeInTheDocument();
    expect(calls.some((c) => c.name === 'CreateGprSubmit')).toBe(false);

    await userEvent.type(screen.getByLabelText('Name'), 'train-1');
    await userEvent.clear(screen.getByLabelText('Duration hours'));
    await userEvent.type(screen.getByLabelText('Duration hours'), '2');
    await userEvent.clear(screen.getByLabelText('Duration minutes'));
    await userEvent.type(screen.getByLabelText('Duration minutes'), '30');
    await userEvent.type(screen.getByLabelText('Idle timeout hours'), '1');
    await userEvent.click(screen.getByRole('button', { name: 'Submit GPR' }));
    expect(await screen.findByRole('heading', { name: 'Opened GPR' })).toBeInTheDocument();
    expect(calls.find((c) => c.name === 'CreateGprSubmit')?.variables).toEqual({
      input: {
        sliceId: 's1',
        name: 'train-1',
        nodeCount: 1,
        priority: 100,
        duration: '2h30m',
        idleTimeout: '1h',
        preferredClusterIds: [],
        preemptible: true,
      },
    });
  });

  it('starts from a profile of the slice: the form is filled from it and the GPR records it', async () => {
    const { calls } = setup('/gprs/new?slice=s1');
    const catalogue = await screen.findByRole('list', { name: 'Profiles' });
    expect(within(catalogue).getAllByRole('listitem').map((li) => li.querySelector('b')?.textContent)).toEqual(['llm-finetune', 'notebook']);
    await userEvent.click(within(catalogue).getByRole('button', { name: 'Use profile llm-finetune' }));
    expect(screen.getByRole('status')).toHaveTextContent('Filled from llm-finetune');
    expect(screen.getByLabelText('Nodes')).toHaveValue(1);
    expect(screen.getByLabelText('Duration hours')).toHaveValue(12);
    expect(screen.getByLabelText('Idle timeout hours')).toHaveValue(0.5);
    expect(screen.getByLabelText('Priority')).toHaveValue(120);
    await userEvent.type(screen.getByLabelText('Name'), 'ft-7');
    await userEvent.click(screen.getByRole('button', { name: 'Submit GPR' }));
    expect(await screen.findByRole('heading', { name: 'Opened GPR' })).toBeInTheDocument();
    expect(calls.find((c) => c.name === 'CreateGprSubmit')?.variables).toEqual({
      input: {
        sliceId: 's1',
        name: 'ft-7',
        nodeCount: 1,
        priority: 120,
        duration: '12h',
        idleTimeout: '30m',
        preferredClusterIds: [],
        preemptible: true,
        gpuShape: 'H100',
        templateId: 't1',
      },
    });
  });

  it('offers no catalogue where the slice has no profiles, and forgets the profile on a change of slice', async () => {
    setup('/gprs/new?slice=s1');
    await userEvent.click(await screen.findByRole('button', { name: 'Use profile notebook' }));
    fireEvent.change(screen.getByLabelText('Slice'), { target: { value: 's2' } });
    await waitFor(() => expect(screen.queryByRole('list', { name: 'Profiles' })).not.toBeInTheDocument());
    expect(screen.queryByText(/Filled from/)).not.toBeInTheDocument();
  });
});
