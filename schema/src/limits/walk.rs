//! The gate's walks of a document, each linear in the document's size whatever its shape.
//!
//! A fragment may be spread many times and fragments may spread each other, so walking a
//! fragment again at every spread is exponential: 8 fragments each spreading the next ten times
//! (731 bytes) cost 10^8 visits, 13.7 s of CPU before the document was refused. Here the
//! fragments are first put in dependency order (each after the fragments it spreads), refusing
//! cycles, long chains of spreads and documents with too many spreads; then each measure walks
//! every selection set once, taking a spread's value from what it found for the fragment.
//!
//! async-graphql's own validation walks fragments again at every spread (its complexity and
//! depth visitors) and compares fields along every path into a selection set, so the gate also
//! refuses a document whose selections, fragments expanded where they are spread, exceed
//! [`MAX_EXPANDED_SELECTIONS`]: what validation visits is then bounded too.

use async_graphql::parser::types::{ExecutableDocument, FragmentDefinition, OperationType, Selection, SelectionSet};
use async_graphql::registry::Registry;
use async_graphql::{Value, Variables};
use std::collections::HashMap;

/// Most fragment spreads one document may hold. The portal's largest document has 7.
pub const MAX_SPREADS: usize = 256;
/// Longest chain of fragments spreading fragments (`A` spreads `B`, which spreads `C`: 3). The
/// portal's longest is 2; a chain this long is a shape nobody writes by hand.
pub const MAX_FRAGMENT_CHAIN: usize = 8;
/// Most selections (fields, inline fragments, spreads) a document may hold once every spread is
/// replaced by its fragment, counted from every operation and every fragment definition. A
/// document within the complexity limit (20,000 fields) fits, with room for `__typename` and
/// fragments; validation then visits at most this many selections a pass.
pub const MAX_EXPANDED_SELECTIONS: u64 = 50_000;
/// Deeper than any valid document (the depth limit is 16, the parser's own 64): where every
/// walk of a selection set stops.
pub const MAX_WALK: usize = 64;

/// Why a document's shape is refused before anything else is looked at.
#[derive(Debug, PartialEq, Eq)]
pub enum Misshapen {
    /// A fragment spreads itself, directly or through others.
    Cycle(String),
    /// A chain of spreads longer than [`MAX_FRAGMENT_CHAIN`] starts at this fragment.
    ChainTooLong(String),
    TooManySpreads(usize),
}

/// A document's fragments in dependency order.
pub struct Fragments<'d> {
    document: &'d ExecutableDocument,
    /// Each fragment's name after every fragment it spreads.
    order: Vec<&'d str>,
}

/// The fragment names spread anywhere in `set`, in order (nested fields and inline fragments
/// included); stops adding past `limit`.
fn collect_spreads<'d>(set: &'d SelectionSet, depth: usize, limit: usize, found: &mut Vec<&'d str>) {
    if depth > MAX_WALK {
        return;
    }
    for item in &set.items {
        if found.len() > limit {
            return;
        }
        match &item.node {
            Selection::Field(field) => collect_spreads(&field.node.selection_set.node, depth + 1, limit, found),
            Selection::InlineFragment(fragment) => collect_spreads(&fragment.node.selection_set.node, depth + 1, limit, found),
            Selection::FragmentSpread(spread) => found.push(spread.node.fragment_name.node.as_str()),
        }
    }
}

/// How far a fragment's dependency walk has got.
#[derive(Clone, Copy)]
enum Mark {
    /// On the path being walked: reaching it again is a cycle.
    Open,
    /// Walked; the longest chain of spreads it starts.
    Done(usize),
}

