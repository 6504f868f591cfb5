// A slice's queue, live: position, estimates and the promise of every waiting GPR, with Edit
// and Cancel; below it the slice's running GPRs with the time left and Early release.
import { useCallback, useMemo, useState, type FormEvent } from 'react';
import { Link, Navigate, useNavigate, useParams } from 'react-router-dom';
import { useMutation, useQuery, type CombinedError } from 'urql';
import { graphql } from '../gql';
import type { QueueLiveSubscription } from '../gql/graphql';
import { useLive } from '../api/live';
import { useSession } from '../session';
import { Card, Empty, ErrorBox, Loading, PhaseBadge, Time, UserErrors, useNow } from '../components/ui';
import { durationInput, formatDuration, parseIsoDuration } from '../lib/time';
import { GprActions } from './user/GprActions';
import { formatCountdown, secondsUntil, shapeText } from './user/format';
import './user/user.css';

const QueueSlicesDocument = graphql(`
  query QueueSlices {
    slices(first: 100) {
      nodes {
        id
        name
        viewerRole
      }
    }
  }
`);

const QueueLiveDocument = graphql(`
  subscription QueueLive($sliceId: ID!) {
    queueChanged(sliceId: $sliceId) {
      id
      name
      phase
      version
      priority
      nodeCount
      gpusPerNode
      gpuShape
      instanceType
      duration
      queuePosition
      estimatedStartAt
      startNoLaterThan
      requester {
        id
        name
      }
    }
  }
`);

const QueueOthersDocument = graphql(`
  query QueueOthers($sliceId: ID!) {
    gprs(filter: { sliceId: $sliceId, phases: [PENDING_APPROVAL, PROVISIONING, PROVISIONED, RELEASING] }, first: 100) {
      nodes {
        id
        name
        phase
        version
        priority
        nodeCount
        gpusPerNode
        gpuShape
        instanceType
        assignedGpuShape
        assignedInstanceType
        duration
        approvalReason
        provisionedAt
        exitAt
        createdAt
        assignedCluster {
          id
          name
        }
        requester {
          id
          name
        }
      }
    }
  }
`);

const QueueEventsDocument = graphql(`
  subscription QueueEvents($sliceId: ID!) {
    gprEvents(sliceId: $sliceId) {
      id
      kind
      gpr {
        id
      }
    }
  }
`);

const QueueUpdateDocument = graphql(`
  mutation QueueUpdate($input: UpdateGprInput!) {
    updateGpr(input: $input) {
      gpr {
        id
        version
        priority
        nodeCount
        duration
      }
      userErrors {
        field
        message
        code
      }
    }
  }
`);

type Waiting = QueueLiveSubscription['queueChanged'][number];
type Editable = { id: string; name: string; version: number; priority: number; nodeCount: number; duration: string };

const EDIT_ROLES = ['EDITOR', 'OWNER'];

export function Queue() {
  const { sliceId } = useParams();
  const navigate = useNavigate();
  const { viewer } = useSession();
  const [slicesResult, refetchSlices] = useQuery({ query: QueueSlicesDocument });
  const slices = slicesResult.data?.slices.nodes ?? [];

  if (!sliceId) {
    if (slicesResult.fetching && !slicesResult.data) return <Loading what="Loading your slices" />;
    if (!slicesResult.data) return <ErrorBox error={slicesResult.error} retry={() => refetchSlices({ requestPolicy: 'network-only' })} />;
    const mine = viewer?.memberships.find((m) => m.slice)?.slice?.id;
    const first = (mine && slices.find((s) => s.id === mine)?.id) ?? slices[0]?.id;
    if (first) return <Navigate to={`/queue/${first}`} replace />;
    return (
      <div className="user-page">
        <h1>Queue</h1>
        <Empty>You are not a member of any slice yet.</Empty>
      </div>
    );
  }

  const slice = slices.find((s) => s.id === sliceId);
  const canAct = viewer?.role === 'ADMIN' || EDIT_ROLES.includes(slice?.viewerRole ?? '');
  return (
    <div className="user-page">
      <h1>Queue</h1>
      <div className="picker">
        <label htmlFor="queue-slice">Slice</label>
        <select id="queue-slice" value={sliceId} onChange={(e) => navigate(`/queue/${e.target.value}`)}>
          {!slice && <option value={sliceId}>{slicesResult.fetching ? 'Loading…' : sliceId}</option>}
          {slices.map((s) => (
            <option key={s.id} value={s.id}>
              {s.name}
            </option>
          ))}
        </select>
        {canAct && (
          <Link className="button" to={`/gprs/new?slice=${encodeURIComponent(sliceId)}`}>
            New GPR
          </Link>
        )}
      </div>
      <ErrorBox error={slicesResult.error} />
      <SliceQueue key={sliceId} sliceId={sliceId} canAct={canAct} />
    </div>
  );
}

