//! First-start setup: the signing key, the default project, the admin user and its token.

use crate::settings::StorageArgs;
use anyhow::Context;
use chrono::Utc;
use egs_domain::auth::TokenKeys;
use egs_domain::cluster::service::DEFAULT_PROJECT;
use egs_domain::token::service::{IssueToken, issue_token};
use egs_domain::user::service::{CreateUser, find_user_by_name, insert_user};
use egs_entities::{Role, project};
use rand::Rng;
use sea_orm::{ActiveModelTrait, ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, Set, TransactionTrait};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Name of the admin user created on first start.
pub const ADMIN_USER: &str = "admin";
/// Lifetime of the bootstrap admin token.
const ADMIN_TOKEN_TTL_SECS: i64 = 365 * 24 * 3600;
/// Shortest signing key accepted from configuration (HS256 wants at least 256 bits).
const MIN_SIGNING_KEY_BYTES: usize = 32;

pub fn admin_token_path(data_dir: &Path) -> PathBuf {
    data_dir.join("admin.token")
}

/// Creates a directory (and its parents) that only its owner may enter (0700): the data dir
/// holds the database, the signing key and tokens.
pub fn create_private_dir(dir: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("failed to create {}", dir.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).with_context(|| format!("failed to restrict {}", dir.display()))?;
    }
    Ok(())
}

/// Makes existing files only their owner's (0600); missing ones are skipped.
pub fn restrict_files(paths: &[PathBuf]) -> anyhow::Result<()> {
    #[cfg(unix)]
    for path in paths.iter().filter(|p| p.exists()) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).with_context(|| format!("failed to restrict {}", path.display()))?;
    }
    Ok(())
}

/// Creates an empty file only its owner can read, unless it exists.
pub fn write_private_file_if_missing(path: &Path) -> anyhow::Result<()> {
    if !path.exists() {
        write_private_file(path, "")?;
    }
    Ok(())
}

/// Writes a file only its owner can read, replacing any old one.
pub fn write_private_file(path: &Path, contents: &str) -> anyhow::Result<()> {
    if let Some(parent) = path.parent() {
        create_private_dir(parent)?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path).with_context(|| format!("failed to write {}", path.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    file.write_all(contents.as_bytes())?;
    Ok(())
}

/// The configured signing key, or the one kept in the data dir (generated on first use).
pub fn load_signing_key(storage: &StorageArgs) -> anyhow::Result<TokenKeys> {
    if let Some(key) = &storage.signing_key {
        anyhow::ensure!(key.expose().len() >= MIN_SIGNING_KEY_BYTES, "EGS_SIGNING_KEY must be at least {MIN_SIGNING_KEY_BYTES} bytes");
        return Ok(TokenKeys::from_secret(key.expose().as_bytes()));
    }
    let path = storage.data_dir.join("signing.key");
    let key = match std::fs::read_to_string(&path) {
        Ok(key) => key.trim().to_owned(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let bytes: [u8; 32] = rand::rng().random();
            let key = hex::encode(bytes);
            write_private_file(&path, &key)?;
            key
        }
        Err(e) => return Err(e).with_context(|| format!("failed to read the signing key {}", path.display())),
    };
    anyhow::ensure!(key.len() >= MIN_SIGNING_KEY_BYTES, "the signing key in {} is too short", path.display());
    Ok(TokenKeys::from_secret(key.as_bytes()))
}

/// Creates the default project and the admin user when missing. Returns the admin token when
/// this call created the admin (first start), after writing it to `<data-dir>/admin.token`.
pub async fn ensure_initialized(db: &DatabaseConnection, keys: &TokenKeys, data_dir: &Path) -> anyhow::Result<Option<String>> {
    let txn = db.begin().await?;
    if project::Entity::find().filter(project::Column::Name.eq(DEFAULT_PROJECT)).one(&txn).await?.is_none() {
        project::ActiveModel { name: Set(DEFAULT_PROJECT.into()), created_at: Set(Utc::now()), ..Default::default() }.insert(&txn).await?;
    }
    if find_user_by_name(&txn, ADMIN_USER).await.map_err(schema_error)?.is_some() {
        txn.commit().await?;
        return Ok(None);
    }
    let admin = insert_user(&txn, CreateUser { name: ADMIN_USER.into(), email: None, role: Role::Admin }).await.map_err(schema_error)?;
    let issued = issue_token(
        &txn,
        keys,
        IssueToken {
            name: "bootstrap admin token".into(),
            role: Role::Admin,
            user_id: Some(admin.id),
            slice_scopes: None,
            cluster_id: None,
            node_name: None,
            ttl_secs: ADMIN_TOKEN_TTL_SECS,
            created_by: None,
        },
    )
    .await
    .map_err(schema_error)?;
    // Another replica bootstrapping the same database at the same moment loses here, cleanly.
    txn.commit().await.context("failed to store the bootstrap admin (another replica may have done it first)")?;
    write_private_file(&admin_token_path(data_dir), &format!("{}\n", issued.secret))?;
    Ok(Some(issued.secret))
}

/// Schema errors at start-up are ours to fix, so they carry their debug form.
pub fn schema_error(error: egs_domain::error::Error) -> anyhow::Error {
    anyhow::anyhow!("{}: {error:?}", error.public_message())
}
