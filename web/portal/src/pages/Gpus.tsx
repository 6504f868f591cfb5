// GPUs across clusters, hot spots first: temperature against the threshold and power against
// the limit, with filters in the URL and a refresh every 5 s that keeps the old rows shown.
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router-dom';
import { CombinedError, useClient } from 'urql';
import { graphql } from '../gql';
import type { GpusTableQuery } from '../gql/graphql';
import { Card, Empty, ErrorBox, Loading, Time, useNow } from '../components/ui';
import {
  classify,
  filtersFromParams,
  filtersToParams,
  levelClass,
  levelWord,
  matchesFilters,
  shortUuid,
  thresholdsFor,
  type GpuFilters,
} from './gpu/hotspots';
import { celsius, mib, pct, watts } from '../lib/format';
import './gpu/gpu.css';

const GpusTableQueryDoc = graphql(`
  query GpusTable($first: Int, $after: String) {
    gpus(orderBy: HOT_SPOTS_FIRST, first: $first, after: $after) {
      totalCount
      pageInfo {
        hasNextPage
        endCursor
      }
      nodes {
        id
        index
        uuid
        model
        memoryMib
        latestSample {
          time
          util
          memUtil
          memUsedMib
          temperature
          power
        }
        node {
          id
          name
          gpuShape
          health
          state
          temperatureThresholdCelsius
          powerThresholdWatts
          cluster {
            id
            name
          }
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
  }
`);

export type GpuRow = GpusTableQuery['gpus']['nodes'][number];

/** The gateway's largest page. */
const PAGE = 100;
/** Pages read per refresh (the hottest 1,000 GPUs). */
const MAX_PAGES = 10;

interface AllGpus {
  data: { nodes: GpuRow[]; totalCount: number } | null;
  fetching: boolean;
  error: CombinedError | null;
  refetch: () => void;
}

/** Every page of `gpus(orderBy: HOT_SPOTS_FIRST)`, re-read every `everyMs`; old rows stay while refreshing. */
function useAllGpus(everyMs: number): AllGpus {
  const client = useClient();
  const [state, setState] = useState<Omit<AllGpus, 'refetch'>>({ data: null, fetching: true, error: null });
  const running = useRef(false);
  const alive = useRef(true);
  const load = useCallback(async () => {
    if (running.current) return;
    running.current = true;
    setState((s) => ({ ...s, fetching: true }));
    const nodes: GpuRow[] = [];
    let after: string | null = null;
    let totalCount = 0;
    let error: CombinedError | null = null;
    for (let page = 0; page < MAX_PAGES; page++) {
      const r = await client.query(GpusTableQueryDoc, { first: PAGE, after }, { requestPolicy: 'network-only' }).toPromise();
      if (r.error || !r.data) {
        error = r.error ?? null;
        break;
      }
      nodes.push(...r.data.gpus.nodes);
      totalCount = r.data.gpus.totalCount;
      if (!r.data.gpus.pageInfo.hasNextPage || !r.data.gpus.pageInfo.endCursor) break;
      after = r.data.gpus.pageInfo.endCursor;
    }
    running.current = false;
    if (!alive.current) return;
    // A failed refresh keeps the rows it had.
    setState((s) => ({ data: error ? s.data : { nodes, totalCount }, fetching: false, error }));
  }, [client]);
  useEffect(() => {
    alive.current = true;
    void load();
    const id = setInterval(() => void load(), everyMs);
    return () => {
      alive.current = false;
      clearInterval(id);
    };
  }, [load, everyMs]);
  return { ...state, refetch: () => void load() };
}
const HEALTHS = ['HEALTHY', 'UNHEALTHY', 'STALE', 'UNKNOWN'];

