// The signed-in token: kept in localStorage, checked against `viewer` on login and on load,
// and dropped when the gateway refuses it (revoked or expired).
import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { takeSignInFragment } from './sso';
import { print } from 'graphql';
import { Provider as UrqlProvider } from 'urql';
import { createApi, type Api, type LinkState } from './api/client';
import { retryDelayMs } from './lib/backoff';
import { ApiContext, LinkContext } from './api/context';
import { graphql } from './gql';
import type { ViewerQuery } from './gql/graphql';

const STORAGE_KEY = 'egs.token';

export const ViewerDocument = graphql(`
  query Viewer {
    viewer {
      id
      name
      role
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

export type Viewer = ViewerQuery['viewer'];

interface Session {
  viewer: Viewer | null;
  /** Checks a token with the gateway; resolves to an error message, or null once signed in. */
  login: (token: string) => Promise<string | null>;
  logout: (reason?: string) => void;
  /** Why the last session ended, shown on the login page. */
  notice: string | null;
}

const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside <SessionProvider>');
  return session;
}

/** What the gateway said about a token: who it speaks for, or why not. `refused` is true only
 * when the token itself was refused; an unreachable or failing gateway says nothing about it. */
export type ViewerAnswer = { viewer: Viewer } | { error: string; refused: boolean };

/** Asks the gateway who a token speaks for. */
export async function fetchViewer(token: string): Promise<ViewerAnswer> {
  let response: Response;
  try {
    response = await fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json, application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: print(ViewerDocument) }),
    });
  } catch {
    return { error: 'The gateway cannot be reached. Is `egs serve` running?', refused: false };
  }
  const body = (await response.json().catch(() => null)) as {
    data?: { viewer: Viewer };
    errors?: { message: string; extensions?: { code?: string } }[];
  } | null;
  if (body?.data?.viewer) return { viewer: body.data.viewer };
  const refused = response.status === 401 || body?.errors?.some((e) => e.extensions?.code === 'UNAUTHENTICATED') === true;
  return { error: body?.errors?.[0]?.message ?? `The gateway answered ${response.status}.`, refused };
}

export function SessionProvider({ children }: { children: ReactNode }) {
  // Back from single sign-on: its token (or why it failed) is in the URL's fragment, once.
  const [fromSso] = useState(takeSignInFragment);
  const [token, setToken] = useState<string | null>(() => {
    if (fromSso.token) localStorage.setItem(STORAGE_KEY, fromSso.token);
    return fromSso.token ?? localStorage.getItem(STORAGE_KEY);
  });
  const [viewer, setViewer] = useState<Viewer | null>(null);
  const [checking, setChecking] = useState(token !== null);
  const [notice, setNotice] = useState<string | null>(fromSso.error ?? null);
  const [link, setLink] = useState<LinkState>('connecting');

  const logout = useCallback((reason?: string) => {
    localStorage.removeItem(STORAGE_KEY);
    setToken(null);
    setViewer(null);
    setNotice(reason ?? null);
  }, []);

  // A stored token is checked on load. Only a refusal signs out: while the gateway is down or
  // restarting the token is kept and the check retried.
  const [waiting, setWaiting] = useState<string | null>(null);
  useEffect(() => {
    if (token === null || viewer !== null) return;
    let cancelled = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let attempt = 0;
    const check = () =>
      void fetchViewer(token).then((result) => {
        if (cancelled) return;
        if ('viewer' in result) {
          setWaiting(null);
          setChecking(false);
          setViewer(result.viewer);
        } else if (result.refused) {
          setWaiting(null);
          setChecking(false);
          logout(result.error);
        } else {
          setWaiting(result.error);
          timer = setTimeout(check, retryDelayMs(attempt++));
        }
      });
    check();
    return () => {
      cancelled = true;
      clearTimeout(timer);
    };
  }, [token, viewer, logout]);

  const login = useCallback(async (candidate: string) => {
    const trimmed = candidate.trim();
    if (!trimmed) return 'Paste an access token.';
    const result = await fetchViewer(trimmed);
    if ('error' in result) return result.error;
    localStorage.setItem(STORAGE_KEY, trimmed);
    setNotice(null);
    setToken(trimmed);
    setViewer(result.viewer);
    return null;
  }, []);

  // One pair of clients per token, made in an effect so that (StrictMode included) every
  // client made is disposed of exactly once.
  const [api, setApi] = useState<Api | null>(null);
  useEffect(() => {
    if (!token) {
      setApi(null);
      return;
    }
    const made = createApi(token, (reason) => logout(`The gateway refused the token: ${reason}`), setLink);
    setApi(made);
    return () => void made.ws.dispose();
  }, [token, logout]);

  const session = useMemo(() => ({ viewer, login, logout, notice }), [viewer, login, logout, notice]);
  if (checking || (token && !api))
    return (
      <div className="boot" role="status">
        {waiting ? `${waiting} Retrying…` : 'Checking your token…'}
      </div>
    );
  return (
    <SessionContext.Provider value={session}>
      <ApiContext.Provider value={api}>
        <LinkContext.Provider value={link}>
          {api ? <UrqlProvider value={api.http}>{children}</UrqlProvider> : children}
        </LinkContext.Provider>
      </ApiContext.Provider>
    </SessionContext.Provider>
  );
}
