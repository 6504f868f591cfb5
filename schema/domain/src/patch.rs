//! A field an update may leave out (keep the stored value), clear (`null`) or set. With the
//! `graphql` feature it is async-graphql's own `MaybeUndefined`, which the GraphQL inputs
//! decode into; without it, the same three cases for the rules alone.

#[cfg(feature = "graphql")]
pub use async_graphql::MaybeUndefined;

#[cfg(not(feature = "graphql"))]
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum MaybeUndefined<T> {
    /// Left out: keep what is stored.
    #[default]
    Undefined,
    /// Cleared.
    Null,
    Value(T),
}

#[cfg(not(feature = "graphql"))]
impl<T> MaybeUndefined<T> {
    /// The value, when one is set.
    pub fn value(&self) -> Option<&T> {
        match self {
            Self::Value(value) => Some(value),
            _ => None,
        }
    }
}

#[cfg(not(feature = "graphql"))]
impl<T> From<MaybeUndefined<T>> for Option<Option<T>> {
    fn from(change: MaybeUndefined<T>) -> Self {
        match change {
            MaybeUndefined::Undefined => None,
            MaybeUndefined::Null => Some(None),
            MaybeUndefined::Value(value) => Some(Some(value)),
        }
    }
}