export function Gpus() {
  const [params, setParams] = useSearchParams();
  const filters = filtersFromParams(params);
  const now = useNow(5_000);
  const { data, fetching, error, refetch } = useAllGpus(5_000);

  const set = (patch: Partial<GpuFilters>) => setParams(filtersToParams({ ...filters, ...patch }), { replace: true });

  const all = data?.nodes;
  const clusters = useMemo(() => {
    const m = new Map<string, string>();
    for (const g of all ?? []) if (g.node?.cluster) m.set(g.node.cluster.id, g.node.cluster.name);
    return [...m.entries()].sort((a, b) => a[1].localeCompare(b[1]));
  }, [all]);
  const shapes = useMemo(() => [...new Set((all ?? []).map((g) => g.node?.gpuShape ?? g.model))].sort(), [all]);

  const rows = useMemo(
    () =>
      (all ?? [])
        .map((g) => {
          const th = thresholdsFor(g.node, g.model);
          return { g, th, c: classify(g.latestSample, th) };
        })
        .filter(({ g, c }) => matchesFilters(g, filters, c)),
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [all, filters.cluster, filters.shape, filters.health, filters.hot, filters.q],
  );
  const hotCount = rows.filter((r) => r.c.level === 'hot').length;

  return (
    <>
      <h1>GPUs</h1>
      <Card
        title={
          <>
            Hot spots first{' '}
            {data && (
              <span className="muted">
                ({rows.length} of {data.totalCount} shown{hotCount ? `, ${hotCount} over a limit` : ''})
              </span>
            )}
          </>
        }
        actions={
          <span className="refreshing" aria-live="polite">
            {fetching ? (data ? 'Refreshing…' : 'Loading…') : 'Refreshes every 5 s'}
          </span>
        }
      >
        <form className="row gpu-filters" role="search" aria-label="Filter GPUs" onSubmit={(e) => e.preventDefault()}>
          <div>
            <label htmlFor="gpu-q">Search</label>
            <input id="gpu-q" type="search" placeholder="Node, UUID or model" value={filters.q} onChange={(e) => set({ q: e.target.value })} />
          </div>
          <div>
            <label htmlFor="gpu-cluster">Cluster</label>
            <select id="gpu-cluster" value={filters.cluster} onChange={(e) => set({ cluster: e.target.value })}>
              <option value="">All clusters</option>
              {clusters.map(([id, name]) => (
                <option key={id} value={id}>
                  {name}
                </option>
              ))}
              {filters.cluster && !clusters.some(([id]) => id === filters.cluster) && <option value={filters.cluster}>{filters.cluster}</option>}
            </select>
          </div>
          <div>
            <label htmlFor="gpu-shape">GPU shape</label>
            <select id="gpu-shape" value={filters.shape} onChange={(e) => set({ shape: e.target.value })}>
              <option value="">All shapes</option>
              {shapes.map((s) => (
                <option key={s} value={s}>
                  {s}
                </option>
              ))}
              {filters.shape && !shapes.includes(filters.shape) && <option value={filters.shape}>{filters.shape}</option>}
            </select>
          </div>
          <div>
            <label htmlFor="gpu-health">Health</label>
            <select id="gpu-health" value={filters.health} onChange={(e) => set({ health: e.target.value })}>
              <option value="">Any health</option>
              {HEALTHS.map((h) => (
                <option key={h} value={h}>
                  {h.toLowerCase()}
                </option>
              ))}
            </select>
          </div>
          <label className="check">
            <input type="checkbox" checked={filters.hot} onChange={(e) => set({ hot: e.target.checked })} /> Only hot
          </label>
          {params.toString() && (
            <button type="button" onClick={() => setParams(new URLSearchParams(), { replace: true })}>
              Clear filters
            </button>
          )}
        </form>
        <ErrorBox error={error} retry={refetch} />
        {!data && fetching && <Loading what="Loading GPUs" />}
        {data && rows.length === 0 && (
          <Empty>{data.nodes.length === 0 ? 'No GPUs are registered yet, or none you may see.' : 'No GPUs match these filters.'}</Empty>
        )}
        {rows.length > 0 && <GpuTable rows={rows} now={now} />}
        {data && data.totalCount > data.nodes.length && (
          <p className="muted">Showing the {data.nodes.length} hottest of {data.totalCount} GPUs.</p>
        )}
      </Card>
    </>
  );
}

