//! Abuse limits that need the parsed document or its cost: aliases per document (a 64 KiB
//! query could otherwise repeat one expensive field thousands of times under new names), the
//! output cost of an operation (what it can build, lists multiplied out: see [`output_cost`])
//! and a per-user budget of query cost (complexity) per second.
//!
//! Every walk of a document here is linear in its size whatever its shape ([`walk`]), and the
//! gate refuses documents whose shape would make async-graphql's own validation walk more.
//!
//! The budget is a token bucket per user (per token for agents, which belong to no user), in
//! this replica's memory (governor's GCRA): each operation takes its complexity (at least 1)
//! from its user's bucket, so a client that sends cheap queries can send many and one that
//! sends whole-inventory pages fewer, and minting more tokens buys no more. Calls without a
//! token share one bucket. Behind N replicas a user can spend up to N budgets.

use async_graphql::parser::types::{ExecutableDocument, OperationType, Selection, SelectionSet};
use async_graphql::registry::Registry;
use async_graphql::{ServerError, ServerResult, Variables};
use egs_domain::auth::Principal;
use egs_domain::error::ErrorCode;
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota};
use std::num::NonZeroU32;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use walk::MAX_WALK;
pub use walk::{Cost, Fragments, MAX_EXPANDED_SELECTIONS, MAX_FRAGMENT_CHAIN, MAX_SPREADS, Misshapen, PLANNING_COMPLEXITY, is_planning_question};

mod walk;

/// Most aliased fields one document may hold (operations and fragments together). The portal's
/// largest document has none; a dashboard script asking for a few dozen GPUs by alias fits.
pub const MAX_ALIASES: usize = 64;

/// Most an operation may cost by [`output_cost`]. The count is a worst case (every list at its
/// bound, GPUs at 64 a node where 8 is usual), so the limit is set where a page of 100 GPRs
/// with their nodes and those nodes' GPUs still fits (about 1.3 million by this count) and the
/// portal's documents fit (checked by a test), while lists nested three deep (`nodes → gpus →
/// node → gpus → node → gpus`: 27 million) do not. Lists longer than their bound, and
/// anything else that grows too big, are caught by the response-size backstop.
pub const MAX_OUTPUT_COST: u64 = 2_000_000;

/// The per-user cost budget: `per_second` refills the bucket, `burst` is its size (at least
/// the schema's complexity limit, so any valid operation can run on a full bucket).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CostBudget {
    pub per_second: NonZeroU32,
    pub burst: NonZeroU32,
}

/// The limits the schema enforces before executing anything.
pub struct Limits {
    budget: Option<(CostBudget, DefaultKeyedRateLimiter<Principal>)>,
    clock: DefaultClock,
    /// Operations seen, to forget full buckets now and then.
    spent: AtomicU64,
}

/// How many operations pass between sweeps of full buckets.
const FORGET_EVERY: u64 = 4096;

impl Limits {
    /// `None`: no cost budget (aliases are bounded anyway).
    pub fn new(budget: Option<CostBudget>) -> Arc<Self> {
        let budget = budget.map(|b| (b, governor::RateLimiter::keyed(Quota::per_second(b.per_second).allow_burst(b.burst))));
        Arc::new(Self { budget, clock: DefaultClock::default(), spent: AtomicU64::new(0) })
    }

