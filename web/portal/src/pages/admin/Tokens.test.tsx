import { render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { Provider, type Client } from 'urql';
import { fromValue, never } from 'wonka';
import { Kind, type DocumentNode, type OperationDefinitionNode } from 'graphql';
import { Tokens } from './Tokens';

const name = (doc: DocumentNode) => (doc.definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION) as OperationDefinitionNode).name?.value;
const later = new Date(Date.now() + 30 * 86_400_000).toISOString();

function setup() {
  const calls: { name?: string; variables: unknown }[] = [];
  const client = {
    executeQuery: (op: { query: DocumentNode }) =>
      fromValue({
        operation: op,
        data: {
          tokens: {
            totalCount: 1,
            nodes: [{ id: 't1', name: 'ci', role: 'USER', createdAt: new Date().toISOString(), expiresAt: later, revokedAt: null, nodeName: null, cluster: null, user: { id: 'u1', name: 'alice' }, sliceScopes: null }],
          },
          users: [{ id: 'u1', name: 'alice', role: 'USER' }],
          slices: { nodes: [{ id: 's1', name: 'vision' }] },
        },
      }),
    executeMutation: (op: { query: DocumentNode; variables: unknown }) => {
      calls.push({ name: name(op.query), variables: op.variables });
      return fromValue({
        operation: op,
        data:
          name(op.query) === 'AdminTokensCreate'
            ? { createToken: { secret: 'egs_s3cret', token: { id: 't2', name: 'bot', expiresAt: later }, userErrors: [] } }
            : { revokeToken: { token: { id: 't1', revokedAt: new Date().toISOString() }, userErrors: [] } },
      });
    },
    executeSubscription: () => never,
  } as unknown as Client;
  render(
    <Provider value={client}>
      <Tokens />
    </Provider>,
  );
  return calls;
}

describe('Tokens', () => {
  it('creates a scoped token and shows its secret once', async () => {
    const calls = setup();
    const user = userEvent.setup();
    await user.type(screen.getByLabelText('Name'), 'bot');
    await user.selectOptions(screen.getByLabelText('User'), 'u1');
    await user.clear(screen.getByLabelText('Lifetime (days)'));
    await user.type(screen.getByLabelText('Lifetime (days)'), '7');
    await user.click(screen.getByRole('checkbox', { name: 'vision' }));
    await user.selectOptions(screen.getByLabelText('Role in vision'), 'VIEWER');
    await user.click(screen.getByRole('button', { name: 'Create token' }));
    expect(calls[0]).toEqual({
      name: 'AdminTokensCreate',
      variables: { input: { name: 'bot', role: 'USER', userId: 'u1', ttl: '168h', sliceScopes: [{ sliceId: 's1', role: 'VIEWER' }] } },
    });
    const box = screen.getByRole('region', { name: 'New token secret' });
    expect(within(box).getByDisplayValue('egs_s3cret')).toBeInTheDocument();
    expect(box).toHaveTextContent(/shown only once/);
    expect(within(box).getByRole('button', { name: 'Copy' })).toBeInTheDocument();
    await user.click(within(box).getByRole('button', { name: 'Done' }));
    expect(screen.queryByDisplayValue('egs_s3cret')).not.toBeInTheDocument();
  });

  it('revokes only after confirmation', async () => {
    const calls = setup();
    const user = userEvent.setup();
    const row = screen.getByRole('cell', { name: 'ci' }).closest('tr')!;
    await user.click(within(row).getByRole('button', { name: 'Revoke' }));
    expect(calls).toHaveLength(0);
    await user.click(within(row).getByRole('button', { name: 'Confirm' }));
    expect(calls[0]).toEqual({ name: 'AdminTokensRevoke', variables: { input: { id: 't1' } } });
  });
});
