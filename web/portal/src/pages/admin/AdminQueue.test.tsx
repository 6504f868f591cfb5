import { render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { MemoryRouter } from 'react-router-dom';
import { Provider, type Client } from 'urql';
import { fromValue, never } from 'wonka';
import { Kind, type DocumentNode, type OperationDefinitionNode } from 'graphql';
import { AdminQueue } from './AdminQueue';

const at = (h: number) => new Date(Date.now() + h * 3_600_000).toISOString();

const gpr = (id: string, name: string, extra: Record<string, unknown> = {}) => ({
  __typename: 'Gpr',
  id,
  name,
  version: 3,
  phase: 'QUEUED',
  priority: 101,
  priorityBand: 'MEDIUM',
  queuePosition: 1,
  nodeCount: 2,
  gpusPerNode: null,
  gpuShape: 'NVIDIA-H100',
  instanceType: null,
  assignedGpuShape: 'NVIDIA-H100',
  assignedInstanceType: 'p5.48xlarge',
  assignedCluster: { __typename: 'Cluster', id: 'c1', name: 'east' },
  slice: { __typename: 'Slice', id: 's1', name: 'vision' },
  requester: { __typename: 'User', id: 'u1', name: 'alice' },
  duration: 'PT6H',
  estimatedStartAt: at(2),
  startNoLaterThan: at(3),
  approvalReason: null,
  createdAt: at(-1),
  provisionedAt: null,
  exitAt: null,
  ...extra,
});

function opName(doc: DocumentNode) {
  return (doc.definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION) as OperationDefinitionNode).name?.value;
}

function setup() {
  const mutations: { name: string | undefined; variables: unknown }[] = [];
  const client = {
    executeQuery: (op: { query: DocumentNode }) => {
      const name = opName(op.query);
      if (name === 'AdminQueue') return fromValue({ operation: op, data: { queue: [gpr('g1', 'train-a'), gpr('g2', 'train-b', { queuePosition: 2, priority: 90 })] } });
      if (name === 'AdminQueueSide')
        return fromValue({
          operation: op,
          data: {
            clusters: [{ __typename: 'Cluster', id: 'c1', name: 'east' }],
            pools: [{ __typename: 'Pool', gpuShape: 'NVIDIA-H100' }],
            pending: { totalCount: 1, nodes: [gpr('g3', 'big-run', { phase: 'PENDING_APPROVAL', approvalReason: 'over 4 nodes' })] },
            running: { totalCount: 1, nodes: [gpr('g4', 'serving', { phase: 'PROVISIONED', provisionedAt: at(-2), exitAt: at(4) })] },
          },
        });
      return never;
    },
    executeMutation: (op: { query: DocumentNode; variables: unknown }) => {
      const name = opName(op.query);
      mutations.push({ name, variables: op.variables });
      const payload = { gpr: { __typename: 'Gpr', id: 'x', priority: 1, version: 4, queuePosition: 1, phase: 'QUEUED' }, userErrors: [] };
      const field = { AdminQueueSetPriority: 'setGprPriority', AdminQueueApprove: 'approveGpr', AdminQueueReject: 'rejectGpr', AdminQueueEarlyRelease: 'earlyReleaseGpr' }[name!]!;
      return fromValue({ operation: op, data: { [field]: payload } });
    },
    executeSubscription: () => never,
  } as unknown as Client;
  render(
    <Provider value={client}>
      <MemoryRouter>
        <AdminQueue />
      </MemoryRouter>
    </Provider>,
  );
  return mutations;
}

describe('AdminQueue', () => {
  it('lists the queue with links, relative estimates and local promises', () => {
    setup();
    expect(screen.getByRole('heading', { name: 'Global queue' })).toBeInTheDocument();
    const table = screen.getByRole('table', { name: 'Global queue' });
    const link = within(table).getByRole('link', { name: 'train-a' });
    expect(link).toHaveAttribute('href', '/gprs/g1');
    expect(within(table).getAllByText(/in ~2 h/).length).toBeGreaterThan(0);
    expect(within(link.closest('tr')!).getByText('alice')).toBeInTheDocument();
  });

  it('sets a typed priority and raises by 10', async () => {
    const mutations = setup();
    const user = userEvent.setup();
    const input = screen.getByLabelText('Priority for train-b');
    await user.clear(input);
    await user.type(input, '250');
    const row = input.closest('tr')!;
    await user.click(within(row).getByRole('button', { name: 'Set priority' }));
    expect(mutations.at(-1)).toEqual({ name: 'AdminQueueSetPriority', variables: { input: { id: 'g2', priority: 250 } } });
    expect(await screen.findByText('Priority of train-b set to 250.')).toBeInTheDocument();

    await user.click(screen.getByRole('button', { name: 'Raise priority of train-a' }));
    expect(mutations.at(-1)).toEqual({ name: 'AdminQueueSetPriority', variables: { input: { id: 'g1', priority: 111 } } });
  });

  it('refuses an out-of-range priority without asking the gateway', async () => {
    const mutations = setup();
    const user = userEvent.setup();
    const input = screen.getByLabelText('Priority for train-a');
    await user.clear(input);
    await user.type(input, '999');
    await user.click(within(input.closest('tr')!).getByRole('button', { name: 'Set priority' }));
    expect(mutations).toHaveLength(0);
    expect(input).toBeInvalid();
  });

  it('approves, and rejects with a reason after confirmation', async () => {
    const mutations = setup();
    const user = userEvent.setup();
    const section = screen.getByRole('region', { name: /Waiting for approval/ });
    expect(within(section).getByText('over 4 nodes')).toBeInTheDocument();
    await user.click(within(section).getByRole('button', { name: 'Approve' }));
    expect(mutations.at(-1)).toEqual({ name: 'AdminQueueApprove', variables: { input: { id: 'g3' } } });

    await user.click(within(section).getByRole('button', { name: 'Reject' }));
    expect(mutations).toHaveLength(1); // asks first
    await user.type(within(section).getByLabelText('Reason for rejecting big-run'), 'too big');
    await user.click(within(section).getByRole('button', { name: 'Confirm' }));
    expect(mutations.at(-1)).toEqual({ name: 'AdminQueueReject', variables: { input: { id: 'g3', reason: 'too big' } } });
  });

  it('early-releases a running GPR only after confirmation', async () => {
    const mutations = setup();
    const user = userEvent.setup();
    const section = screen.getByRole('region', { name: /Running/ });
    await user.click(within(section).getByRole('button', { name: 'Early release' }));
    expect(mutations).toHaveLength(0);
    await user.click(within(section).getByRole('button', { name: 'Confirm' }));
    expect(mutations.at(-1)).toEqual({ name: 'AdminQueueEarlyRelease', variables: { input: { id: 'g4' } } });
  });
});
