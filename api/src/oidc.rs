//! Single sign-on with OpenID Connect: the authorization code flow with PKCE, for the portal.
//!
//! `GET /auth/oidc/login` sends the browser to the issuer with a fresh `state`, `nonce` and
//! PKCE challenge, which it also carries in a signed, HttpOnly cookie (any replica may take the
//! callback: the cookie is signed with a key derived from the shared signing key).
//! `GET /auth/oidc/callback` checks the state, exchanges the code (with the PKCE verifier and,
//! for a confidential client, the secret), verifies the ID token's signature against the
//! issuer's published keys (cached; fetched again for a key id it does not know, at most every
//! 30 s, and every hour), its issuer, audience, expiry and nonce, then signs the user in
//! (`egs_domain::sso::signin`) and sends the browser to the portal with the session token in
//! the URL's fragment, which never reaches a server. `GET /auth/oidc` says whether it is on.

use crate::app::AppState;
use crate::settings::OidcArgs;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Redirect, Response};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use egs_domain::sso::signin::{self, Identity};
use hmac::{Hmac, Mac};
use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::time::{Duration, Instant};
use tokio::sync::RwLock;

const COOKIE: &str = "egs_sso";
/// How long a browser has from the redirect to the callback.
const STATE_TTL_SECS: i64 = 600;
/// The issuer's keys are fetched again at most this often for an unknown key id…
const JWKS_REFETCH: Duration = Duration::from_secs(30);
/// …and at least this often anyway, as is its discovery document.
const PROVIDER_MAX_AGE: Duration = Duration::from_secs(3600);
/// ID token algorithms taken: the issuer's public keys only (never `none` or a shared secret).
const ALGORITHMS: [Algorithm; 7] =
    [Algorithm::RS256, Algorithm::RS384, Algorithm::RS512, Algorithm::PS256, Algorithm::ES256, Algorithm::ES384, Algorithm::EdDSA];

#[derive(Debug, thiserror::Error)]
pub enum SignInError {
    #[error("single sign-on is not configured on this gateway")]
    Off,
    #[error("the sign-in expired or did not start here; sign in again")]
    State,
    #[error("the identity provider refused: {0}")]
    Provider(String),
    #[error("the identity provider could not be reached: {0}")]
    Unreachable(String),
    #[error("the ID token is not valid: {0}")]
    IdToken(String),
    #[error("{0}")]
    Schema(String),
    #[error("the page to return to after signing in is not a page of this site")]
    ReturnPath,
}

/// The issuer's endpoints and keys, as last fetched.
struct Issuer {
    authorization_endpoint: String,
    token_endpoint: String,
    jwks_uri: String,
    keys: JwkSet,
    discovered: Instant,
    keys_fetched: Instant,
}

pub struct Oidc {
    issuer: String,
    client_id: String,
    client_secret: Option<String>,
    redirect_url: Option<String>,
    scopes: String,
    groups_claim: String,
    http: reqwest::Client,
    cached: RwLock<Option<Issuer>>,
    state_key: [u8; 32],
}

/// What the browser carries between the redirect and the callback (signed, not secret from
/// its own browser: the verifier only works with a code the issuer gave that browser).
#[derive(Serialize, Deserialize)]
struct Pending {
    state: String,
    nonce: String,
    verifier: String,
    redirect_uri: String,
    return_to: String,
    expires: i64,
}

fn random_token() -> String {
    B64.encode(rand::random::<[u8; 32]>())
}

