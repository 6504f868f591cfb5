//! Global IDs: `base64url("<Type>:<row id>")`, opaque to clients, typed for us (the GraphQL
//! API serves them as Relay `ID`s).

use crate::error::{Error, Result};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// The object types that have global IDs.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    Project,
    User,
    AccessToken,
    Cluster,
    GpuNode,
    Gpu,
    Slice,
    SliceNamespace,
    Gpr,
    GprEvent,
    Alert,
    GprTemplate,
    NotificationChannel,
    NotificationDelivery,
    WorkspaceRequest,
    SsoGroupRule,
    MaintenanceWindow,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Project => "Project",
            Self::User => "User",
            Self::AccessToken => "AccessToken",
            Self::Cluster => "Cluster",
            Self::GpuNode => "GpuNode",
            Self::Gpu => "Gpu",
            Self::Slice => "Slice",
            Self::SliceNamespace => "SliceNamespace",
            Self::Gpr => "Gpr",
            Self::GprEvent => "GprEvent",
            Self::Alert => "Alert",
            Self::GprTemplate => "GprTemplate",
            Self::NotificationChannel => "NotificationChannel",
            Self::NotificationDelivery => "NotificationDelivery",
            Self::WorkspaceRequest => "WorkspaceRequest",
            Self::SsoGroupRule => "SsoGroupRule",
            Self::MaintenanceWindow => "MaintenanceWindow",
        }
    }

    /// Every kind, in the order ids are checked.
    pub const ALL: [Kind; 17] = [
        Self::Project,
        Self::User,
        Self::AccessToken,
        Self::Cluster,
        Self::GpuNode,
        Self::Gpu,
        Self::Slice,
        Self::SliceNamespace,
        Self::Gpr,
        Self::GprEvent,
        Self::Alert,
        Self::GprTemplate,
        Self::NotificationChannel,
        Self::NotificationDelivery,
        Self::WorkspaceRequest,
        Self::SsoGroupRule,
        Self::MaintenanceWindow,
    ];
}

pub fn encode(kind: Kind, id: i64) -> String {
    URL_SAFE_NO_PAD.encode(format!("{}:{id}", kind.as_str()))
}

/// How a global ID appears in a value the API shows as it is (a report's row): the GraphQL `ID`
/// scalar with the `graphql` feature, a plain string without.
#[cfg(feature = "graphql")]
pub type GlobalId = async_graphql::ID;
#[cfg(not(feature = "graphql"))]
pub type GlobalId = String;

/// [`encode`], as a [`GlobalId`].
pub fn global(kind: Kind, id: i64) -> GlobalId {
    GlobalId::from(encode(kind, id))
}

/// Decodes any global ID into its kind and row id.
pub fn decode_any(id: &str) -> Option<(Kind, i64)> {
    let bytes = URL_SAFE_NO_PAD.decode(id.trim_end_matches('=')).ok()?;
    let text = std::str::from_utf8(&bytes).ok()?;
    let (kind, row) = text.split_once(':')?;
    let kind = Kind::ALL.into_iter().find(|k| k.as_str() == kind)?;
    let row: i64 = row.parse().ok().filter(|r| *r > 0)?;
    Some((kind, row))
}

/// Decodes an ID that must be of `kind`; `field` names the input for the error.
pub fn decode(field: &str, id: &str, kind: Kind) -> Result<i64> {
    match decode_any(id) {
        Some((found, row)) if found == kind => Ok(row),
        Some((found, _)) => Err(Error::invalid(field, format!("`{}` is the id of a {}, not of a {}", id, found.as_str(), kind.as_str()))),
        None => Err(Error::invalid(field, format!("`{}` is not an EGS id", id))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_keep_their_type() {
        let id = encode(Kind::Gpr, 42);
        assert_eq!(decode("id", &id, Kind::Gpr).ok(), Some(42));
        let wrong = decode("id", &id, Kind::Slice).expect_err("a GPR id is not a slice id");
        assert!(wrong.public_message().contains("not of a Slice"), "{wrong:?}");
    }

    #[test]
    fn garbage_ids_are_rejected_not_panicked_on() {
        for bad in ["", "!!!", "R3By", "R3ByOi0x", "R3ByOjA", "Tm9wZTox", &"A".repeat(10_000)] {
            assert!(decode("id", bad, Kind::Gpr).is_err(), "{bad}");
        }
    }
}
