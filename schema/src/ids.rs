//! Relay global IDs as the API's `ID` scalar; the scheme (and the decoding every input goes
//! through) is `egs_domain::ids`.

use async_graphql::ID;
pub use egs_domain::ids::{Kind, decode, decode_any};

/// The global ID of row `id` of `kind`.
pub fn encode(kind: Kind, id: i64) -> ID {
    ID(egs_domain::ids::encode(kind, id))
}
