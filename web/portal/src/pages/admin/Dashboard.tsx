// Admin dashboard: allocation and utilisation by cluster and by GPU shape, queue depth, open
// alerts; refreshed live by inventory, queue and alert events.
import { useMemo, useState } from 'react';
import { Link } from 'react-router-dom';
import { useQuery } from 'urql';
import { graphql } from '../../gql';
import type { AdminDashboardAlertFragment, AdminDashboardQueuedFragment } from '../../gql/graphql';
import { useLive } from '../../api/live';
import { Card, Empty, ErrorBox, Loading, Time, useNow } from '../../components/ui';
import { allocation, average, grandTotal, queueDepthByPool, totalsBy, type Totals } from './pools';
import { Percent, UsageBar, UsageLegend } from './UsageBar';
import { useAfterFirst, useThrottled } from './hooks';
import { DailyBars } from '../usage/DailyBars';
import { everyDay, lastDays } from '../usage/usage';
import './admin.css';

graphql(`
  fragment AdminDashboardAlert on Alert {
    id
    kind
    severity
    message
    open
    raisedAt
    cluster {
      id
      name
    }
    node {
      id
      name
    }
    gpr {
      id
      name
    }
    slice {
      id
      name
    }
  }
`);

graphql(`
  fragment AdminDashboardQueued on Gpr {
    id
    name
    nodeCount
    gpuShape
    instanceType
    assignedGpuShape
    assignedInstanceType
    assignedCluster {
      id
      name
    }
  }
`);

const DashboardQuery = graphql(`
  query AdminDashboard {
    pools {
      cluster {
        id
        name
      }
      instanceType
      gpuShape
      gpusPerNode
      totalNodes
      freeNodes
      reservedNodes
      unavailableNodes
    }
    nodes(first: 100) {
      totalCount
      nodes {
        id
        gpuShape
        utilization
        cluster {
          id
        }
      }
    }
    queue(first: 500) {
      ...AdminDashboardQueued
    }
    pending: gprs(filter: { phases: [PENDING_APPROVAL] }, first: 1) {
      totalCount
    }
    alerts(open: true, first: 50) {
      totalCount
      nodes {
        ...AdminDashboardAlert
      }
    }
  }
`);

const InventoryLive = graphql(`
  subscription AdminDashboardInventory {
    inventoryChanged {
      at
      nodeId
    }
  }
`);

const QueueLive = graphql(`
  subscription AdminDashboardQueueLive {
    queueChanged(first: 500) {
      ...AdminDashboardQueued
    }
  }
`);

const AlertsLive = graphql(`
  subscription AdminDashboardAlerts {
    alerts {
      ...AdminDashboardAlert
    }
  }
`);

const UsageQuery = graphql(`
  query AdminDashboardUsage($from: String!, $to: String!) {
    usage(from: $from, to: $to) {
      days: usage(groupBy: [DAY]) {
        group {
          day
        }
        reservedGpuHours
        usedGpuHours
        waitingGpuHours
      }
    }
  }
`);

/** GPU-hours of the last 14 days, from the usage rollups. */
function UsageCard() {
  const range = useMemo(() => lastDays(new Date(), 14), []);
  const [{ data, error }] = useQuery({ query: UsageQuery, variables: range });
  const days = useMemo(() => everyDay(range.from, range.to, data?.usage.days ?? []), [data, range]);
  return (
    <Card title="GPU-hours, last 14 days" actions={<Link to="/usage">Usage reports</Link>}>
      <ErrorBox error={error} />
      {data && <DailyBars days={days} label="GPU-hours per day, last 14 days" />}
    </Card>
  );
}