impl<'d> Fragments<'d> {
    /// Orders the document's fragments, or says why its shape is refused.
    pub fn order(document: &'d ExecutableDocument) -> Result<Self, Misshapen> {
        let mut total = 0usize;
        let mut spreads: HashMap<&'d str, Vec<&'d str>> = HashMap::with_capacity(document.fragments.len());
        for (name, fragment) in &document.fragments {
            let mut found = Vec::new();
            collect_spreads(&fragment.node.selection_set.node, 0, MAX_SPREADS - total, &mut found);
            total += found.len();
            if total > MAX_SPREADS {
                return Err(Misshapen::TooManySpreads(total));
            }
            spreads.insert(name.as_str(), found);
        }
        for (_, operation) in document.operations.iter() {
            let mut found = Vec::new();
            collect_spreads(&operation.node.selection_set.node, 0, MAX_SPREADS - total, &mut found);
            total += found.len();
            if total > MAX_SPREADS {
                return Err(Misshapen::TooManySpreads(total));
            }
        }
        let mut marks: HashMap<&'d str, Mark> = HashMap::with_capacity(spreads.len());
        let mut order = Vec::with_capacity(spreads.len());
        // Sorted, so that which fragment a refusal names does not depend on hashing.
        let mut names: Vec<&'d str> = spreads.keys().copied().collect();
        names.sort_unstable();
        for name in names {
            visit(name, 1, &spreads, &mut marks, &mut order)?;
        }
        Ok(Self { document, order })
    }

    /// Every fragment's value by `measure`, in dependency order: `measure` is given the values
    /// of the fragments before it, so a spread's value is looked up, never walked again.
    pub fn measure<T: Copy>(&self, mut measure: impl FnMut(&'d FragmentDefinition, &HashMap<&'d str, T>) -> T) -> HashMap<&'d str, T> {
        let mut values = HashMap::with_capacity(self.order.len());
        for name in &self.order {
            if let Some(fragment) = self.document.fragments.get(*name) {
                let value = measure(&fragment.node, &values);
                values.insert(*name, value);
            }
        }
        values
    }

    /// The selections of the document with every spread replaced by its fragment, counted from
    /// every operation and every fragment definition (validation walks both); stops counting
    /// once past [`MAX_EXPANDED_SELECTIONS`].
    pub fn expanded_selections(&self) -> u64 {
        fn walk(set: &SelectionSet, fragments: &HashMap<&str, u64>, depth: usize) -> u64 {
            if depth > MAX_WALK {
                return u64::MAX;
            }
            let mut sum: u64 = 0;
            for item in &set.items {
                let inner = match &item.node {
                    Selection::Field(field) => walk(&field.node.selection_set.node, fragments, depth + 1),
                    Selection::InlineFragment(fragment) => walk(&fragment.node.selection_set.node, fragments, depth + 1),
                    Selection::FragmentSpread(spread) => fragments.get(spread.node.fragment_name.node.as_str()).copied().unwrap_or(0),
                };
                sum = sum.saturating_add(inner).saturating_add(1);
                if sum > MAX_EXPANDED_SELECTIONS {
                    return sum;
                }
            }
            sum
        }
        let fragments = self.measure(|fragment, done| walk(&fragment.selection_set.node, done, 0));
        let mut total: u64 = fragments.values().fold(0, |sum, n| sum.saturating_add(*n));
        for (_, operation) in self.document.operations.iter() {
            if total > MAX_EXPANDED_SELECTIONS {
                break;
            }
            total = total.saturating_add(walk(&operation.node.selection_set.node, &fragments, 0));
        }
        total
    }

    /// What the document's operations cost (see [`Cost`]): the complexity and the planning
    /// questions of the operation that runs (`requested`, or every operation when it does not
    /// say which: validation refuses that document), what the costliest operation can build.
    /// A client that sends its whole file of operations (generated clients do) pays for the
    /// one it runs.
    pub fn cost(&self, registry: &Registry, variables: &Variables, requested: Option<&str>) -> Cost {
        let walker = CostWalk { registry, variables };
        let fragments =
            self.measure(|fragment, done| walker.set(&fragment.selection_set.node, fragment.type_condition.node.on.node.as_str(), done, 0));
        let single = matches!(self.document.operations, async_graphql::parser::types::DocumentOperations::Single(_));
        self.document.operations.iter().fold(Cost::default(), |total, (name, operation)| {
            let runs = single || requested.is_none_or(|wanted| name.is_some_and(|n| n.as_str() == wanted));
            let root = match operation.node.ty {
                OperationType::Query => registry.query_type.as_str(),
                OperationType::Mutation => registry.mutation_type.as_deref().unwrap_or_default(),
                OperationType::Subscription => registry.subscription_type.as_deref().unwrap_or_default(),
            };
            let cost = walker.set(&operation.node.selection_set.node, root, &fragments, 0);
            if !runs {
                return Cost { output: total.output.max(cost.output), ..total };
            }
            Cost {
                complexity: total.complexity.saturating_add(cost.complexity),
                output: total.output.max(cost.output),
                planning: total.planning.saturating_add(cost.planning),
            }
        })
    }
}

