// AI workloads → pods → GPUs: the pods in a slice's namespaces that use GPUs its GPRs hold,
// grouped by namespace (or by the workload hints of the GPR holding their node), each with its
// node, GPUs (live samples) and processes.
import { useCallback, useEffect, useMemo, useState } from 'react';
import { Link, useSearchParams } from 'react-router-dom';
import { useQuery } from 'urql';
import { graphql } from '../gql';
import type { WorkloadsPodsQuery } from '../gql/graphql';
import { useLive } from '../api/live';
import { useSession } from '../session';
import { Card, Empty, ErrorBox, Loading, Time, useNow } from '../components/ui';
import { classify, levelClass, levelWord, shortUuid, thresholdsFor } from './gpu/hotspots';
import { groupPods, latestByGpu, newer, podMatches, type Grouping } from './gpu/workloads';
import { celsius, mib, pct, watts } from '../lib/format';
import './gpu/gpu.css';

const WorkloadsSlices = graphql(`
  query WorkloadsSlices {
    slices(first: 100) {
      nodes {
        id
        name
      }
    }
  }
`);

const WorkloadsPods = graphql(`
  query WorkloadsPods($sliceId: ID!) {
    slice(id: $sliceId) {
      id
      name
      gpuSummary {
        gpuCount
        reportingGpuCount
        idleGpuCount
        averageUtilization
        averageMemoryUtilization
        averageTemperature
        powerWatts
        memoryUsedMib
        newestSampleAt
        hottestGpu {
          id
          index
          model
          latestSample {
            temperature
          }
          node {
            name
          }
        }
        highestPowerGpu {
          id
          index
          model
          latestSample {
            power
          }
          node {
            name
          }
        }
      }
    }
    workloads(sliceId: $sliceId) {
      uid
      name
      namespace
      containers
      reportedAt
      usedMemoryMib
      node {
        id
        name
        gpuShape
        temperatureThresholdCelsius
        powerThresholdWatts
        cluster {
          name
        }
        allocatedGpr {
          id
          name
          workload {
            model
            kind
          }
        }
      }
      gpus {
        id
        index
        uuid
        model
        memoryMib
        latestSample {
          gpuId
          time
          util
          memUtil
          memUsedMib
          temperature
          power
        }
      }
      processes {
        pid
        usedMemoryMib
        pod {
          container
        }
      }
    }
  }
`);

const WorkloadsLive = graphql(`
  subscription WorkloadsLive($sliceId: ID!) {
    gpuMetrics(sliceId: $sliceId, interval: "PT2S") {
      samples {
        gpuId
        time
        util
        memUtil
        memUsedMib
        temperature
        power
      }
    }
  }
`);

type Pod = WorkloadsPodsQuery['workloads'][number];
type Sample = NonNullable<Pod['gpus'][number]['latestSample']>;