function TotalsTable({ label, name, rows, util }: { label: string; name: string; rows: Totals[]; util: Map<string, number | null> }) {
  if (rows.length === 0) return <Empty>No pools yet.</Empty>;
  const all = grandTotal(rows);
  const line = (t: Totals, head = false) => {
    const share = allocation(t);
    return (
      <tr key={t.key}>
        {head ? <th scope="row">{t.label}</th> : <td>{t.label}</td>}
        <td className="num">{t.total}</td>
        <td className="num">{t.reserved}</td>
        <td className="num">{t.free}</td>
        <td className={`num${t.unavailable ? ' warm' : ''}`}>{t.unavailable}</td>
        <td className="bar-cell">
          <UsageBar total={t.total} reserved={t.reserved} free={t.free} unavailable={t.unavailable} />
        </td>
        <td className="num">{share == null ? <span className="muted">—</span> : `${Math.round(share * 100)} %`}</td>
        <td className="num">
          <Percent value={util.get(t.key)} />
        </td>
      </tr>
    );
  };
  return (
    <div className="table-wrap">
      <table aria-label={name}>
        <thead>
          <tr>
            <th scope="col">{label}</th>
            <th scope="col" className="num">Nodes</th>
            <th scope="col" className="num">Allocated</th>
            <th scope="col" className="num">Free</th>
            <th scope="col" className="num">Unavailable</th>
            <th scope="col">Nodes</th>
            <th scope="col" className="num" title="Allocated share of the usable (not unavailable) nodes">Allocation</th>
            <th scope="col" className="num" title="Average GPU utilisation over the latest samples of the nodes">Utilisation</th>
          </tr>
        </thead>
        <tbody>{rows.map((t) => line(t))}</tbody>
        {rows.length > 1 && <tfoot>{line(all, true)}</tfoot>}
      </table>
    </div>
  );
}

