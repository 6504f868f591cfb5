//! Whom a per-user limit counts against (the caller's side of it is `auth`'s).

/// Whom a per-user limit counts against: the user, or the token for agent tokens (which
/// belong to no user; each speaks for one node or one cluster's DaemonSet).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Principal {
    Anonymous,
    User(i64),
    Token(i64),
}