/// Walks to `name`'s fragments first, then places it; refuses cycles and long chains.
fn visit<'d>(
    name: &'d str,
    chain: usize,
    spreads: &HashMap<&'d str, Vec<&'d str>>,
    marks: &mut HashMap<&'d str, Mark>,
    order: &mut Vec<&'d str>,
) -> Result<usize, Misshapen> {
    match marks.get(name) {
        Some(Mark::Done(longest)) => return Ok(*longest),
        Some(Mark::Open) => return Err(Misshapen::Cycle(name.to_owned())),
        None => {}
    }
    // A fragment the document does not define: validation names it.
    let Some(children) = spreads.get(name) else { return Ok(0) };
    if chain > MAX_FRAGMENT_CHAIN {
        return Err(Misshapen::ChainTooLong(name.to_owned()));
    }
    marks.insert(name, Mark::Open);
    let mut longest = 0;
    for child in children {
        longest = longest.max(visit(child, chain + 1, spreads, marks, order)?);
    }
    let longest = longest + 1;
    if longest > MAX_FRAGMENT_CHAIN {
        return Err(Misshapen::ChainTooLong(name.to_owned()));
    }
    marks.insert(name, Mark::Done(longest));
    order.push(name);
    Ok(longest)
}

/// What running a document may cost, each figure over its operations.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cost {
    /// Query cost as async-graphql's validation counts it against the complexity limit, over
    /// every operation: one a field (`__typename` free), [`PLANNING_COMPLEXITY`] a
    /// planning question, fragments counted where they are spread.
    pub complexity: usize,
    /// What the costliest operation can build (see [`super::output_cost`]).
    pub output: u64,
    /// Planning questions asked, over every operation.
    pub planning: usize,
}

impl Cost {
    fn add(self, other: Cost) -> Cost {
        Cost {
            complexity: self.complexity.saturating_add(other.complexity),
            output: self.output.saturating_add(other.output),
            planning: self.planning.saturating_add(other.planning),
        }
    }

    const UNBOUNDED: Cost = Cost { complexity: usize::MAX, output: u64::MAX, planning: usize::MAX };
}

/// Items a list field without `first`/`last` is counted at, unless [`LIST_BOUNDS`] knows better.
const LIST_BOUND: u64 = 100;
/// Fields whose lists have another bound than [`LIST_BOUND`] (by field name): a node's GPUs and a
/// GPR's labels fewer, a GPU's history (`Gpu.metrics`: a point a minute for a day) more.
const LIST_BOUNDS: [(&str, u64); 3] = [
    ("gpus", egs_domain::inventory::service::MAX_GPUS_PER_NODE as u64),
    ("labels", egs_domain::gpr::spec::MAX_LABELS as u64),
    ("metrics", egs_domain::metrics::store::MINUTE_SLOTS as u64),
];
/// Fields whose `first` may exceed a page (by field name): the queue views.
const FIRST_BOUNDS: [(&str, u64); 2] = [("queue", crate::gpr::MAX_QUEUE_VIEW as u64), ("queueChanged", crate::gpr::MAX_QUEUE_VIEW as u64)];

struct CostWalk<'r> {
    registry: &'r Registry,
    variables: &'r Variables,
}