export function AdminDashboard() {
  const now = useNow();
  const [{ data, fetching, error }, refetch] = useQuery({ query: DashboardQuery });
  const refresh = useThrottled(() => refetch({ requestPolicy: 'network-only' }), 2000);
  const [liveQueue, setLiveQueue] = useState<AdminDashboardQueuedFragment[] | null>(null);
  const [liveAlerts, setLiveAlerts] = useState<Map<string, AdminDashboardAlertFragment | null>>(new Map());

  const refreshLater = useAfterFirst(refresh);
  const inventoryError = useLive(InventoryLive, {}, refresh);
  const queueError = useLive(QueueLive, {}, (d) => {
    setLiveQueue(d.queueChanged);
    refreshLater(); // pending approvals move with the queue
  });
  const alertsError = useLive(AlertsLive, {}, (d) => {
    setLiveAlerts((m) => {
      const next = new Map(m).set(d.alerts.id, d.alerts.open ? d.alerts : null);
      // Bounded: beyond the newest 500 changes, the last refetch has the rest.
      for (const key of [...next.keys()].slice(0, Math.max(0, next.size - 500))) next.delete(key);
      return next;
    });
  });

  const view = useMemo(() => {
    if (!data) return null;
    const nodes = data.nodes.nodes;
    const byCluster = totalsBy(data.pools, (p) => [p.cluster?.id ?? '?', p.cluster?.name ?? 'unknown']);
    const byShape = totalsBy(data.pools, (p) => [p.gpuShape, p.gpuShape]);
    const clusterUtil = new Map<string, number | null>();
    const shapeUtil = new Map<string, number | null>();
    const group = (key: (n: (typeof nodes)[number]) => string, out: Map<string, number | null>) => {
      const by = new Map<string, (number | null)[]>();
      for (const n of nodes) by.set(key(n), [...(by.get(key(n)) ?? []), n.utilization ?? null]);
      for (const [k, v] of by) out.set(k, average(v));
    };
    group((n) => n.cluster?.id ?? '?', clusterUtil);
    group((n) => n.gpuShape, shapeUtil);
    const allUtil = average(data.nodes.nodes.map((n) => n.utilization ?? null));
    clusterUtil.set('all', allUtil);
    shapeUtil.set('all', allUtil);
    // Alerts: the list as loaded, then what the subscription raised and cleared since.
    const alerts = new Map(data.alerts.nodes.map((a) => [a.id, a as AdminDashboardAlertFragment | null]));
    for (const [id, a] of liveAlerts) alerts.set(id, a);
    const openAlerts = [...alerts.values()].filter((a): a is AdminDashboardAlertFragment => !!a).sort((a, b) => b.raisedAt.localeCompare(a.raisedAt));
    return { byCluster, byShape, clusterUtil, shapeUtil, all: grandTotal(byCluster), allUtil, openAlerts };
  }, [data, liveAlerts]);

  const queue = liveQueue ?? data?.queue ?? [];
  const depth = useMemo(() => queueDepthByPool(queue), [queue]);

  return (
    <>
      <h1>Dashboard</h1>
      <ErrorBox error={error} retry={() => refetch({ requestPolicy: 'network-only' })} />
      <ErrorBox error={inventoryError ?? queueError ?? alertsError} />
      {!data && fetching && <Loading what="Loading the inventory" />}
      {view && data && (
        <>
          <div className="stats">
            <div>
              <div className="stat">{view.all.total}</div>
              <div className="stat-label">GPU nodes ({view.all.gpus} GPUs)</div>
            </div>
            <div>
              <div className="stat">{view.all.reserved}</div>
              <div className="stat-label">
                allocated ({allocation(view.all) == null ? '—' : `${Math.round(allocation(view.all)! * 100)} %`})
              </div>
            </div>
            <div>
              <div className="stat">{view.all.free}</div>
              <div className="stat-label">free</div>
            </div>
            <div>
              <div className={`stat${view.all.unavailable ? ' warm' : ''}`}>{view.all.unavailable}</div>
              <div className="stat-label">unavailable</div>
            </div>
            <div>
              <div className="stat">
                <Percent value={view.allUtil} />
              </div>
              <div className="stat-label">
                average GPU utilisation
                {data.nodes.totalCount > data.nodes.nodes.length && ` (first ${data.nodes.nodes.length} nodes)`}
              </div>
            </div>
            <div>
              <div className="stat">
                <Link to="/admin/queue">{queue.length}</Link>
              </div>
              <div className="stat-label">GPRs waiting ({queue.reduce((s, g) => s + g.nodeCount, 0)} nodes)</div>
            </div>
            <div>
              <div className={`stat${data.pending.totalCount ? ' warm' : ''}`}>
                <Link to="/admin/queue#approval">{data.pending.totalCount}</Link>
              </div>
              <div className="stat-label">pending approval</div>
            </div>
            <div>
              <div className={`stat${view.openAlerts.some((a) => a.severity === 'CRITICAL') ? ' hot' : ''}`}>{view.openAlerts.length}</div>
              <div className="stat-label">open alerts</div>
            </div>
          </div>

          <Card title="Allocation by cluster" actions={<Link to="/admin/clusters">Clusters and schedules</Link>}>
            <UsageLegend />
            <TotalsTable label="Cluster" name="Allocation by cluster" rows={view.byCluster} util={view.clusterUtil} />
          </Card>
          <UsageCard />
          <Card title="Allocation by GPU shape">
            <TotalsTable label="GPU shape" name="Allocation by GPU shape" rows={view.byShape} util={view.shapeUtil} />
          </Card>
          <div className="grid">
            <Card title={`Queue depth (${queue.length} waiting)`} actions={<Link to="/admin/queue">Global queue</Link>}>
              {depth.length === 0 ? (
                <Empty>Nothing is waiting.</Empty>
              ) : (
                <div className="table-wrap">
                  <table aria-label="Queue depth by pool">
                    <thead>
                      <tr>
                        <th scope="col">Planned pool</th>
                        <th scope="col" className="num">GPRs</th>
                        <th scope="col" className="num">Nodes asked</th>
                      </tr>
                    </thead>
                    <tbody>
                      {depth.map((d) => (
                        <tr key={d.key}>
                          <td>{d.label}</td>
                          <td className="num">{d.gprs}</td>
                          <td className="num">{d.nodes}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              )}
            </Card>
            <Card title={`Open alerts (${view.openAlerts.length})`}>
              {view.openAlerts.length === 0 ? (
                <Empty>No open alerts.</Empty>
              ) : (
                <ul className="alert-list" aria-label="Open alerts" aria-live="polite">
                  {view.openAlerts.map((a) => (
                    <li key={a.id}>
                      <span className={`badge sev-${a.severity.toLowerCase()}`}>{a.severity.toLowerCase()}</span>
                      <span className="badge">{a.kind.replace(/_/g, ' ').toLowerCase()}</span>
                      <span>{a.message}</span>
                      <span className="muted">
                        {[a.cluster?.name, a.node?.name, a.slice?.name].filter(Boolean).join(' · ')}
                        {a.gpr && (
                          <>
                            {' · '}
                            <Link to={`/gprs/${a.gpr.id}`}>{a.gpr.name}</Link>
                          </>
                        )}
                      </span>
                      <Time at={a.raisedAt} now={now} />
                    </li>
                  ))}
                </ul>
              )}
            </Card>
          </div>
        </>
      )}
    </>
  );
}
