// The global queue (admins): every waiting GPR live, narrowed by cluster or shape; priority
// changes, approvals and early releases.
import { useMemo, useState } from 'react';
import { Link } from 'react-router-dom';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../../gql';
import type { AdminQueueGprFragment } from '../../gql/graphql';
import { useLive } from '../../api/live';
import { Card, ConfirmButton, Empty, ErrorBox, Loading, PhaseBadge, Time, UserErrors, useNow } from '../../components/ui';
import { formatDuration, formatLocal, formatRelative, parseIsoDuration } from '../../lib/time';
import { problems, useAfterFirst, useThrottled } from './hooks';
import './admin.css';

graphql(`
  fragment AdminQueueGpr on Gpr {
    id
    name
    version
    phase
    priority
    priorityBand
    queuePosition
    nodeCount
    gpusPerNode
    gpuShape
    instanceType
    assignedGpuShape
    assignedInstanceType
    assignedCluster {
      id
      name
    }
    slice {
      id
      name
    }
    requester {
      id
      name
    }
    duration
    estimatedStartAt
    startNoLaterThan
    approvalReason
    extensionRequested
    createdAt
    provisionedAt
    exitAt
  }
`);

const QueueQuery = graphql(`
  query AdminQueue($clusterId: ID, $gpuShape: String) {
    queue(clusterId: $clusterId, gpuShape: $gpuShape, first: 500) {
      ...AdminQueueGpr
    }
  }
`);

const SideQuery = graphql(`
  query AdminQueueSide {
    clusters {
      id
      name
    }
    pools {
      gpuShape
    }
    pending: gprs(filter: { awaitingDecision: true }, first: 100) {
      totalCount
      nodes {
        ...AdminQueueGpr
      }
    }
    running: gprs(filter: { phases: [PROVISIONED] }, first: 100) {
      totalCount
      nodes {
        ...AdminQueueGpr
      }
    }
  }
`);

const QueueLive = graphql(`
  subscription AdminQueueLive($clusterId: ID, $gpuShape: String) {
    queueChanged(clusterId: $clusterId, gpuShape: $gpuShape, first: 500) {
      ...AdminQueueGpr
    }
  }
`);

const SetPriority = graphql(`
  mutation AdminQueueSetPriority($input: SetGprPriorityInput!) {
    setGprPriority(input: $input) {
      gpr {
        id
        priority
        version
        queuePosition
      }
      userErrors {
        field
        message
        code
      }
    }
  }
`);

const Approve = graphql(`
  mutation AdminQueueApprove($input: GprDecisionInput!) {
    approveGpr(input: $input) {
      gpr {
        id
        phase
        version
      }
      userErrors {
        field
        message
        code
      }
    }
  }
`);

const Reject = graphql(`
  mutation AdminQueueReject($input: GprDecisionInput!) {
    rejectGpr(input: $input) {
      gpr {
        id
        phase
        version
      }
      userErrors {
        field
        message
        code
      }
    }
  }
`);

const EarlyRelease = graphql(`
  mutation AdminQueueEarlyRelease($input: GprActionInput!) {
    earlyReleaseGpr(input: $input) {
      gpr {
        id
        phase
        version
      }
      userErrors {
        field
        message
        code
      }
    }
  }
`);

type Feedback = { ok?: string; errors?: { field?: readonly string[]; message: string }[] } | null;

function Shape({ g }: { g: AdminQueueGprFragment }) {
  const shape = g.assignedGpuShape ?? g.gpuShape;
  const type = g.assignedInstanceType ?? g.instanceType;
  return (
    <>
      {g.nodeCount} × {shape ?? <span className="muted">any shape</span>}
      {type && <div className="muted">{type}</div>}
    </>
  );
}

function Duration({ iso }: { iso: string }) {
  const s = parseIsoDuration(iso);
  return <>{s == null ? iso : formatDuration(s)}</>;
}