impl Oidc {
    pub fn from_settings(settings: &OidcArgs, state_key: [u8; 32]) -> anyhow::Result<Option<Self>> {
        let Some(issuer) = settings.issuer.clone() else { return Ok(None) };
        let client_id = settings.client_id.clone().ok_or_else(|| anyhow::anyhow!("--oidc-issuer needs --oidc-client-id"))?;
        let client_secret = match &settings.client_secret_file {
            Some(path) => Some(
                std::fs::read_to_string(path)
                    .map_err(|e| anyhow::anyhow!("cannot read --oidc-client-secret-file {}: {e}", path.display()))?
                    .trim()
                    .to_owned(),
            ),
            None => None,
        };
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| anyhow::anyhow!("HTTP client: {e}"))?;
        Ok(Some(Self {
            issuer: issuer.trim_end_matches('/').to_owned(),
            client_id,
            client_secret,
            redirect_url: settings.redirect_url.clone(),
            scopes: settings.scopes.clone(),
            groups_claim: settings.groups_claim.clone(),
            http,
            cached: RwLock::new(None),
            state_key,
        }))
    }

    async fn get_json(&self, url: &str) -> Result<Value, SignInError> {
        let response = self.http.get(url).send().await.map_err(|e| SignInError::Unreachable(e.to_string()))?;
        if !response.status().is_success() {
            return Err(SignInError::Unreachable(format!("{url} answered {}", response.status())));
        }
        response.json().await.map_err(|e| SignInError::Unreachable(format!("{url}: {e}")))
    }

    async fn fetch_keys(&self, uri: &str) -> Result<JwkSet, SignInError> {
        serde_json::from_value(self.get_json(uri).await?).map_err(|e| SignInError::Unreachable(format!("the issuer's keys do not parse: {e}")))
    }

    /// The issuer's endpoints (discovered, or rediscovered when an hour old).
    async fn endpoints(&self) -> Result<(String, String), SignInError> {
        if let Some(i) = self.cached.read().await.as_ref().filter(|i| i.discovered.elapsed() < PROVIDER_MAX_AGE) {
            return Ok((i.authorization_endpoint.clone(), i.token_endpoint.clone()));
        }
        let doc = self.get_json(&format!("{}/.well-known/openid-configuration", self.issuer)).await?;
        let field = |name: &str| {
            doc[name].as_str().map(str::to_owned).ok_or_else(|| SignInError::Unreachable(format!("the discovery document has no {name}")))
        };
        if field("issuer")?.trim_end_matches('/') != self.issuer {
            return Err(SignInError::Unreachable("the discovery document names another issuer".into()));
        }
        let (authorization_endpoint, token_endpoint, jwks_uri) = (field("authorization_endpoint")?, field("token_endpoint")?, field("jwks_uri")?);
        let keys = self.fetch_keys(&jwks_uri).await?;
        let now = Instant::now();
        *self.cached.write().await = Some(Issuer {
            authorization_endpoint: authorization_endpoint.clone(),
            token_endpoint: token_endpoint.clone(),
            jwks_uri,
            keys,
            discovered: now,
            keys_fetched: now,
        });
        Ok((authorization_endpoint, token_endpoint))
    }

    /// The issuer's key `kid` (or its only key for `alg`, when the token names none), fetching
    /// the key set again when the key is not known and the last fetch is 30 s old: the issuer
    /// rotated its keys.
    async fn key(&self, kid: Option<&str>, alg: Algorithm) -> Result<Jwk, SignInError> {
        for attempt in 0..2 {
            {
                let cached = self.cached.read().await;
                let issuer = cached.as_ref().ok_or(SignInError::State)?;
                if let Some(found) = find_key(&issuer.keys, kid, alg) {
                    return Ok(found);
                }
                if attempt == 1 || issuer.keys_fetched.elapsed() < JWKS_REFETCH {
                    break;
                }
            }
            let uri = self.cached.read().await.as_ref().map(|i| i.jwks_uri.clone()).ok_or(SignInError::State)?;
            let keys = self.fetch_keys(&uri).await?;
            if let Some(issuer) = self.cached.write().await.as_mut() {
                issuer.keys = keys;
                issuer.keys_fetched = Instant::now();
            }
        }
        Err(SignInError::IdToken(format!("signed with a key the issuer does not publish ({})", kid.unwrap_or("no key id"))))
    }

    fn redirect_uri(&self, headers: &HeaderMap) -> String {
        if let Some(url) = &self.redirect_url {
            return url.clone();
        }
        // Behind a TLS-terminating proxy the request is http: it says what the browser used.
        let proto = headers.get("x-forwarded-proto").and_then(|v| v.to_str().ok()).filter(|p| *p == "https").unwrap_or("http");
        let host = headers.get(header::HOST).and_then(|v| v.to_str().ok()).unwrap_or("localhost");
        format!("{proto}://{host}/auth/oidc/callback")
    }

    fn seal(&self, pending: &Pending) -> String {
        let body = B64.encode(serde_json::to_vec(pending).expect("serializable"));
        format!("{body}.{}", B64.encode(self.mac(body.as_bytes())))
    }

    fn open(&self, sealed: &str, now: i64) -> Option<Pending> {
        let (body, sig) = sealed.split_once('.')?;
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.state_key).ok()?;
        mac.update(body.as_bytes());
        mac.verify_slice(&B64.decode(sig).ok()?).ok()?;
        let pending: Pending = serde_json::from_slice(&B64.decode(body).ok()?).ok()?;
        (pending.expires > now).then_some(pending)
    }

    fn mac(&self, body: &[u8]) -> Vec<u8> {
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.state_key).expect("HMAC takes any key");
        mac.update(body);
        mac.finalize().into_bytes().to_vec()
    }

    /// Exchanges the code for tokens and returns the verified identity.
    async fn identity(&self, code: &str, pending: &Pending) -> Result<Identity, SignInError> {
        let (_, token_endpoint) = self.endpoints().await?;
        let mut form = vec![
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", pending.redirect_uri.as_str()),
            ("code_verifier", pending.verifier.as_str()),
        ];
        let mut request = self.http.post(&token_endpoint);
        // A confidential client authenticates with its secret; a public one names itself.
        match &self.client_secret {
            Some(secret) => request = request.basic_auth(&self.client_id, Some(secret)),
            None => form.push(("client_id", self.client_id.as_str())),
        }
        let response = request.form(&form).send().await.map_err(|e| SignInError::Unreachable(e.to_string()))?;
        let status = response.status();
        let body: Value = response.json().await.unwrap_or(Value::Null);
        if !status.is_success() {
            let why = body["error_description"].as_str().or(body["error"].as_str()).unwrap_or("no reason given");
            return Err(SignInError::Provider(format!("the code exchange failed ({status}): {}", plain(why))));
        }
        let id_token = body["id_token"].as_str().ok_or_else(|| SignInError::Provider("no ID token in the answer".into()))?;
        let header = jsonwebtoken::decode_header(id_token).map_err(|e| SignInError::IdToken(e.to_string()))?;
        if !ALGORITHMS.contains(&header.alg) {
            return Err(SignInError::IdToken(format!("{:?} is not an algorithm EGS takes", header.alg)));
        }
        let jwk = self.key(header.kid.as_deref(), header.alg).await?;
        verify_id_token(id_token, &jwk, header.alg, &self.issuer, &self.client_id, &pending.nonce, &self.groups_claim)
    }
}

