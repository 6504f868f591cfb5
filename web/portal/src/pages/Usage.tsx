// Usage over time: GPU-hours reserved, used and waited for per day, by slice, user, shape or
// cluster; how long GPRs waited; measured utilisation by cluster. Admins read every slice (or
// one); a slice's owners read their slice. Every table exports as CSV.
import { useMemo, useState } from 'react';
import { useClient, useMutation, useQuery } from 'urql';
import { graphql } from '../gql';
import type { UsageDimension } from '../gql/graphql';
import { Card, Empty, ErrorBox, Loading, Time } from '../components/ui';
import { formatDuration } from '../lib/time';
import { useSession } from '../session';
import { DailyBars } from './usage/DailyBars';
import { csvFileName, everyDay, gpuHours, lastDays } from './usage/usage';
import './admin/admin.css';

const ScopesDocument = graphql(`
  query UsageScopes {
    viewer {
      memberships {
        role
        slice {
          id
          name
        }
      }
    }
  }
`);

const AdminSlicesDocument = graphql(`
  query UsageAdminSlices {
    slices(first: 100) {
      nodes {
        id
        name
      }
    }
  }
`);

const ReportDocument = graphql(`
  query UsageReport($from: String!, $to: String!, $slice: ID, $by: [UsageDimension!]!) {
    usage(from: $from, to: $to, sliceId: $slice) {
      refreshedAt
      days: usage(groupBy: [DAY]) {
        group {
          day
        }
        reservedGpuHours
        usedGpuHours
        waitingGpuHours
      }
      totals: usage(groupBy: []) {
        reservedGpuHours
        usedGpuHours
        waitingGpuHours
        gprsStarted
      }
      rows: usage(groupBy: $by) {
        group {
          sliceName
          user
          gpuShape
          clusterName
        }
        reservedGpuHours
        usedGpuHours
        waitingGpuHours
        gprsStarted
      }
      waits(groupBy: [GPU_SHAPE, PRIORITY]) {
        group {
          gpuShape
          priority
        }
        started
        meanWaitSeconds
        maxWaitSeconds
        within1hPercent
        within24hPercent
      }
      utilisation(groupBy: [CLUSTER]) {
        group {
          clusterName
        }
        gpuHours
        busyGpuHours
        utilisationPercent
        heldGpuHours
        heldUtilisationPercent
      }
    }
  }
`);

const CsvDocument = graphql(`
  query UsageCsv($from: String!, $to: String!, $slice: ID, $by: [UsageDimension!]!) {
    usage(from: $from, to: $to, sliceId: $slice) {
      usageCsv(groupBy: $by)
    }
  }
`);

const RefreshDocument = graphql(`
  mutation RefreshUsage {
    refreshUsage {
      refreshedAt
      userErrors {
        field
        message
      }
    }
  }
`);

const DIMENSION_LABEL: Record<Exclude<UsageDimension, 'DAY'>, string> = { SLICE: 'Slice', USER: 'User', GPU_SHAPE: 'GPU shape', CLUSTER: 'Cluster' };

function save(name: string, text: string) {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/csv' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.click();
  URL.revokeObjectURL(url);
}

const pctText = (v: number | null | undefined) => (v == null ? '—' : `${v.toFixed(1)} %`);

