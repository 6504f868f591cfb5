import { render, screen, waitFor } from '@testing-library/react';
import { SessionProvider, useSession } from './session';

function Who() {
  const { viewer, notice } = useSession();
  return (
    <>
      <p>{viewer ? `signed in as ${viewer.name}` : 'signed out'}</p>
      {notice && <p>{notice}</p>}
    </>
  );
}

const viewer = { id: 'VXNlcjox', name: 'alice', role: 'USER', memberships: [] };
const answer = (status: number, body: unknown) => Promise.resolve(new Response(JSON.stringify(body), { status }));

afterEach(() => {
  vi.restoreAllMocks();
  localStorage.clear();
});

it('keeps the stored token while the gateway is unreachable, and signs in once it answers', async () => {
  localStorage.setItem('egs.token', 'tok');
  const fetch = vi
    .spyOn(globalThis, 'fetch')
    .mockRejectedValueOnce(new TypeError('Failed to fetch'))
    .mockImplementation(() => answer(200, { data: { viewer } }));
  render(
    <SessionProvider>
      <Who />
    </SessionProvider>,
  );
  expect(await screen.findByRole('status')).toHaveTextContent(/cannot be reached.*Retrying/);
  expect(localStorage.getItem('egs.token')).toBe('tok');
  expect(await screen.findByText('signed in as alice', {}, { timeout: 3000 })).toBeInTheDocument();
  expect(fetch).toHaveBeenCalledTimes(2);
});

it('drops a stored token the gateway refuses, and says why', async () => {
  localStorage.setItem('egs.token', 'revoked');
  vi.spyOn(globalThis, 'fetch').mockImplementation(() => answer(401, { errors: [{ message: 'the token was revoked', extensions: { code: 'UNAUTHENTICATED' } }] }));
  render(
    <SessionProvider>
      <Who />
    </SessionProvider>,
  );
  await waitFor(() => expect(screen.getByText('signed out')).toBeInTheDocument());
  expect(localStorage.getItem('egs.token')).toBeNull();
  expect(screen.getByText('the token was revoked')).toBeInTheDocument();
});