fn find_key(keys: &JwkSet, kid: Option<&str>, alg: Algorithm) -> Option<Jwk> {
    match kid {
        Some(kid) => keys.find(kid).cloned(),
        None => {
            let usable: Vec<&Jwk> = keys.keys.iter().filter(|k| k.common.key_algorithm.is_none_or(|a| a.to_string() == format!("{alg:?}"))).collect();
            match usable.as_slice() {
                [only] => Some((*only).clone()),
                _ => None,
            }
        }
    }
}

/// Verifies an ID token with the issuer's key: signature, issuer, audience, expiry (a minute's
/// leeway for clocks), the nonce this sign-in sent; and reads who it names.
pub fn verify_id_token(
    token: &str,
    jwk: &Jwk,
    alg: Algorithm,
    issuer: &str,
    client_id: &str,
    nonce: &str,
    groups_claim: &str,
) -> Result<Identity, SignInError> {
    let key = DecodingKey::from_jwk(jwk).map_err(|e| SignInError::IdToken(format!("the issuer's key is unusable: {e}")))?;
    let mut validation = Validation::new(alg);
    validation.set_issuer(&[issuer, &format!("{issuer}/")]);
    validation.set_audience(&[client_id]);
    validation.set_required_spec_claims(&["exp", "iat", "iss", "aud", "sub"]);
    validation.leeway = 60;
    let claims: Value = jsonwebtoken::decode::<Value>(token, &key, &validation).map_err(|e| SignInError::IdToken(e.to_string()))?.claims;
    if claims["nonce"].as_str() != Some(nonce) {
        return Err(SignInError::IdToken("its nonce is not this sign-in's".into()));
    }
    // With several audiences, the token must have been issued to this client.
    if claims["aud"].as_array().is_some_and(|a| a.len() > 1) && claims["azp"].as_str() != Some(client_id) {
        return Err(SignInError::IdToken("issued to another client (azp)".into()));
    }
    let subject = claims["sub"].as_str().unwrap_or_default().to_owned();
    let email = claims["email"].as_str().map(str::to_owned);
    // Only an address the provider checked is the user's: many let anyone type any address,
    // and an unchecked one would claim a colleague's (adding members by e-mail finds it).
    let verified = matches!(&claims["email_verified"], Value::Bool(true)) || claims["email_verified"].as_str() == Some("true");
    let username = claims["preferred_username"]
        .as_str()
        .map(str::to_owned)
        .or_else(|| email.as_deref().and_then(|e| e.split('@').next()).map(str::to_owned))
        .unwrap_or_else(|| subject.clone());
    let groups = match &claims[groups_claim] {
        Value::Array(items) => items.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
        Value::String(one) => vec![one.clone()],
        _ => Vec::new(),
    };
    let issuer = claims["iss"].as_str().unwrap_or(issuer).trim_end_matches('/').to_owned();
    Ok(Identity { issuer, subject, username, email: email.filter(|_| verified), groups })
}

