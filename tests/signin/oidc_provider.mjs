// A real OpenID Connect provider for the sign-in tests: the npm package oidc-provider (pinned in
// the Makefile, installed in var/oidc-node by `make oidc-provider`) with one static client and the
// users of USERS_FILE (re-read at every sign-in, so a test can change someone's groups).
// Logins go through the package's devInteractions form; consent is granted for the static client.
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const env = process.env;
const { default: Provider } = await import(pathToFileURL(env.OIDC_PROVIDER_MODULE).href);
const users = () => JSON.parse(readFileSync(env.USERS_FILE, 'utf8'));
const SCOPES = 'openid email profile groups';

const provider = new Provider(env.ISSUER, {
  clients: [{
    client_id: env.CLIENT_ID,
    client_secret: env.CLIENT_SECRET,
    redirect_uris: [env.REDIRECT_URI],
    grant_types: ['authorization_code'],
    response_types: ['code'],
    token_endpoint_auth_method: 'client_secret_post',
  }],
  claims: {
    openid: ['sub'],
    email: ['email', 'email_verified'],
    profile: ['preferred_username', 'given_name', 'family_name'],
    groups: ['groups'],
  },
  scopes: SCOPES.split(' '),
  cookies: { keys: [env.COOKIE_KEY] },
  features: { devInteractions: { enabled: true } },
  async findAccount(ctx, id) {
    const user = users()[id];
    if (!user) return undefined;
    return {
      accountId: id,
      async claims() {
        return {
          sub: id, preferred_username: id, email: `${id}@example.org`, email_verified: true,
          given_name: user.given_name ?? id, family_name: user.family_name ?? 'Test', groups: user.groups,
        };
      },
    };
  },
  async loadExistingGrant(ctx) {
    const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
    grant.addOIDCScope(SCOPES);
    await grant.save();
    return grant;
  },
});
provider.listen(Number(env.PORT), '127.0.0.1', () => console.log(`listening on ${env.ISSUER}`));
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => process.exit(0));
