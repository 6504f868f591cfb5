//! Who is calling: JWT verification, token records, and the slice-isolation checks every
//! service uses. Isolation lives here and in services, never only in the UI.

mod caller;
pub use caller::{Caller, TokenRecord, Visible};

use crate::error::{Error, Result};
use crate::ports::RevocationBroadcast;
pub use crate::principal::Principal;
use crate::shared_reads::{SharedReads, Turn};
use chrono::{DateTime, Utc};
use egs_entities::{Role, SliceScope, access_token, user};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// `aud` and `iss` of every token we sign; tokens for anything else are refused.
pub const TOKEN_AUDIENCE: &str = "egs";
pub const TOKEN_ISSUER: &str = "egs";

/// How long a token lookup is trusted before the database is asked again. Revocation on this
/// replica takes effect at once; on other replicas within this bound.
const TOKEN_CACHE_TTL: Duration = Duration::from_secs(5);
/// Bound on cached token lookups: room for a fleet's agents (one token per node, 10,000 nodes
/// on one gateway) and its users. When it is reached, lapsed entries go first, and only if
/// that frees nothing is the cache cleared.
const TOKEN_CACHE_MAX: usize = 50_000;

/// The claims inside an EGS token.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Claims {
    /// User name, or `agent:<cluster id>/<node>` for agents.
    pub sub: String,
    /// Token id, for revocation.
    pub jti: String,
    pub role: Role,
    /// Slice roles the token is limited to, when it is (informational: the stored token record
    /// is what authorization uses).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub slices: Vec<SliceScope>,
    pub aud: String,
    pub iss: String,
    pub iat: i64,
    pub nbf: i64,
    pub exp: i64,
}

impl Claims {
    /// The claims of an EGS token: for `sub`, valid from `now` until `expires_at`.
    pub fn new(sub: String, jti: String, role: Role, slices: Vec<SliceScope>, now: DateTime<Utc>, expires_at: DateTime<Utc>) -> Self {
        Self {
            sub,
            jti,
            role,
            slices,
            aud: TOKEN_AUDIENCE.into(),
            iss: TOKEN_ISSUER.into(),
            iat: now.timestamp(),
            nbf: now.timestamp(),
            exp: expires_at.timestamp(),
        }
    }
}

/// The HMAC key tokens are signed with.
pub struct TokenKeys {
    encoding: EncodingKey,
    decoding: DecodingKey,
    validation: Validation,
    deployment: String,
    credentials_key: [u8; 32],
    webhook_key: [u8; 32],
    sign_in_key: [u8; 32],
}

/// HMAC-SHA256(key, label): a one-way derivation, so each use gets its own key.
fn derive(secret: &[u8], label: &[u8]) -> [u8; 32] {
    use hmac::{Hmac, Mac};
    let mut mac = <Hmac<sha2::Sha256> as Mac>::new_from_slice(secret).expect("HMAC takes keys of any length");
    mac.update(label);
    mac.finalize().into_bytes().into()
}

/// The secret path segment of cluster `name`'s admission webhook
/// (`/kubernetes/clusters/<name>/mutate/<key>`): only the API server it was configured in
/// knows it, so nobody else can ask which slice owns a namespace. 32 hex digits.
pub fn webhook_key(keys: &TokenKeys, name: &str) -> String {
    hex::encode(&derive(&keys.webhook_key, name.as_bytes())[..16])
}

/// Whether two secrets are equal, compared in constant time (no early exit on the first
/// difference, so timing tells nothing of how much of a guess was right).
pub fn same_secret(given: &str, expected: &str) -> bool {
    given.len() == expected.len() && given.bytes().zip(expected.bytes()).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
}

/// 16 hex digits of a derivation: a one-way fingerprint of the key.
fn deployment_of(secret: &[u8]) -> String {
    hex::encode(&derive(secret, b"egs deployment")[..8])
}

impl TokenKeys {
    pub fn from_secret(secret: &[u8]) -> Self {
        let mut validation = Validation::new(Algorithm::HS256);
        validation.set_audience(&[TOKEN_AUDIENCE]);
        validation.set_issuer(&[TOKEN_ISSUER]);
        validation.set_required_spec_claims(&["exp", "nbf", "aud", "iss", "sub"]);
        validation.validate_nbf = true;
        validation.leeway = 5;
        Self {
            encoding: EncodingKey::from_secret(secret),
            decoding: DecodingKey::from_secret(secret),
            validation,
            deployment: deployment_of(secret),
            credentials_key: derive(secret, b"egs cluster credentials v1"),
            webhook_key: derive(secret, b"egs admission webhook v1"),
            sign_in_key: derive(secret, b"egs single sign-on state v1"),
        }
    }

