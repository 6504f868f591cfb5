// Notifications: where a user hears of their GPRs' milestones (and a slice owner of the slice's):
// Slack, a signed JSON webhook or e-mail. Each channel shows how its last deliveries fared and
// has a Test button; a JSON webhook's signing key is shown once, right after it is made.
import { useState, type FormEvent } from 'react';
import { Link } from 'react-router-dom';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../gql';
import type { Milestone, NotificationKind, NotificationsQuery } from '../gql/graphql';
import { Card, ConfirmButton, Empty, ErrorBox, Loading, Time, UserErrors } from '../components/ui';
import { useSession } from '../session';
import './user/user.css';

const NotificationsDocument = graphql(`
  query Notifications {
    notificationOptions {
      email
      publicTargetsOnly
      defaultMilestones
    }
    notificationChannels {
      id
      name
      kind
      target
      milestones
      estimateMovedMinutes
      enabled
      signed
      failing
      failuresInARow
      lastError
      lastDeliveredAt
      lastFailedAt
      slice {
        id
        name
      }
      deliveries(first: 10) {
        id
        milestone
        state
        attempts
        lastError
        createdAt
        deliveredAt
        nextAttemptAt
        gpr {
          id
          name
        }
      }
    }
    viewer {
      memberships {
        role
        slice {
          id
          name
        }
      }
    }
    slices(first: 100) {
      nodes {
        id
        name
      }
    }
  }
`);

const CreateChannelDocument = graphql(`
  mutation CreateNotificationChannel($input: CreateNotificationChannelInput!) {
    createNotificationChannel(input: $input) {
      channel {
        id
        name
      }
      signingSecret
      userErrors {
        field
        message
      }
    }
  }
`);

const UpdateChannelDocument = graphql(`
  mutation UpdateNotificationChannel($input: UpdateNotificationChannelInput!) {
    updateNotificationChannel(input: $input) {
      channel {
        id
        enabled
      }
      userErrors {
        field
        message
      }
    }
  }
`);

const DeleteChannelDocument = graphql(`
  mutation DeleteNotificationChannel($input: NotificationChannelRef!) {
    deleteNotificationChannel(input: $input) {
      channel {
        id
      }
      userErrors {
        message
      }
    }
  }
`);

const TestChannelDocument = graphql(`
  mutation TestNotificationChannel($input: NotificationChannelRef!) {
    testNotificationChannel(input: $input) {
      delivered
      error
      userErrors {
        message
      }
    }
  }
`);

/** Every milestone, in a GPR's order. */
export const MILESTONES = [
  'QUEUED',
  'APPROVAL',
  'ESTIMATE_MOVED',
  'PROVISIONED',
  'PROGRESS_25',
  'PROGRESS_50',
  'PROGRESS_75',
  'EXIT_WARNING',
  'RELEASED',
  'PREEMPTED',
  'FAILED',
] as const satisfies readonly Milestone[];

const KIND_LABEL: Record<NotificationKind, string> = { SLACK: 'Slack', WEBHOOK: 'JSON webhook', EMAIL: 'E-mail' };
const words = (m: string) => m.replace(/_/g, ' ').toLowerCase();

export function Notifications() {
  const { viewer } = useSession();
  const [{ data, fetching, error }, refetch] = useQuery({ query: NotificationsDocument, requestPolicy: 'cache-and-network' });
  const reload = () => refetch({ requestPolicy: 'network-only' });
  const owned =
    viewer?.role === 'ADMIN'
      ? (data?.slices.nodes ?? [])
      : (data?.viewer.memberships ?? []).filter((m) => m.role === 'OWNER' && m.slice).map((m) => m.slice as { id: string; name: string });
  return (
    <div className="user-page">
      <h1>Notifications</h1>
      <p className="muted">
        Hear of your GPRs' milestones where you work. Channels for a slice (its owners make them) hear of every GPR in the slice. Every milestone is also a
        Kubernetes Event in the slice's namespaces.
      </p>
      <ErrorBox error={error} retry={reload} />
      {!data && fetching && <Loading what="Loading channels" />}
      {data && (
        <>
          <NewChannel
            email={data.notificationOptions.email}
            publicOnly={data.notificationOptions.publicTargetsOnly}
            defaults={data.notificationOptions.defaultMilestones}
            slices={owned}
            onCreated={reload}
          />
          <Card title={`Channels (${data.notificationChannels.length})`}>
            {data.notificationChannels.length === 0 && <Empty>No channel yet: make one above.</Empty>}
            {data.notificationChannels.map((c) => (
              <ChannelRow key={c.id} channel={c} onChanged={reload} />
            ))}
          </Card>
        </>
      )}
    </div>
  );
}

