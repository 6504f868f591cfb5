// One GPR: what it asked for and got, the time left in its window (ticking), its place in
// the queue while it waits, its nodes, provisioning steps and a live timeline of its events.
import { useCallback, useEffect, useRef, useState } from 'react';
import { Link, useParams } from 'react-router-dom';
import { useClient, useQuery, type CombinedError } from 'urql';
import { graphql } from '../gql';
import type { GprDetailEventsQuery } from '../gql/graphql';
import { useLive } from '../api/live';
import { useSession } from '../session';
import { Card, Empty, ErrorBox, LikelyStart, Loading, PhaseBadge, Time, useNow } from '../components/ui';
import { formatDuration, parseIsoDuration } from '../lib/time';
import { GprActions } from './user/GprActions';
import { formatCountdown, mergeEvents, secondsUntil, shapeText, windowProgress } from './user/format';
import { pct } from '../lib/format';
import './user/user.css';

const GprDetailDocument = graphql(`
  query GprDetail($id: ID!) {
    gpr(id: $id) {
      id
      name
      phase
      version
      reason
      approval
      approvalReason
      priority
      priorityBand
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
      preferredClusters {
        id
        name
      }
      duration
      idleTimeout
      preemptible
      createdAt
      earliestStartAt
      provisionedAt
      exitAt
      extendedBy
      extensionRequested
      workload {
        model
        modelBillions
        framework
        kind
        rdma
      }
      completedAt
      estimatedStartAt
      estimatedStartMovesOn
      startRange {
        p10
        p90
      }
      startNoLaterThan
      startNoLaterThanMovesLaterOn
      queuePosition
      releaseReason
      kubernetesResource
      preemptedBy {
        id
        name
      }
      slice {
        id
        name
        viewerRole
      }
      requester {
        id
        name
      }
      labels {
        key
        value
      }
      nodes {
        id
        name
        instanceType
        gpuShape
        gpusPerNode
        health
        state
        utilization
        cluster {
          id
          name
        }
      }
      provisioningSteps {
        operation
        step
        status
        message
        attempts
        startedAt
        finishedAt
      }
    }
  }
`);

const GprDetailEventsDocument = graphql(`
  query GprDetailEvents($id: ID!, $after: String) {
    gprEvents(gprId: $id, first: 100, after: $after) {
      nodes {
        id
        kind
        message
        actor
        createdAt
        sequence
      }
      pageInfo {
        hasNextPage
        endCursor
      }
    }
  }
`);

const GprDetailLiveDocument = graphql(`
  subscription GprDetailLive($gprId: ID!, $after: ID) {
    gprEvents(gprId: $gprId, after: $after) {
      id
      kind
      message
      actor
      createdAt
      sequence
    }
  }
`);

type GprEvent = GprDetailEventsQuery['gprEvents']['nodes'][number];

const RUNNING = ['PROVISIONING', 'PROVISIONED', 'RELEASING'];
const PENDING = ['QUEUED', 'PENDING_APPROVAL'];
const words = (s: string) => s.replace(/_/g, ' ').toLowerCase();

export function GprDetail() {
  const { gprId = '' } = useParams();
  return <Detail key={gprId} gprId={gprId} />;
}

