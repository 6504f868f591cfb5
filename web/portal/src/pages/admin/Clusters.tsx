// Clusters and their inventory: every cluster with node counts; for the chosen one its nodes and,
// per pool, the schedule of running reservations and planned starts. Live on inventory and
// queue changes.
import { useMemo, useState } from 'react';
import { Link, useSearchParams } from 'react-router-dom';
import { useQuery } from 'urql';
import { graphql } from '../../gql';
import type { AdminClusterDetailQuery } from '../../gql/graphql';
import { useLive } from '../../api/live';
import { Card, Empty, ErrorBox, Loading, Time, useNow } from '../../components/ui';
import { parseIsoDuration } from '../../lib/time';
import { grandTotal, totalsBy } from './pools';
import { ms } from './timeline';
import { NodeMaintenance } from './NodeMaintenance';
import { MaintenanceWindows } from './MaintenanceWindows';
import { WhatIf } from './WhatIf';
import { ScheduleTimeline, type ScheduleItem } from './ScheduleTimeline';
import { Percent, UsageBar, UsageLegend } from './UsageBar';
import { useAfterFirst, useThrottled } from './hooks';
import './admin.css';

const ClustersQuery = graphql(`
  query AdminClusters {
    clusters {
      id
      name
      provider
      cloud
      region
      health
      registrationStatus
      lastContactAt
      pools {
        totalNodes
        freeNodes
        reservedNodes
        unavailableNodes
        gpusPerNode
      }
    }
  }
`);

const DetailQuery = graphql(`
  query AdminClusterDetail($id: ID!) {
    cluster(id: $id) {
      id
      name
      pools {
        instanceType
        gpuShape
        gpusPerNode
        gpuMemoryMib
        totalNodes
        freeNodes
        reservedNodes
        unavailableNodes
      }
      nodes(first: 100) {
        totalCount
        nodes {
          id
          name
          instanceType
          gpuShape
          gpusPerNode
          gpuMemoryMib
          health
          state
          cordonedAt
          cordonReason
          cordonedBy
          zone
          utilization
          lastHeartbeatAt
          allocatedGpr {
            id
            name
            slice {
              id
              name
            }
          }
        }
      }
    }
    queue(clusterId: $id, first: 500) {
      ...AdminClusterPlanned
    }
    running: gprs(filter: { phases: [PROVISIONING, PROVISIONED, RELEASING] }, first: 100) {
      nodes {
        ...AdminClusterPlanned
      }
    }
  }
`);

graphql(`
  fragment AdminClusterPlanned on Gpr {
    id
    name
    phase
    nodeCount
    duration
    gpuShape
    instanceType
    assignedGpuShape
    assignedInstanceType
    assignedCluster {
      id
    }
    slice {
      id
      name
    }
    estimatedStartAt
    startNoLaterThan
    provisionedAt
    exitAt
  }
`);

const InventoryLive = graphql(`
  subscription AdminClustersInventory($clusterId: ID) {
    inventoryChanged(clusterId: $clusterId) {
      at
      nodeId
      kind
    }
  }
`);

const QueueLive = graphql(`
  subscription AdminClustersQueue($clusterId: ID) {
    queueChanged(clusterId: $clusterId, first: 500) {
      id
    }
  }
`);

type Detail = AdminClusterDetailQuery;
type Pool = Detail['cluster']['pools'][number];
type Planned = Detail['queue'][number];

const HORIZONS: [number, string][] = [
  [12, '12 hours'],
  [24, '24 hours'],
  [48, '48 hours'],
  [96, '4 days'],
  [168, '7 days'],
];

function lower(s: string) {
  return s.toLowerCase();
}

/** Bars of one pool: its running reservations and the planned starts of queued GPRs for it. */
export function poolItems(pool: Pool, clusterId: string, running: readonly Planned[], queue: readonly Planned[], now: number): ScheduleItem[] {
  const items: ScheduleItem[] = [];
  const label = (g: Planned) => (g.slice ? `${g.slice.name}/${g.name}` : g.name);
  const durationMs = (g: Planned) => (parseIsoDuration(g.duration) ?? 0) * 1000;
  for (const g of running) {
    if (g.assignedCluster?.id !== clusterId || g.assignedGpuShape !== pool.gpuShape || g.assignedInstanceType !== pool.instanceType) continue;
    const start = ms(g.provisionedAt) ?? now;
    const end = ms(g.exitAt) ?? start + durationMs(g);
    items.push({ id: g.id, label: label(g), kind: 'running', start, end, nodes: g.nodeCount, href: `/gprs/${g.id}` });
  }
  for (const g of queue) {
    const shape = g.assignedGpuShape ?? g.gpuShape;
    const type = g.assignedInstanceType ?? g.instanceType;
    if (g.assignedCluster && g.assignedCluster.id !== clusterId) continue;
    if ((shape && shape !== pool.gpuShape) || (type && type !== pool.instanceType)) continue;
    const start = ms(g.estimatedStartAt) ?? ms(g.startNoLaterThan);
    if (start == null) continue;
    items.push({
      id: g.id,
      label: label(g),
      kind: 'planned',
      start,
      end: start + durationMs(g),
      nodes: g.nodeCount,
      promise: ms(g.startNoLaterThan),
      href: `/gprs/${g.id}`,
    });
  }
  return items;
}

