// A cluster's maintenance windows planned ahead: a node out of service from a start to an end.
// The scheduler plans around each one at once (no GPR is placed on the node across it, and a
// waiting GPR whose promise it moves is told why); when it begins the node is cordoned, when it
// ends the node is back. Admins plan and cancel them here.
import { useState, type FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../../gql';
import { Card, ConfirmButton, Empty, ErrorBox, Time, UserErrors, useNow } from '../../components/ui';

const WindowsQuery = graphql(`
  query AdminMaintenanceWindows($clusterId: ID!) {
    maintenanceWindows(clusterId: $clusterId) {
      id
      state
      startsAt
      endsAt
      reason
      createdBy
      node {
        id
        name
      }
    }
  }
`);

const PlanDocument = graphql(`
  mutation AdminPlanMaintenance($input: PlanMaintenanceInput!) {
    planMaintenance(input: $input) {
      window {
        id
      }
      userErrors {
        field
        message
      }
    }
  }
`);

const CancelDocument = graphql(`
  mutation AdminCancelMaintenance($input: CancelMaintenanceInput!) {
    cancelMaintenance(input: $input) {
      window {
        id
      }
      userErrors {
        field
        message
      }
    }
  }
`);

/** A `datetime-local` value (the viewer's zone) as an ISO instant; `null` when empty or invalid. */
export function localToIso(value: string): string | null {
  if (!value) return null;
  const t = new Date(value);
  return Number.isNaN(t.getTime()) ? null : t.toISOString();
}

/** An instant as a `datetime-local` value in the viewer's zone, to the minute. */
export function isoToLocal(at: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())}T${pad(at.getHours())}:${pad(at.getMinutes())}`;
}

type NodeRef = { id: string; name: string };

export function MaintenanceWindows({ clusterId, nodes, onChange }: { clusterId: string; nodes: readonly NodeRef[]; onChange: () => void }) {
  const now = useNow(30_000);
  const [{ data, error }, refetch] = useQuery({ query: WindowsQuery, variables: { clusterId } });
  const [planned, plan] = useMutation(PlanDocument);
  const [cancelled, cancel] = useMutation(CancelDocument);
  const [nodeId, setNodeId] = useState('');
  const hourAhead = new Date(now.getTime() + 3_600_000);
  const [startsAt, setStartsAt] = useState(() => isoToLocal(hourAhead));
  const [endsAt, setEndsAt] = useState(() => isoToLocal(new Date(hourAhead.getTime() + 2 * 3_600_000)));
  const [reason, setReason] = useState('');
  const [local, setLocal] = useState<string | null>(null);
  const reload = () => {
    refetch({ requestPolicy: 'network-only' });
    onChange();
  };

  const onSubmit = async (e: FormEvent) => {
    e.preventDefault();
    const [from, until] = [localToIso(startsAt), localToIso(endsAt)];
    const node = nodeId || nodes[0]?.id;
    if (!from || !until || !node) {
      setLocal('Pick a node, a start and an end.');
      return;
    }
    setLocal(null);
    const result = await plan({ input: { nodeId: node, startsAt: from, endsAt: until, reason } });
    if (result.data && result.data.planMaintenance.userErrors.length === 0) {
      setReason('');
      reload();
    }
  };

  const windows = data?.maintenanceWindows ?? [];
  return (
    <Card title="Maintenance windows">
      <ErrorBox error={error ?? planned.error ?? cancelled.error} />
      {windows.length === 0 ? (
        <Empty>No maintenance planned on this cluster.</Empty>
      ) : (
        <div className="table-wrap">
          <table aria-label="Maintenance windows">
            <thead>
              <tr>
                <th scope="col">Node</th>
                <th scope="col">From</th>
                <th scope="col">Until</th>
                <th scope="col">State</th>
                <th scope="col">Reason</th>
                <th scope="col">By</th>
                <th scope="col" />
              </tr>
            </thead>
            <tbody>
              {windows.map((w) => (
                <tr key={w.id}>
                  <td>{w.node?.name ?? '?'}</td>
                  <td>
                    <Time at={w.startsAt} now={now} />
                  </td>
                  <td>
                    <Time at={w.endsAt} now={now} />
                  </td>
                  <td>
                    <span className={`badge window-${w.state.toLowerCase()}`}>{w.state.toLowerCase()}</span>
                  </td>
                  <td>{w.reason}</td>
                  <td>{w.createdBy}</td>
                  <td>
                    <ConfirmButton
                      question={w.state === 'ACTIVE' ? `End the window on ${w.node?.name} now?` : `Cancel the window on ${w.node?.name}?`}
                      onConfirm={async () => {
                        await cancel({ input: { id: w.id } });
                        reload();
                      }}
                    >
                      {w.state === 'ACTIVE' ? 'End now' : 'Cancel'}
                    </ConfirmButton>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <UserErrors errors={cancelled.data?.cancelMaintenance.userErrors} />
      <form className="row" aria-label="Plan maintenance" onSubmit={onSubmit}>
        <label>
          Node
          <select value={nodeId || nodes[0]?.id || ''} onChange={(e) => setNodeId(e.target.value)}>
            {nodes.map((n) => (
              <option key={n.id} value={n.id}>
                {n.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          From
          <input type="datetime-local" required value={startsAt} onChange={(e) => setStartsAt(e.target.value)} />
        </label>
        <label>
          Until
          <input type="datetime-local" required value={endsAt} onChange={(e) => setEndsAt(e.target.value)} />
        </label>
        <label>
          Reason
          <input required maxLength={500} value={reason} onChange={(e) => setReason(e.target.value)} placeholder="why (owners of moved GPRs see it)" />
        </label>
        <button type="submit" className="primary" disabled={planned.fetching}>
          Plan maintenance
        </button>
      </form>
      {local && (
        <div className="error" role="alert">
          {local}
        </div>
      )}
      <UserErrors errors={planned.data?.planMaintenance.userErrors} />
    </Card>
  );
}
