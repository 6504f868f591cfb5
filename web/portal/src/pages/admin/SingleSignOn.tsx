// Single sign-on: the rules that turn identity-provider groups into slice roles or the admin
// role at each sign-in (added and taken back as the groups change).
import { useState, type FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../../gql';
import type { SliceRole } from '../../gql/graphql';
import { Card, ConfirmButton, Empty, ErrorBox, Loading, Time, UserErrors } from '../../components/ui';
import './admin.css';

const RulesQuery = graphql(`
  query AdminSsoRules {
    ssoGroupRules {
      id
      group
      role
      grantsAdmin
      createdAt
      slice {
        id
        name
      }
    }
    slices(first: 100) {
      nodes {
        id
        name
      }
    }
  }
`);

const CreateRule = graphql(`
  mutation AdminSsoCreateRule($input: CreateSsoGroupRuleInput!) {
    createSsoGroupRule(input: $input) {
      rule {
        id
      }
      userErrors {
        field
        message
      }
    }
  }
`);

const DeleteRule = graphql(`
  mutation AdminSsoDeleteRule($input: SsoGroupRuleRef!) {
    deleteSsoGroupRule(input: $input) {
      rule {
        id
      }
      userErrors {
        field
        message
      }
    }
  }
`);

const ROLES: SliceRole[] = ['VIEWER', 'EDITOR', 'OWNER'];

export function SingleSignOn() {
  const [{ data, fetching, error }, refetch] = useQuery({ query: RulesQuery });
  const reload = () => refetch({ requestPolicy: 'network-only' });
  const [created, create] = useMutation(CreateRule);
  const [deleted, remove] = useMutation(DeleteRule);
  const [group, setGroup] = useState('');
  const [admin, setAdmin] = useState(false);
  const [slice, setSlice] = useState('');
  const [role, setRole] = useState<SliceRole>('VIEWER');
  const slices = data?.slices.nodes ?? [];

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const input = admin ? { group, grantsAdmin: true } : { group, sliceId: slice || slices[0]?.id, role };
    const result = await create({ input });
    if (result.data?.createSsoGroupRule.rule) {
      setGroup('');
      reload();
    }
  };

  return (
    <>
      <h1>Single sign-on</h1>
      <p className="muted">
        People sign in with the company's identity provider (OpenID Connect). At each sign-in the groups in their ID token are matched against these
        rules: a rule's slice role or admin role is granted, and what a rule granted is taken back once the groups no longer match. Memberships an owner
        or admin gave by hand are never changed.
      </p>
      <ErrorBox error={error ?? created.error ?? deleted.error} retry={reload} />
      <Card title="Add a rule">
        <form className="usage-controls" onSubmit={submit} aria-label="Add a group rule">
          <label>
            Group
            <input value={group} onChange={(e) => setGroup(e.target.value)} placeholder="ml-team" required />
          </label>
          <label>
            Grants
            <select aria-label="Grants" value={admin ? 'admin' : 'slice'} onChange={(e) => setAdmin(e.target.value === 'admin')}>
              <option value="slice">a role in a slice</option>
              <option value="admin">the admin role</option>
            </select>
          </label>
          {!admin && (
            <>
              <label>
                Slice
                <select aria-label="Slice" value={slice || slices[0]?.id || ''} onChange={(e) => setSlice(e.target.value)}>
                  {slices.map((s) => (
                    <option key={s.id} value={s.id}>
                      {s.name}
                    </option>
                  ))}
                </select>
              </label>
              <label>
                Role
                <select aria-label="Role" value={role} onChange={(e) => setRole(e.target.value as SliceRole)}>
                  {ROLES.map((r) => (
                    <option key={r} value={r}>
                      {r.toLowerCase()}
                    </option>
                  ))}
                </select>
              </label>
            </>
          )}
          <button type="submit" className="primary" disabled={created.fetching}>
            Add rule
          </button>
        </form>
        <UserErrors errors={created.data?.createSsoGroupRule.userErrors} />
      </Card>
      <Card title={`Rules (${data?.ssoGroupRules.length ?? 0})`}>
        {!data && fetching && <Loading what="Loading the rules" />}
        {data && data.ssoGroupRules.length === 0 && <Empty>No rules yet: people who sign in get a user account and no slice.</Empty>}
        {data && data.ssoGroupRules.length > 0 && (
          <div className="table-wrap">
            <table aria-label="Group rules">
              <thead>
                <tr>
                  <th scope="col">Group</th>
                  <th scope="col">Grants</th>
                  <th scope="col">Added</th>
                  <th scope="col" />
                </tr>
              </thead>
              <tbody>
                {data.ssoGroupRules.map((r) => (
                  <tr key={r.id}>
                    <td>
                      <code>{r.group}</code>
                    </td>
                    <td>{r.grantsAdmin ? 'admin' : `${r.role?.toLowerCase()} in ${r.slice?.name ?? 'a deleted slice'}`}</td>
                    <td>
                      <Time at={r.createdAt} />
                    </td>
                    <td>
                      <ConfirmButton
                        danger
                        question={`Delete the rule for ${r.group}? What it granted goes at each member's next sign-in.`}
                        onConfirm={async () => {
                          await remove({ input: { id: r.id } });
                          reload();
                        }}
                      >
                        Delete
                      </ConfirmButton>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Card>
    </>
  );
}