function PriorityEditor({ g, onDone }: { g: AdminQueueGprFragment; onDone: (f: Feedback) => void }) {
  const [value, setValue] = useState(String(g.priority));
  const [{ fetching }, setPriority] = useMutation(SetPriority);
  const id = `prio-${g.id}`;
  const submit = async (priority: number) => {
    if (!Number.isInteger(priority) || priority < 1 || priority > 300) {
      onDone({ errors: [{ message: `Priority of ${g.name} must be a whole number from 1 to 300.` }] });
      return;
    }
    const r = await setPriority({ input: { id: g.id, priority } });
    const errs = problems({ error: r.error, userErrors: r.data?.setGprPriority.userErrors });
    if (errs.length) onDone({ errors: errs.map((e) => ({ ...e, message: `${g.name}: ${e.message}` })) });
    else {
      setValue(String(priority));
      onDone({ ok: `Priority of ${g.name} set to ${priority}.` });
    }
  };
  return (
    <form
      className="priority-edit"
      onSubmit={(e) => {
        e.preventDefault();
        void submit(Number(value));
      }}
    >
      <label htmlFor={id} className="sr-only">
        Priority for {g.name}
      </label>
      <input id={id} type="number" min={1} max={300} step={1} value={value} onChange={(e) => setValue(e.target.value)} />
      <button type="submit" disabled={fetching}>
        Set priority
      </button>
      <button type="button" aria-label={`Raise priority of ${g.name}`} title="Raise by 10" disabled={fetching || g.priority >= 300} onClick={() => void submit(Math.min(300, g.priority + 10))}>
        +10
      </button>
    </form>
  );
}

function RejectButton({ g, onReject }: { g: AdminQueueGprFragment; onReject: (reason: string) => Promise<void> }) {
  const [asking, setAsking] = useState(false);
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  if (!asking)
    return (
      <button type="button" className="danger" onClick={() => setAsking(true)}>
        Reject
      </button>
    );
  const id = `reject-${g.id}`;
  return (
    <form
      className="reject"
      role="group"
      aria-label={`Reject ${g.name}?`}
      onSubmit={async (e) => {
        e.preventDefault();
        setBusy(true);
        try {
          await onReject(reason.trim());
        } finally {
          setBusy(false);
          setAsking(false);
        }
      }}
    >
      <label htmlFor={id} className="inline">
        Reason for rejecting {g.name}
      </label>
      <input id={id} autoFocus value={reason} onChange={(e) => setReason(e.target.value)} placeholder="Told to the requester" />
      <button type="submit" className="danger" disabled={busy}>
        Confirm
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        Keep
      </button>
    </form>
  );
}

function FeedbackBox({ feedback }: { feedback: Feedback }) {
  return (
    <div aria-live="polite">
      {feedback?.ok && (
        <p className="notice" role="status">
          {feedback.ok}
        </p>
      )}
      <UserErrors errors={feedback?.errors} />
    </div>
  );
}

