//! Bad input gets a clear error, never a 500, and writes nothing.

use egs_tests::TestApp;
use egs_tests::fixtures;
use serde_json::{Value, json};

async fn gpr_count(app: &TestApp) -> i64 {
    app.ok(&app.admin_token, "{ gprs { totalCount } }", json!({})).await["gprs"]["totalCount"].as_i64().expect("count")
}

#[tokio::test]
async fn invalid_gpr_fields_are_reported_per_field_and_nothing_is_stored() {
    let app = TestApp::spawn().await;
    let two = fixtures::two_slices(&app).await;
    let cases = [
        (json!({ "nodeCount": -1 }), "nodeCount"),
        (json!({ "nodeCount": 0 }), "nodeCount"),
        (json!({ "priority": 0 }), "priority"),
        (json!({ "priority": 301 }), "priority"),
        (json!({ "duration": "30s" }), "duration"),
        (json!({ "name": "Not A DNS Name!" }), "name"),
        (json!({ "gpusPerNode": 0 }), "gpusPerNode"),
        (json!({ "earliestStartAt": "2001-01-01T00:00:00Z" }), "earliestStartAt"),
        (json!({ "gpuShape": "NVIDIA-B200" }), "gpuShape"),
    ];
    for (extra, field) in cases {
        let mut input = json!({ "sliceId": two.slice_a, "name": "ok-name", "nodeCount": 1, "duration": "1h" });
        input.as_object_mut().expect("object").extend(extra.as_object().expect("object").clone());
        let response = app.post(Some(&two.token_a), json!({ "query": fixtures::CREATE_GPR, "variables": { "input": input } })).await;
        assert_eq!(response.status().as_u16(), 200, "{field}");
        let body: Value = response.json().await.expect("json");
        let errors = &body["data"]["createGpr"]["userErrors"];
        assert_eq!(errors[0]["field"], json!(["input", field]), "{field}: {body}");
        assert_eq!(errors[0]["code"], "INVALID_INPUT");
        assert!(!errors[0]["message"].as_str().unwrap_or_default().is_empty());
    }
    assert_eq!(gpr_count(&app).await, 0);
    app.finish().await;
}

#[tokio::test]
async fn unparsable_durations_unknown_fields_and_wrong_types_fail_before_execution() {
    let app = TestApp::spawn().await;
    let two = fixtures::two_slices(&app).await;
    let literal = |input: &str| json!({ "query": format!("mutation {{ createGpr(input: {input}) {{ gpr {{ id }} }} }}") });
    let slice = two.slice_a.as_str();
    let cases = [
        (literal(&format!("{{ sliceId: \"{slice}\", name: \"a\", nodeCount: 1, duration: \"two hours\" }}")), "input.duration"),
        (literal(&format!("{{ sliceId: \"{slice}\", name: \"a\", nodeCount: 1, duration: \"1h\", colour: \"red\" }}")), "colour"),
        (literal(&format!("{{ sliceId: \"{slice}\", name: \"a\", nodeCount: \"one\", duration: \"1h\" }}")), "nodeCount"),
        // (A missing `duration` or `nodeCount` is a `userErrors` entry instead: a template may give them.)
        (literal(&format!("{{ sliceId: \"{slice}\", nodeCount: 1, duration: \"1h\" }}")), "name"),
    ];
    for (request, mention) in cases {
        let response = app.post(Some(&two.token_a), request).await;
        let status = response.status().as_u16();
        let body: Value = response.json().await.expect("json");
        assert_eq!(status, 400, "{mention}: {body}");
        assert!(body.to_string().contains(mention), "the error names `{mention}`: {body}");
    }

    // The same mistake through variables is refused the same way.
    let response = app
        .post(
            Some(&two.token_a),
            json!({ "query": fixtures::CREATE_GPR, "variables": { "input": { "sliceId": slice, "name": "a", "nodeCount": 1, "duration": "soon" } } }),
        )
        .await;
    let status = response.status().as_u16();
    let body: Value = response.json().await.expect("json");
    assert_eq!(status, 400, "{body}");
    assert!(body["errors"][0]["message"].as_str().unwrap_or_default().contains("expected type \"Duration\""), "{body}");
    assert!(body.get("data").is_none(), "{body}");
    assert_eq!(gpr_count(&app).await, 0);
    app.finish().await;
}

#[tokio::test]
async fn ids_of_the_wrong_type_or_garbage_are_invalid_input() {
    let app = TestApp::spawn().await;
    let two = fixtures::two_slices(&app).await;
    for (id, expect) in [(two.cluster.clone(), "not of a Gpr"), ("garbage!!".to_owned(), "not an EGS id"), ("".to_owned(), "not an EGS id")] {
        let body = app.gql(&two.token_a, "query($id: ID!) { gpr(id: $id) { id } }", json!({ "id": id })).await;
        assert_eq!(body["errors"][0]["extensions"]["code"], "INVALID_INPUT", "{body}");
        assert!(body["errors"][0]["message"].as_str().unwrap_or_default().contains(expect), "{body}");
    }
    let page = app.gql(&two.token_a, "{ gprs(first: 1000) { totalCount } }", json!({})).await;
    assert_eq!(page["errors"][0]["extensions"]["code"], "INVALID_INPUT", "pages are bounded: {page}");
    let cursor = app.gql(&two.token_a, "{ gprs(after: \"bogus\") { totalCount } }", json!({})).await;
    assert_eq!(cursor["errors"][0]["extensions"]["code"], "INVALID_INPUT", "{cursor}");
    app.finish().await;
}

