import { useEffect, useState, type FormEvent } from 'react';
import { useSession } from '../session';
import { ssoEnabled } from '../sso';

export function Login() {
  const { login, notice } = useSession();
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | null>(notice);
  const [busy, setBusy] = useState(false);
  const [sso, setSso] = useState(false);
  useEffect(() => {
    let live = true;
    void ssoEnabled().then((on) => live && setSso(on));
    return () => {
      live = false;
    };
  }, []);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(await login(token));
    setBusy(false);
  };

  return (
    <main className="login">
      <form onSubmit={submit} aria-labelledby="login-title">
        <h1 id="login-title">EGS — Elastic GPU Service</h1>
        {sso && (
          <p>
            <a className="button primary" href={`/auth/oidc/login?return_to=${encodeURIComponent(window.location.pathname)}`}>
              Sign in with single sign-on
            </a>
          </p>
        )}
        <p className="muted">{sso ? 'Or sign in' : 'Sign in'} with an access token. Admins find theirs in <code>egs-data/admin.token</code>; <code>egs token create</code> issues more.</p>
        <label htmlFor="token">Access token</label>
        <textarea id="token" value={token} onChange={(e) => setToken(e.target.value)} rows={3} autoFocus spellCheck={false} />
        {error && (
          <div className="error" role="alert">
            {error}
          </div>
        )}
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Checking…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
