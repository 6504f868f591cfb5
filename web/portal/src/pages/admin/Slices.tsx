// Slices: list, create (namespaces, members, policy), and edit one slice.
import { useState, type ReactNode } from 'react';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../../gql';
import type { AdminSliceFragment, AdminSlicesQuery, SliceRole } from '../../gql/graphql';
import { Card, ConfirmButton, Empty, ErrorBox, Loading, Time, UserErrors, useNow } from '../../components/ui';
import { formatDuration, parseIsoDuration } from '../../lib/time';
import { DEFAULT_POLICY, policyForm, policyInput, type PolicyForm } from './policy';
import { problems } from './hooks';
import './admin.css';

graphql(`
  fragment AdminSlice on Slice {
    id
    name
    description
    createdAt
    updatedAt
    clusters {
      id
      name
    }
    namespaces {
      id
      name
      cluster {
        id
        name
      }
    }
    members {
      role
      user {
        id
        name
      }
    }
    policy {
      allowedShapes
      maxNodesPerGpr
      priorityMin
      priorityMax
      maxDuration
      defaultIdleTimeout
      autoEviction
      requeueOnEviction
      underuseBelowPercent
      underusePeriod
    }
  }
`);

const SlicesQuery = graphql(`
  query AdminSlices {
    slices(first: 100) {
      nodes {
        ...AdminSlice
      }
    }
    users {
      id
      name
    }
    clusters {
      id
      name
    }
    pools {
      gpuShape
    }
  }
`);

const CreateSlice = graphql(`
  mutation AdminSlicesCreate($input: CreateSliceInput!) {
    createSlice(input: $input) {
      slice {
        ...AdminSlice
      }
      userErrors {
        field
        message
        code
      }
    }
  }
`);

const UpdateSlice = graphql(`
  mutation AdminSlicesUpdate($input: UpdateSliceInput!) {
    updateSlice(input: $input) {
      slice {
        ...AdminSlice
      }
      userErrors {
        field
        message
        code
      }
    }
  }
`);

const AddNamespace = graphql(`
  mutation AdminSlicesAddNamespace($input: SliceNamespaceInput!) {
    addSliceNamespace(input: $input) {
      slice {
        ...AdminSlice
      }
      userErrors {
        field
        message
        code
      }
    }
  }
`);

const RemoveNamespace = graphql(`
  mutation AdminSlicesRemoveNamespace($input: SliceNamespaceInput!) {
    removeSliceNamespace(input: $input) {
      slice {
        ...AdminSlice
      }
      userErrors {
        field
        message
        code
      }
    }
  }
`);

const AddMember = graphql(`
  mutation AdminSlicesAddMember($input: AddSliceMemberInput!) {
    addSliceMember(input: $input) {
      slice {
        ...AdminSlice
      }
      userErrors {
        field
        message
        code
      }
    }
  }
`);

const RemoveMember = graphql(`
  mutation AdminSlicesRemoveMember($input: RemoveSliceMemberInput!) {
    removeSliceMember(input: $input) {
      slice {
        ...AdminSlice
      }
      userErrors {
        field
        message
        code
      }
    }
  }
`);

const SetPolicy = graphql(`
  mutation AdminSlicesSetPolicy($input: SetSlicePolicyInput!) {
    setSlicePolicy(input: $input) {
      slice {
        ...AdminSlice
      }
      userErrors {
        field
        message
        code
      }
    }
  }
`);

type Data = AdminSlicesQuery;
type Problems = { field?: readonly string[]; message: string }[];
const ROLES: SliceRole[] = ['VIEWER', 'EDITOR', 'OWNER'];

function Field({ id, label, children, hint }: { id: string; label: string; children: ReactNode; hint?: string }) {
  return (
    <div>
      <label htmlFor={id}>{label}</label>
      {children}
      {hint && <div className="muted" style={{ fontSize: '0.8rem' }}>{hint}</div>}
    </div>
  );
}

