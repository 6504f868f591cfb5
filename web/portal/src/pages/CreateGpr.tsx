// New GPR: the request form with "Get wait time", which shows when a GPR like this would start
// in every pool of the slice; picking a pool fills the form. Submitting creates the GPR and
// opens it; problems the gateway finds are listed by the form and nothing else changes.
import { useEffect, useMemo, useState, type FormEvent, type KeyboardEvent } from 'react';
import { useNavigate, useSearchParams } from 'react-router-dom';
import { useClient, useMutation, useQuery, type CombinedError } from 'urql';
import { graphql } from '../gql';
import type { CreateGprProfilesQuery, CreateGprWaitTimesQuery } from '../gql/graphql';
import { useSession } from '../session';
import { Card, Empty, ErrorBox, LikelyStart, Loading, Time, UserErrors, useNow } from '../components/ui';
import { formatDuration, parseIsoDuration } from '../lib/time';
import {
  EMPTY_FORM,
  applyEstimate,
  applyProfile,
  createInput,
  errorField,
  estimateKey,
  isChosen,
  shapeOptions,
  sortEstimates,
  waitTimeInput,
  type GprForm,
} from './user/waitTimes';
import './user/user.css';

const CreateGprSlicesDocument = graphql(`
  query CreateGprSlices {
    slices(first: 100) {
      nodes {
        id
        name
        viewerRole
        clusters {
          id
          name
        }
        policy {
          allowedShapes
          priorityMin
          priorityMax
          maxDuration
          maxNodesPerGpr
          maxGpusPerGpr
          defaultIdleTimeout
          maxIdleTimeout
          autoEviction
        }
      }
    }
  }
`);

const CreateGprPoolsDocument = graphql(`
  query CreateGprPools {
    pools {
      gpuShape
      instanceType
      gpusPerNode
      freeNodes
      totalNodes
      cluster {
        id
        name
      }
    }
  }
`);

const CreateGprWaitTimesDocument = graphql(`
  query CreateGprWaitTimes($input: WaitTimeInput!) {
    waitTimeEstimates(input: $input) {
      cluster {
        id
        name
      }
      instanceType
      gpuShape
      freeNodes
      healthyNodes
      estimatedStartAt
      estimatedWait
      startNoLaterThan
      startRange {
        p10
        p90
      }
    }
  }
`);

const CreateGprProfilesDocument = graphql(`
  query CreateGprProfiles($sliceId: ID!) {
    gprTemplates(sliceId: $sliceId) {
      id
      name
      description
      nodeCount
      gpusPerNode
      gpuShape
      instanceType
      priority
      duration
      idleTimeout
    }
  }
`);

const CreateGprSubmitDocument = graphql(`
  mutation CreateGprSubmit($input: CreateGprInput!) {
    createGpr(input: $input) {
      gpr {
        id
        phase
      }
      userErrors {
        field
        message
        code
      }
    }
  }
`);

type Estimate = CreateGprWaitTimesQuery['waitTimeEstimates'][number];
type Problem = { field?: readonly string[] | null; message: string };

const EDIT_ROLES = ['EDITOR', 'OWNER'];