function GpuTable({ rows, now }: { rows: { g: GpuRow; th: ReturnType<typeof thresholdsFor>; c: ReturnType<typeof classify> }[]; now: Date }) {
  const navigate = useNavigate();
  return (
    <div className="table-wrap">
      <table className="gpu-table">
        <caption className="muted" style={{ textAlign: 'left', captionSide: 'bottom', paddingTop: '0.5rem' }}>
          “over” marks a value above its threshold, “near” one within 5 °C or 10 % of it. Select a GPU for its dashboard.
        </caption>
        <thead>
          <tr>
            <th scope="col">GPU</th>
            <th scope="col">Node</th>
            <th scope="col">Cluster</th>
            <th scope="col">Model</th>
            <th scope="col" className="num">Util</th>
            <th scope="col" className="num">Memory used</th>
            <th scope="col" className="num">Temp</th>
            <th scope="col" className="num">Power</th>
            <th scope="col">Health</th>
            <th scope="col">Holder</th>
            <th scope="col">Sample</th>
          </tr>
        </thead>
        <tbody>
          {rows.map(({ g, th, c }) => {
            const s = g.latestSample;
            const gpr = g.node?.allocatedGpr;
            return (
              <tr key={g.id} className="selectable" onClick={(e) => {
                if ((e.target as HTMLElement).closest('a')) return;
                navigate(`/gpus/${encodeURIComponent(g.id)}`);
              }}>
                <td>
                  <Link className="rowlink" to={`/gpus/${encodeURIComponent(g.id)}`} title={g.uuid}>
                    #{g.index} <span className="mono">{shortUuid(g.uuid)}</span>
                  </Link>
                  {c.level === 'hot' && <span className="badge sev-critical why">hot</span>}
                  {c.level === 'warm' && <span className="badge sev-warning why">warm</span>}
                </td>
                <td>{g.node?.name ?? '—'}</td>
                <td>{g.node?.cluster?.name ?? '—'}</td>
                <td>{g.model}</td>
                <td className="num">{pct(s?.util)}</td>
                <td className="num">
                  {s ? (
                    <>
                      {mib(s.memUsedMib)} <span className="muted">/ {mib(g.memoryMib)}</span>
                    </>
                  ) : (
                    '—'
                  )}
                </td>
                <td className={`num ${levelClass(c.temperature) ?? ''}`} title={`Threshold ${th.temperatureC} °C`}>
                  {celsius(s?.temperature)}
                  {levelWord(c.temperature) && <span className="why"> ({levelWord(c.temperature)} {th.temperatureC})</span>}
                </td>
                <td className={`num ${levelClass(c.power) ?? ''}`} title={th.powerW ? `Limit ${th.powerW} W` : 'No known power limit'}>
                  {watts(s?.power)}
                  {th.powerW && <span className="muted"> / {th.powerW}</span>}
                  {levelWord(c.power) && <span className="why"> ({levelWord(c.power)} limit)</span>}
                </td>
                <td>
                  {g.node ? <span className={`badge health-${g.node.health.toLowerCase()}`}>{g.node.health.toLowerCase()}</span> : '—'}
                </td>
                <td>
                  {gpr ? (
                    <>
                      {gpr.slice?.name && <span className="muted">{gpr.slice.name} · </span>}
                      <Link to={`/gprs/${encodeURIComponent(gpr.id)}`}>{gpr.name}</Link>
                    </>
                  ) : g.node?.state === 'RESERVED' ? (
                    <span className="muted">held</span>
                  ) : (
                    <span className="muted">{g.node?.state.toLowerCase() ?? '—'}</span>
                  )}
                </td>
                <td>{s ? <Time at={s.time} now={now} /> : <span className="muted">no sample you may read</span>}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