function PolicyFields({ prefix, value, onChange, shapes }: { prefix: string; value: PolicyForm; onChange: (v: PolicyForm) => void; shapes: string[] }) {
  const set = <K extends keyof PolicyForm>(k: K, v: PolicyForm[K]) => onChange({ ...value, [k]: v });
  const allShapes = [...new Set([...shapes, ...value.allowedShapes])].sort();
  return (
    <>
      <fieldset>
        <legend>Allowed GPU shapes (none ticked: any)</legend>
        <div className="checks">
          {allShapes.length === 0 && <span className="muted">No shapes in the inventory yet.</span>}
          {allShapes.map((s) => (
            <label key={s} className="inline">
              <input
                type="checkbox"
                checked={value.allowedShapes.includes(s)}
                onChange={(e) => set('allowedShapes', e.target.checked ? [...value.allowedShapes, s] : value.allowedShapes.filter((x) => x !== s))}
              />
              {s}
            </label>
          ))}
        </div>
      </fieldset>
      <div className="form-grid" style={{ marginTop: '0.75rem' }}>
        <Field id={`${prefix}-maxnodes`} label="Max nodes per GPR" hint="Empty: no limit">
          <input id={`${prefix}-maxnodes`} type="number" min={1} value={value.maxNodesPerGpr} onChange={(e) => set('maxNodesPerGpr', e.target.value)} />
        </Field>
        <Field id={`${prefix}-pmin`} label="Priority min">
          <input id={`${prefix}-pmin`} type="number" min={1} max={300} value={value.priorityMin} onChange={(e) => set('priorityMin', e.target.value)} />
        </Field>
        <Field id={`${prefix}-pmax`} label="Priority max">
          <input id={`${prefix}-pmax`} type="number" min={1} max={300} value={value.priorityMax} onChange={(e) => set('priorityMax', e.target.value)} />
        </Field>
        <Field id={`${prefix}-maxdur`} label="Max duration (hours)" hint="Empty: no limit">
          <input id={`${prefix}-maxdur`} type="number" min={0} step="any" value={value.maxDuration} onChange={(e) => set('maxDuration', e.target.value)} />
        </Field>
        <Field id={`${prefix}-idle`} label="Default idle timeout (minutes)" hint="Empty: none">
          <input id={`${prefix}-idle`} type="number" min={0} step="any" value={value.defaultIdleTimeout} onChange={(e) => set('defaultIdleTimeout', e.target.value)} />
        </Field>
        <Field id={`${prefix}-underuse`} label="Warn when GPUs average under (%)" hint="Empty: no under-use warning">
          <input id={`${prefix}-underuse`} type="number" min={1} max={100} value={value.underuseBelowPercent} onChange={(e) => set('underuseBelowPercent', e.target.value)} />
        </Field>
        <Field id={`${prefix}-underuse-period`} label="…over (minutes)">
          <input id={`${prefix}-underuse-period`} type="number" min={5} value={value.underusePeriod} onChange={(e) => set('underusePeriod', e.target.value)} />
        </Field>
      </div>
      <div className="checks" style={{ marginTop: '0.75rem' }}>
        <label className="inline">
          <input type="checkbox" checked={value.autoEviction} onChange={(e) => set('autoEviction', e.target.checked)} />
          Auto eviction (higher-priority GPRs may preempt)
        </label>
        <label className="inline">
          <input type="checkbox" checked={value.requeueOnEviction} onChange={(e) => set('requeueOnEviction', e.target.checked)} />
          Requeue on eviction
        </label>
      </div>
    </>
  );
}

function policySummary(p: AdminSliceFragment['policy']): string {
  const d = (iso: string | null | undefined) => {
    const s = parseIsoDuration(iso);
    return s == null ? null : formatDuration(s);
  };
  return [
    p.allowedShapes.length ? p.allowedShapes.join(', ') : 'any shape',
    p.maxNodesPerGpr != null ? `≤ ${p.maxNodesPerGpr} nodes` : null,
    `priority ${p.priorityMin}–${p.priorityMax}`,
    d(p.maxDuration) ? `≤ ${d(p.maxDuration)}` : null,
    d(p.defaultIdleTimeout) ? `idle ${d(p.defaultIdleTimeout)}` : null,
    p.autoEviction ? 'evictable' : 'not evictable',
  ]
    .filter(Boolean)
    .join(' · ');
}