export function AdminQueue() {
  const now = useNow();
  const [clusterId, setClusterId] = useState('');
  const [gpuShape, setGpuShape] = useState('');
  const variables = useMemo(() => ({ clusterId: clusterId || undefined, gpuShape: gpuShape || undefined }), [clusterId, gpuShape]);
  const [queueResult, refetchQueue] = useQuery({ query: QueueQuery, variables });
  const [side, refetchSide] = useQuery({ query: SideQuery });
  const [live, setLive] = useState<{ key: string; queue: AdminQueueGprFragment[] } | null>(null);
  const key = JSON.stringify(variables);
  const refreshSide = useAfterFirst(useThrottled(() => refetchSide({ requestPolicy: 'network-only' }), 1500));
  const liveError = useLive(QueueLive, variables, (d) => {
    setLive({ key, queue: d.queueChanged });
    refreshSide();
  });
  const refreshAll = () => {
    refetchQueue({ requestPolicy: 'network-only' });
    refetchSide({ requestPolicy: 'network-only' });
  };

  const [queueFeedback, setQueueFeedback] = useState<Feedback>(null);
  const [approvalFeedback, setApprovalFeedback] = useState<Feedback>(null);
  const [runningFeedback, setRunningFeedback] = useState<Feedback>(null);
  const [, approve] = useMutation(Approve);
  const [, reject] = useMutation(Reject);
  const [, earlyRelease] = useMutation(EarlyRelease);

  const queue = live?.key === key ? live.queue : queueResult.data?.queue;
  const shapes = useMemo(() => [...new Set(side.data?.pools.map((p) => p.gpuShape) ?? [])].sort(), [side.data]);
  const pending = side.data?.pending.nodes ?? [];
  const running = side.data?.running.nodes ?? [];

  const decide = async (g: AdminQueueGprFragment, ok: boolean, reason?: string) => {
    const r = ok ? await approve({ input: { id: g.id } }) : await reject({ input: { id: g.id, reason: reason || undefined } });
    const payload = r.data ? ('approveGpr' in r.data ? r.data.approveGpr : r.data.rejectGpr) : undefined;
    const errs = problems({ error: r.error, userErrors: payload?.userErrors });
    setApprovalFeedback(errs.length ? { errors: errs.map((e) => ({ ...e, message: `${g.name}: ${e.message}` })) } : { ok: `${g.name} ${ok ? 'approved; it joins the queue' : 'rejected'}.` });
    refreshAll();
  };

  return (
    <>
      <h1>Global queue</h1>
      <div className="row" style={{ marginBottom: '1rem' }}>
        <div>
          <label htmlFor="aq-cluster">Cluster</label>
          <select id="aq-cluster" value={clusterId} onChange={(e) => setClusterId(e.target.value)}>
            <option value="">All clusters</option>
            {side.data?.clusters.map((c) => (
              <option key={c.id} value={c.id}>
                {c.name}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label htmlFor="aq-shape">GPU shape</label>
          <select id="aq-shape" value={gpuShape} onChange={(e) => setGpuShape(e.target.value)}>
            <option value="">All shapes</option>
            {shapes.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </div>
      </div>
      <ErrorBox error={liveError} />

      <Card title={`Waiting${queue ? ` (${queue.length})` : ''}`}>
        <ErrorBox error={queueResult.error} retry={() => refetchQueue({ requestPolicy: 'network-only' })} />
        <FeedbackBox feedback={queueFeedback} />
        {!queue && queueResult.fetching && <Loading what="Loading the queue" />}
        {queue && queue.length === 0 && <Empty>Nothing is waiting{clusterId || gpuShape ? ' here' : ''}.</Empty>}
        {queue && queue.length > 0 && (
          <div className="table-wrap">
            <table aria-label="Global queue">
              <thead>
                <tr>
                  <th scope="col" className="num">#</th>
                  <th scope="col">GPR</th>
                  <th scope="col">Slice</th>
                  <th scope="col">Requester</th>
                  <th scope="col">Nodes × shape</th>
                  <th scope="col" className="num">Priority</th>
                  <th scope="col">Estimated start</th>
                  <th scope="col">Start no later than</th>
                  <th scope="col">Phase</th>
                  <th scope="col">Change priority</th>
                </tr>
              </thead>
              <tbody>
                {queue.map((g, i) => (
                  <tr key={g.id}>
                    <td className="num">{g.queuePosition ?? i + 1}</td>
                    <td>
                      <Link to={`/gprs/${g.id}`}>{g.name}</Link>
                      <div className="muted">
                        <Duration iso={g.duration} />
                        {g.assignedCluster && ` · ${g.assignedCluster.name}`}
                      </div>
                    </td>
                    <td>{g.slice?.name ?? '—'}</td>
                    <td>{g.requester?.name ?? '—'}</td>
                    <td>
                      <Shape g={g} />
                    </td>
                    <td className="num">
                      {g.priority}
                      <div className="muted">{g.priorityBand.toLowerCase()}</div>
                    </td>
                    <td>
                      {g.estimatedStartAt ? (
                        <time dateTime={g.estimatedStartAt} title={formatLocal(g.estimatedStartAt)}>
                          {formatRelative(g.estimatedStartAt, now)}
                        </time>
                      ) : (
                        <span className="muted">—</span>
                      )}
                    </td>
                    <td>
                      <Time at={g.startNoLaterThan} now={now} />
                    </td>
                    <td>
                      <PhaseBadge phase={g.phase} />
                    </td>
                    <td>
                      <PriorityEditor key={`${g.id}:${g.priority}`} g={g} onDone={(f) => { setQueueFeedback(f); refetchQueue({ requestPolicy: 'network-only' }); }} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Card>

      <section className="card" id="approval" aria-labelledby="approval-h">
        <header>
          <h2 id="approval-h">Waiting for approval{side.data ? ` (${side.data.pending.totalCount})` : ''}</h2>
        </header>
        <ErrorBox error={side.error} retry={() => refetchSide({ requestPolicy: 'network-only' })} />
        <FeedbackBox feedback={approvalFeedback} />
        {!side.data && side.fetching && <Loading />}
        {side.data && pending.length === 0 && <Empty>No GPR is waiting for approval.</Empty>}
        {side.data && side.data.pending.totalCount > pending.length && <p className="muted">The newest {pending.length} are shown.</p>}
        {pending.length > 0 && (
          <div className="table-wrap">
            <table aria-label="Waiting for approval">
              <thead>
                <tr>
                  <th scope="col">GPR</th>
                  <th scope="col">Slice</th>
                  <th scope="col">Requester</th>
                  <th scope="col">Nodes × shape</th>
                  <th scope="col" className="num">Priority</th>
                  <th scope="col">Duration</th>
                  <th scope="col">Why approval</th>
                  <th scope="col">Asked</th>
                  <th scope="col">Decision</th>
                </tr>
              </thead>
              <tbody>
                {pending.map((g) => (
                  <tr key={g.id}>
                    <td>
                      <Link to={`/gprs/${g.id}`}>{g.name}</Link>
                    </td>
                    <td>{g.slice?.name ?? '—'}</td>
                    <td>{g.requester?.name ?? '—'}</td>
                    <td>
                      <Shape g={g} />
                    </td>
                    <td className="num">{g.priority}</td>
                    <td>
                      <Duration iso={g.duration} />
                    </td>
                    <td style={{ whiteSpace: 'normal', minWidth: '14rem' }}>
                      {g.extensionRequested ? (
                        <>
                          running; asks to extend its window by <Duration iso={g.extensionRequested} /> (over its slice's grace)
                        </>
                      ) : (
                        (g.approvalReason ?? '—')
                      )}
                    </td>
                    <td>
                      <Time at={g.createdAt} now={now} />
                    </td>
                    <td>
                      <div className="actions" style={{ marginTop: 0 }}>
                        <button type="button" className="primary" onClick={() => void decide(g, true)}>
                          Approve
                        </button>
                        <RejectButton g={g} onReject={(reason) => decide(g, false, reason)} />
                      </div>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>

      <section className="card" aria-labelledby="running-h">
        <header>
          <h2 id="running-h">Running{side.data ? ` (${side.data.running.totalCount})` : ''}</h2>
        </header>
        <FeedbackBox feedback={runningFeedback} />
        {!side.data && side.fetching && <Loading />}
        {side.data && running.length === 0 && <Empty>No GPR holds nodes now.</Empty>}
        {side.data && side.data.running.totalCount > running.length && <p className="muted">The newest {running.length} are shown.</p>}
        {running.length > 0 && (
          <div className="table-wrap">
            <table aria-label="Running">
              <thead>
                <tr>
                  <th scope="col">GPR</th>
                  <th scope="col">Slice</th>
                  <th scope="col">Requester</th>
                  <th scope="col">Nodes × shape</th>
                  <th scope="col">Cluster</th>
                  <th scope="col">Provisioned</th>
                  <th scope="col">Ends</th>
                  <th scope="col">Action</th>
                </tr>
              </thead>
              <tbody>
                {running.map((g) => (
                  <tr key={g.id}>
                    <td>
                      <Link to={`/gprs/${g.id}`}>{g.name}</Link>
                    </td>
                    <td>{g.slice?.name ?? '—'}</td>
                    <td>{g.requester?.name ?? '—'}</td>
                    <td>
                      <Shape g={g} />
                    </td>
                    <td>{g.assignedCluster?.name ?? '—'}</td>
                    <td>
                      <Time at={g.provisionedAt} now={now} />
                    </td>
                    <td>
                      <Time at={g.exitAt} now={now} />
                    </td>
                    <td>
                      <ConfirmButton
                        danger
                        question={`Release ${g.name}'s ${g.nodeCount} node${g.nodeCount === 1 ? '' : 's'} now?`}
                        onConfirm={async () => {
                          const r = await earlyRelease({ input: { id: g.id } });
                          const errs = problems({ error: r.error, userErrors: r.data?.earlyReleaseGpr.userErrors });
                          setRunningFeedback(errs.length ? { errors: errs.map((e) => ({ ...e, message: `${g.name}: ${e.message}` })) } : { ok: `${g.name} is being released.` });
                          refreshAll();
                        }}
                      >
                        Early release
                      </ConfirmButton>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </>
  );
}