function ClusterDetail({ id }: { id: string }) {
  const now = useNow(30_000);
  const [horizon, setHorizon] = useState(48);
  const [{ data, fetching, error }, refetch] = useQuery({ query: DetailQuery, variables: { id } });
  const refresh = useThrottled(() => refetch({ requestPolicy: 'network-only' }), 2000);
  const liveVars = useMemo(() => ({ clusterId: id }), [id]);
  const invError = useLive(InventoryLive, liveVars, refresh);
  const queueError = useLive(QueueLive, liveVars, useAfterFirst(refresh));
  const [shape, setShape] = useState('');

  if (!data) return fetching ? <Loading what="Loading the cluster" /> : <ErrorBox error={error} retry={() => refetch({ requestPolicy: 'network-only' })} />;
  const cluster = data.cluster;
  const from = now.getTime();
  const to = from + horizon * 3_600_000;
  const nodes = cluster.nodes.nodes.filter((n) => !shape || n.gpuShape === shape);
  const shapes = [...new Set(cluster.nodes.nodes.map((n) => n.gpuShape))].sort();

  return (
    <>
      <ErrorBox error={error} />
      <ErrorBox error={invError ?? queueError} />
      <Card
        title={`Schedule of ${cluster.name}`}
        actions={
          <div className="row" style={{ alignItems: 'center' }}>
            <label htmlFor="cl-horizon" style={{ margin: 0 }}>
              Horizon
            </label>
            <select id="cl-horizon" value={horizon} onChange={(e) => setHorizon(Number(e.target.value))}>
              {HORIZONS.map(([h, l]) => (
                <option key={h} value={h}>
                  {l}
                </option>
              ))}
            </select>
          </div>
        }
      >
        <UsageLegend planned />
        {cluster.pools.length === 0 && <Empty>This cluster has no GPU nodes.</Empty>}
        {cluster.pools.map((p) => {
          const title = `${p.instanceType} · ${p.gpuShape}`;
          return (
            <section key={`${p.instanceType}|${p.gpuShape}`} aria-label={`Pool ${title}`}>
              <h3>
                {title}{' '}
                <span className="muted" style={{ fontWeight: 'normal' }}>
                  {p.totalNodes} nodes × {p.gpusPerNode} GPUs ({Math.round(p.gpuMemoryMib / 1024)} GiB): {p.reservedNodes} reserved, {p.freeNodes} free,{' '}
                  {p.unavailableNodes} unavailable
                </span>
              </h3>
              <ScheduleTimeline title={`Pool ${title}`} items={poolItems(p, cluster.id, data.running.nodes, data.queue, from)} from={from} to={to} capacity={p.totalNodes} />
            </section>
          );
        })}
      </Card>

      <Card
        title={`Nodes of ${cluster.name} (${cluster.nodes.totalCount})`}
        actions={
          shapes.length > 1 && (
            <div className="row" style={{ alignItems: 'center' }}>
              <label htmlFor="cl-shape" style={{ margin: 0 }}>
                GPU shape
              </label>
              <select id="cl-shape" value={shape} onChange={(e) => setShape(e.target.value)}>
                <option value="">All</option>
                {shapes.map((s) => (
                  <option key={s}>{s}</option>
                ))}
              </select>
            </div>
          )
        }
      >
        {cluster.nodes.totalCount > cluster.nodes.nodes.length && (
          <p className="muted">
            The first {cluster.nodes.nodes.length} of {cluster.nodes.totalCount} nodes are listed; the pool counts and schedules above cover them all.
          </p>
        )}
        {nodes.length === 0 ? (
          <Empty>No nodes.</Empty>
        ) : (
          <div className="table-wrap">
            <table aria-label={`Nodes of ${cluster.name}`}>
              <thead>
                <tr>
                  <th scope="col">Node</th>
                  <th scope="col">Instance type</th>
                  <th scope="col">GPU shape</th>
                  <th scope="col" className="num">GPUs</th>
                  <th scope="col">Health</th>
                  <th scope="col">State</th>
                  <th scope="col">Allocated to</th>
                  <th scope="col" className="num">Utilisation</th>
                  <th scope="col">Last heartbeat</th>
                  <th scope="col">Maintenance</th>
                </tr>
              </thead>
              <tbody>
                {nodes.map((n) => (
                  <tr key={n.id}>
                    <td>
                      {n.name}
                      {n.zone && <div className="muted">{n.zone}</div>}
                    </td>
                    <td>{n.instanceType}</td>
                    <td>{n.gpuShape}</td>
                    <td className="num">
                      {n.gpusPerNode} <span className="muted">× {Math.round(n.gpuMemoryMib / 1024)} GiB</span>
                    </td>
                    <td>
                      <span className={`badge health-${lower(n.health)}`}>{lower(n.health)}</span>
                    </td>
                    <td>
                      <span className={`badge state-${lower(n.state)}`}>{lower(n.state)}</span>
                    </td>
                    <td>
                      {n.allocatedGpr ? (
                        <>
                          {n.allocatedGpr.slice?.name ?? '?'} / <Link to={`/gprs/${n.allocatedGpr.id}`}>{n.allocatedGpr.name}</Link>
                        </>
                      ) : (
                        <span className="muted">—</span>
                      )}
                    </td>
                    <td className="num">
                      <Percent value={n.utilization} />
                    </td>
                    <td>
                      <Time at={n.lastHeartbeatAt} now={now} />
                    </td>
                    <td>
                      <NodeMaintenance node={n} onDone={refresh} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Card>
      <MaintenanceWindows clusterId={cluster.id} nodes={cluster.nodes.nodes} onChange={refresh} />
      <WhatIf clusterId={cluster.id} pools={cluster.pools} nodes={cluster.nodes.nodes} />
    </>
  );
}

export function Clusters() {
  const now = useNow();
  const [{ data, fetching, error }, refetch] = useQuery({ query: ClustersQuery });
  const refresh = useThrottled(() => refetch({ requestPolicy: 'network-only' }), 3000);
  useLive(InventoryLive, {}, refresh);
  const [params, setParams] = useSearchParams();
  const selected = params.get('cluster') ?? data?.clusters[0]?.id ?? null;

  return (
    <>
      <h1>Clusters</h1>
      <ErrorBox error={error} retry={() => refetch({ requestPolicy: 'network-only' })} />
      {!data && fetching && <Loading what="Loading clusters" />}
      {data && data.clusters.length === 0 && <Empty>No cluster is registered.</Empty>}
      {data && data.clusters.length > 0 && (
        <Card title={`Clusters (${data.clusters.length})`}>
          <UsageLegend />
          <div className="table-wrap">
            <table aria-label="Clusters">
              <thead>
                <tr>
                  <th scope="col">Cluster</th>
                  <th scope="col">Provider</th>
                  <th scope="col">Cloud / region</th>
                  <th scope="col">Status</th>
                  <th scope="col" className="num">Nodes</th>
                  <th scope="col" className="num">Reserved</th>
                  <th scope="col" className="num">Free</th>
                  <th scope="col" className="num">Unavailable</th>
                  <th scope="col">Allocation</th>
                  <th scope="col">Last contact</th>
                </tr>
              </thead>
              <tbody>
                {data.clusters.map((c) => {
                  const t = grandTotal(totalsBy(c.pools, () => ['all', 'all']));
                  const isSel = c.id === selected;
                  return (
                    <tr key={c.id} className={isSel ? 'selected' : undefined}>
                      <td>
                        <button type="button" className="link" aria-pressed={isSel} onClick={() => setParams({ cluster: c.id })}>
                          {c.name}
                        </button>
                      </td>
                      <td>{lower(c.provider)}</td>
                      <td>{[c.cloud, c.region].filter(Boolean).join(' / ') || <span className="muted">—</span>}</td>
                      <td>
                        <span className={`badge health-${lower(c.health)}`}>{lower(c.health)}</span>{' '}
                        {c.registrationStatus !== 'REGISTERED' && <span className="badge">{lower(c.registrationStatus)}</span>}
                      </td>
                      <td className="num">{t.total}</td>
                      <td className="num">{t.reserved}</td>
                      <td className="num">{t.free}</td>
                      <td className={`num${t.unavailable ? ' warm' : ''}`}>{t.unavailable}</td>
                      <td className="bar-cell">
                        <UsageBar total={t.total} reserved={t.reserved} free={t.free} unavailable={t.unavailable} />
                      </td>
                      <td>
                        <Time at={c.lastContactAt} now={now} />
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        </Card>
      )}
      {selected && <ClusterDetail key={selected} id={selected} />}
    </>
  );
}
