import { useState, type FormEvent } from 'react';
import { useSession } from '../session';

export function Login() {
  const { login, notice } = useSession();
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | null>(notice);
  const [busy, setBusy] = useState(false);

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
        <p className="muted">Sign in with an access token. Admins find theirs in <code>egs-data/admin.token</code>; <code>egs token create</code> issues more.</p>
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