interface NsRow {
  clusterId: string;
  name: string;
}
interface MemberRow {
  userId: string;
  role: SliceRole;
}

function CreateSliceForm({ data, onCreated, onCancel }: { data: Data; onCreated: (id: string) => void; onCancel: () => void }) {
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [namespaces, setNamespaces] = useState<NsRow[]>([{ clusterId: data.clusters[0]?.id ?? '', name: '' }]);
  const [members, setMembers] = useState<MemberRow[]>([]);
  const [policy, setPolicy] = useState<PolicyForm>(DEFAULT_POLICY);
  const [errors, setErrors] = useState<Problems>([]);
  const [{ fetching }, create] = useMutation(CreateSlice);
  const shapes = [...new Set(data.pools.map((p) => p.gpuShape))];

  const submit = async () => {
    const p = policyInput(policy);
    if ('errors' in p) return setErrors(p.errors.map((e) => ({ field: ['policy', ...e.field], message: e.message })));
    const r = await create({
      input: {
        name: name.trim(),
        description: description.trim() || undefined,
        namespaces: namespaces.filter((n) => n.name.trim()).map((n) => ({ clusterId: n.clusterId, name: n.name.trim() })),
        members: members.filter((m) => m.userId),
        policy: p.input,
      },
    });
    const errs = problems({ error: r.error, userErrors: r.data?.createSlice.userErrors });
    if (errs.length || !r.data?.createSlice.slice) return setErrors(errs.length ? errs : [{ message: 'Not created.' }]);
    onCreated(r.data.createSlice.slice.id);
  };

  return (
    <Card title="New slice">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        <div className="form-grid">
          <Field id="ns-name" label="Name" hint="A DNS label, e.g. team-vision">
            <input id="ns-name" required value={name} onChange={(e) => setName(e.target.value)} />
          </Field>
          <Field id="ns-desc" label="Description">
            <input id="ns-desc" value={description} onChange={(e) => setDescription(e.target.value)} />
          </Field>
        </div>
        <fieldset>
          <legend>Namespaces</legend>
          {namespaces.map((n, i) => (
            <div className="row" key={i} style={{ marginBottom: '0.4rem' }}>
              <Field id={`nsc-${i}`} label={`Cluster of namespace ${i + 1}`}>
                <select id={`nsc-${i}`} value={n.clusterId} onChange={(e) => setNamespaces((l) => l.map((x, j) => (j === i ? { ...x, clusterId: e.target.value } : x)))}>
                  {data.clusters.map((c) => (
                    <option key={c.id} value={c.id}>
                      {c.name}
                    </option>
                  ))}
                </select>
              </Field>
              <Field id={`nsn-${i}`} label={`Namespace ${i + 1}`}>
                <input id={`nsn-${i}`} value={n.name} onChange={(e) => setNamespaces((l) => l.map((x, j) => (j === i ? { ...x, name: e.target.value } : x)))} />
              </Field>
              <button type="button" aria-label={`Drop namespace ${i + 1}`} onClick={() => setNamespaces((l) => l.filter((_, j) => j !== i))}>
                ✕
              </button>
            </div>
          ))}
          <button type="button" onClick={() => setNamespaces((l) => [...l, { clusterId: data.clusters[0]?.id ?? '', name: '' }])}>
            Add a namespace
          </button>
        </fieldset>
        <fieldset>
          <legend>Members</legend>
          {members.map((m, i) => (
            <div className="row" key={i} style={{ marginBottom: '0.4rem' }}>
              <Field id={`nmu-${i}`} label={`Member ${i + 1}`}>
                <select id={`nmu-${i}`} value={m.userId} onChange={(e) => setMembers((l) => l.map((x, j) => (j === i ? { ...x, userId: e.target.value } : x)))}>
                  <option value="">Choose a user</option>
                  {data.users.map((u) => (
                    <option key={u.id} value={u.id}>
                      {u.name}
                    </option>
                  ))}
                </select>
              </Field>
              <Field id={`nmr-${i}`} label={`Role of member ${i + 1}`}>
                <select id={`nmr-${i}`} value={m.role} onChange={(e) => setMembers((l) => l.map((x, j) => (j === i ? { ...x, role: e.target.value as SliceRole } : x)))}>
                  {ROLES.map((r) => (
                    <option key={r}>{r}</option>
                  ))}
                </select>
              </Field>
              <button type="button" aria-label={`Drop member ${i + 1}`} onClick={() => setMembers((l) => l.filter((_, j) => j !== i))}>
                ✕
              </button>
            </div>
          ))}
          <button type="button" onClick={() => setMembers((l) => [...l, { userId: '', role: 'EDITOR' }])}>
            Add a member
          </button>
        </fieldset>
        <h3>Policy</h3>
        <PolicyFields prefix="np" value={policy} onChange={setPolicy} shapes={shapes} />
        <UserErrors errors={errors} />
        <div className="actions">
          <button type="submit" className="primary" disabled={fetching}>
            Create slice
          </button>
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        </div>
      </form>
    </Card>
  );
}

