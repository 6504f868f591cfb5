// The user's start page: their slices with GPUs in use, their GPRs by phase, and the open
// alerts of their slices (kept current by the alerts subscription).
import { useMemo, useState } from 'react';
import { Link } from 'react-router-dom';
import { useQuery } from 'urql';
import { graphql } from '../gql';
import type { HomeOverviewQuery } from '../gql/graphql';
import { useLive } from '../api/live';
import { useSession } from '../session';
import { Card, Empty, ErrorBox, Loading, PhaseBadge, Time, useNow } from '../components/ui';
import { ACTIVE_PHASES, applyAlert, countByPhase, gpusBySlice, gpusHeld, shapeText } from './user/format';
import { pct } from '../lib/format';
import './user/user.css';

const HomeOverviewDocument = graphql(`
  query HomeOverview {
    slices(first: 100) {
      nodes {
        id
        name
        viewerRole
        gpuSummary {
          gpuCount
          averageUtilization
        }
      }
    }
    gprs(first: 100) {
      totalCount
      nodes {
        id
        name
        phase
        priority
        nodeCount
        gpusPerNode
        gpuShape
        assignedGpuShape
        queuePosition
        estimatedStartAt
        exitAt
        createdAt
        requester {
          id
          name
        }
        slice {
          id
          name
        }
        nodes {
          id
          gpusPerNode
        }
      }
    }
    alerts(open: true, first: 100) {
      nodes {
        id
        kind
        severity
        message
        open
        raisedAt
        slice {
          id
          name
        }
        gpr {
          id
          name
        }
        node {
          id
          name
        }
      }
    }
  }
`);

const HomeAlertsDocument = graphql(`
  subscription HomeAlerts {
    alerts {
      id
      kind
      severity
      message
      open
      raisedAt
      slice {
        id
        name
      }
      gpr {
        id
        name
      }
      node {
        id
        name
      }
    }
  }
`);

type Alert = HomeOverviewQuery['alerts']['nodes'][number];

const EDIT_ROLES = ['EDITOR', 'OWNER'];

