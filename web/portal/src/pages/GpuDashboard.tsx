// One GPU: who holds it and its thresholds, then four live charts (utilisation, memory,
// temperature, power). A range loads stored history; live samples append from then on.
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { Link, useParams, useSearchParams } from 'react-router-dom';
import { useQuery } from 'urql';
import { graphql } from '../gql';
import { useLive } from '../api/live';
import { Card, Empty, ErrorBox, Loading, Time, useNow } from '../components/ui';
import { TimeSeriesChart } from './gpu/TimeSeriesChart';
import { classify, levelWord, shortUuid, thresholdsFor } from './gpu/hotspots';
import { RANGES, columns, mergePoints, rangeByKey, toPoint, type Point } from './gpu/series';
import { celsius, mib, pct, watts } from '../lib/format';
import './gpu/gpu.css';

const GpuDashboardInfo = graphql(`
  query GpuDashboardInfo($id: ID!) {
    node(id: $id) {
      ... on Gpu {
        id
        index
        uuid
        model
        memoryMib
        migEnabled
        latestSample {
          time
          util
          memUtil
          memUsedMib
          temperature
          power
          smClockMhz
          eccCorrected
          eccUncorrected
          xidErrors
        }
        node {
          id
          name
          gpuShape
          health
          state
          instanceType
          driverVersion
          cudaVersion
          lastHeartbeatAt
          temperatureThresholdCelsius
          powerThresholdWatts
          cluster {
            id
            name
          }
          allocatedGpr {
            id
            name
            exitAt
            slice {
              id
              name
            }
          }
        }
        processes {
          pid
          usedMemoryMib
          reportedAt
          pod {
            uid
            namespace
            name
            container
          }
        }
      }
    }
  }
`);

const GpuDashboardHistory = graphql(`
  query GpuDashboardHistory($id: ID!, $from: DateTime, $to: DateTime, $step: Duration) {
    node(id: $id) {
      ... on Gpu {
        id
        metrics(from: $from, to: $to, step: $step) {
          time
          util
          memUtil
          memUsedMib
          temperature
          power
        }
      }
    }
  }
`);

