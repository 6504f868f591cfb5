//! Abuse limits that need the parsed document or its cost: aliases per document (a 64 KiB
//! query could otherwise repeat one expensive field thousands of times under new names) and a
//! per-token budget of query cost (complexity) per second.
//!
//! The budget is a token bucket per access token, in this replica's memory (governor's GCRA):
//! each operation takes its complexity (at least 1) from its token's bucket, so a client that
//! sends cheap queries can send many and one that sends whole-inventory pages fewer. Calls
//! without a token share one bucket. Behind N replicas a token can spend up to N budgets.

use crate::auth::Caller;
use crate::error::ErrorCode;
use async_graphql::extensions::{Extension, ExtensionContext, ExtensionFactory, NextParseQuery, NextValidation};
use async_graphql::parser::types::{ExecutableDocument, Selection, SelectionSet};
use async_graphql::{ErrorExtensionValues, ServerError, ServerResult, ValidationResult, Variables};
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota};
use std::num::NonZeroU32;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Most aliased fields one document may hold (operations and fragments together). The portal's
/// largest document has none; a dashboard script asking for a few dozen GPUs by alias fits.
pub const MAX_ALIASES: usize = 64;

/// The per-token cost budget: `per_second` refills the bucket, `burst` is its size (at least
/// the schema's complexity limit, so any valid operation can run on a full bucket).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CostBudget {
    pub per_second: NonZeroU32,
    pub burst: NonZeroU32,
}

/// The limits the schema enforces before executing anything.
pub struct Limits {
    budget: Option<(CostBudget, DefaultKeyedRateLimiter<i64>)>,
    clock: DefaultClock,
    /// Operations seen, to forget full buckets now and then.
    spent: AtomicU64,
}

/// The bucket of calls without a token (token ids start at 1).
const ANONYMOUS: i64 = -1;
/// How many operations pass between sweeps of full buckets.
const FORGET_EVERY: u64 = 4096;

impl Limits {
    /// `None`: no cost budget (aliases are bounded anyway).
    pub fn new(budget: Option<CostBudget>) -> Arc<Self> {
        let budget = budget.map(|b| (b, governor::RateLimiter::keyed(Quota::per_second(b.per_second).allow_burst(b.burst))));
        Arc::new(Self { budget, clock: DefaultClock::default(), spent: AtomicU64::new(0) })
    }

    /// Takes `cost` from `token`'s bucket; on refusal, how long until it would fit.
    fn spend(&self, token: i64, cost: usize) -> Result<(), Refusal> {
        let Some((budget, limiter)) = &self.budget else { return Ok(()) };
        // Buckets that are full again say nothing; dropping them keeps idle tokens free.
        if self.spent.fetch_add(1, Ordering::Relaxed) % FORGET_EVERY == FORGET_EVERY - 1 {
            limiter.retain_recent();
        }
        let cost = NonZeroU32::new(u32::try_from(cost.max(1)).unwrap_or(u32::MAX)).unwrap_or(NonZeroU32::MIN);
        match limiter.check_key_n(&token, cost) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(not_until)) => Err(Refusal::Later(not_until.wait_time_from(self.clock.now()))),
            Err(_) => Err(Refusal::Never { cost, burst: budget.burst }),
        }
    }
}

enum Refusal {
    Later(Duration),
    Never { cost: NonZeroU32, burst: NonZeroU32 },
}

/// A request error with a stable code (and, for `RATE_LIMITED`, `retryAfterMs`).
fn refused(code: ErrorCode, message: String, retry_after: Option<Duration>) -> ServerError {
    let mut error = ServerError::new(message, None);
    let mut extensions = ErrorExtensionValues::default();
    extensions.set("code", code.as_str());
    if let Some(wait) = retry_after {
        extensions.set("retryAfterMs", u64::try_from(wait.as_millis()).unwrap_or(u64::MAX).max(1));
    }
    error.extensions = Some(extensions);
    error
}