    /// Names this deployment (all its replicas share the signing key, no other deployment has
    /// it) without revealing the key: used to keep deployments apart on a shared Redis.
    pub fn deployment(&self) -> &str {
        &self.deployment
    }

    /// Signs the single sign-on state a browser carries between the login redirect and the
    /// callback (any replica may take the callback, so it is derived from the shared key).
    pub fn sign_in_key(&self) -> &[u8; 32] {
        &self.sign_in_key
    }

    /// Encrypts cluster credentials at rest (derived from the signing key, which every replica
    /// shares, so any replica can read what another stored).
    pub fn credentials_key(&self) -> &[u8; 32] {
        &self.credentials_key
    }

    pub fn sign(&self, claims: &Claims) -> Result<String> {
        jsonwebtoken::encode(&Header::new(Algorithm::HS256), claims, &self.encoding)
            .map_err(|e| Error::Internal(anyhow::anyhow!("failed to sign a token: {e}")))
    }

    /// Checks signature, algorithm, audience, issuer and time claims.
    pub fn verify(&self, token: &str) -> Result<Claims> {
        use jsonwebtoken::errors::ErrorKind;
        jsonwebtoken::decode::<Claims>(token, &self.decoding, &self.validation).map(|data| data.claims).map_err(|e| {
            let why = match e.kind() {
                ErrorKind::ExpiredSignature => "the token has expired",
                ErrorKind::ImmatureSignature => "the token is not valid yet",
                ErrorKind::InvalidAudience | ErrorKind::InvalidIssuer => "the token was not issued for EGS",
                ErrorKind::InvalidAlgorithm => "the token is signed with an algorithm EGS does not accept",
                ErrorKind::InvalidSignature => "the token's signature does not match",
                _ => "the token is malformed",
            };
            Error::Unauthenticated(why.to_owned())
        })
    }
}

/// How an agent appears as a token subject and event actor: `agent:<cluster id>/<node>`, or
/// `agent:<cluster id>/*` for a cluster-scoped token.
pub fn agent_subject(cluster_id: Option<i64>, node_name: Option<&str>) -> String {
    format!("agent:{}/{}", cluster_id.unwrap_or_default(), node_name.unwrap_or("*"))
}

/// Short-lived cache of token records, so an authenticated request does not always cost a
/// database round trip.
#[derive(Default)]
pub struct TokenCache {
    /// By token id: the record (`None`: no such token), timed from when its read started.
    records: Recent<Option<Arc<TokenRecord>>>,
    /// Tokens whose signature and claims were checked lately, by their whole text, with their
    /// id: decoding and checking a JWT on every request is a large share of a small query's
    /// cost. A token that differs in any byte (a forged signature, edited claims) misses and
    /// is checked in full; expiry and revocation are the record's, checked on every use.
    verified: Recent<Arc<str>>,
    /// Misses share their reads (see [`crate::shared_reads`]): a fleet's agents arriving together
    /// cost a few statements, not two per agent. A read also takes the cached records past half
    /// their time that no other read has, so tokens lapsing together are not each read by
    /// many reads at once (at 3,333 agents on one replica that had been 2.6 million rows in
    /// three minutes).
    reads: SharedReads<Box<str>>,
    /// Whether a read ahead of lapsing records is running ([`refresh_ahead`]).
    reading_ahead: AtomicBool,
    /// Counts [`TokenCache::forget`]s: a read that a forget overtook does not fill the cache,
    /// since it may have read the record as it was before (not yet revoked).
    forgets: AtomicU64,
}

impl TokenCache {
    /// Forgets a token so its next use reads the database (after revocation).
    pub fn forget(&self, jti: &str) {
        self.forgets.fetch_add(1, Ordering::SeqCst);
        self.records.remove(jti);
    }

    /// Forgets every token of a user, so their next use reads the user's new access version.
    pub fn forget_user(&self, user_id: i64) {
        self.forgets.fetch_add(1, Ordering::SeqCst);
        self.records.retain(|record| record.as_ref().is_none_or(|r| r.user_id != Some(user_id)));
    }

    fn read_start(&self) -> ReadStart {
        ReadStart { at: Instant::now(), forgets: self.forgets.load(Ordering::SeqCst) }
    }

    /// Keeps a record a read brought, timed from the read's start, unless a forget came since
    /// the read started (the record may predate a revocation; the next use reads again).
    fn keep_read(&self, jti: &str, record: Option<Arc<TokenRecord>>, read: &ReadStart) {
        if self.forgets.load(Ordering::SeqCst) == read.forgets {
            self.records.put_at(jti, record, read.at);
        }
    }
}

