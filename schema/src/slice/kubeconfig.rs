//! `sliceKubeconfig`: a kubeconfig that acts in a slice's namespaces on one cluster. The rules
//! are `egs_domain::slice::kubeconfig`.

use crate::ids::{self, Kind};
use crate::scalars::Duration;
use crate::{app, session};
use async_graphql::{Context, ID, InputObject, Object, SimpleObject};
use chrono::{DateTime, Utc};
use egs_domain::error::{Error, UserError};
use egs_domain::slice::kubeconfig::issue;

#[derive(InputObject)]
pub struct SliceKubeconfigInput {
    pub slice_id: ID,
    pub cluster_id: ID,
    /// How long the token lives: 30 days when omitted, 10 minutes to 1 year.
    pub expires_in: Option<Duration>,
}

/// A kubeconfig for the slice's namespaces on one cluster. It is shown only here: EGS keeps no
/// copy, and asking again revokes the previous one.
#[derive(SimpleObject)]
pub struct SliceKubeconfigPayload {
    /// The kubeconfig YAML (its token is a secret).
    pub kubeconfig: Option<String>,
    /// `<namespace>/<name>` of the ServiceAccount the token speaks for.
    pub service_account: Option<String>,
    /// The namespaces where it may act; the first is the context's namespace.
    pub namespaces: Vec<String>,
    pub expires_at: Option<DateTime<Utc>>,
    /// Problems with the input that the caller can fix; empty on success.
    pub user_errors: Vec<UserError>,
}

#[derive(Default)]
pub struct SliceKubeconfigMutation;

#[Object]
impl SliceKubeconfigMutation {
    /// Issues a kubeconfig for a slice's namespaces on a Kubernetes cluster (admins and the
    /// slice's owners), revoking the one issued before.
    async fn slice_kubeconfig(&self, ctx: &Context<'_>, input: SliceKubeconfigInput) -> async_graphql::Result<SliceKubeconfigPayload> {
        let (caller, db) = session(ctx)?;
        let clusters = &app(ctx)?.kubernetes;
        let result = async {
            let slice_id = ids::decode("sliceId", &input.slice_id, Kind::Slice)?;
            let cluster_id = ids::decode("clusterId", &input.cluster_id, Kind::Cluster)?;
            issue(db, clusters.as_ref(), caller, slice_id, cluster_id, input.expires_in.map(Duration::secs)).await
        };
        match result.await {
            Ok(issued) => Ok(SliceKubeconfigPayload {
                kubeconfig: Some(issued.kubeconfig),
                service_account: Some(issued.service_account),
                namespaces: issued.namespaces,
                expires_at: Some(issued.expires_at),
                user_errors: Vec::new(),
            }),
            Err(Error::User(user_errors)) => {
                Ok(SliceKubeconfigPayload { kubeconfig: None, service_account: None, namespaces: Vec::new(), expires_at: None, user_errors })
            }
            Err(other) => Err(other.into()),
        }
    }
}
