// Single sign-on: the gateway sends the browser back with the session token (or why it could
// not sign in) in the URL's fragment, which never reaches a server; it is taken out of the
// address bar and history at once.

export interface SignInFragment {
  token?: string;
  error?: string;
}

/** Reads `#sso-token=…` or `#sso-error=…` from `hash`. */
export function parseSignInFragment(hash: string): SignInFragment {
  const params = new URLSearchParams(hash.replace(/^#/, ''));
  const token = params.get('sso-token')?.trim();
  const error = params.get('sso-error')?.trim();
  if (token) return { token };
  if (error) return { error: `Single sign-on failed: ${error}` };
  return {};
}

/** Takes the sign-in fragment out of the current URL, returning what it said. */
export function takeSignInFragment(): SignInFragment {
  const found = parseSignInFragment(window.location.hash);
  if (found.token || found.error) window.history.replaceState(null, '', window.location.pathname + window.location.search);
  return found;
}

/** Whether the gateway offers single sign-on (`GET /auth/oidc`). */
export async function ssoEnabled(): Promise<boolean> {
  try {
    const response = await fetch('/auth/oidc');
    if (!response.ok) return false;
    const body = (await response.json()) as { enabled?: boolean };
    return body.enabled === true;
  } catch {
    return false;
  }
}