#[derive(Deserialize)]
pub struct LoginQuery {
    return_to: Option<String>,
}

#[derive(Deserialize)]
pub struct CallbackQuery {
    code: Option<String>,
    state: Option<String>,
    error: Option<String>,
    error_description: Option<String>,
}

fn cookie(value: &str, max_age: i64, secure: bool) -> HeaderValue {
    let secure = if secure { "; Secure" } else { "" };
    HeaderValue::from_str(&format!("{COOKIE}={value}; Path=/auth/oidc; HttpOnly; SameSite=Lax; Max-Age={max_age}{secure}")).expect("a cookie")
}

/// The most characters of a provider's or browser's error text kept.
const MAX_ERROR_TEXT: usize = 200;

/// Text from outside (the browser's `error_description`, the provider's answer) as it may go
/// into a log line and the portal's sign-in page: control characters (a newline would forge a
/// log line, an escape would drive a terminal) become spaces, and it is cut short.
fn plain(text: &str) -> String {
    let mut kept: String = text.chars().take(MAX_ERROR_TEXT).map(|c| if c.is_control() { ' ' } else { c }).collect();
    if text.chars().count() > MAX_ERROR_TEXT {
        kept.push('…');
    }
    kept
}

/// The longest return path kept.
const MAX_RETURN_PATH: usize = 512;

/// Where the portal is sent after a sign-in: a path of this site only, as the browser will
/// read it. Browsers drop tabs and newlines anywhere in a URL and read `\` as `/`, so
/// `/\t/evil.host` is `//evil.host`, another site, which would be handed the session token:
/// the path is refused with any control character, parsed against a stand-in for this site's
/// origin, and kept only when it stays there, in its parsed (percent-encoded) form. `None`:
/// not a path of this site.
fn local_path(given: &str) -> Option<String> {
    const HERE: &str = "http://egs.invalid";
    if given.len() > MAX_RETURN_PATH || !given.starts_with('/') || given.chars().any(|c| c.is_control() || c == '#') {
        return None;
    }
    let base = url::Url::parse(HERE).ok()?;
    let parsed = base.join(given).ok()?;
    if parsed.origin() != base.origin() || parsed.fragment().is_some() {
        return None;
    }
    let path = &parsed[url::Position::BeforePath..];
    (path.starts_with('/') && !path.starts_with("//")).then(|| path.to_owned())
}

/// `GET /auth/oidc`: whether single sign-on is on, for the portal's sign-in page.
pub async fn info(State(state): State<AppState>) -> Response {
    axum::Json(serde_json::json!({ "enabled": state.oidc.is_some(), "loginUrl": "/auth/oidc/login" })).into_response()
}