function SliceEditor({ slice, data }: { slice: AdminSliceFragment; data: Data }) {
  const [name, setName] = useState(slice.name);
  const [description, setDescription] = useState(slice.description ?? '');
  const [detailErrors, setDetailErrors] = useState<Problems>([]);
  const [nsCluster, setNsCluster] = useState(data.clusters[0]?.id ?? '');
  const [nsName, setNsName] = useState('');
  const [nsErrors, setNsErrors] = useState<Problems>([]);
  const [memberUser, setMemberUser] = useState('');
  const [memberRole, setMemberRole] = useState<SliceRole>('EDITOR');
  const [memberErrors, setMemberErrors] = useState<Problems>([]);
  const [policy, setPolicy] = useState<PolicyForm>(() => policyForm(slice.policy));
  const [policyErrors, setPolicyErrors] = useState<Problems>([]);
  const [saved, setSaved] = useState<string | null>(null);
  const [update, doUpdate] = useMutation(UpdateSlice);
  const [, addNs] = useMutation(AddNamespace);
  const [, removeNs] = useMutation(RemoveNamespace);
  const [, addMember] = useMutation(AddMember);
  const [, removeMember] = useMutation(RemoveMember);
  const [setPol, doSetPolicy] = useMutation(SetPolicy);
  const shapes = [...new Set(data.pools.map((p) => p.gpuShape))];
  const memberIds = new Set(slice.members.map((m) => m.user?.id));

  const after = (set: (p: Problems) => void, ok: string) => (r: { error?: { message: string }; userErrors?: readonly { field: readonly string[]; message: string }[] }) => {
    const errs = problems(r);
    set(errs);
    setSaved(errs.length ? null : ok);
    return errs.length === 0;
  };

  return (
    <>
      <Card title={`Slice ${slice.name}`}>
        <p role="status" className={saved ? 'notice' : undefined} aria-live="polite">
          {saved}
        </p>
        <form
          onSubmit={async (e) => {
            e.preventDefault();
            const r = await doUpdate({ input: { id: slice.id, name: name.trim(), description: description.trim() || null } });
            after(setDetailErrors, 'Details saved.')({ error: r.error, userErrors: r.data?.updateSlice.userErrors });
          }}
        >
          <div className="form-grid">
            <Field id="es-name" label="Name">
              <input id="es-name" required value={name} onChange={(e) => setName(e.target.value)} />
            </Field>
            <Field id="es-desc" label="Description">
              <input id="es-desc" value={description} onChange={(e) => setDescription(e.target.value)} />
            </Field>
          </div>
          <UserErrors errors={detailErrors} />
          <div className="actions">
            <button type="submit" disabled={update.fetching}>
              Save details
            </button>
            <span className="muted">Clusters: {slice.clusters.map((c) => c.name).join(', ') || 'none'}</span>
          </div>
        </form>
      </Card>

      <div className="grid">
        <Card title={`Namespaces (${slice.namespaces.length})`}>
          {slice.namespaces.length === 0 ? (
            <Empty>No namespaces.</Empty>
          ) : (
            <ul className="list-plain" aria-label="Namespaces">
              {slice.namespaces.map((n) => {
                const label = `${n.cluster?.name ?? '?'}/${n.name}`;
                return (
                  <li key={n.id}>
                    <code>{label}</code>
                    <ConfirmButton
                      question={`Take ${label} away from ${slice.name}?`}
                      onConfirm={async () => {
                        const r = await removeNs({ input: { sliceId: slice.id, clusterId: n.cluster?.id ?? '', name: n.name } });
                        after(setNsErrors, `Removed ${label}.`)({ error: r.error, userErrors: r.data?.removeSliceNamespace.userErrors });
                      }}
                    >
                      Remove<span className="sr-only"> namespace {label}</span>
                    </ConfirmButton>
                  </li>
                );
              })}
            </ul>
          )}
          <form
            className="row"
            onSubmit={async (e) => {
              e.preventDefault();
              const r = await addNs({ input: { sliceId: slice.id, clusterId: nsCluster, name: nsName.trim() } });
              if (after(setNsErrors, `Added ${nsName.trim()}.`)({ error: r.error, userErrors: r.data?.addSliceNamespace.userErrors })) setNsName('');
            }}
          >
            <Field id="es-nsc" label="Cluster">
              <select id="es-nsc" value={nsCluster} onChange={(e) => setNsCluster(e.target.value)}>
                {data.clusters.map((c) => (
                  <option key={c.id} value={c.id}>
                    {c.name}
                  </option>
                ))}
              </select>
            </Field>
            <Field id="es-nsn" label="Namespace">
              <input id="es-nsn" required value={nsName} onChange={(e) => setNsName(e.target.value)} />
            </Field>
            <button type="submit">Add namespace</button>
          </form>
          <UserErrors errors={nsErrors} />
        </Card>

        <Card title={`Members (${slice.members.length})`}>
          {slice.members.length === 0 ? (
            <Empty>No members.</Empty>
          ) : (
            <ul className="list-plain" aria-label="Members">
              {slice.members.map((m) => {
                const who = m.user?.name ?? '?';
                return (
                  <li key={m.user?.id ?? who}>
                    <span style={{ minWidth: '8rem' }}>{who}</span>
                    <select
                      aria-label={`Role of ${who}`}
                      value={m.role}
                      onChange={async (e) => {
                        if (!m.user) return;
                        const r = await addMember({ input: { sliceId: slice.id, userId: m.user.id, role: e.target.value as SliceRole } });
                        after(setMemberErrors, `${who} is now ${e.target.value.toLowerCase()}.`)({ error: r.error, userErrors: r.data?.addSliceMember.userErrors });
                      }}
                    >
                      {ROLES.map((r) => (
                        <option key={r}>{r}</option>
                      ))}
                    </select>
                    <ConfirmButton
                      question={`Remove ${who} from ${slice.name}?`}
                      onConfirm={async () => {
                        if (!m.user) return;
                        const r = await removeMember({ input: { sliceId: slice.id, userId: m.user.id } });
                        after(setMemberErrors, `Removed ${who}.`)({ error: r.error, userErrors: r.data?.removeSliceMember.userErrors });
                      }}
                    >
                      Remove<span className="sr-only"> {who}</span>
                    </ConfirmButton>
                  </li>
                );
              })}
            </ul>
          )}
          <form
            className="row"
            onSubmit={async (e) => {
              e.preventDefault();
              if (!memberUser) return setMemberErrors([{ message: 'Choose a user.' }]);
              const r = await addMember({ input: { sliceId: slice.id, userId: memberUser, role: memberRole } });
              if (after(setMemberErrors, 'Member added.')({ error: r.error, userErrors: r.data?.addSliceMember.userErrors })) setMemberUser('');
            }}
          >
            <Field id="es-mu" label="User">
              <select id="es-mu" value={memberUser} onChange={(e) => setMemberUser(e.target.value)}>
                <option value="">Choose a user</option>
                {data.users
                  .filter((u) => !memberIds.has(u.id))
                  .map((u) => (
                    <option key={u.id} value={u.id}>
                      {u.name}
                    </option>
                  ))}
              </select>
            </Field>
            <Field id="es-mr" label="Role">
              <select id="es-mr" value={memberRole} onChange={(e) => setMemberRole(e.target.value as SliceRole)}>
                {ROLES.map((r) => (
                  <option key={r}>{r}</option>
                ))}
              </select>
            </Field>
            <button type="submit">Add member</button>
          </form>
          <UserErrors errors={memberErrors} />
        </Card>
      </div>

      <Card title="Policy">
        <form
          onSubmit={async (e) => {
            e.preventDefault();
            const p = policyInput(policy);
            if ('errors' in p) return setPolicyErrors(p.errors);
            const r = await doSetPolicy({ input: { sliceId: slice.id, policy: p.input } });
            after(setPolicyErrors, 'Policy saved.')({ error: r.error, userErrors: r.data?.setSlicePolicy.userErrors });
          }}
        >
          <PolicyFields prefix="ep" value={policy} onChange={setPolicy} shapes={shapes} />
          <UserErrors errors={policyErrors} />
          <div className="actions">
            <button type="submit" className="primary" disabled={setPol.fetching}>
              Save policy
            </button>
            <button type="button" onClick={() => setPolicy(policyForm(slice.policy))}>
              Reset
            </button>
          </div>
        </form>
      </Card>
    </>
  );
}

