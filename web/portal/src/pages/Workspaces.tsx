// Workspaces: a user asks the admins for a slice (name, namespaces, size, purpose) and follows the
// request; admins see every request and approve it (renaming if need be) or reject it, saying why.
import { useState, type FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../gql';
import { Card, Empty, ErrorBox, Loading, Time, UserErrors } from '../components/ui';
import { useSession } from '../session';
import './user/user.css';

const WorkspacesDocument = graphql(`
  query Workspaces {
    workspaceRequests {
      id
      name
      purpose
      state
      requester
      maxNodesPerGpr
      gpuHourQuota
      decidedBy
      decisionReason
      createdAt
      namespaces {
        clusterName
        name
      }
      slice {
        id
        name
      }
    }
    workspaceClusters {
      id
      name
    }
  }
`);

const RequestDocument = graphql(`
  mutation RequestWorkspace($input: RequestWorkspaceInput!) {
    requestWorkspace(input: $input) {
      request {
        id
      }
      userErrors {
        field
        message
      }
    }
  }
`);

const ApproveDocument = graphql(`
  mutation ApproveWorkspaceRequest($input: ApproveWorkspaceRequestInput!) {
    approveWorkspaceRequest(input: $input) {
      request {
        id
        state
      }
      userErrors {
        field
        message
      }
    }
  }
`);

const RejectDocument = graphql(`
  mutation RejectWorkspaceRequest($input: RejectWorkspaceRequestInput!) {
    rejectWorkspaceRequest(input: $input) {
      request {
        id
        state
      }
      userErrors {
        field
        message
      }
    }
  }
`);

const PrivatePolicyDocument = graphql(`
  query PersonalWorkspacePolicy {
    personalWorkspacePolicy {
      enabled
      clusterId
      clusterName
      maxNodesPerGpr
      gpuHourQuota
    }
  }
`);

const SetPrivatePolicyDocument = graphql(`
  mutation SetPersonalWorkspacePolicy($input: SetPersonalWorkspacePolicyInput!) {
    setPersonalWorkspacePolicy(input: $input) {
      policy {
        enabled
      }
      userErrors {
        field
        message
      }
    }
  }
`);

/** Admins: whether every new user gets a private workspace, on which cluster, how big. */
function PrivateWorkspaces({ clusters }: { clusters: readonly { id: string; name: string }[] }) {
  const [{ data }, refetch] = useQuery({ query: PrivatePolicyDocument });
  const current = data?.personalWorkspacePolicy;
  const [enabled, setEnabled] = useState<boolean | null>(null);
  const [cluster, setCluster] = useState('');
  const [nodes, setNodes] = useState('');
  const [quota, setQuota] = useState('');
  const [saved, save] = useMutation(SetPrivatePolicyDocument);
  const on = enabled ?? current?.enabled ?? false;
  const onSubmit = async (e: FormEvent) => {
    e.preventDefault();
    const number = (text: string, fallback: number | null | undefined) => (text.trim() === '' ? (fallback ?? null) : Number(text));
    const input = {
      enabled: on,
      clusterId: cluster || current?.clusterId || clusters[0]?.id || '',
      maxNodesPerGpr: number(nodes, current?.maxNodesPerGpr),
      gpuHourQuota: number(quota, current?.gpuHourQuota),
    };
    const result = await save({ input });
    if (result.data?.setPersonalWorkspacePolicy.policy) refetch({ requestPolicy: 'network-only' });
  };
  return (
    <Card title="Private workspaces for new users">
      <form onSubmit={onSubmit} aria-label="Private workspaces" className="usage-controls">
        <label>
          <span>
            <input type="checkbox" checked={on} onChange={(e) => setEnabled(e.target.checked)} /> every new user gets <code>&lt;name&gt;-private</code>
          </span>
        </label>
        <label>
          Cluster
          <select aria-label="Cluster" value={cluster || current?.clusterId || clusters[0]?.id || ''} onChange={(e) => setCluster(e.target.value)}>
            {clusters.map((c) => (
              <option key={c.id} value={c.id}>
                {c.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Nodes per GPR
          <input inputMode="numeric" placeholder={current?.maxNodesPerGpr?.toString() ?? 'any'} value={nodes} onChange={(e) => setNodes(e.target.value)} />
        </label>
        <label>
          GPU-hour quota
          <input inputMode="numeric" placeholder={current?.gpuHourQuota?.toString() ?? 'none'} value={quota} onChange={(e) => setQuota(e.target.value)} />
        </label>
        <button type="submit" disabled={saved.fetching || clusters.length === 0}>
          Save
        </button>
      </form>
      <UserErrors errors={saved.data?.setPersonalWorkspacePolicy.userErrors} />
      <p className="muted">
        {current?.enabled
          ? `On: new users get a private workspace on ${current.clusterName ?? 'a cluster'}${current.maxNodesPerGpr != null ? `, up to ${current.maxNodesPerGpr} node${current.maxNodesPerGpr === 1 ? '' : 's'} per GPR` : ''}.`
          : 'Off: new users get no slice until they ask for one.'}
      </p>
    </Card>
  );
}

export function Workspaces() {
  const { viewer } = useSession();
  const admin = viewer?.role === 'ADMIN';
  const [{ data, fetching, error }, refetch] = useQuery({ query: WorkspacesDocument, requestPolicy: 'cache-and-network' });
  const reload = () => refetch({ requestPolicy: 'network-only' });
  return (
    <div className="user-page">
      <h1>Workspaces</h1>
      <ErrorBox error={error} retry={reload} />
      {!data && fetching && <Loading what="Loading requests" />}
      {data && !admin && <RequestForm clusters={data.workspaceClusters} onDone={reload} />}
      {data && admin && <PrivateWorkspaces clusters={data.workspaceClusters} />}
      {data && (
        <Card title={admin ? 'Workspace requests' : 'My requests'}>
          {data.workspaceRequests.length === 0 && <Empty>No request yet.</Empty>}
          {data.workspaceRequests.map((r) => (
            <article key={r.id} className="channel" aria-label={`Request ${r.name}`}>
              <header className="channel-head">
                <h3>
                  {r.name} <span className="muted">· by {r.requester} · <Time at={r.createdAt} /></span>
                </h3>
                <span className={`badge phase-${r.state === 'APPROVED' ? 'provisioned' : r.state === 'PENDING' ? 'queued' : 'cancelled'}`}>{r.state.toLowerCase()}</span>
              </header>
              <p>{r.purpose}</p>
              <p className="muted">
                Namespaces {r.namespaces.map((n) => `${n.clusterName ?? '?'}/${n.name}`).join(', ')}
                {r.maxNodesPerGpr != null && ` · up to ${r.maxNodesPerGpr} nodes per GPR`}
                {r.gpuHourQuota != null && ` · ${r.gpuHourQuota} GPU-hours per period`}
              </p>
              {r.slice && <p>Slice: {r.slice.name}</p>}
              {r.decisionReason && (
                <p>
                  {r.decidedBy}: {r.decisionReason}
                </p>
              )}
              {admin && r.state === 'PENDING' && <Decide id={r.id} name={r.name} onDone={reload} />}
            </article>
          ))}
        </Card>
      )}
    </div>
  );
}

function RequestForm({ clusters, onDone }: { clusters: readonly { id: string; name: string }[]; onDone: () => void }) {
  const [name, setName] = useState('');
  const [purpose, setPurpose] = useState('');
  const [cluster, setCluster] = useState('');
  const [namespace, setNamespace] = useState('');
  const [nodes, setNodes] = useState('');
  const [sent, send] = useMutation(RequestDocument);
  const onSubmit = async (e: FormEvent) => {
    e.preventDefault();
    const input = {
      name,
      purpose,
      namespaces: [{ clusterId: cluster || clusters[0]?.id || '', name: namespace || name }],
      maxNodesPerGpr: nodes ? Number(nodes) : null,
    };
    const r = await send({ input });
    if (r.data?.requestWorkspace.request) {
      setName('');
      setPurpose('');
      setNamespace('');
      onDone();
    }
  };
  return (
    <Card title="Ask for a workspace">
      <form aria-label="Ask for a workspace" className="form-grid" onSubmit={onSubmit}>
        <div>
          <label htmlFor="ws-name">Slice name</label>
          <input id="ws-name" required maxLength={63} value={name} onChange={(e) => setName(e.target.value)} placeholder="e.g. support-ft" />
        </div>
        <div>
          <label htmlFor="ws-cluster">Cluster</label>
          <select id="ws-cluster" value={cluster} onChange={(e) => setCluster(e.target.value)}>
            {clusters.map((c) => (
              <option key={c.id} value={c.id}>
                {c.name}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label htmlFor="ws-namespace">Namespace</label>
          <input id="ws-namespace" maxLength={63} value={namespace} onChange={(e) => setNamespace(e.target.value)} placeholder="the slice name" />
        </div>
        <div>
          <label htmlFor="ws-nodes">Nodes per GPR (optional)</label>
          <input id="ws-nodes" type="number" min={1} value={nodes} onChange={(e) => setNodes(e.target.value)} />
        </div>
        <div className="wide">
          <label htmlFor="ws-purpose">Purpose</label>
          <input id="ws-purpose" required maxLength={2000} value={purpose} onChange={(e) => setPurpose(e.target.value)} placeholder="what the team will run" />
        </div>
        <div className="actions inline wide">
          <button type="submit" className="primary" disabled={sent.fetching}>
            Send request
          </button>
        </div>
      </form>
      <ErrorBox error={sent.error} />
      <UserErrors errors={sent.data?.requestWorkspace.userErrors} />
    </Card>
  );
}

function Decide({ id, name, onDone }: { id: string; name: string; onDone: () => void }) {
  const [rename, setRename] = useState(name);
  const [reason, setReason] = useState('');
  const [approved, approve] = useMutation(ApproveDocument);
  const [rejected, reject] = useMutation(RejectDocument);
  const errors = approved.data?.approveWorkspaceRequest.userErrors ?? rejected.data?.rejectWorkspaceRequest.userErrors;
  return (
    <div className="actions inline">
      <input aria-label={`Slice name for ${name}`} value={rename} onChange={(e) => setRename(e.target.value)} />
      <button
        type="button"
        className="primary"
        disabled={approved.fetching}
        onClick={async () => {
          const r = await approve({ input: { id, name: rename !== name ? rename : null, reason: reason || null } });
          if (r.data?.approveWorkspaceRequest.request) onDone();
        }}
      >
        Approve
      </button>
      <input aria-label={`Reason for ${name}`} value={reason} maxLength={500} onChange={(e) => setReason(e.target.value)} placeholder="reason (needed to reject)" />
      <button
        type="button"
        className="danger"
        disabled={rejected.fetching}
        onClick={async () => {
          const r = await reject({ input: { id, reason } });
          if (r.data?.rejectWorkspaceRequest.request) onDone();
        }}
      >
        Reject
      </button>
      <ErrorBox error={approved.error ?? rejected.error} />
      <UserErrors errors={errors} />
    </div>
  );
}