export function Workloads() {
  const { viewer } = useSession();
  const [params, setParams] = useSearchParams();
  const [slices] = useQuery({ query: WorkloadsSlices });
  const options = useMemo(() => {
    const fromQuery = slices.data?.slices.nodes;
    if (fromQuery) return fromQuery;
    return (viewer?.memberships ?? []).flatMap((m) => (m.slice ? [m.slice] : []));
  }, [slices.data, viewer]);
  const sliceId = params.get('slice') ?? (options.length === 1 ? options[0].id : '');
  const q = params.get('q') ?? '';
  const by = (['namespace', 'model', 'kind', 'gpr'] as const).find((g) => g === params.get('by')) ?? 'namespace';
  const setParam = (key: string, value: string) => {
    const next = new URLSearchParams(params);
    if (value) next.set(key, value);
    else next.delete(key);
    setParams(next, { replace: true });
  };

  return (
    <>
      <h1>AI workloads</h1>
      <form className="row gpu-filters" onSubmit={(e) => e.preventDefault()} role="search" aria-label="Choose workloads">
        <div>
          <label htmlFor="wl-slice">Slice</label>
          <select id="wl-slice" value={sliceId} onChange={(e) => setParam('slice', e.target.value)}>
            <option value="">Choose a slice…</option>
            {options.map((s) => (
              <option key={s.id} value={s.id}>
                {s.name}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label htmlFor="wl-q">Search</label>
          <input id="wl-q" type="search" placeholder="Pod, namespace, node, container, GPU" value={q} onChange={(e) => setParam('q', e.target.value)} />
        </div>
        <div>
          <label htmlFor="wl-by">Group by</label>
          <select id="wl-by" value={by} onChange={(e) => setParam('by', e.target.value === 'namespace' ? '' : e.target.value)}>
            <option value="namespace">namespace</option>
            <option value="model">model (the GPR's workload)</option>
            <option value="kind">kind of workload</option>
            <option value="gpr">GPR</option>
          </select>
        </div>
      </form>
      {slices.fetching && !slices.data && <Loading what="Loading slices" />}
      <ErrorBox error={slices.error} />
      {slices.data && options.length === 0 && <Empty>You are not a member of any slice yet. An admin adds you to one.</Empty>}
      {sliceId ? <SliceWorkloads key={sliceId} sliceId={sliceId} query={q} by={by} /> : options.length > 0 && <Empty>Choose a slice to see its AI workloads.</Empty>}
    </>
  );
}

const GROUP_TITLE: Record<Grouping, string> = { namespace: 'Namespace', model: 'Model', kind: 'Workload', gpr: 'GPR' };

function SliceWorkloads({ sliceId, query, by }: { sliceId: string; query: string; by: Grouping }) {
  const now = useNow(5_000);
  const [res, refetch] = useQuery({ query: WorkloadsPods, variables: { sliceId } });
  useEffect(() => {
    const id = setInterval(() => refetch({ requestPolicy: 'network-only' }), 10_000);
    return () => clearInterval(id);
  }, [refetch]);

  const [live, setLive] = useState<Map<string, Sample>>(() => new Map());
  const onLive = useCallback((d: { gpuMetrics: { samples: Sample[] } }) => setLive((prev) => latestByGpu(prev, d.gpuMetrics.samples)), []);
  const liveError = useLive(WorkloadsLive, { sliceId }, onLive);

  const pods = res.data?.workloads;
  const groups = useMemo(() => groupPods((pods ?? []).filter((p) => podMatches(p, query)), by), [pods, query, by]);

  if (res.fetching && !res.data) return <Loading what="Loading workloads" />;
  if (res.error && !res.data) return <ErrorBox error={res.error} retry={() => refetch({ requestPolicy: 'network-only' })} />;
  if (!res.data) return null;
  const sum = res.data.slice.gpuSummary;

  return (
    <>
      <ErrorBox error={res.error} />
      {liveError && <ErrorBox error={`Live samples refused: ${liveError}`} />}
      <Card title={<>Slice {res.data.slice.name}</>} actions={sum?.newestSampleAt ? <span className="muted">Samples <Time at={sum.newestSampleAt} now={now} /></span> : undefined}>
        {sum ? (
          <div className="summary-stats">
            <div>
              <div className="stat">{pct(sum.averageUtilization)}</div>
              <div className="stat-label">Average utilisation</div>
            </div>
            <div>
              <div className="stat">
                {sum.reportingGpuCount}/{sum.gpuCount}
              </div>
              <div className="stat-label">GPUs reporting ({sum.idleGpuCount} idle)</div>
            </div>
            <div>
              <div className="stat">{watts(sum.powerWatts)}</div>
              <div className="stat-label">Power, all GPUs</div>
            </div>
            <div>
              <div className="stat">{mib(sum.memoryUsedMib)}</div>
              <div className="stat-label">GPU memory used</div>
            </div>
            <div>
              <div className="stat">{sum.hottestGpu ? celsius(sum.hottestGpu.latestSample?.temperature) : '—'}</div>
              <div className="stat-label">
                Hottest GPU{' '}
                {sum.hottestGpu && (
                  <Link to={`/gpus/${encodeURIComponent(sum.hottestGpu.id)}`}>
                    {sum.hottestGpu.node?.name} #{sum.hottestGpu.index}
                  </Link>
                )}
              </div>
            </div>
            <div>
              <div className="stat">{sum.highestPowerGpu ? watts(sum.highestPowerGpu.latestSample?.power) : '—'}</div>
              <div className="stat-label">
                Highest-power GPU{' '}
                {sum.highestPowerGpu && (
                  <Link to={`/gpus/${encodeURIComponent(sum.highestPowerGpu.id)}`}>
                    {sum.highestPowerGpu.node?.name} #{sum.highestPowerGpu.index}
                  </Link>
                )}
              </div>
            </div>
          </div>
        ) : (
          <p className="muted">This slice's GPRs hold no nodes right now.</p>
        )}
      </Card>
      {pods && pods.length === 0 && (
        <Empty>
          No pods yet. Pods show up here when this slice's GPRs hold nodes and the nodes' agents report pods in the slice's namespaces
          using their GPUs.
        </Empty>
      )}
      {pods && pods.length > 0 && groups.length === 0 && <Empty>No pods match “{query}”.</Empty>}
      {groups.map(([ns, list]) => (
        <Card
          key={ns || '(none)'}
          title={
            <>
              {GROUP_TITLE[by]} {ns || <span className="muted">{by === 'namespace' ? '(unknown)' : '(not said)'}</span>}{' '}
              <span className="muted">· {list.length} pod{list.length === 1 ? '' : 's'}</span>
            </>
          }
        >
          <div className="pods">
            {list.map((pod) => (
              <PodView key={pod.uid} pod={pod} live={live} now={now} />
            ))}
          </div>
        </Card>
      ))}
    </>
  );
}

function PodView({ pod, live, now }: { pod: Pod; live: ReadonlyMap<string, Sample>; now: Date }) {
  const th = thresholdsFor(pod.node, pod.gpus[0]?.model);
  return (
    <article className="pod" aria-label={`Pod ${pod.name ?? pod.uid}`}>
      <header>
        <h4>{pod.name ?? <span className="mono">{pod.uid}</span>}</h4>
        <span className="muted">
          on {pod.node?.name ?? 'unknown node'}
          {pod.node?.cluster && ` · ${pod.node.cluster.name}`}
        </span>
        {pod.node?.allocatedGpr && (
          <span>
            GPR <Link to={`/gprs/${encodeURIComponent(pod.node.allocatedGpr.id)}`}>{pod.node.allocatedGpr.name}</Link>
          </span>
        )}
        {pod.containers.length > 0 && <span className="muted">containers: {pod.containers.join(', ')}</span>}
        <span className="muted">
          {mib(pod.usedMemoryMib)} GPU memory · reported <Time at={pod.reportedAt} now={now} />
        </span>
      </header>
      <p className="muted" style={{ margin: '0 0 0.4rem' }}>
        Processes:{' '}
        {pod.processes.length === 0
          ? 'none reported'
          : pod.processes
              .map((p) => `PID ${p.pid}${p.pod?.container ? ` (${p.pod.container})` : ''}${p.usedMemoryMib != null ? ` ${mib(p.usedMemoryMib)}` : ''}`)
              .join(', ')}
      </p>
      <div className="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">GPU</th>
              <th scope="col">Model</th>
              <th scope="col" className="num">Util</th>
              <th scope="col" className="num">Memory</th>
              <th scope="col" className="num">Temp</th>
              <th scope="col" className="num">Power</th>
            </tr>
          </thead>
          <tbody>
            {pod.gpus.map((g) => {
              const s = newer(g.latestSample, live.get(g.id));
              const c = classify(s, th);
              return (
                <tr key={g.id}>
                  <td>
                    <Link to={`/gpus/${encodeURIComponent(g.id)}`} title={g.uuid}>
                      #{g.index} <span className="mono">{shortUuid(g.uuid)}</span>
                    </Link>
                  </td>
                  <td>{g.model}</td>
                  <td className="num">{pct(s?.util)}</td>
                  <td className="num">
                    {s ? mib(s.memUsedMib) : '—'} <span className="muted">/ {mib(g.memoryMib)}</span>
                  </td>
                  <td className={`num ${levelClass(c.temperature) ?? ''}`}>
                    {celsius(s?.temperature)}
                    {levelWord(c.temperature) && ` (${levelWord(c.temperature)} ${th.temperatureC})`}
                  </td>
                  <td className={`num ${levelClass(c.power) ?? ''}`}>
                    {watts(s?.power)}
                    {levelWord(c.power) && ` (${levelWord(c.power)} limit)`}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </article>
  );
}