export function Slices() {
  const now = useNow(60_000);
  const [{ data, fetching, error }, refetch] = useQuery({ query: SlicesQuery });
  const [selected, setSelected] = useState<string | null>(null);
  const [creating, setCreating] = useState(false);
  const slice = data?.slices.nodes.find((s) => s.id === selected) ?? null;

  return (
    <>
      <h1>Slices</h1>
      <ErrorBox error={error} retry={() => refetch({ requestPolicy: 'network-only' })} />
      {!data && fetching && <Loading what="Loading slices" />}
      {data && (
        <div className="split">
          <Card
            title={`Slices (${data.slices.nodes.length})`}
            actions={
              <button
                type="button"
                className="primary"
                onClick={() => {
                  setCreating(true);
                  setSelected(null);
                }}
              >
                New slice
              </button>
            }
          >
            {data.slices.nodes.length === 0 ? (
              <Empty>No slices yet.</Empty>
            ) : (
              <div className="table-wrap">
                <table aria-label="Slices">
                  <thead>
                    <tr>
                      <th scope="col">Slice</th>
                      <th scope="col" className="num">Members</th>
                      <th scope="col" className="num">Namespaces</th>
                      <th scope="col">Updated</th>
                    </tr>
                  </thead>
                  <tbody>
                    {data.slices.nodes.map((s) => (
                      <tr key={s.id} className={s.id === selected ? 'selected' : undefined}>
                        <td style={{ whiteSpace: 'normal' }}>
                          <button
                            type="button"
                            className="link"
                            aria-pressed={s.id === selected}
                            onClick={() => {
                              setSelected(s.id);
                              setCreating(false);
                            }}
                          >
                            {s.name}
                          </button>
                          {s.description && <div className="muted">{s.description}</div>}
                          <div className="muted" style={{ fontSize: '0.8rem' }}>
                            {policySummary(s.policy)}
                          </div>
                        </td>
                        <td className="num">{s.members.length}</td>
                        <td className="num">{s.namespaces.length}</td>
                        <td>
                          <Time at={s.updatedAt} now={now} />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </Card>
          <div>
            {creating && (
              <CreateSliceForm
                data={data}
                onCancel={() => setCreating(false)}
                onCreated={(id) => {
                  setCreating(false);
                  setSelected(id);
                  refetch({ requestPolicy: 'network-only' });
                }}
              />
            )}
            {slice && <SliceEditor key={slice.id} slice={slice} data={data} />}
            {!creating && !slice && <Empty>Choose a slice to edit it, or create one.</Empty>}
          </div>
        </div>
      )}
    </>
  );
}