/// `GET /auth/oidc/login`: off to the issuer.
pub async fn login(State(state): State<AppState>, headers: HeaderMap, Query(query): Query<LoginQuery>) -> Response {
    let Some(oidc) = state.oidc.as_deref() else { return failure(SignInError::Off) };
    let return_to = match query.return_to.as_deref() {
        None => "/".to_owned(),
        Some(given) => match local_path(given) {
            Some(path) => path,
            None => return failure(SignInError::ReturnPath),
        },
    };
    let (authorization_endpoint, _) = match oidc.endpoints().await {
        Ok(found) => found,
        Err(error) => return failure(error),
    };
    let pending = Pending {
        state: random_token(),
        nonce: random_token(),
        verifier: random_token(),
        redirect_uri: oidc.redirect_uri(&headers),
        return_to,
        expires: chrono::Utc::now().timestamp() + STATE_TTL_SECS,
    };
    let challenge = B64.encode(Sha256::digest(pending.verifier.as_bytes()));
    let mut url = match url::Url::parse(&authorization_endpoint) {
        Ok(url) => url,
        Err(e) => return failure(SignInError::Unreachable(format!("the authorization endpoint is not a URL: {e}"))),
    };
    url.query_pairs_mut()
        .append_pair("response_type", "code")
        .append_pair("client_id", &oidc.client_id)
        .append_pair("redirect_uri", &pending.redirect_uri)
        .append_pair("scope", &oidc.scopes)
        .append_pair("state", &pending.state)
        .append_pair("nonce", &pending.nonce)
        .append_pair("code_challenge", &challenge)
        .append_pair("code_challenge_method", "S256");
    let secure = pending.redirect_uri.starts_with("https://");
    let mut response = Redirect::to(url.as_str()).into_response();
    response.headers_mut().insert(header::SET_COOKIE, cookie(&oidc.seal(&pending), STATE_TTL_SECS, secure));
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// `GET /auth/oidc/callback`: the issuer sends the browser back with a code.
pub async fn callback(State(state): State<AppState>, headers: HeaderMap, Query(query): Query<CallbackQuery>) -> Response {
    let Some(oidc) = state.oidc.as_deref() else { return failure(SignInError::Off) };
    let sealed = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|c| c.trim().strip_prefix(&format!("{COOKIE}=")).map(str::to_owned));
    let pending = sealed.and_then(|s| oidc.open(&s, chrono::Utc::now().timestamp()));
    let result = async {
        let (pending, code, return_to) = accept_callback(pending, &query)?;
        let identity = oidc.identity(&code, &pending).await?;
        let services = &state.app;
        let signed = signin::sign_in(&services.db, &services.keys, services.access_news(), identity)
            .await
            .map_err(|e| SignInError::Schema(e.public_message()))?;
        tracing::info!(user = %signed.user.name, granted = signed.granted, revoked = signed.revoked, "signed in with single sign-on");
        // No kubeconfig outlives the access it was issued under: an owner the groups demoted,
        // an admin they no longer make one. Checked at every sign-in, not only when this one
        // demoted, so a revocation an earlier sign-in could not finish is finished now.
        let admin = signed.user.role == egs_entities::Role::Admin;
        egs_domain::slice::kubeconfig::revoke_for_user(&services.db, services.kubernetes.clone(), signed.user.id, admin, &signed.owner_lost)
            .await
            .map_err(|e| SignInError::Schema(e.public_message()))?;
        Ok((return_to, signed.token))
    }
    .await;
    match result {
        Ok((return_to, token)) => {
            let mut response = Redirect::to(&format!("{return_to}#sso-token={token}")).into_response();
            response.headers_mut().insert(header::SET_COOKIE, cookie("", 0, false));
            response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            response
        }
        Err(error) => {
            let mut response = failure(error);
            response.headers_mut().insert(header::SET_COOKIE, cookie("", 0, false));
            response
        }
    }
}

/// What a callback must pass before the issuer is asked for an identity and a session is
/// minted: its state cookie, the state it carries, no error from the issuer, a code, and a
/// page of this site to return to. Returns the pending sign-in, the code and that page.
fn accept_callback(pending: Option<Pending>, query: &CallbackQuery) -> Result<(Pending, String, String), SignInError> {
    let pending = pending.ok_or(SignInError::State)?;
    // The state is what ties this callback to that browser.
    if !query.state.as_deref().is_some_and(|s| egs_domain::auth::same_secret(s, &pending.state)) {
        return Err(SignInError::State);
    }
    if let Some(error) = &query.error {
        let description = query.error_description.as_deref().unwrap_or("no description");
        return Err(SignInError::Provider(format!("{}: {}", plain(error), plain(description))));
    }
    let code = query.code.clone().ok_or_else(|| SignInError::Provider("no code".into()))?;
    // Checked again before a session is minted: the cookie is this gateway's, but a token
    // must never be sent anywhere else, whatever an older gateway sealed in it.
    let return_to = local_path(&pending.return_to).ok_or(SignInError::ReturnPath)?;
    Ok((pending, code, return_to))
}

/// Back to the portal's sign-in page, which shows why.
fn failure(error: SignInError) -> Response {
    tracing::info!(%error, "a single sign-on did not complete");
    let message: String = url::form_urlencoded::byte_serialize(error.to_string().as_bytes()).collect();
    Redirect::to(&format!("/#sso-error={message}")).into_response()
}

#[cfg(test)]
mod tests;
