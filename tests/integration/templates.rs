//! GPR templates as a catalogue of profiles (seed 004's compute profiles): an admin publishes a
//! template to slices, their members list it and create GPRs from it (what the input leaves out
//! is the template's), and nobody else sees or uses it.

use egs_tests::TestApp;
use egs_tests::fixtures::*;
use serde_json::{Value, json};

const CREATE_TEMPLATE: &str =
    "mutation($input: CreateGprTemplateInput!) { createGprTemplate(input: $input) { template { id name } userErrors { field message code } } }";
const PUBLISH: &str = "mutation($input: PublishGprTemplateInput!) { publishGprTemplate(input: $input) {
    template { id allSlices publishedTo { name } } userErrors { field message code } } }";
const LIST: &str = "query($slice: ID) { gprTemplates(sliceId: $slice) { id name } }";
const CREATE: &str = "mutation($input: CreateGprInput!) { createGpr(input: $input) {
    gpr { id name nodeCount gpuShape priority duration idleTimeout template { name } } userErrors { field message code } } }";
const WAIT: &str = "query($input: WaitTimeInput!) { waitTimeEstimates(input: $input) { gpuShape } }";
const EVENTS: &str = "query($id: ID!) { gprEvents(gprId: $id, first: 10) { nodes { kind message } } }";

async fn template(app: &TestApp, name: &str, input: Value) -> String {
    let mut input = input;
    input["name"] = json!(name);
    let created = app.mutate(&app.admin_token, "createGprTemplate", CREATE_TEMPLATE, input).await;
    created["template"]["id"].as_str().expect("template id").to_owned()
}

fn names(list: &Value) -> Vec<&str> {
    list["gprTemplates"].as_array().expect("templates").iter().filter_map(|t| t["name"].as_str()).collect()
}