    /// Takes `cost` from `who`'s bucket; on refusal, how long until it would fit.
    fn spend(&self, who: Principal, cost: usize) -> Result<(), Refusal> {
        let Some((budget, limiter)) = &self.budget else { return Ok(()) };
        // Buckets that are full again say nothing; dropping them keeps idle tokens free.
        if self.spent.fetch_add(1, Ordering::Relaxed) % FORGET_EVERY == FORGET_EVERY - 1 {
            limiter.retain_recent();
        }
        let cost = NonZeroU32::new(u32::try_from(cost.max(1)).unwrap_or(u32::MAX)).unwrap_or(NonZeroU32::MIN);
        match limiter.check_key_n(&who, cost) {
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
    let mut error = crate::error::coded_error(message, code);
    if let (Some(wait), Some(extensions)) = (retry_after, error.extensions.as_mut()) {
        extensions.set("retryAfterMs", u64::try_from(wait.as_millis()).unwrap_or(u64::MAX).max(1));
    }
    error
}

/// Counts the aliased fields of a whole document: every operation and fragment once (so a
/// fragment spread many times counts once: its aliases are repeated, not new).
pub fn count_aliases(document: &ExecutableDocument) -> usize {
    fn walk(set: &SelectionSet, depth: usize) -> usize {
        if depth > MAX_WALK {
            return usize::MAX;
        }
        set.items
            .iter()
            .map(|item| match &item.node {
                Selection::Field(field) => usize::from(field.node.alias.is_some()).saturating_add(walk(&field.node.selection_set.node, depth + 1)),
                Selection::InlineFragment(fragment) => walk(&fragment.node.selection_set.node, depth + 1),
                // Counted where the fragment is defined.
                Selection::FragmentSpread(_) => 0,
            })
            .fold(0, usize::saturating_add)
    }
    document
        .operations
        .iter()
        .map(|(_, op)| walk(&op.node.selection_set.node, 0))
        .fold(0, usize::saturating_add)
        .saturating_add(document.fragments.values().map(|fragment| walk(&fragment.node.selection_set.node, 0)).fold(0, usize::saturating_add))
}

/// What an operation can build: every field counts 1, and a list field multiplies what it
/// selects by how many items it can return (its `first` or `last`, at most what the field
/// accepts; a page by default for a connection; its bound for a plain list). The costliest
/// operation of the document counts. Introspection counts 1 a field (it is bounded by the
/// schema's size). `u64::MAX` for a document whose shape the gate refuses.
pub fn output_cost(registry: &Registry, document: &ExecutableDocument, variables: &Variables) -> u64 {
    Fragments::order(document).map_or(u64::MAX, |fragments| fragments.cost(registry, variables, None).output)
}

/// Most planning questions one document may ask (aliases and spreads counted).
pub use egs_domain::lifecycle::questions::MAX_PLANNING_QUESTIONS;

/// A document of `depth` fragments, each spreading the next `fanout` times, the last selecting
/// `leaf`: the shape that made a walk without memory visit `fanout^depth` selections. For tests,
/// the fuzz target's seeds and the gate's bench.
pub fn adversarial_document(depth: usize, fanout: usize, leaf: &str) -> String {
    let mut query = "query { ...F0 }".to_owned();
    for i in 0..depth {
        let body = if i + 1 < depth { format!("...F{} ", i + 1).repeat(fanout) } else { leaf.to_owned() };
        query.push_str(&format!("\nfragment F{i} on Query {{ {body}}}"));
    }
    query
}

/// The checks every document passes before anything runs: what it could build, its aliases,
/// and its cost against its user's budget. They run here, in front of the schema, rather than
/// as async-graphql extensions: a schema with any extension sends every field of every
/// response through async-graphql's slow path (a registry lookup and a chain of boxed futures
/// per field), which was a fifth of the time of a 100-GPU page.
pub struct Gate {
    limits: Arc<Limits>,
    /// The schema's types (what [`output_cost`] reads); built once.
    registry: Registry,
    /// Parsed documents by their text: clients send the same few over and over (an agent's
    /// report, the portal's pages), and a copy costs far less than a parse.
    documents: std::sync::Mutex<lru::LruCache<String, ExecutableDocument>>,
}

/// Documents kept parsed, most recently used first.
const CACHED_DOCUMENTS: usize = 512;
/// Longer documents are parsed every time: a few large ones must not take the memory.
const MAX_CACHED_DOCUMENT_BYTES: usize = 16 * 1024;

impl Gate {
    pub fn new(budget: Option<CostBudget>) -> Self {
        use async_graphql::{OutputType as _, SubscriptionType as _};
        let mut registry = Registry {
            query_type: crate::Query::type_name().into_owned(),
            mutation_type: Some(crate::Mutation::type_name().into_owned()),
            subscription_type: Some(crate::Subscription::type_name().into_owned()),
            ..Registry::default()
        };
        crate::Query::create_type_info(&mut registry);
        crate::Mutation::create_type_info(&mut registry);
        crate::Subscription::create_type_info(&mut registry);
        let documents = lru::LruCache::new(std::num::NonZeroUsize::new(CACHED_DOCUMENTS).unwrap_or(std::num::NonZeroUsize::MIN));
        Self { limits: Limits::new(budget), registry, documents: std::sync::Mutex::new(documents) }
    }

    /// Gives `request` its parsed document from the cache, or parses it and keeps the parse.
    /// A document that does not parse is not kept (the parse reports it).
    fn parse_cached(&self, request: &mut async_graphql::Request) {
        if request.query.len() > MAX_CACHED_DOCUMENT_BYTES {
            return;
        }
        let mut documents = self.documents.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(document) = documents.get(request.query.as_str()) {
            request.set_parsed_query(document.clone());
            return;
        }
        drop(documents);
        if let Ok(document) = request.parsed_query() {
            let document = document.clone();
            self.documents.lock().unwrap_or_else(|p| p.into_inner()).put(request.query.clone(), document);
        }
    }

    /// Parses `request` (once: async-graphql runs the parsed document, and a document parsed
    /// before is not parsed again) and checks it for `who`; returns the operation it runs, or
    /// the request error to answer with. A document that then fails validation has still
    /// spent its cost.
    pub fn admit(&self, request: &mut async_graphql::Request, who: Principal) -> ServerResult<Option<(OperationType, Option<String>)>> {
        // Set aside while the parsed document borrows the request.
        self.parse_cached(request);
        let variables = std::mem::take(&mut request.variables);
        let requested = request.operation_name.clone();
        let checked = request.parsed_query().and_then(|document| self.check(document, requested.as_deref(), &variables, who));
        request.variables = variables;
        checked
    }

    fn check(
        &self,
        document: &ExecutableDocument,
        requested: Option<&str>,
        variables: &Variables,
        who: Principal,
    ) -> ServerResult<Option<(OperationType, Option<String>)>> {
        let operation = crate::operation::select_operation(document, requested);
        let fragments = Fragments::order(document).map_err(|misshapen| match misshapen {
            Misshapen::Cycle(name) => {
                refused(ErrorCode::InvalidInput, format!("fragment `{name}` spreads itself (directly or through other fragments)"), None)
            }
            Misshapen::ChainTooLong(name) => refused(
                ErrorCode::TooComplex,
                format!("fragment `{name}` starts a chain of fragments spreading fragments longer than {MAX_FRAGMENT_CHAIN}"),
                None,
            ),
            Misshapen::TooManySpreads(n) => {
                refused(ErrorCode::TooComplex, format!("the document spreads fragments {n} or more times; at most {MAX_SPREADS} are allowed"), None)
            }
        })?;
        let expanded = fragments.expanded_selections();
        if expanded > MAX_EXPANDED_SELECTIONS {
            return Err(refused(
                ErrorCode::TooComplex,
                format!(
                    "the document holds more than {MAX_EXPANDED_SELECTIONS} selections once its fragments are expanded where they are spread: spread fewer fragments"
                ),
                None,
            ));
        }
        let cost = fragments.cost(&self.registry, variables, requested);
        if cost.output > MAX_OUTPUT_COST {
            return Err(refused(
                ErrorCode::TooComplex,
                format!(
                    "this operation could build {} objects and fields (lists multiplied out); at most {MAX_OUTPUT_COST} are allowed: ask for fewer items with `first`, or fewer nested lists",
                    if cost.output == u64::MAX { "unboundedly many".to_owned() } else { cost.output.to_string() }
                ),
                None,
            ));
        }
        if cost.planning > MAX_PLANNING_QUESTIONS {
            return Err(refused(
                ErrorCode::TooComplex,
                format!(
                    "the document asks {} planning questions (`waitTimeEstimates`, `gprExtensionRoom`); at most {MAX_PLANNING_QUESTIONS} are allowed",
                    cost.planning
                ),
                None,
            ));
        }
        let aliases = count_aliases(document);
        if aliases > MAX_ALIASES {
            return Err(refused(
                ErrorCode::InvalidInput,
                format!("the document uses {aliases} aliases; at most {MAX_ALIASES} are allowed (split it into several requests)"),
                None,
            ));
        }
        let cost = cost.complexity;
        // Over the schema's limit, validation refuses it: nothing to spend.
        if cost <= crate::MAX_QUERY_COMPLEXITY {
            match self.limits.spend(who, cost) {
                Ok(()) => {}
                Err(Refusal::Later(wait)) => {
                    return Err(refused(
                        ErrorCode::RateLimited,
                        format!("your query budget is spent (this operation costs {}); retry in {} ms", cost.max(1), wait.as_millis().max(1)),
                        Some(wait),
                    ));
                }
                Err(Refusal::Never { cost, burst }) => {
                    return Err(refused(
                        ErrorCode::RateLimited,
                        format!("this operation costs {cost}, more than a user may spend at once ({burst}); ask for fewer items"),
                        None,
                    ));
                }
            }
        }
        Ok(operation)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budget(per_second: u32, burst: u32) -> Option<CostBudget> {
        Some(CostBudget { per_second: NonZeroU32::new(per_second).expect("nonzero"), burst: NonZeroU32::new(burst).expect("nonzero") })
    }

    #[test]
    fn a_bucket_is_per_user_and_refuses_with_the_wait() {
        let limits = Limits::new(budget(10, 100));
        let (alice, bob) = (Principal::User(1), Principal::User(2));
        assert!(limits.spend(alice, 60).is_ok());
        assert!(limits.spend(alice, 40).is_ok());
        match limits.spend(alice, 20) {
            Err(Refusal::Later(wait)) => assert!(wait > Duration::from_millis(1000) && wait <= Duration::from_millis(2000), "{wait:?}"),
            _ => panic!("an empty bucket refuses"),
        }
        assert!(limits.spend(bob, 100).is_ok(), "another user has their own bucket");
        assert!(limits.spend(Principal::Token(1), 100).is_ok(), "an agent token is not user 1");
        assert!(matches!(limits.spend(Principal::User(3), 101), Err(Refusal::Never { .. })), "more than the burst never fits");
        assert!(Limits::new(None).spend(alice, 1_000_000).is_ok());
    }

    /// The gate without a budget (its registry is built once).
    fn gate() -> &'static Gate {
        static GATE: std::sync::OnceLock<Gate> = std::sync::OnceLock::new();
        GATE.get_or_init(|| Gate::new(None))
    }

    /// The complexity the gate counts for `query`.
    fn complexity(query: &str) -> usize {
        let document = async_graphql::parser::parse_query(query).expect("parses");
        Fragments::order(&document).expect("well shaped").cost(&gate().registry, &Variables::default(), None).complexity
    }

    fn admit(request: &mut async_graphql::Request) -> Option<ServerError> {
        gate().admit(request, Principal::Anonymous).err()
    }

    async fn too_complex(query: &str) -> Option<String> {
        let error = admit(&mut async_graphql::Request::new(query))?;
        (error.extensions.as_ref().and_then(|x| x.get("code")) == Some(&async_graphql::Value::from("TOO_COMPLEX"))).then_some(error.message)
    }

    /// The budget's cost is the number async-graphql's validation holds to the complexity
    /// limit: a schema limited to it runs the document, one limited to one less refuses it.
    #[tokio::test]
    async fn the_budgets_cost_is_the_complexity_validation_counts() {
        let documents = [
            "{ viewer { id name } }",
            "query A { viewer { id } } query B { nodes(first: 5) { nodes { id gpus { uuid } } } }",
            "{ gprs(first: 3) { edges { node { ...G } } totalCount } } fragment G on Gpr { id name slice { id ...S } } fragment S on Slice { name }",
            "{ viewer { ... on Viewer { id __typename } ... { name } } }",
            "{ a: gprExtensionRoom(id: \"x\") { maxNow } ...R } fragment R on Query { b: gprExtensionRoom(id: \"y\") { maxNow limitedBy } }",
        ];
        for query in documents {
            let counted = complexity(query);
            let limited = |limit: usize| async move {
                let schema = async_graphql::Schema::build(crate::Query::default(), crate::Mutation::default(), crate::Subscription::default())
                    .limit_complexity(limit)
                    .finish();
                let name = query.strip_prefix("query A").map(|_| "B");
                let mut request = async_graphql::Request::new(query);
                if let Some(name) = name {
                    request = request.operation_name(name);
                }
                schema.execute(request).await.errors.iter().any(|e| e.message.contains("too complex"))
            };
            assert!(!limited(counted).await, "{query}: {counted} is enough");
            assert!(limited(counted - 1).await, "{query}: {counted} is not more than it needs");
        }
        // Every operation of the document counts, as validation counts them.
        assert_eq!(complexity(documents[1]), 2 + 5);
    }

    #[test]
    fn a_document_over_budget_is_refused_before_it_runs_and_its_parse_is_kept() {
        let gate = Gate::new(budget(1, 3));
        let mut request = async_graphql::Request::new("query Me { viewer { id } }");
        let operation = gate.admit(&mut request, Principal::User(1)).expect("costs 2 of 3");
        assert_eq!(operation, Some((OperationType::Query, Some("Me".into()))));
        assert!(request.parsed_query().is_ok());
        let refused = gate.admit(&mut async_graphql::Request::new("{ viewer { id } }"), Principal::User(1)).expect_err("1 left, costs 2");
        assert!(refused.message.contains("retry in"), "{}", refused.message);
        let unparsable = gate.admit(&mut async_graphql::Request::new("{ viewer { "), Principal::User(2)).expect_err("does not parse");
        assert!(unparsable.extensions.is_none(), "a parse error, coded later as INVALID_INPUT: {unparsable:?}");
    }

    #[test]
    fn documents_are_parsed_once_and_only_those_that_parse_and_are_small_are_kept() {
        let gate = Gate::new(None);
        let kept = |gate: &Gate| gate.documents.lock().map(|d| d.len()).unwrap_or_default();
        let query = "query Me { viewer { id } }";
        for _ in 0..3 {
            let mut request = async_graphql::Request::new(query);
            let operation = gate.admit(&mut request, Principal::User(1)).expect("admitted");
            assert_eq!(operation, Some((OperationType::Query, Some("Me".into()))));
        }
        assert_eq!(kept(&gate), 1, "one document, parsed once");
        assert!(gate.admit(&mut async_graphql::Request::new("{ viewer { "), Principal::User(1)).is_err());
        assert_eq!(kept(&gate), 1, "a parse error is not kept");
        let long = format!("{{ viewer {{ id }} }} # {}", "x".repeat(MAX_CACHED_DOCUMENT_BYTES));
        assert!(gate.admit(&mut async_graphql::Request::new(long), Principal::User(1)).is_ok());
        assert_eq!(kept(&gate), 1, "a long document is parsed each time");
    }

    #[tokio::test]
    async fn nested_lists_are_refused_for_what_they_could_build() {
        // The review's query: five levels of nodes → gpus → node → gpus.
        let attack = "{ nodes(first: 100) { nodes { gpus { node { gpus { node { gpus { node { gpus { node { gpus { uuid } } } } } } } } } } } }";
        let message = too_complex(attack).await.expect("refused");
        assert!(message.contains("first"), "says how to ask for less: {message}");
        // Three levels is more than a request may build; a page of nodes with their GPUs, or of GPRs
        // with their nodes and GPUs, is not.
        assert!(too_complex("{ nodes(first: 100) { nodes { gpus { node { gpus { node { gpus { uuid } } } } } } } }").await.is_some());
        assert!(too_complex("{ nodes(first: 100) { nodes { name gpus { uuid index model memoryMib } } } }").await.is_none());
        assert!(too_complex("{ gprs(first: 100) { nodes { id nodes { name cluster { name } gpus { id uuid } } } } }").await.is_none());
        // `first` counts, through variables too, and is capped at a page.
        let fewer = "query($n: Int) { nodes(first: $n) { nodes { gpus { node { gpus { node { gpus { uuid } } } } } } } }";
        let request = |n: i64| async_graphql::Request::new(fewer).variables(async_graphql::Variables::from_json(serde_json::json!({ "n": n })));
        let refused = |r: &mut async_graphql::Request| admit(r).is_some_and(|e| e.message.contains("objects and fields"));
        assert!(!refused(&mut request(2)), "two nodes' three levels fit");
        assert!(refused(&mut request(1_000_000)), "a huge first is a page");
        // Fragments and inline fragments count where they are spread.
        let spread = "query { nodes(first: 100) { nodes { ...G } } } fragment G on GpuNode { gpus { node { gpus { node { gpus { uuid } } } } } }";
        assert!(too_complex(spread).await.is_some());
    }

    /// Every document the portal sends (with all its fragments) fits.
    #[test]
    fn a_document_of_many_operations_is_charged_for_the_one_that_runs() {
        let document = "query Cheap { viewer { id name } } query Costly { a: waitTimeEstimates(input: { nodeCount: 1, duration: \"1h\", sliceId: \"x\" }) { estimatedStart } }";
        let parsed = async_graphql::parser::parse_query(document).expect("parses");
        let fragments = Fragments::order(&parsed).expect("well shaped");
        let cost = |name| fragments.cost(&gate().registry, &Variables::default(), Some(name));
        assert_eq!((cost("Cheap").complexity, cost("Cheap").planning), (3, 0));
        assert_eq!((cost("Costly").complexity, cost("Costly").planning), (PLANNING_COMPLEXITY + 1, 1));
        // Without a name (validation refuses it), every operation counts.
        assert_eq!(fragments.cost(&gate().registry, &Variables::default(), None).complexity, PLANNING_COMPLEXITY + 4);
    }

    #[test]
    fn more_planning_questions_than_one_requests_worth_are_refused_however_they_are_written() {
        let question =
            |alias: usize| format!("q{alias}: waitTimeEstimates(input: {{ nodeCount: 1, duration: \"1h\", sliceId: \"x\" }}) {{ estimatedStart }}");
        let aliased = |n: usize| format!("{{ {} }}", (0..n).map(question).collect::<Vec<_>>().join(" "));
        assert!(admit(&mut async_graphql::Request::new(aliased(MAX_PLANNING_QUESTIONS))).is_none(), "{MAX_PLANNING_QUESTIONS} questions run");
        let over = admit(&mut async_graphql::Request::new(aliased(MAX_PLANNING_QUESTIONS + 1))).expect("one more is refused");
        assert_eq!(code(&over).as_deref(), Some("TOO_COMPLEX"));
        assert!(over.message.contains(&format!("asks {} planning questions", MAX_PLANNING_QUESTIONS + 1)), "{}", over.message);
        // Spread twice, a fragment of three questions is six.
        let spread = format!("{{ ...P ...P }} fragment P on Query {{ {} }}", (0..3).map(question).collect::<Vec<_>>().join(" "));
        let twice = admit(&mut async_graphql::Request::new(spread)).expect("refused");
        assert!(twice.message.contains("asks 6 planning questions"), "{}", twice.message);
        // gprExtensionRoom counts the same.
        let rooms: String = (0..=MAX_PLANNING_QUESTIONS).map(|i| format!("r{i}: gprExtensionRoom(id: \"x\") {{ maxNow }} ")).collect();
        let room = admit(&mut async_graphql::Request::new(format!("{{ {rooms} }}"))).expect("refused");
        assert_eq!(code(&room).as_deref(), Some("TOO_COMPLEX"), "{}", room.message);
    }

    #[tokio::test]
    async fn every_portal_document_fits_the_output_cost() {
        fn documents(dir: &std::path::Path, found: &mut Vec<String>) {
            for entry in std::fs::read_dir(dir).expect("portal sources").flatten() {
                let path = entry.path();
                if path.is_dir() && path.file_name().is_some_and(|n| n != "gql") {
                    documents(&path, found);
                } else if path.extension().is_some_and(|e| e == "ts" || e == "tsx") {
                    let text = std::fs::read_to_string(&path).expect("source");
                    for part in text.split("graphql(`").skip(1) {
                        found.extend(part.split('`').next().map(str::to_owned));
                    }
                }
            }
        }
        let mut found = Vec::new();
        documents(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../web/portal/src"), &mut found);
        assert!(found.len() > 30, "found the portal's documents: {}", found.len());
        let (fragments, operations): (Vec<&String>, Vec<&String>) = found.iter().partition(|d| d.trim_start().starts_with("fragment"));
        let fragments = fragments.iter().map(|f| f.as_str()).collect::<Vec<_>>().join("\n");
        for operation in operations {
            let used: String = fragments.clone();
            let document = format!("{operation}\n{used}");
            assert_eq!(too_complex(&document).await, None, "the portal's document is refused:\n{operation}");
        }
    }

    #[test]
    fn aliases_are_counted_in_operations_and_fragments_once() {
        let document = async_graphql::parser::parse_query(
            "query { a: me { id } b: me { n: id } ...F ... on Query { c: me { id } } } fragment F on Query { d: me { id } e: me { id } }",
        )
        .expect("parses");
        assert_eq!(count_aliases(&document), 6);
    }

    fn code(error: &ServerError) -> Option<String> {
        match error.extensions.as_ref().and_then(|x| x.get("code")) {
            Some(async_graphql::Value::String(code)) => Some(code.clone()),
            _ => None,
        }
    }

    /// Fragments that spread the next one ten times: the gate once walked every path (10^depth).
    #[test]
    fn fragments_spread_exponentially_are_refused_by_shape_before_validation() {
        for depth in [6, 8, 12, 20] {
            for leaf in ["viewer { id }", "__typename"] {
                let query = adversarial_document(depth, 10, leaf);
                let error = admit(&mut async_graphql::Request::new(query.as_str())).unwrap_or_else(|| panic!("depth {depth}, {leaf}: admitted"));
                assert_eq!(code(&error).as_deref(), Some("TOO_COMPLEX"), "depth {depth}: {}", error.message);
            }
        }
        // Within the chain's bound the expanded size refuses it; past it, the chain does.
        let chained = admit(&mut async_graphql::Request::new(adversarial_document(12, 1, "__typename"))).expect("refused");
        assert!(chained.message.contains("chain of fragments"), "{}", chained.message);
        let expanded = admit(&mut async_graphql::Request::new(adversarial_document(6, 10, "__typename"))).expect("refused");
        assert!(expanded.message.contains("expanded"), "{}", expanded.message);
        // A fragment spread a few times over a short chain runs as before.
        assert!(admit(&mut async_graphql::Request::new(adversarial_document(3, 3, "viewer { id }"))).is_none());
    }

    #[test]
    fn fragment_cycles_long_chains_and_spread_floods_are_refused_with_what_to_change() {
        let cycle = admit(&mut async_graphql::Request::new("{ ...A } fragment A on Query { ...B } fragment B on Query { viewer { id } ...A }"))
            .expect("a cycle is refused");
        assert_eq!(code(&cycle).as_deref(), Some("INVALID_INPUT"));
        assert!(cycle.message.contains("spreads itself"), "{}", cycle.message);
        let own = admit(&mut async_graphql::Request::new("{ ...A } fragment A on Query { ...A }")).expect("refused");
        assert!(own.message.contains("`A` spreads itself"), "{}", own.message);

        let chain = |n: usize| {
            let mut query = "{ ...F0 }".to_owned();
            for i in 0..n {
                let next = if i + 1 < n { format!("...F{}", i + 1) } else { "viewer { id }".to_owned() };
                query.push_str(&format!(" fragment F{i} on Query {{ {next} }}"));
            }
            query
        };
        assert!(admit(&mut async_graphql::Request::new(chain(MAX_FRAGMENT_CHAIN))).is_none(), "a chain at the bound runs");
        let long = admit(&mut async_graphql::Request::new(chain(MAX_FRAGMENT_CHAIN + 1))).expect("one more is refused");
        assert!(long.message.contains(&format!("longer than {MAX_FRAGMENT_CHAIN}")), "{}", long.message);

        let spreads = |n: usize| format!("{{ viewer {{ {} }} }} fragment V on Viewer {{ id }}", "...V ".repeat(n));
        assert!(admit(&mut async_graphql::Request::new(spreads(MAX_SPREADS))).is_none(), "{MAX_SPREADS} spreads run");
        let flood = admit(&mut async_graphql::Request::new(spreads(MAX_SPREADS + 1))).expect("one more is refused");
        assert_eq!(code(&flood).as_deref(), Some("TOO_COMPLEX"));
        assert!(flood.message.contains(&format!("at most {MAX_SPREADS}")), "{}", flood.message);
    }

    /// Unused fragments count too: validation compares fields in every fragment definition.
    #[test]
    fn a_big_fragment_spread_by_many_unused_fragments_is_refused() {
        let fields: String = (0..2_000).map(|i| format!("a{i}: __typename ")).collect();
        let users: String = (0..40).map(|i| format!(" fragment U{i} on Query {{ ...Big }}")).collect();
        let query = format!("{{ __typename }} fragment Big on Query {{ {fields} }}{users}");
        let error = admit(&mut async_graphql::Request::new(query)).expect("refused");
        assert!(error.message.contains("expanded") || error.message.contains("aliases"), "{}", error.message);
        let fields: String = (0..2_000).map(|_| "__typename ".to_owned()).collect();
        let users: String = (0..40).map(|i| format!(" fragment U{i} on Query {{ ...Big }}")).collect();
        let query = format!("{{ __typename }} fragment Big on Query {{ {fields} }}{users}");
        let error = admit(&mut async_graphql::Request::new(query)).expect("refused");
        assert!(error.message.contains("expanded"), "{}", error.message);
    }

    /// Output cost counts a list at what the field may return: a GPU's day of history is 1,440
    /// points, and the queue views take `first` up to 500.
    #[test]
    fn output_cost_counts_history_points_and_queue_views_at_their_bounds() {
        let cost = |query: &str| {
            let document = async_graphql::parser::parse_query(query).expect("parses");
            output_cost(&gate().registry, &document, &Variables::default())
        };
        assert_eq!(cost("{ node(id: \"x\") { ... on Gpu { metrics { utilization } } } }"), 1 + (1 + 1_440));
        assert_eq!(cost("{ queue(first: 500) { id } }"), 1 + 500);
        assert_eq!(cost("{ queue(first: 5000) { id } }"), 1 + 500, "capped at what the field accepts");
        assert_eq!(cost("{ queue { id } }"), 1 + 100, "its default");
        assert_eq!(cost("{ nodes(first: 500) { nodes { id } } }"), 1 + 100 * 2, "other lists take a page at most");
    }
}
