// A real OpenID Provider for the single sign-on tests: panva's oidc-provider (OpenID
// Certified), on loopback, with one confidential client and users whose groups the tests set.
// The module is named by OIDC_PROVIDER_MODULE (an installed copy's path), so this file can live
// in the repository while the package lives where each test run installed it.
//
// Env: PORT; CLIENT_ID, CLIENT_SECRET; REDIRECT_URIS (comma-separated); GROUPS, JSON of
// login → [groups]. Its development sign-in page takes any login, and the account is that login.
import { pathToFileURL } from 'node:url';

const module = await import(pathToFileURL(process.env.OIDC_PROVIDER_MODULE).href);
const Provider = module.default ?? module.Provider;
const port = Number(process.env.PORT);
const groups = JSON.parse(process.env.GROUPS ?? '{}');
const issuer = `http://127.0.0.1:${port}`;

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: process.env.CLIENT_ID,
      client_secret: process.env.CLIENT_SECRET,
      redirect_uris: process.env.REDIRECT_URIS.split(','),
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    },
  ],
  claims: {
    openid: ['sub'],
    profile: ['name', 'preferred_username'],
    email: ['email', 'email_verified'],
    groups: ['groups'],
  },
  scopes: ['openid', 'profile', 'email', 'groups'],
  // The claims the scopes ask for go into the ID token (EGS reads no userinfo endpoint).
  conformIdTokenClaims: false,
  pkce: { required: () => true },
  features: { devInteractions: { enabled: true } },
  cookies: { keys: ['egs-test-provider-cookie-key'] },
  async findAccount(_ctx, id) {
    return {
      accountId: id,
      async claims() {
        return { sub: id, name: id, preferred_username: id, email: `${id}@example.com`, email_verified: !id.startsWith('unverified'), groups: groups[id] ?? [] };
      },
    };
  },
});
provider.listen(port, '127.0.0.1', () => console.log(`oidc-provider listening at ${issuer}`));