export function Usage() {
  const { viewer } = useSession();
  const admin = viewer?.role === 'ADMIN';
  const client = useClient();
  const initial = useMemo(() => lastDays(new Date(), 30), []);
  const [from, setFrom] = useState(initial.from);
  const [to, setTo] = useState(initial.to);
  const [picked, setPicked] = useState<string | null>(null);
  const [groupBy, setGroupBy] = useState<Exclude<UsageDimension, 'DAY'>>(admin ? 'SLICE' : 'USER');
  const [exportError, setExportError] = useState<string | null>(null);

  const [scopes] = useQuery({ query: ScopesDocument, pause: admin });
  const [adminSlices] = useQuery({ query: AdminSlicesDocument, pause: !admin });
  const owned = admin
    ? (adminSlices.data?.slices.nodes ?? [])
    : (scopes.data?.viewer.memberships ?? []).filter((m) => m.role === 'OWNER' && m.slice).map((m) => m.slice as { id: string; name: string });
  // Admins start with every slice; owners with their first slice.
  const slice = admin ? picked : (picked ?? owned[0]?.id ?? null);
  const ready = admin || slice != null;
  const variables = { from, to, slice, by: [groupBy] as UsageDimension[] };
  const [{ data, fetching, error }, refetch] = useQuery({ query: ReportDocument, variables, pause: !ready || !from || !to });
  const [refreshed, refreshNow] = useMutation(RefreshDocument);
  const report = data?.usage;
  const days = useMemo(() => everyDay(from, to, report?.days ?? []), [report, from, to]);
  const scopeName = slice ? (owned.find((s) => s.id === slice)?.name ?? 'slice') : 'all';
  const exportCsv = async () => {
    setExportError(null);
    const r = await client.query(CsvDocument, variables, { requestPolicy: 'network-only' }).toPromise();
    if (r.error || !r.data) setExportError(r.error?.message ?? 'no answer');
    else save(csvFileName(scopeName, [groupBy], from, to), r.data.usage.usageCsv);
  };
  const column = (g: { sliceName?: string | null; user?: string | null; gpuShape?: string | null; clusterName?: string | null }) =>
    ({ SLICE: g.sliceName, USER: g.user, GPU_SHAPE: g.gpuShape, CLUSTER: g.clusterName })[groupBy] ?? '—';

  if (!admin && scopes.data && owned.length === 0) {
    return (
      <>
        <h1>Usage</h1>
        <Empty>Usage reports are for admins and a slice's owners; you own no slice.</Empty>
      </>
    );
  }
  return (
    <>
      <h1>Usage</h1>
      <p className="muted">
        GPU-hours per UTC day: <b>reserved</b> counts windows as booked, <b>used</b> ends when the release began, <b>waiting</b> is GPUs asked for in the
        queue. Rolled up every minute from the GPRs' events{report?.refreshedAt && <> (last: <Time at={report.refreshedAt} />)</>}.
      </p>
      <form className="usage-controls" onSubmit={(e) => e.preventDefault()} aria-label="Report range">
        <label>
          From
          <input type="date" value={from} max={to} onChange={(e) => setFrom(e.target.value)} />
        </label>
        <label>
          To
          <input type="date" value={to} min={from} onChange={(e) => setTo(e.target.value)} />
        </label>
        <label>
          Slice
          <select value={slice ?? ''} onChange={(e) => setPicked(e.target.value || null)}>
            {admin && <option value="">All slices</option>}
            {owned.map((s) => (
              <option key={s.id} value={s.id}>
                {s.name}
              </option>
            ))}
          </select>
        </label>
        {admin && (
          <button type="button" disabled={refreshed.fetching} onClick={async () => (await refreshNow({})).data && refetch({ requestPolicy: 'network-only' })}>
            Roll up now
          </button>
        )}
      </form>
      <ErrorBox error={error ?? scopes.error ?? adminSlices.error ?? refreshed.error} retry={() => refetch({ requestPolicy: 'network-only' })} />
      {!report && fetching && <Loading what="Loading usage" />}
      {report && (
        <>
          <div className="stats">
            <div>
              <div className="stat">{gpuHours(report.totals[0]?.usedGpuHours ?? 0)}</div>
              <div className="stat-label">GPU-hours used</div>
            </div>
            <div>
              <div className="stat">{gpuHours(report.totals[0]?.reservedGpuHours ?? 0)}</div>
              <div className="stat-label">GPU-hours reserved</div>
            </div>
            <div>
              <div className="stat">{gpuHours(report.totals[0]?.waitingGpuHours ?? 0)}</div>
              <div className="stat-label">GPU-hours waited for</div>
            </div>
            <div>
              <div className="stat">{report.totals[0]?.gprsStarted ?? 0}</div>
              <div className="stat-label">windows started</div>
            </div>
          </div>
          <Card title="GPU-hours per day">
            <DailyBars days={days} label={`GPU-hours per day, ${from} to ${to}`} />
          </Card>
          <Card
            title={`By ${DIMENSION_LABEL[groupBy].toLowerCase()}`}
            actions={
              <span className="usage-controls">
                <label>
                  Group by
                  <select value={groupBy} onChange={(e) => setGroupBy(e.target.value as Exclude<UsageDimension, 'DAY'>)}>
                    {(Object.keys(DIMENSION_LABEL) as Exclude<UsageDimension, 'DAY'>[])
                      .filter((d) => d !== 'SLICE' || slice == null)
                      .map((d) => (
                        <option key={d} value={d}>
                          {DIMENSION_LABEL[d]}
                        </option>
                      ))}
                  </select>
                </label>
                <button type="button" onClick={exportCsv}>
                  Download CSV
                </button>
              </span>
            }
          >
            {exportError && <p className="error-text">Could not export: {exportError}</p>}
            {report.rows.length === 0 ? (
              <Empty>Nothing used in this range.</Empty>
            ) : (
              <div className="table-wrap">
                <table aria-label={`Usage by ${DIMENSION_LABEL[groupBy].toLowerCase()}`}>
                  <thead>
                    <tr>
                      <th scope="col">{DIMENSION_LABEL[groupBy]}</th>
                      <th scope="col" className="num">Used GPU-h</th>
                      <th scope="col" className="num">Reserved GPU-h</th>
                      <th scope="col" className="num">Waiting GPU-h</th>
                      <th scope="col" className="num">Windows</th>
                    </tr>
                  </thead>
                  <tbody>
                    {report.rows.map((r) => (
                      <tr key={column(r.group)}>
                        <td>{column(r.group)}</td>
                        <td className="num">{gpuHours(r.usedGpuHours)}</td>
                        <td className="num">{gpuHours(r.reservedGpuHours)}</td>
                        <td className="num">{gpuHours(r.waitingGpuHours)}</td>
                        <td className="num">{r.gprsStarted}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </Card>
          <div className="grid">
            <Card title="Waits by shape and priority">
              {report.waits.length === 0 ? (
                <Empty>No window began in this range.</Empty>
              ) : (
                <div className="table-wrap">
                  <table aria-label="Waits by shape and priority">
                    <thead>
                      <tr>
                        <th scope="col">GPU shape</th>
                        <th scope="col" className="num">Priority</th>
                        <th scope="col" className="num">Started</th>
                        <th scope="col" className="num">Mean wait</th>
                        <th scope="col" className="num">Longest</th>
                        <th scope="col" className="num">Within 1 h</th>
                      </tr>
                    </thead>
                    <tbody>
                      {report.waits.map((w) => (
                        <tr key={`${w.group.gpuShape}/${w.group.priority}`}>
                          <td>{w.group.gpuShape}</td>
                          <td className="num">{w.group.priority}</td>
                          <td className="num">{w.started}</td>
                          <td className="num">{formatDuration(w.meanWaitSeconds)}</td>
                          <td className="num">{formatDuration(w.maxWaitSeconds)}</td>
                          <td className="num">{pctText(w.within1hPercent)}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              )}
            </Card>
            <Card title={slice ? 'Utilisation of the GPUs it held' : 'Utilisation by cluster'}>
              {report.utilisation.length === 0 ? (
                <Empty>No GPU time measured in this range.</Empty>
              ) : (
                <div className="table-wrap">
                  <table aria-label="Utilisation by cluster">
                    <thead>
                      <tr>
                        <th scope="col">Cluster</th>
                        <th scope="col" className="num">GPU-h</th>
                        <th scope="col" className="num">Utilisation</th>
                        <th scope="col" className="num">Held GPU-h</th>
                        <th scope="col" className="num">Held utilisation</th>
                      </tr>
                    </thead>
                    <tbody>
                      {report.utilisation.map((u) => (
                        <tr key={u.group.clusterName ?? '-'}>
                          <td>{u.group.clusterName}</td>
                          <td className="num">{gpuHours(u.gpuHours)}</td>
                          <td className="num">{pctText(u.utilisationPercent)}</td>
                          <td className="num">{gpuHours(u.heldGpuHours)}</td>
                          <td className="num">{pctText(u.heldUtilisationPercent)}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              )}
            </Card>
          </div>
        </>
      )}
    </>
  );
}