#[tokio::test]
async fn a_bad_node_in_a_batch_stores_none_of_the_batch() {
    let app = TestApp::spawn().await;
    let cluster = fixtures::register_cluster(&app, "c1").await;
    let body = app
        .gql(
            &app.admin_token,
            "mutation($input: UpsertNodesInput!) { upsertNodes(input: $input) { nodes { id } userErrors { field message code } } }",
            json!({ "input": { "clusterId": cluster, "nodes": [
                { "name": "good", "instanceType": "p5", "gpuShape": "H100", "gpusPerNode": 8, "gpuMemoryMib": 81559 },
                { "name": "bad", "instanceType": "p5", "gpuShape": "H100", "gpusPerNode": -8, "gpuMemoryMib": 81559 },
            ] } }),
        )
        .await;
    assert_eq!(body["data"]["upsertNodes"]["userErrors"][0]["field"], json!(["input", "nodes", "1", "gpusPerNode"]), "{body}");
    let nodes = app.ok(&app.admin_token, "{ nodes { totalCount } }", json!({})).await;
    assert_eq!(nodes["nodes"]["totalCount"], 0);
    app.finish().await;
}

#[tokio::test]
async fn names_an_agent_reports_with_control_characters_are_refused() {
    let app = TestApp::spawn().await;
    let cluster = fixtures::register_cluster(&app, "c1").await;
    let upsert = "mutation($input: UpsertNodesInput!) { upsertNodes(input: $input) { nodes { id } userErrors { field message code } } }";
    let node = json!({ "name": "n1", "instanceType": "p5", "gpuShape": "H100", "gpusPerNode": 1, "gpuMemoryMib": 81559,
        "gpus": [{ "uuid": "GPU-1", "index": 0, "model": "NVIDIA H100", "memoryMib": 81559 }] });
    for (field, value) in
        [("name", json!("n1\u{1b}]8;;http://evil\u{7}")), ("gpuShape", json!("H100\r\nX-Injected: 1")), ("instanceType", json!("p5\tbig"))]
    {
        let mut bad = node.clone();
        bad[field] = value;
        let body = app.gql(&app.admin_token, upsert, json!({ "input": { "clusterId": cluster, "nodes": [bad] } })).await;
        let error = &body["data"]["upsertNodes"]["userErrors"][0];
        assert_eq!(error["field"], json!(["input", "nodes", "0", field]), "{body}");
        assert!(error["message"].as_str().unwrap_or_default().contains("control characters"), "{body}");
    }
    let mut bad_model = node.clone();
    bad_model["gpus"][0]["model"] = json!("H100\u{1b}[2J");
    let body = app.gql(&app.admin_token, upsert, json!({ "input": { "clusterId": cluster, "nodes": [bad_model] } })).await;
    assert_eq!(body["data"]["upsertNodes"]["userErrors"][0]["field"], json!(["input", "nodes", "0", "gpus", "0", "model"]), "{body}");
    let nodes = app.ok(&app.admin_token, "{ nodes { totalCount } }", json!({})).await;
    assert_eq!(nodes["nodes"]["totalCount"], 0, "nothing stored");
    // The same node without them is taken.
    app.mutate(&app.admin_token, "upsertNodes", upsert, json!({ "clusterId": cluster, "nodes": [node] })).await;
    app.finish().await;
}

#[tokio::test]
async fn values_that_do_not_coerce_and_out_of_range_views_are_invalid_input_with_a_code() {
    let app = TestApp::spawn().await;
    let two = fixtures::two_slices(&app).await;
    let cases = [
        ("{ gprs(first: 99999999999) { totalCount } }", json!({}), "Int"),
        ("query($n: Int!) { gprs(first: $n) { totalCount } }", json!({ "n": 99_999_999_999_i64 }), "Int"),
        ("{ gpus(first: 1) { nodes { metrics(from: \"yesterday\") { __typename } } } }", json!({}), "DateTime"),
        ("query($f: DateTime) { gpus(first: 1) { nodes { metrics(from: $f) { __typename } } } }", json!({ "f": "garbage" }), "DateTime"),
        ("{ queue(first: 0) { id } }", json!({}), "between 1 and 500"),
        ("{ queue(first: 501) { id } }", json!({}), "between 1 and 500"),
    ];
    for (query, variables, mention) in cases {
        let body = app.gql(&app.admin_token, query, variables).await;
        assert_eq!(body["errors"][0]["extensions"]["code"], "INVALID_INPUT", "{query}: {body}");
        assert!(body["errors"][0]["message"].as_str().is_some_and(|m| m.contains(mention)), "{query}: {body}");
    }
    // A forged rank cursor far past any inventory (once: the largest position) is refused, not wrapped to the start.
    use base64::Engine;
    let forged = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("r:{}", usize::MAX));
    let body = app
        .gql(&two.token_a, "query($after: String) { gpus(orderBy: BUSIEST_FIRST, after: $after) { totalCount } }", json!({ "after": forged }))
        .await;
    assert_eq!(body["errors"][0]["extensions"]["code"], "INVALID_INPUT", "{body}");
    app.finish().await;
}