function Detail({ gprId }: { gprId: string }) {
  const { viewer } = useSession();
  const client = useClient();
  const [{ data, fetching, error }, refetch] = useQuery({ query: GprDetailDocument, variables: { id: gprId } });
  const refresh = useCallback(() => refetch({ requestPolicy: 'network-only' }), [refetch]);

  // The stored events first (every page), then live ones after the last of them.
  const [events, setEvents] = useState<GprEvent[] | null>(null);
  const [eventsError, setEventsError] = useState<CombinedError | null>(null);
  const [liveVars, setLiveVars] = useState<{ gprId: string; after: string | null } | null>(null);
  const lastId = useRef<string | null>(null);
  const [loadTry, setLoadTry] = useState(0);

  useEffect(() => {
    let cancelled = false;
    (async () => {
      let all: GprEvent[] = [];
      let after: string | null = null;
      for (;;) {
        const r: { error?: CombinedError; data?: GprDetailEventsQuery } = await client.query(GprDetailEventsDocument, { id: gprId, after }, { requestPolicy: 'network-only' }).toPromise();
        if (cancelled) return;
        if (r.error || !r.data) {
          setEventsError(r.error ?? null);
          return;
        }
        all = mergeEvents(all, r.data.gprEvents.nodes);
        const page: GprDetailEventsQuery['gprEvents']['pageInfo'] = r.data.gprEvents.pageInfo;
        if (!page.hasNextPage || !page.endCursor) break;
        after = page.endCursor;
      }
      setEventsError(null);
      setEvents(all);
      lastId.current = all.length ? all[all.length - 1].id : null;
      setLiveVars({ gprId, after: lastId.current });
    })();
    return () => {
      cancelled = true;
    };
  }, [client, gprId, loadTry]);

  const liveError = useLive(
    GprDetailLiveDocument,
    liveVars,
    (d) => {
      const e = d.gprEvents;
      setEvents((list) => {
        const next = mergeEvents(list ?? [], [e]);
        lastId.current = next.length ? next[next.length - 1].id : lastId.current;
        return next;
      });
      refresh();
    },
    // After a reconnect: everything after the last event received, nothing twice.
    { resume: (v) => ({ ...v, after: lastId.current ?? v.after }) },
  );

  if (!data && fetching) return <Loading what="Loading the GPR" />;
  if (!data) return <ErrorBox error={error} retry={refresh} />;
  const g = data.gpr;
  const canAct = viewer?.role === 'ADMIN' || ['EDITOR', 'OWNER'].includes(g.slice?.viewerRole ?? '');
  const duration = parseIsoDuration(g.duration);
  const idle = parseIsoDuration(g.idleTimeout);
  const shape = g.assignedGpuShape ?? g.gpuShape;
  const instance = g.assignedInstanceType ?? g.instanceType;

  return (
    <div className="user-page">
      <h1>
        {g.name} <PhaseBadge phase={g.phase} />
      </h1>
      <ErrorBox error={error} />
      <div className="detail-layout">
        <div>
          <Card
            title="Request"
            actions={
              canAct && (
              <GprActions gpr={g} onDone={refresh}>
                {canAct && PENDING.includes(g.phase) && g.slice && (
                  <Link className="button" to={`/queue/${g.slice.id}`}>
                    Edit in queue
                  </Link>
                )}
              </GprActions>
              )
            }
          >
            {g.reason && <p className="notice">{g.reason}</p>}
            <dl className="facts">
              <div>
                <dt>Slice</dt>
                <dd>{g.slice ? <Link to={`/queue/${g.slice.id}`}>{g.slice.name}</Link> : '—'}</dd>
              </div>
              <div>
                <dt>Requester</dt>
                <dd>{g.requester?.name ?? '—'}</dd>
              </div>
              <div>
                <dt>Priority</dt>
                <dd>
                  {g.priority} <span className="muted">({g.priorityBand.toLowerCase()})</span>
                </dd>
              </div>
              <div>
                <dt>Nodes × shape</dt>
                <dd>
                  {g.nodeCount} × {shapeText(shape)}
                  {g.gpusPerNode != null && <span className="muted"> ({g.gpusPerNode} GPUs each)</span>}
                </dd>
              </div>
              <div>
                <dt>Instance type · cluster</dt>
                <dd>
                  {instance ?? 'any'} ·{' '}
                  {g.assignedCluster?.name ?? (g.preferredClusters.length ? `prefers ${g.preferredClusters.map((c) => c.name).join(', ')}` : 'any cluster')}
                </dd>
              </div>
              <div>
                <dt>Duration · idle timeout</dt>
                <dd>
                  {duration != null ? formatDuration(duration) : g.duration} · {idle != null ? formatDuration(idle) : 'none'}
                </dd>
              </div>
              <div>
                <dt>Preemptible</dt>
                <dd>{g.preemptible ? 'yes' : 'no'}</dd>
              </div>
              <div>
                <dt>Approval</dt>
                <dd>
                  {words(g.approval)}
                  {g.approvalReason && <span className="muted"> — {g.approvalReason}</span>}
                </dd>
              </div>
              <div>
                <dt>Created</dt>
                <dd>
                  <Time at={g.createdAt} />
                </dd>
              </div>
              {g.earliestStartAt && (
                <div>
                  <dt>Not before</dt>
                  <dd>
                    <Time at={g.earliestStartAt} />
                  </dd>
                </div>
              )}
              {g.releaseReason && (
                <div>
                  <dt>Released because</dt>
                  <dd>{words(g.releaseReason)}</dd>
                </div>
              )}
              {g.preemptedBy && (
                <div>
                  <dt>Preempted by</dt>
                  <dd>
                    <Link to={`/gprs/${g.preemptedBy.id}`}>{g.preemptedBy.name}</Link>
                  </dd>
                </div>
              )}
              {g.kubernetesResource && (
                <div>
                  <dt>Kubernetes resource</dt>
                  <dd className="mono">{g.kubernetesResource}</dd>
                </div>
              )}
              {g.workload && (
                <div>
                  <dt>Workload</dt>
                  <dd>
                    {[
                      g.workload.model && `${g.workload.model}${g.workload.modelBillions != null ? ` (${g.workload.modelBillions}B)` : ''}`,
                      g.workload.framework,
                      g.workload.kind && words(g.workload.kind),
                      g.workload.rdma && 'needs RDMA between its nodes',
                    ]
                      .filter(Boolean)
                      .join(' · ') || '—'}
                  </dd>
                </div>
              )}
              {g.labels.length > 0 && (
                <div>
                  <dt>Labels</dt>
                  <dd className="mono">{g.labels.map((l) => `${l.key}=${l.value}`).join(', ')}</dd>
                </div>
              )}
            </dl>
          </Card>

          <WindowCard gpr={g} />

          <Card title="Nodes">
            {g.nodes.length === 0 ? (
              <Empty>{PENDING.includes(g.phase) ? 'Nodes are assigned when it starts.' : 'It holds no nodes.'}</Empty>
            ) : (
              <div className="table-wrap">
                <table aria-label="Nodes">
                  <thead>
                    <tr>
                      <th scope="col">Name</th>
                      <th scope="col">Cluster</th>
                      <th scope="col">Instance type</th>
                      <th scope="col">GPU shape</th>
                      <th scope="col" className="num">GPUs</th>
                      <th scope="col" className="num">Utilisation</th>
                      <th scope="col">Health</th>
                    </tr>
                  </thead>
                  <tbody>
                    {g.nodes.map((n) => (
                      <tr key={n.id}>
                        <td className="mono">{n.name}</td>
                        <td>{n.cluster?.name ?? '—'}</td>
                        <td>{n.instanceType}</td>
                        <td>{n.gpuShape}</td>
                        <td className="num">{g.gpusPerNode ?? n.gpusPerNode}</td>
                        <td className="num">{pct(n.utilization)}</td>
                        <td className={`health-${n.health.toLowerCase()}`}>
                          {words(n.health)}
                          {n.state !== 'RESERVED' && <span className="muted"> · {words(n.state)}</span>}
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </Card>

          {g.provisioningSteps.length > 0 && (
            <Card title="Provisioning steps">
              <div className="table-wrap">
                <table aria-label="Provisioning steps">
                  <thead>
                    <tr>
                      <th scope="col">Operation</th>
                      <th scope="col">Step</th>
                      <th scope="col">Status</th>
                      <th scope="col" className="num">Attempts</th>
                      <th scope="col">Started</th>
                      <th scope="col">Took</th>
                      <th scope="col">Message</th>
                    </tr>
                  </thead>
                  <tbody>
                    {g.provisioningSteps.map((s, i) => (
                      <tr key={`${s.operation}-${s.step}-${i}`}>
                        <td>{words(s.operation)}</td>
                        <td className="mono">{s.step}</td>
                        <td className={s.status === 'FAILED' ? 'hot' : undefined}>{words(s.status)}</td>
                        <td className="num">{s.attempts}</td>
                        <td>
                          <Time at={s.startedAt} />
                        </td>
                        <td>
                          {s.finishedAt
                            ? formatDuration((Date.parse(s.finishedAt) - Date.parse(s.startedAt)) / 1000)
                            : <span className="muted">running</span>}
                        </td>
                        <td className="wrap">{s.message}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            </Card>
          )}
        </div>

        <div>
          <Card title="Timeline" actions={events && <span className="muted small">{events.length} events · live</span>}>
            <ErrorBox error={liveError} />
            {eventsError ? (
              <ErrorBox error={eventsError} retry={() => setLoadTry((n) => n + 1)} />
            ) : events === null ? (
              <Loading what="Loading events" />
            ) : events.length === 0 ? (
              <Empty>No events yet.</Empty>
            ) : (
              <ol className="timeline" aria-label="Timeline">
                {events.map((e) => (
                  <li key={e.id}>
                    <span className="kind">{e.kind}</span> {e.message}
                    <div className="when">
                      <Time at={e.createdAt} /> · {e.actor}
                    </div>
                  </li>
                ))}
              </ol>
            )}
          </Card>
        </div>
      </div>
    </div>
  );
}

interface WindowGpr {
  phase: string;
  duration: string;
  provisionedAt?: string | null;
  exitAt?: string | null;
  extendedBy?: string | null;
  completedAt?: string | null;
  estimatedStartAt?: string | null;
  startRange?: { p10: string; p90: string } | null;
  startNoLaterThan?: string | null;
  estimatedStartMovesOn?: readonly string[] | null;
  startNoLaterThanMovesLaterOn?: readonly string[] | null;
  queuePosition?: number | null;
}

/** The window: a ticking "Time left" while it holds nodes; the queue's estimates while it waits. */
function WindowCard({ gpr: g }: { gpr: WindowGpr }) {
  const running = RUNNING.includes(g.phase);
  const pending = PENDING.includes(g.phase);
  const now = useNow(running ? 1_000 : 15_000);
  const left = secondsUntil(g.exitAt, now);
  const progress = windowProgress(g.provisionedAt, g.exitAt, now);
  return (
    <Card title={pending ? 'In the queue' : 'Window'}>
      <dl className="facts">
        {pending && (
          <>
            <div>
              <dt>Queue position</dt>
              <dd className="countdown">{g.queuePosition != null ? `#${g.queuePosition}` : '—'}</dd>
            </div>
            <div>
              <dt>Estimated start</dt>
              <dd>
                <Time at={g.estimatedStartAt} now={now} />
                <LikelyStart range={g.startRange} now={now} />
                {g.estimatedStartMovesOn && g.estimatedStartMovesOn.length > 0 && (
                  <div className="hint">Moves on: {g.estimatedStartMovesOn.map(words).join(', ')}</div>
                )}
              </dd>
            </div>
            <div>
              <dt>Start no later than</dt>
              <dd>
                <Time at={g.startNoLaterThan} now={now} />
                {g.startNoLaterThanMovesLaterOn && g.startNoLaterThanMovesLaterOn.length > 0 && (
                  <div className="hint">Later only on: {g.startNoLaterThanMovesLaterOn.map(words).join(', ')}</div>
                )}
              </dd>
            </div>
          </>
        )}
        <div>
          <dt>Starts / started</dt>
          <dd>
            <Time at={g.provisionedAt ?? (pending ? g.estimatedStartAt : null)} now={now} />
          </dd>
        </div>
        <div>
          <dt>Ends</dt>
          <dd>
            <Time at={g.exitAt ?? g.completedAt} now={now} />
            {(parseIsoDuration(g.extendedBy) ?? 0) > 0 && (
              <div className="hint">extended by {formatDuration(parseIsoDuration(g.extendedBy) ?? 0)}</div>
            )}
          </dd>
        </div>
        <div>
          <dt id="time-left-label">Time left</dt>
          <dd>
            {running && left != null ? (
              <>
                <span className="countdown" aria-label="Time left" role="timer" aria-live="off">
                  {formatCountdown(left)}
                </span>
                {progress != null && (
                  <div className="progress" aria-hidden="true">
                    <span style={{ width: `${Math.round(progress * 100)}%` }} />
                  </div>
                )}
              </>
            ) : pending ? (
              <span className="muted">the whole window ({formatDuration(parseIsoDuration(g.duration) ?? 0)}) once it starts</span>
            ) : (
              <span className="muted">{g.completedAt ? 'ended' : '—'}</span>
            )}
          </dd>
        </div>
      </dl>
    </Card>
  );
}