export function Home() {
  const { viewer } = useSession();
  const now = useNow(15_000);
  const [{ data, fetching, error }, refetch] = useQuery({ query: HomeOverviewDocument });
  // The open alerts as loaded, then as the subscription changes them; a fresh load starts over.
  const [alertState, setAlertState] = useState<{ from: unknown; list: Alert[] }>({ from: null, list: [] });
  const [onlyMine, setOnlyMine] = useState(viewer?.role !== 'ADMIN');

  let alerts = alertState.list;
  if (data && alertState.from !== data) {
    alerts = [...data.alerts.nodes];
    setAlertState({ from: data, list: alerts });
  }
  const liveError = useLive(HomeAlertsDocument, {}, (d) => setAlertState((s) => ({ ...s, list: applyAlert(s.list, d.alerts) })));

  const gprs = useMemo(() => data?.gprs.nodes ?? [], [data]);
  const mine = useMemo(() => (onlyMine ? gprs.filter((g) => g.requester?.id === viewer?.id) : gprs), [gprs, onlyMine, viewer]);
  const held = useMemo(() => gpusBySlice(gprs), [gprs]);
  const counts = countByPhase(mine);
  const active = mine.filter((g) => ACTIVE_PHASES.includes(g.phase));

  if (!data && fetching) return <Loading what="Loading your slices" />;
  if (!data) return <ErrorBox error={error} retry={() => refetch({ requestPolicy: 'network-only' })} />;

  const slices = data.slices.nodes;
  const sliceGpus = (s: (typeof slices)[number]) => s.gpuSummary?.gpuCount ?? held.get(s.id) ?? 0;
  const totalGpus = slices.reduce((sum, s) => sum + sliceGpus(s), 0);
  const myGpus = mine.reduce((sum, g) => sum + gpusHeld(g), 0);

  return (
    <div className="user-page">
      <h1>Home</h1>
      <ErrorBox error={error} />
      <div className="user-stats" role="group" aria-label="Summary">
        <div className="card">
          <div className="stat" aria-describedby="stat-gpus">{totalGpus}</div>
          <div className="stat-label" id="stat-gpus">GPUs in use in my slices</div>
        </div>
        <div className="card">
          <div className="stat">{myGpus}</div>
          <div className="stat-label">GPUs held by {onlyMine ? 'my' : 'these'} GPRs</div>
        </div>
        <div className="card">
          <div className="stat">{active.length}</div>
          <div className="stat-label">Active GPRs</div>
        </div>
        <div className="card">
          <div className={`stat${alerts.length ? ' hot' : ''}`}>{alerts.length}</div>
          <div className="stat-label">Open alerts</div>
        </div>
      </div>

      <div className="grid">
        <Card title="My slices">
          {slices.length === 0 ? (
            <Empty>You are not a member of any slice yet. Ask an admin to add you.</Empty>
          ) : (
            <div className="table-wrap">
              <table aria-label="My slices">
                <thead>
                  <tr>
                    <th scope="col">Slice</th>
                    <th scope="col">My role</th>
                    <th scope="col" className="num">GPUs in use</th>
                    <th scope="col">
                      <span className="sr-only">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {slices.map((s) => (
                    <tr key={s.id}>
                      <td>
                        <Link to={`/queue/${s.id}`}>{s.name}</Link>
                      </td>
                      <td>{s.viewerRole ? s.viewerRole.toLowerCase() : <span className="muted">—</span>}</td>
                      <td className="num">
                        {sliceGpus(s)}
                        {s.gpuSummary?.averageUtilization != null && (
                          <span className="muted"> · {pct(s.gpuSummary.averageUtilization)} busy</span>
                        )}
                      </td>
                      <td className="cell-actions">
                        <Link to={`/queue/${s.id}`} aria-label={`Queue of ${s.name}`}>
                          Queue
                        </Link>
                        {(viewer?.role === 'ADMIN' || EDIT_ROLES.includes(s.viewerRole ?? '')) && (
                          <Link to={`/gprs/new?slice=${encodeURIComponent(s.id)}`} aria-label={`New GPR in ${s.name}`}>
                            New GPR
                          </Link>
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </Card>

        <Card
          title="Open alerts"
          actions={liveError ? <span className="error small">Live updates stopped: {liveError}</span> : undefined}
        >
          {alerts.length === 0 ? (
            <Empty>No open alerts in your slices.</Empty>
          ) : (
            <ul className="alert-list" aria-label="Open alerts">
              {alerts.map((a) => (
                <li key={a.id}>
                  <span className={`badge sev-${a.severity.toLowerCase()}`}>{a.severity.toLowerCase()}</span>{' '}
                  <b>{a.kind.replace(/_/g, ' ').toLowerCase()}</b> {a.message}
                  <div className="muted small">
                    {a.slice && <>{a.slice.name} · </>}
                    {a.gpr && (
                      <>
                        <Link to={`/gprs/${a.gpr.id}`}>{a.gpr.name}</Link> ·{' '}
                      </>
                    )}
                    {a.node && <>{a.node.name} · </>}
                    <Time at={a.raisedAt} now={now} />
                  </div>
                </li>
              ))}
            </ul>
          )}
        </Card>
      </div>

      <Card
        title={onlyMine ? 'My GPRs' : 'GPRs in my slices'}
        actions={
          <label className="inline-check">
            <input type="checkbox" checked={onlyMine} onChange={(e) => setOnlyMine(e.target.checked)} /> Only GPRs I requested
          </label>
        }
      >
        {counts.length === 0 ? (
          <Empty>
            No GPRs yet. <Link to="/gprs/new">Create one</Link>.
          </Empty>
        ) : (
          <ul className="phase-counts" aria-label="GPRs by phase">
            {counts.map(([phase, n]) => (
              <li key={phase}>
                <PhaseBadge phase={phase} /> <b>{n}</b>
              </li>
            ))}
          </ul>
        )}
        {active.length > 0 && (
          <div className="table-wrap">
            <table aria-label="Active GPRs">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Phase</th>
                  <th scope="col">Slice</th>
                  {!onlyMine && <th scope="col">Requester</th>}
                  <th scope="col">Nodes × shape</th>
                  <th scope="col" className="num">Priority</th>
                  <th scope="col">Starts / ends</th>
                </tr>
              </thead>
              <tbody>
                {active.map((g) => (
                  <tr key={g.id}>
                    <td>
                      <Link to={`/gprs/${g.id}`}>{g.name}</Link>
                    </td>
                    <td>
                      <PhaseBadge phase={g.phase} />
                      {g.queuePosition != null && <span className="muted"> #{g.queuePosition}</span>}
                    </td>
                    <td>{g.slice?.name ?? '—'}</td>
                    {!onlyMine && <td>{g.requester?.name ?? '—'}</td>}
                    <td>
                      {g.nodeCount} × {shapeText(g.assignedGpuShape ?? g.gpuShape)}
                    </td>
                    <td className="num">{g.priority}</td>
                    <td>
                      {g.phase === 'PROVISIONED' || g.phase === 'RELEASING' || g.phase === 'PROVISIONING' ? (
                        <>
                          ends <Time at={g.exitAt} now={now} />
                        </>
                      ) : (
                        <>
                          starts <Time at={g.estimatedStartAt} now={now} />
                        </>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Card>
    </div>
  );
}
