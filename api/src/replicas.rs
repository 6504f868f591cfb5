//! Cross-replica token revocation over Redis pub/sub: a replica that revokes a token publishes
//! its id; every replica (itself included) drops it from its token cache.

use egs_schema::auth::{RevocationBroadcast, TokenCache};
use futures_util::StreamExt;
use std::sync::Arc;
use std::time::Duration;

/// The channel revoked token ids travel on.
pub const REVOKED_TOKENS_CHANNEL: &str = "egs:tokens:revoked";
/// Longest wait between reconnection attempts of the subscriber.
const MAX_RECONNECT_DELAY: Duration = Duration::from_secs(10);

pub struct RedisRevocations {
    connection: redis::aio::ConnectionManager,
}

impl RedisRevocations {
    pub fn new(connection: redis::aio::ConnectionManager) -> Self {
        Self { connection }
    }
}

impl RevocationBroadcast for RedisRevocations {
    fn token_revoked(&self, jti: &str) {
        let mut connection = self.connection.clone();
        let jti = jti.to_owned();
        // Fire and forget: the revocation is already stored; other replicas' caches expire
        // within seconds even if this message is lost.
        tokio::spawn(async move {
            let published: Result<i64, _> = redis::cmd("PUBLISH").arg(REVOKED_TOKENS_CHANNEL).arg(&jti).query_async(&mut connection).await;
            if let Err(e) = published {
                tracing::warn!(error = %e, "failed to broadcast a token revocation; other replicas catch up when their cache expires");
            }
        });
    }
}

/// Listens for revocations until the process ends, reconnecting with backoff.
pub fn spawn_revocation_listener(client: redis::Client, cache: Arc<TokenCache>) {
    tokio::spawn(async move {
        let mut delay = Duration::from_millis(200);
        loop {
            match listen(&client, &cache).await {
                Ok(()) => tracing::warn!("the Redis revocation subscription ended; reconnecting"),
                Err(e) => tracing::warn!(error = %e, retry_in_ms = delay.as_millis() as u64, "the Redis revocation subscription failed"),
            }
            tokio::time::sleep(delay).await;
            delay = (delay * 2).min(MAX_RECONNECT_DELAY);
        }
    });
}

async fn listen(client: &redis::Client, cache: &TokenCache) -> redis::RedisResult<()> {
    let mut pubsub = client.get_async_pubsub().await?;
    pubsub.subscribe(REVOKED_TOKENS_CHANNEL).await?;
    let mut messages = pubsub.on_message();
    while let Some(message) = messages.next().await {
        if let Ok(jti) = message.get_payload::<String>() {
            cache.forget(&jti);
        }
    }
    Ok(())
}
