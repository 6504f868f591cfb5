//! The one-shot commands: `migrate`, `print-schema`, `print-crd`, `token create`.

use crate::bootstrap::{self, schema_error};
use crate::db::{self, StatementCounter};
use crate::settings::{StorageArgs, TokenCreateArgs};
use anyhow::Context;
use egs_domain::auth::Caller;
use egs_domain::slice::service as slices;
use egs_domain::token::service::{IssueToken, issue_token};
use egs_domain::user::service::{CreateUser, find_user_by_name, insert_user};
use egs_entities::{Role, SliceRole, SliceScope};
use egs_wire::duration::parse_secs;

async fn open(storage: &StorageArgs) -> anyhow::Result<sea_orm::DatabaseConnection> {
    let db = db::connect(storage, &StatementCounter::default()).await?;
    db::migrate(&db).await?;
    Ok(db)
}

pub async fn migrate(storage: StorageArgs) -> anyhow::Result<()> {
    let db = db::connect(&storage, &StatementCounter::default()).await?;
    let applied = db::migrate(&db).await?;
    println!("applied {applied} migration(s); the database is up to date");
    Ok(())
}

pub fn print_schema() {
    print!("{}", egs_schema::sdl());
}

/// The `GPUProvisioningRequest` CRD, as checked in at `api/crds/`.
pub fn print_crd() {
    print!("{}", crate::kubernetes::crd::crd_yaml());
}

fn parse_slice_role(text: &str) -> anyhow::Result<SliceRole> {
    match text.to_ascii_lowercase().as_str() {
        "owner" => Ok(SliceRole::Owner),
        "editor" => Ok(SliceRole::Editor),
        "viewer" => Ok(SliceRole::Viewer),
        other => anyhow::bail!("`{other}` is not a slice role; use owner, editor or viewer"),
    }
}

/// Issues a token and returns its secret. `--user` creates the user when missing; `--slice`
/// makes them a member with `--role` and limits the token to that slice.
pub async fn create_token(args: TokenCreateArgs) -> anyhow::Result<String> {
    let ttl_secs = parse_secs(&args.ttl).map_err(|e| anyhow::anyhow!("--ttl: {e}"))?;
    let db = open(&args.storage).await?;
    let keys = bootstrap::load_signing_key(&args.storage)?;
    bootstrap::ensure_initialized(&db, &keys, &args.storage.data_dir).await?;
    let (name, role) = match &args.user {
        Some(name) => (name.as_str(), Role::User),
        None => (bootstrap::ADMIN_USER, Role::Admin),
    };
    let user = match find_user_by_name(&db, name).await.map_err(schema_error)? {
        Some(user) => user,
        None => insert_user(&db, CreateUser { name: name.into(), email: None, role }).await.map_err(schema_error)?,
    };
    anyhow::ensure!(user.role == role, "user `{name}` is {}, not {}", user.role.as_str(), role.as_str());
    let mut scopes = None;
    if let (Some(slice_name), Some(role_text)) = (&args.slice, &args.role) {
        let slice_role = parse_slice_role(role_text)?;
        let system = Caller::system();
        let slice = slices::find_slice_by_name(&db, &system, slice_name).await.map_err(|_| anyhow::anyhow!("no slice named `{slice_name}`"))?;
        // A running gateway reads the new access version when its token cache expires.
        let news = egs_domain::auth::AccessNews { cache: &Default::default(), others: &egs_domain::auth::NoReplicas };
        slices::add_slice_member(&db, &system, news, slice.id, slices::MemberSpec { user_id: user.id, role: slice_role })
            .await
            .map_err(schema_error)?;
        scopes = Some(vec![SliceScope { slice_id: slice.id, role: slice_role }]);
    }
    let issued = issue_token(
        &db,
        &keys,
        IssueToken {
            name: format!("issued by `egs token create` for {name}"),
            role,
            user_id: Some(user.id),
            slice_scopes: scopes,
            cluster_id: None,
            node_name: None,
            ttl_secs,
            created_by: None,
        },
    )
    .await
    .map_err(schema_error)
    .context("failed to issue the token")?;
    Ok(issued.secret)
}
