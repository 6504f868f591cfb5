import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { MILESTONES, Notifications } from './Notifications';
import { mockClient, renderPage } from './user/testing';

vi.mock('../session', () => ({
  useSession: () => ({ viewer: { id: 'u1', name: 'olga', role: 'USER', memberships: [] } }),
}));

const channel = {
  id: 'c1',
  name: 'phone',
  kind: 'SLACK',
  target: 'https://hooks.slack.com',
  milestones: ['PROVISIONED', 'RELEASED'],
  estimateMovedMinutes: null,
  enabled: true,
  signed: false,
  failing: true,
  failuresInARow: 2,
  lastError: 'PROVISIONED (after 1 attempt(s)): HTTP 404 Not Found',
  lastDeliveredAt: null,
  lastFailedAt: '2030-01-01T10:00:00Z',
  slice: null,
  deliveries: [
    {
      id: 'd1',
      milestone: 'PROVISIONED',
      state: 'FAILED',
      attempts: 1,
      lastError: 'HTTP 404 Not Found',
      createdAt: '2030-01-01T10:00:00Z',
      deliveredAt: null,
      nextAttemptAt: null,
      gpr: { id: 'g1', name: 'train-1' },
    },
  ],
};

function setup() {
  const mock = mockClient((name) => {
    if (name === 'Notifications')
      return {
        notificationOptions: { email: false, publicTargetsOnly: true, defaultMilestones: ['PROVISIONED', 'EXIT_WARNING', 'RELEASED', 'PREEMPTED', 'FAILED'] },
        notificationChannels: [channel],
        viewer: { memberships: [{ role: 'OWNER', slice: { id: 's1', name: 'research' } }, { role: 'EDITOR', slice: { id: 's2', name: 'vision' } }] },
        slices: { nodes: [] },
      };
    if (name === 'CreateNotificationChannel')
      return { createNotificationChannel: { channel: { id: 'c2', name: 'ci' }, signingSecret: 'whsec_abc', userErrors: [] } };
    if (name === 'TestNotificationChannel') return { testNotificationChannel: { delivered: false, error: 'HTTP 404 Not Found', userErrors: [] } };
    throw new Error(name);
  });
  renderPage(mock.client, '/notifications', [{ path: '/notifications', element: <Notifications /> }]);
  return mock;
}

describe('Notifications', () => {
  it('shows a failing channel and its deliveries, and says what a test message did', async () => {
    const user = userEvent.setup();
    const { calls } = setup();
    const row = await screen.findByRole('article', { name: 'Channel phone' });
    expect(row).toHaveTextContent('failing (2)');
    expect(row).toHaveTextContent('HTTP 404 Not Found');
    expect(within(row).getByRole('table', { name: 'Deliveries of phone' })).toHaveTextContent('train-1');
    await user.click(within(row).getByRole('button', { name: 'Send a test message' }));
    expect(await within(row).findByRole('status')).toHaveTextContent('Test message not delivered: HTTP 404 Not Found');
    expect(calls.find((c) => c.name === 'TestNotificationChannel')?.variables).toEqual({ input: { id: 'c1' } });
  });

  it('makes a signed webhook for a slice the viewer owns and shows its key once', async () => {
    const user = userEvent.setup();
    const { calls } = setup();
    const form = await screen.findByRole('form', { name: 'New channel' });
    const forOptions = within(form).getByLabelText('For').querySelectorAll('option');
    expect([...forOptions].map((o) => o.textContent)).toEqual(['my GPRs', 'every GPR of slice research']);
    expect(within(form).getByRole('option', { name: /E-mail/ })).toBeDisabled();
    await user.selectOptions(within(form).getByLabelText('For'), 's1');
    await user.selectOptions(within(form).getByLabelText('Kind'), 'WEBHOOK');
    await user.type(within(form).getByLabelText('Name'), 'ci');
    await user.type(within(form).getByLabelText('URL'), 'https://ci.example.com/hook');
    await user.click(within(form).getByLabelText('estimate moved'));
    await user.clear(within(form).getByLabelText('Minutes the estimate must move'));
    await user.type(within(form).getByLabelText('Minutes the estimate must move'), '45');
    await user.click(within(form).getByRole('button', { name: 'Create channel' }));
    expect(await screen.findByText('whsec_abc')).toBeVisible();
    await waitFor(() =>
      expect(calls.find((c) => c.name === 'CreateNotificationChannel')?.variables).toEqual({
        input: {
          sliceId: 's1',
          kind: 'WEBHOOK',
          name: 'ci',
          target: 'https://ci.example.com/hook',
          milestones: ['PROVISIONED', 'EXIT_WARNING', 'RELEASED', 'PREEMPTED', 'FAILED', 'ESTIMATE_MOVED'],
          estimateMovedMinutes: 45,
        },
      }),
    );
  });

  it('offers every milestone the API has, once', () => {
    const sdl = readFileSync(resolve(__dirname, '../../../../schema/schema.graphql'), 'utf8');
    const body = /enum Milestone \{([^}]*)\}/.exec(sdl)![1];
    const inSchema = body.split('\n').map((l) => l.trim()).filter((l) => /^[A-Z0-9_]+$/.test(l));
    expect([...MILESTONES].sort()).toEqual(inSchema.sort());
  });
});