export function CreateGpr() {
  const { viewer } = useSession();
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const client = useClient();
  const now = useNow(15_000);
  const [slicesResult, refetchSlices] = useQuery({ query: CreateGprSlicesDocument });
  const [poolsResult] = useQuery({ query: CreateGprPoolsDocument });
  const [, submit] = useMutation(CreateGprSubmitDocument);
  const [form, setForm] = useState<GprForm>(EMPTY_FORM);
  const [profilesResult] = useQuery({ query: CreateGprProfilesDocument, variables: { sliceId: form.sliceId }, pause: !form.sliceId });
  const [problems, setProblems] = useState<readonly Problem[]>([]);
  const [submitError, setSubmitError] = useState<CombinedError | null>(null);
  const [submitting, setSubmitting] = useState(false);
  const [waits, setWaits] = useState<{ rows: Estimate[]; key: string } | null>(null);
  const [waitError, setWaitError] = useState<CombinedError | null>(null);
  const [waitProblems, setWaitProblems] = useState<readonly Problem[]>([]);
  const [waiting, setWaiting] = useState(false);

  const admin = viewer?.role === 'ADMIN';
  const slices = useMemo(
    () => (slicesResult.data?.slices.nodes ?? []).filter((s) => admin || EDIT_ROLES.includes(s.viewerRole ?? '')),
    [slicesResult.data, admin],
  );
  const slice = slices.find((s) => s.id === form.sliceId);
  const pools = poolsResult.data?.pools ?? [];

  // Preselect `?slice=` (when the viewer may create GPRs there), else the first slice.
  const wanted = params.get('slice');
  useEffect(() => {
    if (slices.length === 0) return;
    setForm((f) => {
      if (f.sliceId && slices.some((s) => s.id === f.sliceId)) return f;
      const pick = slices.find((s) => s.id === wanted || s.name === wanted) ?? slices[0];
      return { ...f, sliceId: pick.id };
    });
  }, [slices, wanted]);

  const shapes = shapeOptions(slice?.policy.allowedShapes, pools);
  // A pool chosen from the wait times may have a shape the policy does not list: keep it visible.
  if (form.gpuShape && !shapes.includes(form.gpuShape)) shapes.push(form.gpuShape);
  const sliceClusterIds = new Set((slice?.clusters ?? []).map((c) => c.id));
  const instanceTypes = [
    ...new Set(
      pools
        .filter((p) => !form.gpuShape || p.gpuShape === form.gpuShape)
        .filter((p) => sliceClusterIds.size === 0 || (p.cluster && sliceClusterIds.has(p.cluster.id)))
        .map((p) => p.instanceType),
    ),
  ].sort();
  if (form.instanceType && !instanceTypes.includes(form.instanceType)) instanceTypes.push(form.instanceType);

  const waitKey = JSON.stringify(waitTimeInput(form).input);
  const stale = waits !== null && waits.key !== waitKey;

  const set = <K extends keyof GprForm>(key: K, value: GprForm[K]) => setForm((f) => ({ ...f, [key]: value }));
  const changeSlice = (sliceId: string) => {
    const next = slices.find((s) => s.id === sliceId);
    const allowed = next?.policy.allowedShapes ?? [];
    setForm((f) => ({
      ...f,
      sliceId,
      // Profiles are published per slice: the next one may not offer this one.
      templateId: '',
      clusterId: next?.clusters.some((c) => c.id === f.clusterId) ? f.clusterId : '',
      gpuShape: allowed.length > 0 && !allowed.includes(f.gpuShape) ? '' : f.gpuShape,
    }));
    setWaits(null);
  };
  const changeShape = (gpuShape: string) =>
    setForm((f) => ({
      ...f,
      gpuShape,
      instanceType: pools.some((p) => p.gpuShape === gpuShape && p.instanceType === f.instanceType) ? f.instanceType : '',
    }));

  const getWaitTimes = async () => {
    const { input, errors } = waitTimeInput(form);
    setWaitProblems(errors);
    setWaitError(null);
    if (!input) return;
    setWaiting(true);
    const result = await client.query(CreateGprWaitTimesDocument, { input }, { requestPolicy: 'network-only' }).toPromise();
    setWaiting(false);
    if (result.error) {
      setWaitError(result.error);
      return;
    }
    setWaits({ rows: sortEstimates(result.data?.waitTimeEstimates ?? []), key: JSON.stringify(input) });
  };

  const choose = (row: Estimate) => setForm((f) => applyEstimate(f, row));
  const rowKey = (e: KeyboardEvent<HTMLTableRowElement>, row: Estimate) => {
    if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      choose(row);
    }
  };

  const onSubmit = async (e: FormEvent) => {
    e.preventDefault();
    if (submitting) return;
    const { input, errors } = createInput(form);
    setSubmitError(null);
    setProblems(errors);
    if (!input) return;
    setSubmitting(true);
    const result = await submit({ input });
    setSubmitting(false);
    if (result.error) {
      setSubmitError(result.error);
      return;
    }
    const payload = result.data?.createGpr;
    if (payload?.userErrors.length) {
      setProblems(payload.userErrors);
      return;
    }
    if (payload?.gpr) navigate(`/gprs/${payload.gpr.id}`);
  };

  if (slicesResult.fetching && !slicesResult.data) return <Loading what="Loading your slices" />;
  if (!slicesResult.data) return <ErrorBox error={slicesResult.error} retry={() => refetchSlices({ requestPolicy: 'network-only' })} />;

  const invalid = new Set(problems.map((p) => errorField(p.field)).filter((f): f is string => f !== null));
  const fieldProps = (name: string) =>
    invalid.has(name) ? { 'aria-invalid': true as const, 'aria-describedby': 'gpr-problems' } : {};
  const policy = slice?.policy;
  const priority = Number(form.priority);
  const outsidePriority = policy && Number.isFinite(priority) && (priority < policy.priorityMin || priority > policy.priorityMax);
  const nodes = Number(form.nodes);
  const overNodes = policy?.maxNodesPerGpr != null && nodes > policy.maxNodesPerGpr;
  const maxDuration = parseIsoDuration(policy?.maxDuration);
  const defaultIdle = parseIsoDuration(policy?.defaultIdleTimeout);
  const maxIdle = parseIsoDuration(policy?.maxIdleTimeout);

  return (
    <div className="user-page">
      <h1>New GPR</h1>
      {slices.length === 0 ? (
        <Empty>You may not create GPRs in any slice: that needs the editor or owner role in a slice.</Empty>
      ) : (
        <div className="create-layout">
          <ProfileCatalogue
            profiles={profilesResult.data?.gprTemplates ?? []}
            chosen={form.templateId}
            error={profilesResult.error}
            onPick={(p) => {
              setForm((f) => applyProfile(f, p));
              setWaits(null);
            }}
            onClear={() => set('templateId', '')}
          />
          <Card title="Request">
            <form onSubmit={onSubmit} noValidate aria-label="New GPR">
              <div className="form-grid">
                <div className="span-2">
                  <label htmlFor="gpr-slice">Slice</label>
                  <select id="gpr-slice" value={form.sliceId} onChange={(e) => changeSlice(e.target.value)} {...fieldProps('sliceId')}>
                    {slices.map((s) => (
                      <option key={s.id} value={s.id}>
                        {s.name}
                      </option>
                    ))}
                  </select>
                </div>
                <div className="span-2">
                  <label htmlFor="gpr-name">Name</label>
                  <input
                    id="gpr-name"
                    value={form.name}
                    onChange={(e) => set('name', e.target.value)}
                    placeholder="llama-finetune-3"
                    autoComplete="off"
                    spellCheck={false}
                    aria-describedby="gpr-name-hint"
                    {...fieldProps('name')}
                  />
                  <div className="hint" id="gpr-name-hint">
                    Lowercase letters, digits and dashes.
                  </div>
                </div>
                <div>
                  <label htmlFor="gpr-nodes">Nodes</label>
                  <input
                    id="gpr-nodes"
                    type="number"
                    min={1}
                    step={1}
                    inputMode="numeric"
                    value={form.nodes}
                    onChange={(e) => set('nodes', e.target.value)}
                    {...fieldProps('nodeCount')}
                  />
                  {policy?.maxNodesPerGpr != null && (
                    <div className={`hint${overNodes ? ' warn' : ''}`}>
                      {overNodes ? 'Over' : 'Up to'} {policy.maxNodesPerGpr} without approval
                    </div>
                  )}
                </div>
                <div>
                  <label htmlFor="gpr-gpus">GPUs per node</label>
                  <input
                    id="gpr-gpus"
                    type="number"
                    min={1}
                    step={1}
                    inputMode="numeric"
                    value={form.gpusPerNode}
                    placeholder="all"
                    onChange={(e) => set('gpusPerNode', e.target.value)}
                    aria-describedby="gpr-gpus-hint"
                    {...fieldProps('gpusPerNode')}
                  />
                  <div className="hint" id="gpr-gpus-hint">
                    Empty: every GPU of the node
                  </div>
                </div>
                <div>
                  <label htmlFor="gpr-priority">Priority</label>
                  <input
                    id="gpr-priority"
                    type="number"
                    min={1}
                    max={300}
                    step={1}
                    inputMode="numeric"
                    value={form.priority}
                    onChange={(e) => set('priority', e.target.value)}
                    aria-describedby="gpr-priority-hint"
                    {...fieldProps('priority')}
                  />
                  <div className={`hint${outsidePriority ? ' warn' : ''}`} id="gpr-priority-hint">
                    1–300, higher runs first.
                    {policy && (
                      <>
                        {' '}
                        {outsidePriority ? 'Outside' : 'Within'} the slice's {policy.priorityMin}–{policy.priorityMax}
                        {outsidePriority ? ': needs an admin’s approval.' : ' (no approval needed).'}
                      </>
                    )}
                  </div>
                </div>
                <div className="span-2">
                  <label htmlFor="gpr-shape">GPU shape</label>
                  <select id="gpr-shape" value={form.gpuShape} onChange={(e) => changeShape(e.target.value)} {...fieldProps('gpuShape')}>
                    <option value="">Any (the scheduler picks)</option>
                    {shapes.map((s) => (
                      <option key={s} value={s}>
                        {s}
                      </option>
                    ))}
                  </select>
                </div>
                <div>
                  <label htmlFor="gpr-instance">Instance type</label>
                  <select
                    id="gpr-instance"
                    value={form.instanceType}
                    onChange={(e) => set('instanceType', e.target.value)}
                    {...fieldProps('instanceType')}
                  >
                    <option value="">Any</option>
                    {instanceTypes.map((t) => (
                      <option key={t} value={t}>
                        {t}
                      </option>
                    ))}
                  </select>
                </div>
                <div>
                  <label htmlFor="gpr-cluster">Preferred cluster</label>
                  <select
                    id="gpr-cluster"
                    value={form.clusterId}
                    onChange={(e) => set('clusterId', e.target.value)}
                    {...fieldProps('preferredClusterIds')}
                  >
                    <option value="">Any of the slice</option>
                    {(slice?.clusters ?? []).map((c) => (
                      <option key={c.id} value={c.id}>
                        {c.name}
                      </option>
                    ))}
                  </select>
                </div>
                <div>
                  <label htmlFor="gpr-hours">Duration hours</label>
                  <input
                    id="gpr-hours"
                    type="number"
                    min={0}
                    step={1}
                    inputMode="numeric"
                    value={form.hours}
                    onChange={(e) => set('hours', e.target.value)}
                    {...fieldProps('duration')}
                  />
                </div>
                <div>
                  <label htmlFor="gpr-minutes">Duration minutes</label>
                  <input
                    id="gpr-minutes"
                    type="number"
                    min={0}
                    max={59}
                    step={5}
                    inputMode="numeric"
                    value={form.minutes}
                    onChange={(e) => set('minutes', e.target.value)}
                    {...fieldProps('duration')}
                  />
                  {maxDuration != null && <div className="hint">At most {formatDuration(maxDuration)}</div>}
                </div>
                <div>
                  <label htmlFor="gpr-idle">Idle timeout hours</label>
                  <input
                    id="gpr-idle"
                    type="number"
                    min={0}
                    step={0.25}
                    inputMode="decimal"
                    value={form.idleHours}
                    placeholder={defaultIdle != null ? String(Math.round((defaultIdle / 3600) * 100) / 100) : 'never'}
                    onChange={(e) => set('idleHours', e.target.value)}
                    aria-describedby="gpr-idle-hint"
                    {...fieldProps('idleTimeout')}
                  />
                  <div className="hint" id="gpr-idle-hint">
                    Empty: slice default ({defaultIdle != null ? formatDuration(defaultIdle) : 'none'})
                    {maxIdle != null && `, at most ${formatDuration(maxIdle)}`}
                  </div>
                </div>
                <div className="check-field">
                  <input
                    id="gpr-preemptible"
                    type="checkbox"
                    checked={form.preemptible}
                    onChange={(e) => set('preemptible', e.target.checked)}
                  />
                  <label htmlFor="gpr-preemptible">Preemptible</label>
                </div>
                <div className="span-2">
                  <label htmlFor="gpr-model">Model (optional)</label>
                  <input id="gpr-model" value={form.model} maxLength={128} onChange={(e) => set('model', e.target.value)} placeholder="llama-3-70b" {...fieldProps('workload')} />
                </div>
                <div>
                  <label htmlFor="gpr-kind">Workload</label>
                  <select id="gpr-kind" value={form.kind} onChange={(e) => set('kind', e.target.value)}>
                    <option value="">not said</option>
                    <option value="TRAINING">training</option>
                    <option value="FINE_TUNING">fine-tuning</option>
                    <option value="INFERENCE">inference</option>
                    <option value="INTERACTIVE">interactive</option>
                  </select>
                </div>
                <div className="check-field">
                  <input id="gpr-rdma" type="checkbox" checked={form.rdma} onChange={(e) => set('rdma', e.target.checked)} />
                  <label htmlFor="gpr-rdma">Nodes need RDMA (InfiniBand/RoCE)</label>
                </div>
              </div>
              <div id="gpr-problems">
                <ErrorBox error={submitError} />
                <UserErrors errors={problems} />
              </div>
              <div className="actions">
                <button type="button" onClick={getWaitTimes} disabled={waiting}>
                  Get wait time
                </button>
                <button type="submit" className="primary" disabled={submitting}>
                  Submit GPR
                </button>
                {submitting && <span className="muted">Submitting…</span>}
              </div>
            </form>
          </Card>

          <Card title="Wait times">
            <ErrorBox error={waitError} />
            <UserErrors errors={waitProblems} />
            {waiting && <Loading what="Asking the scheduler" />}
            {!waits && !waiting && (
              <Empty>Press “Get wait time” to see when a GPR like this would start in each pool of the slice.</Empty>
            )}
            {waits && (
              <>
                <p className="muted" aria-live="polite">
                  {stale
                    ? 'The form changed since: press “Get wait time” again for current estimates.'
                    : 'Soonest first. Choose a pool (click, or Enter on a row) to ask for its shape, instance type and cluster.'}
                </p>
                {waits.rows.length === 0 ? (
                  <Empty>No pool of the slice can hold a GPR like this.</Empty>
                ) : (
                  <div className={`table-wrap${stale ? ' stale' : ''}`}>
                    <table aria-label="Wait times">
                      <thead>
                        <tr>
                          <th scope="col">Cluster</th>
                          <th scope="col">Instance type</th>
                          <th scope="col">GPU shape</th>
                          <th scope="col" className="num">Free / healthy nodes</th>
                          <th scope="col">Estimated start</th>
                          <th scope="col">Start no later than</th>
                          <th scope="col">
                            <span className="sr-only">Chosen</span>
                          </th>
                        </tr>
                      </thead>
                      <tbody>
                        {waits.rows.map((row) => {
                          const chosen = isChosen(form, row);
                          return (
                            <tr
                              key={estimateKey(row)}
                              className={`selectable${chosen ? ' chosen' : ''}`}
                              tabIndex={0}
                              aria-current={chosen ? 'true' : undefined}
                              onClick={() => choose(row)}
                              onKeyDown={(e) => rowKey(e, row)}
                            >
                              <td>{row.cluster?.name ?? '—'}</td>
                              <td>{row.instanceType}</td>
                              <td>
                                {row.gpuShape}
                                {slice && slice.policy.allowedShapes.length > 0 && !slice.policy.allowedShapes.includes(row.gpuShape) && (
                                  <div className="hint warn">not allowed by the slice policy</div>
                                )}
                              </td>
                              <td className="num">
                                {row.freeNodes} / {row.healthyNodes}
                              </td>
                              <td className="when">
                                <Time at={row.estimatedStartAt} now={now} />
                                <LikelyStart range={row.startRange} now={now} />
                              </td>
                              <td className="when">
                                <Time at={row.startNoLaterThan} now={now} />
                              </td>
                              <td>{chosen ? <b>Chosen</b> : <span className="muted">Choose</span>}</td>
                            </tr>
                          );
                        })}
                      </tbody>
                    </table>
                  </div>
                )}
              </>
            )}
          </Card>
        </div>
      )}
    </div>
  );
}

