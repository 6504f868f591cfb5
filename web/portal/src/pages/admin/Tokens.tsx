// Access tokens: list, issue (the secret is shown once), revoke.
import { useState } from 'react';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../../gql';
import type { Role, SliceRole } from '../../gql/graphql';
import { Card, ConfirmButton, Empty, ErrorBox, Loading, Time, UserErrors, useNow } from '../../components/ui';
import { durationInput } from '../../lib/time';
import { problems } from './hooks';
import './admin.css';

const TokensQuery = graphql(`
  query AdminTokens {
    tokens(first: 100) {
      totalCount
      nodes {
        id
        name
        role
        createdAt
        expiresAt
        revokedAt
        nodeName
        cluster {
          id
          name
        }
        user {
          id
          name
        }
        sliceScopes {
          role
          slice {
            id
            name
          }
        }
      }
    }
    users {
      id
      name
      role
    }
    slices(first: 100) {
      nodes {
        id
        name
      }
    }
  }
`);

const CreateToken = graphql(`
  mutation AdminTokensCreate($input: CreateTokenInput!) {
    createToken(input: $input) {
      secret
      token {
        id
        name
        expiresAt
      }
      userErrors {
        field
        message
        code
      }
    }
  }
`);

const RevokeToken = graphql(`
  mutation AdminTokensRevoke($input: RevokeTokenInput!) {
    revokeToken(input: $input) {
      token {
        id
        revokedAt
      }
      userErrors {
        field
        message
        code
      }
    }
  }
`);

const SLICE_ROLES: SliceRole[] = ['VIEWER', 'EDITOR', 'OWNER'];

function Secret({ name, secret, onDone }: { name: string; secret: string; onDone: () => void }) {
  const [copied, setCopied] = useState<string | null>(null);
  return (
    <div className="notice" role="region" aria-label="New token secret">
      <p style={{ marginTop: 0 }}>
        <b>Token “{name}” created. Copy its secret now: it is shown only once</b> and EGS keeps no copy.
      </p>
      <div className="secret">
        <label htmlFor="tok-secret" className="sr-only">
          Secret of {name}
        </label>
        <input id="tok-secret" readOnly value={secret} onFocus={(e) => e.currentTarget.select()} />
        <button
          type="button"
          className="primary"
          onClick={async () => {
            try {
              await navigator.clipboard.writeText(secret);
              setCopied('Copied to the clipboard.');
            } catch {
              setCopied('Copying was refused: select the text and copy it.');
            }
          }}
        >
          Copy
        </button>
        <button type="button" onClick={onDone}>
          Done
        </button>
      </div>
      <p role="status" className="muted" style={{ marginBottom: 0 }}>
        {copied}
      </p>
    </div>
  );
}

