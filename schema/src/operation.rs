//! Which operation a request runs, read from the document the gate parses for async-graphql
//! (no second parse), for metrics and for refusing mutations sent with GET.

use async_graphql::parser::types::{DocumentOperations, ExecutableDocument, OperationType};
use std::sync::{Arc, Mutex};

/// The type and name of the operation a document runs for `requested` (the request's
/// `operationName`): the named one, or the only one.
pub fn select_operation(document: &ExecutableDocument, requested: Option<&str>) -> Option<(OperationType, Option<String>)> {
    match &document.operations {
        DocumentOperations::Single(op) => Some((op.node.ty, requested.map(str::to_owned))),
        DocumentOperations::Multiple(ops) => match requested {
            Some(name) => ops.iter().find(|(n, _)| n.as_str() == name).map(|(_, op)| (op.node.ty, Some(name.to_owned()))),
            None if ops.len() == 1 => ops.iter().next().map(|(n, op)| (op.node.ty, Some(n.to_string()))),
            None => None,
        },
    }
}

/// Per-request slot [`crate::execute`] fills in once the document has parsed.
#[derive(Default)]
pub struct OperationSlot {
    found: Mutex<Option<(OperationType, Option<String>)>>,
}

impl OperationSlot {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    pub(crate) fn set(&self, found: Option<(OperationType, Option<String>)>) {
        *self.found.lock().unwrap_or_else(|p| p.into_inner()) = found;
    }

    /// The operation's type and name, once the document has parsed.
    pub fn get(&self) -> Option<(OperationType, Option<String>)> {
        self.found.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}