type ProfileRow = CreateGprProfilesQuery['gprTemplates'][number];

/** "Start from a profile": the templates published to the slice; picking one fills the form. */
function ProfileCatalogue({
  profiles,
  chosen,
  error,
  onPick,
  onClear,
}: {
  profiles: readonly ProfileRow[];
  chosen: string;
  error?: CombinedError;
  onPick: (p: ProfileRow) => void;
  onClear: () => void;
}) {
  if (profiles.length === 0 && !error) return null;
  const current = profiles.find((p) => p.id === chosen);
  return (
    <div className="profile-catalogue">
    <Card title="Start from a profile">
      <ErrorBox error={error} />
      {current && (
        <p className="notice" role="status">
          Filled from <b>{current.name}</b>; change anything before submitting.{' '}
          <button type="button" className="link" onClick={onClear}>
            Start from scratch
          </button>
        </p>
      )}
      <ul className="profiles" aria-label="Profiles">
        {profiles.map((p) => {
          const window = parseIsoDuration(p.duration);
          return (
            <li key={p.id} className={p.id === chosen ? 'chosen' : undefined}>
              <div>
                <b>{p.name}</b>
                {p.description && <div className="muted">{p.description}</div>}
                <div className="hint">
                  {p.nodeCount} × {p.gpuShape ?? 'any shape'}
                  {p.gpusPerNode != null ? ` (${p.gpusPerNode} GPUs each)` : ''} · {window != null ? formatDuration(window) : p.duration} · priority {p.priority}
                </div>
              </div>
              <button type="button" onClick={() => onPick(p)} aria-pressed={p.id === chosen} aria-label={`Use profile ${p.name}`}>
                Use
              </button>
            </li>
          );
        })}
      </ul>
    </Card>
    </div>
  );
}