export function Tokens() {
  const now = useNow();
  const [{ data, fetching, error }, refetch] = useQuery({ query: TokensQuery });
  const [create, doCreate] = useMutation(CreateToken);
  const [, doRevoke] = useMutation(RevokeToken);
  const [name, setName] = useState('');
  const [role, setRole] = useState<Role>('USER');
  const [userId, setUserId] = useState('');
  const [ttlDays, setTtlDays] = useState('90');
  const [scopes, setScopes] = useState<Record<string, SliceRole>>({});
  const [errors, setErrors] = useState<{ field?: readonly string[]; message: string }[]>([]);
  const [secret, setSecret] = useState<{ name: string; secret: string } | null>(null);
  const [revokeErrors, setRevokeErrors] = useState<{ field?: readonly string[]; message: string }[]>([]);
  const [showRevoked, setShowRevoked] = useState(false);

  const submit = async () => {
    setErrors([]);
    const days = Number(ttlDays);
    const ttl = ttlDays.trim() === '' ? undefined : durationInput(days * 24);
    if (ttl === null) return setErrors([{ field: ['ttl'], message: 'Lifetime must be a positive number of days.' }]);
    const sliceScopes = Object.entries(scopes).map(([sliceId, r]) => ({ sliceId, role: r }));
    const r = await doCreate({
      input: {
        name: name.trim(),
        role,
        userId: userId || undefined,
        ttl,
        sliceScopes: role === 'USER' && sliceScopes.length ? sliceScopes : undefined,
      },
    });
    const errs = problems({ error: r.error, userErrors: r.data?.createToken.userErrors });
    if (errs.length) return setErrors(errs);
    if (r.data?.createToken.secret) setSecret({ name: name.trim(), secret: r.data.createToken.secret });
    setName('');
    setScopes({});
    refetch({ requestPolicy: 'network-only' });
  };

  const tokens = data?.tokens.nodes.filter((t) => showRevoked || (!t.revokedAt && Date.parse(t.expiresAt) > now.getTime())) ?? [];

  return (
    <>
      <h1>Tokens</h1>
      <Card title="Issue a token">
        {secret && <Secret {...secret} onDone={() => setSecret(null)} />}
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void submit();
          }}
        >
          <div className="form-grid">
            <div>
              <label htmlFor="tok-name">Name</label>
              <input id="tok-name" required value={name} onChange={(e) => setName(e.target.value)} placeholder="ci-pipeline" />
            </div>
            <div>
              <label htmlFor="tok-role">Role</label>
              <select id="tok-role" value={role} onChange={(e) => setRole(e.target.value as Role)}>
                <option value="USER">USER</option>
                <option value="ADMIN">ADMIN</option>
              </select>
            </div>
            <div>
              <label htmlFor="tok-user">User</label>
              <select id="tok-user" value={userId} onChange={(e) => setUserId(e.target.value)}>
                <option value="">Me</option>
                {data?.users.map((u) => (
                  <option key={u.id} value={u.id}>
                    {u.name} ({u.role.toLowerCase()})
                  </option>
                ))}
              </select>
            </div>
            <div>
              <label htmlFor="tok-ttl">Lifetime (days)</label>
              <input id="tok-ttl" type="number" min={1} max={730} value={ttlDays} onChange={(e) => setTtlDays(e.target.value)} />
            </div>
          </div>
          {role === 'USER' && (
            <fieldset>
              <legend>Limit to slices (optional; none: the user's own roles)</legend>
              {!data?.slices.nodes.length && <span className="muted">No slices.</span>}
              <div className="checks">
                {data?.slices.nodes.map((s) => (
                  <span key={s.id} className="row" style={{ gap: '0.3rem', alignItems: 'center' }}>
                    <label className="inline">
                      <input
                        type="checkbox"
                        checked={s.id in scopes}
                        onChange={(e) =>
                          setScopes((m) => {
                            const next = { ...m };
                            if (e.target.checked) next[s.id] = 'EDITOR';
                            else delete next[s.id];
                            return next;
                          })
                        }
                      />
                      {s.name}
                    </label>
                    {s.id in scopes && (
                      <select aria-label={`Role in ${s.name}`} value={scopes[s.id]} onChange={(e) => setScopes((m) => ({ ...m, [s.id]: e.target.value as SliceRole }))}>
                        {SLICE_ROLES.map((r) => (
                          <option key={r}>{r}</option>
                        ))}
                      </select>
                    )}
                  </span>
                ))}
              </div>
            </fieldset>
          )}
          <UserErrors errors={errors} />
          <div className="actions">
            <button type="submit" className="primary" disabled={create.fetching}>
              Create token
            </button>
          </div>
        </form>
      </Card>

      <Card
        title={`Tokens${data ? ` (${data.tokens.totalCount})` : ''}`}
        actions={
          <label className="inline">
            <input type="checkbox" checked={showRevoked} onChange={(e) => setShowRevoked(e.target.checked)} /> Show revoked and expired
          </label>
        }
      >
        <ErrorBox error={error} retry={() => refetch({ requestPolicy: 'network-only' })} />
        <UserErrors errors={revokeErrors} />
        {!data && fetching && <Loading what="Loading tokens" />}
        {data && tokens.length === 0 && <Empty>No tokens.</Empty>}
        {tokens.length > 0 && (
          <div className="table-wrap">
            <table aria-label="Tokens">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Role</th>
                  <th scope="col">User</th>
                  <th scope="col">Scopes</th>
                  <th scope="col">Created</th>
                  <th scope="col">Expires</th>
                  <th scope="col">Revoked</th>
                  <th scope="col">Action</th>
                </tr>
              </thead>
              <tbody>
                {tokens.map((t) => {
                    const expired = Date.parse(t.expiresAt) <= now.getTime();
                    return (
                      <tr key={t.id}>
                        <td>{t.name}</td>
                        <td>
                          <span className="badge">{t.role.toLowerCase()}</span>
                        </td>
                        <td>
                          {t.user?.name ??
                            (t.cluster ? (
                              <span className="muted">
                                agent: {t.cluster.name}
                                {t.nodeName ? `/${t.nodeName}` : ''}
                              </span>
                            ) : (
                              '—'
                            ))}
                        </td>
                        <td style={{ whiteSpace: 'normal' }}>
                          {t.sliceScopes ? t.sliceScopes.map((s) => `${s.slice?.name ?? 'hidden'} (${s.role.toLowerCase()})`).join(', ') : <span className="muted">user's roles</span>}
                        </td>
                        <td>
                          <Time at={t.createdAt} now={now} />
                        </td>
                        <td className={expired ? 'muted' : undefined}>
                          <Time at={t.expiresAt} now={now} />
                        </td>
                        <td>{t.revokedAt ? <Time at={t.revokedAt} now={now} /> : <span className="muted">—</span>}</td>
                        <td>
                          {!t.revokedAt && !expired && (
                            <ConfirmButton
                              danger
                              question={`Revoke ${t.name}? Whatever uses it stops at once.`}
                              onConfirm={async () => {
                                const r = await doRevoke({ input: { id: t.id } });
                                const errs = problems({ error: r.error, userErrors: r.data?.revokeToken.userErrors });
                                setRevokeErrors(errs.map((e) => ({ ...e, message: `${t.name}: ${e.message}` })));
                                refetch({ requestPolicy: 'network-only' });
                              }}
                            >
                              Revoke
                            </ConfirmButton>
                          )}
                        </td>
                      </tr>
                    );
                  })}
              </tbody>
            </table>
          </div>
        )}
      </Card>
    </>
  );
}