const GpuDashboardLive = graphql(`
  subscription GpuDashboardLive($gpuId: ID!, $interval: Duration!) {
    gpuMetrics(gpuId: $gpuId, interval: $interval) {
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

const MEMORY_MODES = { mib: 'Used MiB', pct: 'Memory util %' } as const;

export function GpuDashboard() {
  const { gpuId = '' } = useParams();
  const [params, setParams] = useSearchParams();
  const range = rangeByKey(params.get('range'));
  const memMode: keyof typeof MEMORY_MODES = params.get('mem') === 'pct' ? 'pct' : 'mib';
  const now = useNow(15_000);

  const [info, refetchInfo] = useQuery({ query: GpuDashboardInfo, variables: { id: gpuId } });
  useEffect(() => {
    const id = setInterval(() => refetchInfo({ requestPolicy: 'network-only' }), 15_000);
    return () => clearInterval(id);
  }, [refetchInfo]);

  // The window is fixed when the range is chosen (or reloaded); live samples extend it.
  const [loadedAt, setLoadedAt] = useState(() => Date.now());
  const span = useMemo(() => {
    const to = new Date(loadedAt);
    return { from: new Date(loadedAt - range.seconds * 1000).toISOString(), to: to.toISOString() };
  }, [loadedAt, range.seconds]);
  const [history, refetchHistory] = useQuery({
    query: GpuDashboardHistory,
    variables: { id: gpuId, from: span.from, to: span.to, step: range.step },
    requestPolicy: 'network-only',
  });

  const [points, setPoints] = useState<Point[]>([]);
  const rangeRef = useRef(range.seconds);
  rangeRef.current = range.seconds;
  // Live samples that arrive before the history do are kept and merged in with it.
  const pending = useRef<Point[]>([]);
  const historyReady = useRef(false);

  useEffect(() => {
    historyReady.current = false;
    pending.current = [];
    setPoints([]);
  }, [gpuId, range.key, loadedAt]);

  const metrics = history.data?.node.__typename === 'Gpu' ? history.data.node.metrics : undefined;
  useEffect(() => {
    if (!metrics) return;
    historyReady.current = true;
    const nowSec = Math.floor(Date.now() / 1000);
    const incoming = [...metrics.map(toPoint), ...pending.current];
    pending.current = [];
    setPoints((prev) => mergePoints(prev, incoming, rangeRef.current, nowSec));
  }, [metrics]);

  const onLive = useCallback(
    (d: { gpuMetrics: { samples: { gpuId: string; time: string; util: number; memUtil: number; memUsedMib: number; temperature: number; power: number }[] } }) => {
      const mine = d.gpuMetrics.samples.filter((s) => s.gpuId === gpuId).map(toPoint);
      if (mine.length === 0) return;
      if (!historyReady.current) {
        pending.current.push(...mine);
        return;
      }
      const nowSec = Math.max(Math.floor(Date.now() / 1000), ...mine.map((p) => p.t));
      setPoints((prev) => mergePoints(prev, mine, rangeRef.current, nowSec));
    },
    [gpuId],
  );
  // Live points at the history's step, so a long range does not mix 1 s points into minutes.
  const liveError = useLive(GpuDashboardLive, gpuId ? { gpuId, interval: range.step } : null, onLive);

  const gpu = info.data?.node.__typename === 'Gpu' ? info.data.node : null;
  const th = thresholdsFor(gpu?.node, gpu?.model);
  const cls = classify(gpu?.latestSample, th);

  const util = useMemo(() => columns(points, (p) => p.util), [points]);
  const mem = useMemo(() => columns(points, (p) => (memMode === 'pct' ? p.memUtil : p.memUsedMib)), [points, memMode]);
  const temp = useMemo(() => columns(points, (p) => p.temperature), [points]);
  const power = useMemo(() => columns(points, (p) => p.power), [points]);

  const setParam = (key: string, value: string | null) => {
    const next = new URLSearchParams(params);
    if (value === null) next.delete(key);
    else next.set(key, value);
    setParams(next, { replace: true });
  };

  if (info.fetching && !info.data) return <Loading what="Loading GPU" />;
  if (info.error && !info.data) return <ErrorBox error={info.error} retry={() => refetchInfo({ requestPolicy: 'network-only' })} />;
  if (!gpu)
    return (
      <>
        <h1>GPU</h1>
        <ErrorBox error="There is no GPU with this id, or you may not see it." />
        <Link to="/gpus">All GPUs</Link>
      </>
    );

  const node = gpu.node;
  const s = gpu.latestSample;
  return (
    <>
      <p>
        <Link to="/gpus">← All GPUs</Link>
      </p>
      <h1>
        {gpu.model} #{gpu.index} <span className="muted mono" title={gpu.uuid}>{shortUuid(gpu.uuid)}</span>
      </h1>
      <Card title="GPU" actions={s ? <span className="muted">Latest sample <Time at={s.time} now={now} /></span> : undefined}>
        <dl className="gpu-head">
          <div>
            <dt>Node</dt>
            <dd>{node?.name ?? '—'} <span className="muted">{node?.instanceType}</span></dd>
          </div>
          <div>
            <dt>Cluster</dt>
            <dd>{node?.cluster?.name ?? '—'}</dd>
          </div>
          <div>
            <dt>Holder</dt>
            <dd>
              {node?.allocatedGpr ? (
                <>
                  <Link to={`/gprs/${encodeURIComponent(node.allocatedGpr.id)}`}>{node.allocatedGpr.name}</Link>
                  {node.allocatedGpr.slice && <span className="muted"> · {node.allocatedGpr.slice.name}</span>}
                  {node.allocatedGpr.exitAt && (
                    <div className="muted">
                      until <Time at={node.allocatedGpr.exitAt} now={now} />
                    </div>
                  )}
                </>
              ) : (
                <span className="muted">{node?.state.toLowerCase() ?? '—'}</span>
              )}
            </dd>
          </div>
          <div>
            <dt>Health</dt>
            <dd>
              {node ? <span className={`badge health-${node.health.toLowerCase()}`}>{node.health.toLowerCase()}</span> : '—'}
              {cls.reasons.length > 0 && <span className={cls.level === 'hot' ? 'hot' : 'warm'}> {cls.reasons.join(', ')}</span>}
            </dd>
          </div>
          <div>
            <dt>Temperature threshold</dt>
            <dd>
              {th.temperatureC} °C <span className="muted">({th.source === 'node' ? 'node' : 'default'})</span>
            </dd>
          </div>
          <div>
            <dt>Power limit</dt>
            <dd>{th.powerW ? `${th.powerW} W` : <span className="muted">none known</span>}</dd>
          </div>
          <div>
            <dt>Memory</dt>
            <dd>{mib(gpu.memoryMib)}{gpu.migEnabled && <span className="muted"> · MIG</span>}</dd>
          </div>
          <div>
            <dt>Driver / CUDA</dt>
            <dd>
              {node?.driverVersion ?? '—'} / {node?.cudaVersion ?? '—'}
            </dd>
          </div>
          {s && (
            <div>
              <dt>Now</dt>
              <dd>
                {pct(s.util)} · {celsius(s.temperature)}
                {levelWord(cls.temperature) && ` (${levelWord(cls.temperature)} threshold)`} · {watts(s.power)} · {Math.round(s.smClockMhz)} MHz
              </dd>
            </div>
          )}
          {s && (s.eccUncorrected || s.xidErrors.length > 0) ? (
            <div>
              <dt>Errors</dt>
              <dd className="hot">
                {s.eccUncorrected ? `${s.eccUncorrected} uncorrected ECC` : ''} {s.xidErrors.length ? `XID ${s.xidErrors.join(', ')}` : ''}
              </dd>
            </div>
          ) : null}
        </dl>
      </Card>

      <Card
        title="Metrics"
        actions={
          <div className="row" style={{ alignItems: 'center' }}>
            <span className="range-buttons" role="group" aria-label="Time range">
              {RANGES.map((r) => (
                <button key={r.key} type="button" aria-pressed={r.key === range.key} onClick={() => { setParam('range', r.key === RANGES[0].key ? null : r.key); setLoadedAt(Date.now()); }}>
                  {r.label}
                </button>
              ))}
            </span>
            <span className="range-buttons" role="group" aria-label="Memory as">
              {(Object.keys(MEMORY_MODES) as (keyof typeof MEMORY_MODES)[]).map((m) => (
                <button key={m} type="button" aria-pressed={memMode === m} onClick={() => setParam('mem', m === 'mib' ? null : m)}>
                  {MEMORY_MODES[m]}
                </button>
              ))}
            </span>
            <button type="button" onClick={() => { setLoadedAt(Date.now()); refetchHistory({ requestPolicy: 'network-only' }); }}>
              Reload history
            </button>
          </div>
        }
      >
        <ErrorBox error={history.error} retry={() => refetchHistory({ requestPolicy: 'network-only' })} />
        <ErrorBox error={liveError ? `Live updates refused: ${liveError}` : null} />
        {history.fetching && points.length === 0 && <Loading what={`Loading the last ${range.label}`} />}
        {!history.fetching && !history.error && points.length === 0 && (
          <Empty>No samples in the last {range.label}. Charts fill in as the node's agent reports (every few seconds).</Empty>
        )}
        <p className="muted">
          Stored history at {range.step === 'PT1S' ? '1 s' : range.step === 'PT1M' ? '1 min' : '5 min'} steps, then live samples every second.
        </p>
        <div className="charts">
          <TimeSeriesChart title="Utilisation" id="utilisation" unit="%" xs={util[0]} ys={util[1]} color="#2457d6" yRange={[0, 100]} />
          <TimeSeriesChart
            title="Memory"
            id="memory"
            unit={memMode === 'pct' ? '%' : 'MiB'}
            xs={mem[0]}
            ys={mem[1]}
            color="#7a3fd1"
            yRange={memMode === 'pct' ? [0, 100] : [0, gpu.memoryMib]}
            threshold={memMode === 'mib' ? { value: gpu.memoryMib, label: 'capacity' } : null}
          />
          <TimeSeriesChart
            title="Temperature"
            id="temperature"
            unit="°C"
            xs={temp[0]}
            ys={temp[1]}
            color="#d97706"
            threshold={{ value: th.temperatureC, label: 'threshold' }}
          />
          <TimeSeriesChart
            title="Power"
            id="power"
            unit="W"
            xs={power[0]}
            ys={power[1]}
            color="#0f8a5f"
            threshold={th.powerW ? { value: th.powerW, label: 'limit' } : null}
          />
        </div>
      </Card>

      <Card title="Processes">
        {gpu.processes.length === 0 ? (
          <Empty>No processes reported on this GPU (or you may not read them).</Empty>
        ) : (
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">PID</th>
                  <th scope="col">Namespace</th>
                  <th scope="col">Pod</th>
                  <th scope="col">Container</th>
                  <th scope="col" className="num">GPU memory</th>
                  <th scope="col">Reported</th>
                </tr>
              </thead>
              <tbody>
                {gpu.processes.map((p) => (
                  <tr key={p.pid}>
                    <td className="num">{p.pid}</td>
                    <td>{p.pod?.namespace ?? <span className="muted">—</span>}</td>
                    <td>{p.pod?.name ?? <span className="muted">outside any pod</span>}</td>
                    <td>{p.pod?.container ?? '—'}</td>
                    <td className="num">{mib(p.usedMemoryMib)}</td>
                    <td>
                      <Time at={p.reportedAt} now={now} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Card>
    </>
  );
}