function NewChannel({
  email,
  publicOnly,
  defaults,
  slices,
  onCreated,
}: {
  email: boolean;
  publicOnly: boolean;
  defaults: readonly Milestone[];
  slices: { id: string; name: string }[];
  onCreated: () => void;
}) {
  const [forSlice, setForSlice] = useState('');
  const [kind, setKind] = useState<NotificationKind>('SLACK');
  const [name, setName] = useState('');
  const [target, setTarget] = useState('');
  const [chosen, setChosen] = useState<Milestone[]>([...defaults]);
  const [minutes, setMinutes] = useState('30');
  const [secret, setSecret] = useState<string | null>(null);
  const [created, create] = useMutation(CreateChannelDocument);
  const payload = created.data?.createNotificationChannel;
  const toggle = (m: Milestone) => setChosen((c) => (c.includes(m) ? c.filter((x) => x !== m) : [...c, m]));
  const onSubmit = async (e: FormEvent) => {
    e.preventDefault();
    setSecret(null);
    const input = {
      sliceId: forSlice || null,
      kind,
      name,
      target,
      milestones: chosen,
      estimateMovedMinutes: chosen.includes('ESTIMATE_MOVED') ? Number(minutes) : null,
    };
    const result = await create({ input });
    const made = result.data?.createNotificationChannel;
    if (made?.channel) {
      setSecret(made.signingSecret ?? null);
      setName('');
      setTarget('');
      onCreated();
    }
  };
  const placeholder = kind === 'EMAIL' ? 'you@example.com' : kind === 'SLACK' ? 'https://hooks.slack.com/services/…' : 'https://ci.example.com/egs-hook';
  return (
    <Card title="New channel">
      <form aria-label="New channel" className="form-grid" onSubmit={onSubmit}>
        <div>
          <label htmlFor="channel-for">For</label>
          <select id="channel-for" value={forSlice} onChange={(e) => setForSlice(e.target.value)}>
            <option value="">my GPRs</option>
            {slices.map((s) => (
              <option key={s.id} value={s.id}>
                every GPR of slice {s.name}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label htmlFor="channel-kind">Kind</label>
          <select id="channel-kind" value={kind} onChange={(e) => setKind(e.target.value as NotificationKind)}>
            <option value="SLACK">Slack (incoming webhook)</option>
            <option value="WEBHOOK">JSON webhook (signed)</option>
            <option value="EMAIL" disabled={!email}>
              E-mail{email ? '' : ' (not set up on this gateway)'}
            </option>
          </select>
        </div>
        <div>
          <label htmlFor="channel-name">Name</label>
          <input id="channel-name" value={name} maxLength={64} required onChange={(e) => setName(e.target.value)} placeholder="e.g. my phone" />
        </div>
        <div className="wide">
          <label htmlFor="channel-target">{kind === 'EMAIL' ? 'Address' : 'URL'}</label>
          <input id="channel-target" value={target} required onChange={(e) => setTarget(e.target.value)} placeholder={placeholder} />
          {kind !== 'EMAIL' && publicOnly && <small className="muted">A public https URL. Only its host is shown after this.</small>}
        </div>
        <fieldset className="wide milestones">
          <legend>Tell me when a GPR…</legend>
          {MILESTONES.map((m) => (
            <label key={m} className="check">
              <input type="checkbox" checked={chosen.includes(m)} onChange={() => toggle(m)} /> {words(m)}
            </label>
          ))}
          {chosen.includes('ESTIMATE_MOVED') && (
            <label className="check">
              by at least{' '}
              <input aria-label="Minutes the estimate must move" type="number" min={1} max={10080} value={minutes} onChange={(e) => setMinutes(e.target.value)} />{' '}
              minutes
            </label>
          )}
        </fieldset>
        <div className="actions inline wide">
          <button type="submit" className="primary" disabled={created.fetching}>
            Create channel
          </button>
        </div>
      </form>
      <ErrorBox error={created.error} />
      <UserErrors errors={payload?.userErrors} />
      {secret && (
        <div className="notice" role="status">
          <b>Signing key, shown only now:</b> <code>{secret}</code>
          <br />
          Each body carries <code>X-EGS-Signature: sha256=HMAC(key, X-EGS-Timestamp + "." + body)</code>.
        </div>
      )}
    </Card>
  );
}

type Channel = NotificationsQuery['notificationChannels'][number];

function ChannelRow({ channel: c, onChanged }: { channel: Channel; onChanged: () => void }) {
  const [tested, test] = useMutation(TestChannelDocument);
  const [updated, update] = useMutation(UpdateChannelDocument);
  const [deleted, remove] = useMutation(DeleteChannelDocument);
  const result = tested.data?.testNotificationChannel;
  return (
    <article className="channel" aria-label={`Channel ${c.name}`}>
      <header className="channel-head">
        <h3>
          {c.name} <span className="muted">· {KIND_LABEL[c.kind]} · {c.slice ? `slice ${c.slice.name}` : 'my GPRs'}</span>
        </h3>
        <span className={`badge ${!c.enabled ? 'phase-cancelled' : c.failing ? 'phase-failed' : 'phase-provisioned'}`}>
          {!c.enabled ? 'off' : c.failing ? `failing (${c.failuresInARow})` : 'working'}
        </span>
      </header>
      <p>
        Sends to <code>{c.target}</code>
        {c.signed && ' (signed)'} when a GPR: {c.milestones.map(words).join(', ')}
        {c.milestones.includes('ESTIMATE_MOVED') && ` (moves of ${c.estimateMovedMinutes ?? 30} min or more)`}.
      </p>
      <p className="muted">
        Last delivered: <Time at={c.lastDeliveredAt} />
        {c.lastError && (
          <>
            {' '}
            · last failure <Time at={c.lastFailedAt} />: <span className="error-text">{c.lastError}</span>
          </>
        )}
      </p>
      <div className="actions inline">
        <button type="button" disabled={tested.fetching} onClick={async () => (await test({ input: { id: c.id } }), onChanged())}>
          Send a test message
        </button>
        <button type="button" disabled={updated.fetching} onClick={async () => (await update({ input: { id: c.id, enabled: !c.enabled } }), onChanged())}>
          {c.enabled ? 'Turn off' : 'Turn on'}
        </button>
        <ConfirmButton danger question={`Delete ${c.name}?`} onConfirm={async () => (await remove({ input: { id: c.id } }), onChanged())}>
          Delete
        </ConfirmButton>
      </div>
      {result && (
        <p role="status" className={result.delivered ? 'ok-text' : 'error-text'}>
          {result.delivered ? 'Test message delivered.' : `Test message not delivered: ${result.error ?? result.userErrors.map((e) => e.message).join('; ')}`}
        </p>
      )}
      <ErrorBox error={tested.error ?? updated.error ?? deleted.error} />
      <UserErrors errors={updated.data?.updateNotificationChannel.userErrors ?? deleted.data?.deleteNotificationChannel.userErrors} />
      {c.deliveries.length > 0 && (
        <details>
          <summary>Recent deliveries ({c.deliveries.length})</summary>
          <table aria-label={`Deliveries of ${c.name}`}>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Milestone</th>
                <th scope="col">GPR</th>
                <th scope="col">State</th>
                <th scope="col">Attempts</th>
                <th scope="col">Error</th>
              </tr>
            </thead>
            <tbody>
              {c.deliveries.map((d) => (
                <tr key={d.id}>
                  <td>
                    <Time at={d.createdAt} />
                  </td>
                  <td>{words(d.milestone)}</td>
                  <td>{d.gpr ? <Link to={`/gprs/${d.gpr.id}`}>{d.gpr.name}</Link> : '—'}</td>
                  <td>
                    {d.state.toLowerCase()}
                    {d.nextAttemptAt && (
                      <>
                        {' '}
                        (next <Time at={d.nextAttemptAt} />)
                      </>
                    )}
                  </td>
                  <td>{d.attempts}</td>
                  <td style={{ whiteSpace: 'normal' }}>{d.lastError ?? ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </details>
      )}
    </article>
  );
}