/// Counts the aliased fields of a whole document: every operation and fragment once.
pub fn count_aliases(document: &ExecutableDocument) -> usize {
    fn walk(set: &SelectionSet) -> usize {
        set.items
            .iter()
            .map(|item| match &item.node {
                Selection::Field(field) => usize::from(field.node.alias.is_some()) + walk(&field.node.selection_set.node),
                Selection::InlineFragment(fragment) => walk(&fragment.node.selection_set.node),
                // Counted where the fragment is defined.
                Selection::FragmentSpread(_) => 0,
            })
            .sum()
    }
    document.operations.iter().map(|(_, op)| walk(&op.node.selection_set.node)).sum::<usize>()
        + document.fragments.values().map(|fragment| walk(&fragment.node.selection_set.node)).sum::<usize>()
}

/// The schema extension enforcing [`Limits`].
pub struct Enforce(pub Arc<Limits>);

impl ExtensionFactory for Enforce {
    fn create(&self) -> Arc<dyn Extension> {
        Arc::new(LimitsExtension(self.0.clone()))
    }
}

struct LimitsExtension(Arc<Limits>);

#[async_trait::async_trait]
impl Extension for LimitsExtension {
    async fn parse_query(
        &self,
        ctx: &ExtensionContext<'_>,
        query: &str,
        variables: &Variables,
        next: NextParseQuery<'_>,
    ) -> ServerResult<ExecutableDocument> {
        let document = next.run(ctx, query, variables).await?;
        let aliases = count_aliases(&document);
        if aliases > MAX_ALIASES {
            return Err(refused(
                ErrorCode::InvalidInput,
                format!("the document uses {aliases} aliases; at most {MAX_ALIASES} are allowed (split it into several requests)"),
                None,
            ));
        }
        Ok(document)
    }

    async fn validation(&self, ctx: &ExtensionContext<'_>, next: NextValidation<'_>) -> Result<ValidationResult, Vec<ServerError>> {
        let result = next.run(ctx).await?;
        let token = ctx.data_opt::<Caller>().map_or(ANONYMOUS, |caller| caller.record.token_id);
        match self.0.spend(token, result.complexity) {
            Ok(()) => Ok(result),
            Err(Refusal::Later(wait)) => Err(vec![refused(
                ErrorCode::RateLimited,
                format!(
                    "this token's query budget is spent (this operation costs {}); retry in {} ms",
                    result.complexity.max(1),
                    wait.as_millis().max(1)
                ),
                Some(wait),
            )]),
            Err(Refusal::Never { cost, burst }) => Err(vec![refused(
                ErrorCode::RateLimited,
                format!("this operation costs {cost}, more than a token may spend at once ({burst}); ask for fewer items"),
                None,
            )]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budget(per_second: u32, burst: u32) -> Option<CostBudget> {
        Some(CostBudget { per_second: NonZeroU32::new(per_second).expect("nonzero"), burst: NonZeroU32::new(burst).expect("nonzero") })
    }

    #[test]
    fn a_bucket_is_per_token_and_refuses_with_the_wait() {
        let limits = Limits::new(budget(10, 100));
        assert!(limits.spend(1, 60).is_ok());
        assert!(limits.spend(1, 40).is_ok());
        match limits.spend(1, 20) {
            Err(Refusal::Later(wait)) => assert!(wait > Duration::from_millis(1000) && wait <= Duration::from_millis(2000), "{wait:?}"),
            _ => panic!("an empty bucket refuses"),
        }
        assert!(limits.spend(2, 100).is_ok(), "another token has its own bucket");
        assert!(matches!(limits.spend(3, 101), Err(Refusal::Never { .. })), "more than the burst never fits");
        assert!(Limits::new(None).spend(1, 1_000_000).is_ok());
    }

    #[test]
    fn aliases_are_counted_in_operations_and_fragments_once() {
        let document = async_graphql::parser::parse_query(
            "query { a: me { id } b: me { n: id } ...F ... on Query { c: me { id } } } fragment F on Query { d: me { id } e: me { id } }",
        )
        .expect("parses");
        assert_eq!(count_aliases(&document), 6);
    }
}