impl CostWalk<'_> {
    fn set(&self, set: &SelectionSet, parent: &str, fragments: &HashMap<&str, Cost>, depth: usize) -> Cost {
        if depth > MAX_WALK {
            return Cost::UNBOUNDED;
        }
        let mut cost = Cost::default();
        for item in &set.items {
            let item_cost = match &item.node {
                Selection::Field(field) => self.field(&field.node, parent, fragments, depth),
                Selection::InlineFragment(fragment) => {
                    let on = fragment.node.type_condition.as_ref().map_or(parent, |c| c.node.on.node.as_str());
                    self.set(&fragment.node.selection_set.node, on, fragments, depth + 1)
                }
                Selection::FragmentSpread(spread) => fragments.get(spread.node.fragment_name.node.as_str()).copied().unwrap_or_default(),
            };
            cost = cost.add(item_cost);
            if cost.output == u64::MAX && cost.complexity == usize::MAX {
                break;
            }
        }
        cost
    }

    fn field(&self, field: &async_graphql::parser::types::Field, parent: &str, fragments: &HashMap<&str, Cost>, depth: usize) -> Cost {
        let name = field.name.node.as_str();
        let meta = self.registry.types.get(parent).and_then(|t| t.field_by_name(name));
        let Some(meta) = meta.filter(|_| !name.starts_with("__")) else {
            // Introspection counts 1 a field (bounded by the schema's size); validation counts
            // what it selects, and `__typename` as nothing.
            let complexity =
                if name == "__typename" { 0 } else { self.set(&field.selection_set.node, parent, fragments, depth + 1).complexity.saturating_add(1) };
            return Cost { complexity, output: 1, planning: 0 };
        };
        let ty = meta.ty.as_str();
        let named: String = ty.chars().filter(|c| !matches!(c, '[' | ']' | '!')).collect();
        let paged = ["first", "last"].iter().find_map(|arg| {
            let value = field.get_argument(arg)?;
            let value = value.node.clone().into_const_with(|v| self.variables.get(&v).cloned().ok_or(())).ok()?;
            match value {
                Value::Number(n) => n.as_u64().or(Some(0)),
                _ => None,
            }
        });
        let in_connection = parent.ends_with("Connection") && matches!(name, "edges" | "nodes");
        let items = match paged {
            Some(n) => n.min(FIRST_BOUNDS.iter().find(|(f, _)| *f == name).map_or(egs_domain::pagination::MAX_PAGE_SIZE, |(_, b)| *b)),
            None if in_connection => 1,
            None if named.ends_with("Connection") => egs_domain::pagination::DEFAULT_PAGE_SIZE,
            None if ty.starts_with('[') => LIST_BOUNDS.iter().find(|(f, _)| *f == name).map_or(LIST_BOUND, |(_, b)| *b),
            None => 1,
        };
        let inner = self.set(&field.selection_set.node, &named, fragments, depth + 1);
        let planning = is_planning_question(parent, name);
        let own = if planning { PLANNING_COMPLEXITY } else { 1 };
        Cost {
            complexity: inner.complexity.saturating_add(own),
            output: 1u64.saturating_add(items.saturating_mul(inner.output)),
            planning: inner.planning.saturating_add(usize::from(planning)),
        }
    }
}

/// What a planning question costs against the complexity limit and the budget: it copies and
/// plans the scheduler's core (or shares a copy planned for the same state), tens of
/// milliseconds with thousands of GPRs waiting, where a field is microseconds.
pub const PLANNING_COMPLEXITY: usize = 1_000;
/// The fields that plan: "Get wait time", an extension's room and what-if.
const PLANNING_QUESTIONS: [(&str, &str); 3] = [("Query", "waitTimeEstimates"), ("Query", "gprExtensionRoom"), ("Query", "whatIf")];

/// Whether `parent.field` is a planning question (see [`PLANNING_COMPLEXITY`]).
pub fn is_planning_question(parent: &str, field: &str) -> bool {
    PLANNING_QUESTIONS.iter().any(|(p, f)| *p == parent && *f == field)
}