/// When a read of token records started, and how many forgets there had been.
struct ReadStart {
    at: Instant,
    forgets: u64,
}

/// Values by key for [`TOKEN_CACHE_TTL`], at most [`TOKEN_CACHE_MAX`] of them.
struct Recent<V> {
    entries: Mutex<HashMap<Box<str>, (Instant, V)>>,
}

impl<V> Default for Recent<V> {
    fn default() -> Self {
        Self { entries: Mutex::new(HashMap::new()) }
    }
}

impl<V: Clone> Recent<V> {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Box<str>, (Instant, V)>> {
        self.entries.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn get(&self, key: &str) -> Option<V> {
        self.get_aged(key).map(|(value, _)| value)
    }

    /// The value within the TTL, and its age.
    fn get_aged(&self, key: &str) -> Option<(V, Duration)> {
        self.lock().get(key).map(|(at, value)| (value.clone(), at.elapsed())).filter(|(_, age)| *age < TOKEN_CACHE_TTL)
    }

    /// Whether a value for `key` is within the TTL.
    fn holds(&self, key: &str) -> bool {
        self.lock().get(key).is_some_and(|(at, _)| at.elapsed() < TOKEN_CACHE_TTL)
    }

    fn put(&self, key: &str, value: V) {
        self.put_at(key, value, Instant::now());
    }

    /// Keeps `value`, timed from `at` (when its read started).
    fn put_at(&self, key: &str, value: V, at: Instant) {
        let mut entries = self.lock();
        if entries.len() >= TOKEN_CACHE_MAX {
            entries.retain(|_, (at, _)| at.elapsed() < TOKEN_CACHE_TTL);
            if entries.len() >= TOKEN_CACHE_MAX {
                entries.clear();
            }
        }
        entries.insert(Box::from(key), (at, value));
    }

    /// Up to `limit` keys whose entries are older than `age`.
    fn aging(&self, age: Duration, limit: usize) -> Vec<Box<str>> {
        self.lock().iter().filter(|(_, (at, _))| at.elapsed() >= age).map(|(key, _)| key.clone()).take(limit).collect()
    }

    fn remove(&self, key: &str) {
        self.lock().remove(key);
    }

    fn retain(&self, mut keep: impl FnMut(&V) -> bool) {
        self.lock().retain(|_, (_, value)| keep(value));
    }
}

/// For a single process: nothing to tell.
pub struct NoReplicas;

impl RevocationBroadcast for NoReplicas {
    fn token_revoked(&self, _jti: &str) {}
    fn access_reduced(&self, _user_id: i64) {}
}

/// Where news of lost access goes: this replica's token cache and the other replicas.
#[derive(Clone, Copy)]
pub struct AccessNews<'a> {
    pub cache: &'a TokenCache,
    pub others: &'a dyn RevocationBroadcast,
}

/// Records that `users` lost slice access (removed from a slice, given a lower role, the slice
/// deleted): their `access_version` goes up, and every replica forgets their cached tokens, so
/// each open WebSocket sees the new version at its next check (every 2 s) and ends the
/// operations it started before, which may show what the user no longer may see.
pub async fn reduce_access(db: &impl ConnectionTrait, news: AccessNews<'_>, users: &[i64]) -> Result<()> {
    if users.is_empty() {
        return Ok(());
    }
    user::Entity::update_many()
        .col_expr(user::Column::AccessVersion, sea_orm::sea_query::ExprTrait::add(Expr::col(user::Column::AccessVersion), 1))
        .filter(user::Column::Id.is_in(users.iter().copied()))
        .exec(db)
        .await?;
    for &user_id in users {
        news.cache.forget_user(user_id);
        news.others.access_reduced(user_id);
    }
    Ok(())
}

/// Verifies a bearer token and loads its record: the one entry point for HTTP and WebSocket.
pub async fn authenticate(db: &DatabaseConnection, keys: &TokenKeys, cache: &Arc<TokenCache>, token: &str) -> Result<Caller> {
    let jti = match cache.verified.get(token) {
        Some(jti) => jti,
        None => {
            let jti: Arc<str> = Arc::from(keys.verify(token)?.jti);
            cache.verified.put(token, jti.clone());
            jti
        }
    };
    let record = match cache.records.get_aged(&jti) {
        Some((record, age)) => {
            if age >= TOKEN_CACHE_TTL / 2 {
                refresh_ahead(db, cache, &jti);
            }
            record
        }
        None => refresh_records(db, cache, &jti).await?,
    };
    let record = record.ok_or_else(|| Error::Unauthenticated("the token is not known to this EGS".into()))?;
    if record.revoked {
        return Err(Error::Unauthenticated("the token has been revoked".into()));
    }
    if record.expires_at < Utc::now() {
        return Err(Error::Unauthenticated("the token has expired".into()));
    }
    Ok(Caller::new(record))
}

