//! Which operation a request runs, read from the document async-graphql parses anyway (no
//! second parse), for metrics and for refusing mutations sent with GET.

use async_graphql::extensions::{Extension, ExtensionContext, ExtensionFactory, NextParseQuery};
use async_graphql::parser::types::{DocumentOperations, ExecutableDocument, OperationType};
use async_graphql::{ServerResult, Variables};
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

/// Per-request slot the [`RecordOperation`] extension fills in.
#[derive(Default)]
pub struct OperationSlot {
    requested: Option<String>,
    found: Mutex<Option<(OperationType, Option<String>)>>,
}

impl OperationSlot {
    pub fn new(requested: Option<String>) -> Arc<Self> {
        Arc::new(Self { requested, found: Mutex::new(None) })
    }

    /// The operation's type and name, once the document has parsed.
    pub fn get(&self) -> Option<(OperationType, Option<String>)> {
        self.found.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// Records the parsed operation into the request's [`OperationSlot`].
pub struct RecordOperation;

impl ExtensionFactory for RecordOperation {
    fn create(&self) -> Arc<dyn Extension> {
        Arc::new(RecordOperation)
    }
}

#[async_trait::async_trait]
impl Extension for RecordOperation {
    async fn parse_query(
        &self,
        ctx: &ExtensionContext<'_>,
        query: &str,
        variables: &Variables,
        next: NextParseQuery<'_>,
    ) -> ServerResult<ExecutableDocument> {
        let document = next.run(ctx, query, variables).await?;
        if let Some(slot) = ctx.data_opt::<Arc<OperationSlot>>() {
            *slot.found.lock().unwrap_or_else(|p| p.into_inner()) = select_operation(&document, slot.requested.as_deref());
        }
        Ok(document)
    }
}