#[tokio::test]
async fn members_start_gprs_from_the_profiles_published_to_their_slice() {
    let app = TestApp::spawn().await;
    let setup = two_slices(&app).await;
    let finetune = template(
        &app,
        "finetune",
        json!({ "description": "one H100 node for 6 h", "nodeCount": 1, "gpuShape": SHAPE_H100, "priority": 130, "duration": "6h", "idleTimeout": "1h" }),
    )
    .await;
    let everyone = template(&app, "short", json!({ "nodeCount": 2, "duration": "1h" })).await;
    let unpublished = template(&app, "secret", json!({ "nodeCount": 1, "duration": "1h" })).await;

    // Published to team-a by name, and one to every slice.
    let published = app.mutate(&app.admin_token, "publishGprTemplate", PUBLISH, json!({ "id": finetune, "sliceIds": [setup.slice_a] })).await;
    assert_eq!(published["template"]["publishedTo"], json!([{ "name": "team-a" }]));
    app.mutate(&app.admin_token, "publishGprTemplate", PUBLISH, json!({ "id": everyone, "allSlices": true })).await;

    // Each member sees the catalogue of their slices; the admin sees everything.
    assert_eq!(names(&app.ok(&setup.token_a, LIST, json!({})).await), ["finetune", "short"]);
    assert_eq!(names(&app.ok(&setup.token_b, LIST, json!({})).await), ["short"]);
    assert_eq!(names(&app.ok(&setup.token_b, LIST, json!({ "slice": setup.slice_b })).await), ["short"]);
    assert_eq!(names(&app.ok(&app.admin_token, LIST, json!({})).await), ["finetune", "secret", "short"]);
    assert_eq!(names(&app.ok(&app.admin_token, LIST, json!({ "slice": setup.slice_b })).await), ["short"]);
    // Another slice's catalogue, or a template not published to you, is not there.
    let other = app.gql(&setup.token_b, LIST, json!({ "slice": setup.slice_a })).await;
    assert_eq!(other["errors"][0]["extensions"]["code"], "NOT_FOUND", "{other}");
    let hidden = app.gql(&setup.token_b, "query($id: ID!) { gprTemplate(id: $id) { name } }", json!({ "id": finetune })).await;
    assert_eq!(hidden["errors"][0]["extensions"]["code"], "NOT_FOUND", "{hidden}");
    let visible =
        app.ok(&setup.token_b, "query($id: ID!) { gprTemplate(id: $id) { name publishedTo { name } allSlices } }", json!({ "id": everyone })).await;
    assert_eq!(visible["gprTemplate"], json!({ "name": "short", "publishedTo": [], "allSlices": true }));

    // A GPR from a profile: the template's size, shape, priority and window, with overrides.
    let created = app.mutate(&setup.token_a, "createGpr", CREATE, json!({ "sliceId": setup.slice_a, "name": "ft-1", "templateId": finetune })).await;
    assert_eq!(
        created["gpr"],
        json!({ "id": created["gpr"]["id"], "name": "ft-1", "nodeCount": 1, "gpuShape": SHAPE_H100, "priority": 130, "duration": "PT6H",
                "idleTimeout": "PT1H", "template": { "name": "finetune" } })
    );
    let events = app.ok(&setup.token_a, EVENTS, json!({ "id": created["gpr"]["id"] })).await;
    assert!(events["gprEvents"]["nodes"][0]["message"].as_str().unwrap_or_default().contains("from template `finetune`"), "{events}");
    let overridden = app
        .mutate(
            &setup.token_a,
            "createGpr",
            CREATE,
            json!({ "sliceId": setup.slice_a, "name": "ft-2", "templateId": finetune, "duration": "2h", "priority": 101 }),
        )
        .await;
    assert_eq!(
        (&overridden["gpr"]["duration"], &overridden["gpr"]["priority"], &overridden["gpr"]["nodeCount"]),
        (&json!("PT2H"), &json!(101), &json!(1))
    );
    // "Get wait time" for a profile.
    let waits = app.ok(&setup.token_a, WAIT, json!({ "input": { "sliceId": setup.slice_a, "templateId": finetune } })).await;
    assert_eq!(waits["waitTimeEstimates"][0]["gpuShape"], SHAPE_H100, "{waits}");

    // Refusals change nothing: a template not published to the slice (or not there at all), and
    // no template without the size and window.
    let before = app.ok(&app.admin_token, "{ gprs { totalCount } }", json!({})).await;
    for (token, slice, template_id) in
        [(&setup.token_b, &setup.slice_b, &finetune), (&setup.token_a, &setup.slice_a, &unpublished), (&setup.token_b, &setup.slice_b, &unpublished)]
    {
        let refused = app.ok(token, CREATE, json!({ "input": { "sliceId": slice, "name": "nope", "templateId": template_id } })).await;
        assert_eq!(
            refused["createGpr"]["userErrors"],
            json!([{ "field": ["input", "templateId"], "message": "no such template is published to this slice", "code": "INVALID_INPUT" }])
        );
    }
    let bare = app.ok(&setup.token_a, CREATE, json!({ "input": { "sliceId": setup.slice_a, "name": "nope" } })).await;
    let fields: Vec<&Value> = bare["createGpr"]["userErrors"].as_array().expect("errors").iter().map(|e| &e["field"]).collect();
    assert_eq!(fields, [&json!(["input", "nodeCount"]), &json!(["input", "duration"])], "{bare}");
    assert_eq!(app.ok(&app.admin_token, "{ gprs { totalCount } }", json!({})).await, before);

    // Publishing is the admin's, and checks its slices.
    let denied = app.gql(&setup.token_a, PUBLISH, json!({ "input": { "id": finetune, "sliceIds": [setup.slice_b] } })).await;
    assert_eq!(denied["errors"][0]["extensions"]["code"], "FORBIDDEN", "{denied}");
    let twice = app.ok(&app.admin_token, PUBLISH, json!({ "input": { "id": finetune, "sliceIds": [setup.slice_a, setup.slice_a] } })).await;
    assert_eq!(twice["publishGprTemplate"]["userErrors"][0]["field"], json!(["input", "sliceIds"]), "{twice}");
    // Unpublished again: team-a no longer sees it; its GPRs keep what they asked for.
    app.mutate(&app.admin_token, "publishGprTemplate", PUBLISH, json!({ "id": finetune, "sliceIds": [] })).await;
    assert_eq!(names(&app.ok(&setup.token_a, LIST, json!({})).await), ["short"]);
    let kept = app.ok(&setup.token_a, "query($id: ID!) { gpr(id: $id) { duration template { name } } }", json!({ "id": created["gpr"]["id"] })).await;
    assert_eq!(kept["gpr"], json!({ "duration": "PT6H", "template": null }));
    app.finish().await;
}