/// Reads the records past half their time in the background, one such read at a time, so
/// tokens in steady use (a fleet of agents, each reporting every second) are read again
/// together before they lapse, a statement or two every couple of seconds, and their requests
/// never wait for a read. Before, records were read again only when a request missed: at 3,333
/// agents on one replica misses were steady, and with the reads taking turns, a live sample
/// waited p50 46 ms for its agent's token (1.6 ms with the reads ahead).
fn refresh_ahead(db: &DatabaseConnection, cache: &Arc<TokenCache>, jti: &str) {
    if cache.reading_ahead.swap(true, Ordering::AcqRel) {
        return;
    }
    let (db, cache, jti) = (db.clone(), cache.clone(), Box::<str>::from(jti));
    tokio::spawn(async move {
        // Released however the read ends.
        let _ahead = ReadingAhead(&cache.reading_ahead);
        let turn = cache.reads.turn(jti.clone()).await;
        if let Err(error) = read_records(&db, &cache, turn, &jti).await {
            tracing::debug!(error = ?error, "reading token records ahead failed; requests read them when they lapse");
        }
    });
}

struct ReadingAhead<'a>(&'a AtomicBool);

impl Drop for ReadingAhead<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

/// Reads `jti`'s record after a miss, unless a read that had its turn meanwhile brought it.
async fn refresh_records(db: &DatabaseConnection, cache: &TokenCache, jti: &str) -> Result<Option<Arc<TokenRecord>>> {
    let turn = cache.reads.turn(Box::from(jti)).await;
    // As good as a hit (a forget since that read began kept it out of the cache).
    if let Some(record) = cache.records.get(jti) {
        return Ok(record);
    }
    read_records(db, cache, turn, jti).await
}

/// Reads `jti`'s record, and with it those of other misses waiting meanwhile and of cached
/// tokens past half their time in the cache (at most [`REFRESH_TOGETHER`] in all), and caches
/// them all. Every record is at most [`TOKEN_CACHE_TTL`] old (from its read's start) when it
/// is used.
async fn read_records(db: &DatabaseConnection, cache: &TokenCache, turn: Turn<'_, Box<str>>, jti: &str) -> Result<Option<Arc<TokenRecord>>> {
    let read = cache.read_start();
    let aging = cache.records.aging(TOKEN_CACHE_TTL / 2, REFRESH_TOGETHER);
    let jtis = turn.claim(REFRESH_TOGETHER, aging, |key| cache.records.holds(key));
    let mut found = load_token_records(db, &jtis).await?;
    let mut asked = None;
    for key in &jtis {
        let record = found.remove(&**key).map(Arc::new);
        if **key == *jti {
            asked = Some(record.clone());
        }
        cache.keep_read(key, record, &read);
    }
    Ok(asked.flatten())
}

/// Most token records read in one refresh (bounds the statement's parameters).
const REFRESH_TOGETHER: usize = 500;

/// The records of the tokens `jtis` that exist, by jti: two statements, the tokens and their users.
async fn load_token_records(db: &DatabaseConnection, jtis: &[Box<str>]) -> Result<HashMap<String, TokenRecord>> {
    let tokens = access_token::Entity::find().filter(access_token::Column::Jti.is_in(jtis.iter().map(|j| j.to_string()))).all(db).await?;
    let user_ids: Vec<i64> = tokens.iter().filter_map(|t| t.user_id).collect();
    let users: HashMap<i64, user::Model> = if user_ids.is_empty() {
        HashMap::new()
    } else {
        user::Entity::find().filter(user::Column::Id.is_in(user_ids)).all(db).await?.into_iter().map(|u| (u.id, u)).collect()
    };
    Ok(tokens
        .into_iter()
        .map(|token| {
            let user = token.user_id.and_then(|id| users.get(&id));
            let user_name = match user {
                Some(user) => user.name.clone(),
                None => agent_subject(token.cluster_id, token.node_name.as_deref()),
            };
            let record = TokenRecord {
                token_id: token.id,
                role: token.role,
                user_id: token.user_id,
                user_name,
                scopes: token.slice_scopes.map(|s| s.0),
                agent_cluster_id: token.cluster_id,
                agent_node_name: token.node_name,
                expires_at: token.expires_at,
                revoked: token.revoked_at.is_some(),
                access_version: user.map_or(0, |u| u.access_version),
            };
            (token.jti, record)
        })
        .collect())
}

#[cfg(test)]
mod tests;
