//! The agent's GraphQL operations ([`operations.graphql`](../operations.graphql)), typed from
//! `schema/schema.graphql` by `graphql_client`: the input types below are generated from the
//! schema's own (`NodeInput`, `GpuSampleInput`, `GpuWorkloadInput`, …), so the agent never
//! mirrors them by hand. Optional input fields the agent does not set are left out of the JSON
//! rather than sent as `null`, so the gateway keeps what an admin set (`instanceType`, the
//! alert thresholds, `health`).

use graphql_client::GraphQLQuery;

// The derive reads these files, but cargo does not know it: naming them here makes a change to
// either rebuild this module (else a stale build hides an operation the schema broke).
const _SCHEMA: &str = include_str!("../../schema/schema.graphql");
const _OPERATIONS: &str = include_str!("operations.graphql");

/// The schema's `DateTime` (RFC 3339).
type DateTime = chrono::DateTime<chrono::Utc>;

/// One operation of `operations.graphql`, by name, with its types in a module of the same
/// name in snake case.
macro_rules! operation {
    ($name:ident) => {
        #[derive(GraphQLQuery)]
        #[graphql(
            schema_path = "../schema/schema.graphql",
            query_path = "src/operations.graphql",
            variables_derives = "Clone, Debug, PartialEq",
            response_derives = "Debug",
            skip_serializing_none
        )]
        pub struct $name;
    };
}

operation!(EgsAgentRegister);
operation!(EgsAgentReport);
operation!(EgsAgentWorkloads);
operation!(EgsAgentSignIn);

pub use egs_agent_register::{GpuInput, Health, NodeInput};
pub use egs_agent_report::GpuSampleInput;
pub use egs_agent_workloads::{GpuProcessInput, GpuWorkloadInput, PodInput};

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_the_agent_does_not_know_are_left_out_not_sent_as_null() {
        let node = NodeInput {
            name: "gpu-1".into(),
            instance_type: None,
            gpu_shape: "NVIDIA-H100".into(),
            gpus_per_node: 1,
            gpu_memory_mib: 81_559,
            driver_version: Some("550.54".into()),
            cuda_version: None,
            power_threshold_watts: None,
            temperature_threshold_celsius: None,
            health: None,
            rdma: None,
            gpus: Some(vec![GpuInput { uuid: "GPU-a".into(), index: 0, model: "H100".into(), memory_mib: 81_559, mig_enabled: false }]),
        };
        let body = serde_json::to_value(EgsAgentRegister::build_query(egs_agent_register::Variables {
            input: egs_agent_register::UpsertNodesInput { cluster_id: "7".into(), nodes: vec![node] },
        }))
        .expect("serialises");
        assert_eq!(body["operationName"], "EgsAgentRegister");
        assert!(body["query"].as_str().is_some_and(|q| q.contains("upsertNodes(input: $input)")));
        assert_eq!(
            body["variables"]["input"]["nodes"][0],
            json!({
                "name": "gpu-1",
                "gpuShape": "NVIDIA-H100",
                "gpusPerNode": 1,
                "gpuMemoryMib": 81_559,
                "driverVersion": "550.54",
                "gpus": [{ "uuid": "GPU-a", "index": 0, "model": "H100", "memoryMib": 81_559, "migEnabled": false }],
            })
        );
        let unhealthy = serde_json::to_value(Health::UNHEALTHY).expect("serialises");
        assert_eq!(unhealthy, "UNHEALTHY");
    }
}