function SliceQueue({ sliceId, canAct }: { sliceId: string; canAct: boolean }) {
  const now = useNow(5_000);
  const [queue, setQueue] = useState<Waiting[] | null>(null);
  const vars = useMemo(() => ({ sliceId }), [sliceId]);
  const queueError = useLive(QueueLiveDocument, vars, (d) => setQueue([...d.queueChanged]));
  const [others, refetchOthers] = useQuery({ query: QueueOthersDocument, variables: vars });
  const refresh = useCallback(() => refetchOthers({ requestPolicy: 'network-only' }), [refetchOthers]);
  useLive(QueueEventsDocument, vars, refresh);

  const all = others.data?.gprs.nodes ?? [];
  const approval = all.filter((g) => g.phase === 'PENDING_APPROVAL');
  const running = all.filter((g) => g.phase !== 'PENDING_APPROVAL');

  return (
    <>
      <Card title="Waiting" actions={<span className="muted small">Live: estimates update as the queue moves</span>}>
        <ErrorBox error={queueError} />
        {queue === null && !queueError ? (
          <Loading what="Loading the queue" />
        ) : queue && queue.length === 0 ? (
          <Empty>Nothing is waiting in this slice.</Empty>
        ) : (
          queue && (
            <div className="table-wrap">
              <table aria-label="Queue">
                <thead>
                  <tr>
                    <th scope="col" className="num">#</th>
                    <th scope="col">Name</th>
                    <th scope="col">Requester</th>
                    <th scope="col">Nodes × shape</th>
                    <th scope="col" className="num">Priority</th>
                    <th scope="col">Estimated start</th>
                    <th scope="col">Start no later than</th>
                    <th scope="col">Phase</th>
                    <th scope="col">
                      <span className="sr-only">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {queue.map((g) => (
                    <tr key={g.id}>
                      <td className="num">{g.queuePosition ?? '—'}</td>
                      <td>
                        <Link to={`/gprs/${g.id}`}>{g.name}</Link>
                      </td>
                      <td>{g.requester?.name ?? '—'}</td>
                      <td>
                        {g.nodeCount} × {shapeText(g.gpuShape)}
                        {g.gpusPerNode != null && <span className="muted"> ({g.gpusPerNode} GPUs each)</span>}
                      </td>
                      <td className="num">{g.priority}</td>
                      <td className="when">
                        <Time at={g.estimatedStartAt} now={now} />
                      </td>
                      <td className="when">
                        <Time at={g.startNoLaterThan} now={now} />
                      </td>
                      <td>
                        <PhaseBadge phase={g.phase} />
                      </td>
                      <td className="wrap">{canAct && <PendingActions gpr={g} />}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        )}
      </Card>

      {approval.length > 0 && (
        <Card title="Waiting for an admin's approval">
          <div className="table-wrap">
            <table aria-label="Waiting for approval">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Requester</th>
                  <th scope="col">Nodes × shape</th>
                  <th scope="col" className="num">Priority</th>
                  <th scope="col">Why</th>
                  <th scope="col">
                    <span className="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {approval.map((g) => (
                  <tr key={g.id}>
                    <td>
                      <Link to={`/gprs/${g.id}`}>{g.name}</Link>
                    </td>
                    <td>{g.requester?.name ?? '—'}</td>
                    <td>
                      {g.nodeCount} × {shapeText(g.gpuShape)}
                    </td>
                    <td className="num">{g.priority}</td>
                    <td className="wrap">{g.approvalReason ?? '—'}</td>
                    <td className="wrap">{canAct && <PendingActions gpr={g} onDone={refresh} />}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </Card>
      )}

      <Card title="Running">
        {others.fetching && !others.data ? (
          <Loading what="Loading running GPRs" />
        ) : !others.data ? (
          <ErrorBox error={others.error} retry={refresh} />
        ) : running.length === 0 ? (
          <Empty>No GPR of this slice holds nodes now.</Empty>
        ) : (
          <RunningTable rows={running} canAct={canAct} onDone={refresh} />
        )}
      </Card>
    </>
  );
}

interface Running {
  id: string;
  name: string;
  phase: string;
  nodeCount: number;
  gpuShape?: string | null;
  assignedGpuShape?: string | null;
  assignedInstanceType?: string | null;
  assignedCluster?: { name: string } | null;
  requester?: { name: string } | null;
  priority: number;
  provisionedAt?: string | null;
  exitAt?: string | null;
}

function RunningTable({ rows, canAct, onDone }: { rows: Running[]; canAct: boolean; onDone: () => void }) {
  const now = useNow(1_000);
  return (
    <div className="table-wrap">
      <table aria-label="Running">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Requester</th>
            <th scope="col">Nodes × shape</th>
            <th scope="col" className="num">Priority</th>
            <th scope="col">Started</th>
            <th scope="col">Ends</th>
            <th scope="col" className="num">Time left</th>
            <th scope="col">Phase</th>
            <th scope="col">
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((g) => {
            const left = secondsUntil(g.exitAt, now);
            return (
              <tr key={g.id}>
                <td>
                  <Link to={`/gprs/${g.id}`}>{g.name}</Link>
                </td>
                <td>{g.requester?.name ?? '—'}</td>
                <td>
                  {g.nodeCount} × {shapeText(g.assignedGpuShape ?? g.gpuShape)}
                  <div className="muted small">
                    {g.assignedCluster?.name ?? '—'}
                    {g.assignedInstanceType && <> · {g.assignedInstanceType}</>}
                  </div>
                </td>
                <td className="num">{g.priority}</td>
                <td className="when">
                  <Time at={g.provisionedAt} now={now} />
                </td>
                <td className="when">
                  <Time at={g.exitAt} now={now} />
                </td>
                <td className="num mono">{left == null ? '—' : formatCountdown(left)}</td>
                <td>
                  <PhaseBadge phase={g.phase} />
                </td>
                <td className="wrap">{canAct && <GprActions gpr={g} onDone={onDone} />}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

/** Edit (inline form) and Cancel of a pending GPR. */
function PendingActions({ gpr, onDone }: { gpr: Editable & { phase: string }; onDone?: () => void }) {
  const [editing, setEditing] = useState(false);
  return (
    <>
      <GprActions gpr={gpr} onDone={onDone}>
        <button type="button" onClick={() => setEditing((e) => !e)} aria-expanded={editing}>
          Edit
        </button>
      </GprActions>
      {editing && (
        <EditForm
          gpr={gpr}
          onClose={() => setEditing(false)}
          onDone={() => {
            setEditing(false);
            onDone?.();
          }}
        />
      )}
    </>
  );
}

function EditForm({ gpr, onClose, onDone }: { gpr: Editable; onClose: () => void; onDone: () => void }) {
  // What the form was opened on. The live queue bumps the version as estimates move; the
  // newest one is sent while the fields shown here are unchanged, else the one read then, so
  // the gateway refuses to overwrite someone else's edit.
  const [opened] = useState(() => ({ version: gpr.version, priority: gpr.priority, nodeCount: gpr.nodeCount, duration: gpr.duration }));
  const changedMeanwhile =
    gpr.priority !== opened.priority || gpr.nodeCount !== opened.nodeCount || gpr.duration !== opened.duration;
  const version = changedMeanwhile ? opened.version : gpr.version;
  const seconds = parseIsoDuration(opened.duration) ?? 3600;
  const [priority, setPriority] = useState(String(gpr.priority));
  const [nodes, setNodes] = useState(String(gpr.nodeCount));
  const [hours, setHours] = useState(String(Math.floor(seconds / 3600)));
  const [minutes, setMinutes] = useState(String(Math.round((seconds % 3600) / 60)));
  const [problems, setProblems] = useState<readonly { field?: readonly string[] | null; message: string }[]>([]);
  const [error, setError] = useState<CombinedError | null>(null);
  const [busy, setBusy] = useState(false);
  const [, update] = useMutation(QueueUpdateDocument);
  const id = `edit-${gpr.id}`;

  const onSubmit = async (e: FormEvent) => {
    e.preventDefault();
    const local: { field: string[]; message: string }[] = [];
    const p = Number(priority);
    const n = Number(nodes);
    const d = durationInput(Number(hours || 0), Number(minutes || 0));
    if (!Number.isInteger(p)) local.push({ field: ['input', 'priority'], message: 'Priority must be a whole number from 1 to 300.' });
    if (!Number.isInteger(n)) local.push({ field: ['input', 'nodeCount'], message: 'Nodes must be a whole number.' });
    if (d === null) local.push({ field: ['input', 'duration'], message: 'The duration must be longer than zero.' });
    setProblems(local);
    setError(null);
    if (local.length > 0 || d === null) return;
    const input: { id: string; version: number; priority?: number; nodeCount?: number; duration?: string } = { id: gpr.id, version };
    if (p !== opened.priority) input.priority = p;
    if (n !== opened.nodeCount) input.nodeCount = n;
    if (Math.round(Number(hours || 0) * 60 + Number(minutes || 0)) * 60 !== Math.round(seconds)) input.duration = d;
    setBusy(true);
    const result = await update({ input });
    setBusy(false);
    if (result.error) return setError(result.error);
    const errs = result.data?.updateGpr.userErrors ?? [];
    if (errs.length > 0) return setProblems(errs);
    onDone();
  };

  return (
    <form className="inline-form" onSubmit={onSubmit} noValidate aria-label={`Edit ${gpr.name}`}>
      <div>
        <label htmlFor={`${id}-priority`}>Priority</label>
        <input id={`${id}-priority`} type="number" min={1} max={300} value={priority} onChange={(e) => setPriority(e.target.value)} />
      </div>
      <div>
        <label htmlFor={`${id}-nodes`}>Nodes</label>
        <input id={`${id}-nodes`} type="number" min={1} value={nodes} onChange={(e) => setNodes(e.target.value)} />
      </div>
      <div>
        <label htmlFor={`${id}-hours`}>Duration hours</label>
        <input id={`${id}-hours`} type="number" min={0} value={hours} onChange={(e) => setHours(e.target.value)} />
      </div>
      <div>
        <label htmlFor={`${id}-minutes`}>Duration minutes</label>
        <input id={`${id}-minutes`} type="number" min={0} max={59} value={minutes} onChange={(e) => setMinutes(e.target.value)} />
      </div>
      <button type="submit" className="primary" disabled={busy}>
        Save changes
      </button>
      <button type="button" onClick={onClose}>
        Discard
      </button>
      <span className="muted small">
        Was {opened.nodeCount} nodes, priority {opened.priority}, {formatDuration(parseIsoDuration(opened.duration) ?? 0)}
      </span>
      {changedMeanwhile && (
        <p className="notice" role="status">
          Someone changed this GPR since you opened the form: saving will be refused. Discard and edit again.
        </p>
      )}
      <div style={{ flexBasis: '100%' }}>
        <ErrorBox error={error} />
        <UserErrors errors={problems} />
      </div>
    </form>
  );
}
