//! Abuse limits: a per-user query cost budget (RATE_LIMITED, HTTP 429 with Retry-After) and
//! a bound on aliases, which is what makes one document ask for the same thing many times.

use egs_tests::TestApp;
use egs_tests::fixtures::*;
use sea_orm::{EntityTrait, PaginatorTrait};
use serde_json::{Value, json};

#[tokio::test]
async fn a_user_over_their_cost_budget_gets_429_with_retry_after_on_every_token_and_other_users_do_not() {
    let setup = TestApp::spawn().await;
    let two = two_slices(&setup).await;
    // A replica with a tiny budget: 50 at once, 1 a second; `viewer { id }` costs 2.
    let app = setup
        .spawn_replica_with(|s| {
            egs_tests::api_only(s);
            s.rate_limit = 1;
            s.rate_limit_burst = 50;
        })
        .await;
    // Minting another token buys no more budget.
    let second = app.mutate(&two.token_a, "createToken", CREATE_TOKEN, json!({ "name": "second", "role": "USER" })).await["secret"]
        .as_str()
        .expect("secret")
        .to_owned();
    let query = json!({ "query": "{ viewer { id } }" });
    let mut refused = None;
    for sent in 1..=40 {
        let response = app.post(Some(&two.token_a), query.clone()).await;
        if response.status() == 429 {
            refused = Some((sent, response));
            break;
        }
        let body: Value = response.json().await.expect("json");
        assert!(body["errors"].is_null(), "{body}");
    }
    let (sent, response) = refused.expect("refused once the budget was spent");
    // createToken cost some of it too.
    assert!((20..26).contains(&sent), "50 at once, 2 each, less the token's creation: {sent}");
    assert_eq!(app.post(Some(&second), query.clone()).await.status(), 429, "the user's other token shares the budget");
    let retry_after: u64 = response.headers()["retry-after"].to_str().expect("ascii").parse().expect("seconds");
    assert!((1..=3).contains(&retry_after), "{retry_after}");
    let body: Value = response.json().await.expect("json");
    assert_eq!(body["errors"][0]["extensions"]["code"], "RATE_LIMITED", "{body}");
    assert!(body["errors"][0]["extensions"]["retryAfterMs"].as_u64().is_some_and(|ms| ms > 0 && ms <= 2000), "{body}");
    assert!(body.get("data").is_none(), "nothing ran: {body}");

    // Another user has their own budget; a refused mutation changes nothing.
    let other = app.post(Some(&two.token_b), query.clone()).await;
    assert_eq!(other.status(), 200);
    let input = json!({ "sliceId": two.slice_a, "name": "over-budget", "nodeCount": 1, "gpuShape": SHAPE_H100, "duration": "1h" });
    let mutation = app.post(Some(&two.token_a), json!({ "query": CREATE_GPR, "variables": { "input": input } })).await;
    assert_eq!(mutation.status(), 429);
    assert_eq!(egs_entities::gpr::Entity::find().count(&app.db).await.expect("count"), 0);

    // An operation costing more than the whole bucket can never run: said so, not "retry".
    let big = format!("{{ {} }}", (0..30).map(|i| format!("a{i}: viewer {{ id name }}")).collect::<Vec<_>>().join(" "));
    let response = app.post(Some(&two.token_b), json!({ "query": big })).await;
    assert_eq!(response.status(), 429);
    let body: Value = response.json().await.expect("json");
    assert!(body["errors"][0]["message"].as_str().is_some_and(|m| m.contains("more than a user may spend at once")), "{body}");
    app.finish().await;
    setup.finish().await;
}

#[tokio::test]
async fn documents_with_too_many_aliases_are_refused_before_anything_runs() {
    let app = TestApp::spawn().await;
    let two = two_slices(&app).await;
    // 65 createGpr under different names: refused whole, nothing stored.
    let fields: Vec<String> = (0..65)
        .map(|i| {
            format!(
                "g{i}: createGpr(input: {{ sliceId: \"{}\", name: \"g{i}\", nodeCount: 1, gpuShape: \"{SHAPE_H100}\", duration: \"1h\" }}) {{ gpr {{ id }} }}",
                two.slice_a
            )
        })
        .collect();
    let response = app.post(Some(&two.token_a), json!({ "query": format!("mutation {{ {} }}", fields.join(" ")) })).await;
    assert_eq!(response.status(), 400);
    let body: Value = response.json().await.expect("json");
    assert_eq!(body["errors"][0]["extensions"]["code"], "INVALID_INPUT", "{body}");
    assert!(body["errors"][0]["message"].as_str().is_some_and(|m| m.contains("65 aliases")), "{body}");
    assert_eq!(egs_entities::gpr::Entity::find().count(&app.db).await.expect("count"), 0);
    // Aliases in fragments count too; 64 in all is fine.
    let within = format!(
        "query {{ {} ...F }} fragment F on Query {{ {} }}",
        (0..32).map(|i| format!("a{i}: viewer {{ id }}")).collect::<Vec<_>>().join(" "),
        (0..32).map(|i| format!("b{i}: viewer {{ id }}")).collect::<Vec<_>>().join(" ")
    );
    let body = app.gql(&two.token_a, &within, json!({})).await;
    assert!(body["errors"].is_null(), "{body}");
    let over = within.replace("b0: viewer { id }", "b0: viewer { id } b99: viewer { id }");
    let body = app.gql(&two.token_a, &over, json!({})).await;
    assert!(body["errors"][0]["message"].as_str().is_some_and(|m| m.contains("65 aliases")), "{body}");
    app.finish().await;
}

#[tokio::test]
async fn nested_lists_are_refused_before_anything_runs_for_what_they_could_build() {
    let app = TestApp::spawn().await;
    let two = two_slices(&app).await; // four nodes of eight GPUs
    // The review's query, by a USER token: five levels of nodes → gpus → node → gpus.
    let attack = "{ nodes(first: 100) { nodes { gpus { node { gpus { node { gpus { node { gpus { node { gpus { uuid } } } } } } } } } } } }";
    let started = std::time::Instant::now();
    let response = app.post(Some(&two.token_a), json!({ "query": attack })).await;
    let elapsed = started.elapsed();
    assert_eq!(response.status(), 400, "a request error (graphql-response+json)");
    let body: Value = response.json().await.expect("json");
    assert_eq!(body["errors"][0]["extensions"]["code"], "TOO_COMPLEX", "{body}");
    assert!(body.get("data").is_none(), "nothing ran: {body}");
    assert!(elapsed < std::time::Duration::from_millis(200), "refused at once: {elapsed:?}");
    // A page of nodes with their GPUs is fine.
    let page = app.ok(&two.token_a, "{ nodes(first: 100) { nodes { name gpus { uuid index } } } }", json!({})).await;
    assert_eq!(page["nodes"]["nodes"].as_array().map(Vec::len), Some(4), "{page}");
    app.finish().await;
}

const CREATE_TOKEN: &str =
    "mutation($input: CreateTokenInput!) { createToken(input: $input) { secret token { id } userErrors { field message code } } }";

#[tokio::test]
async fn a_user_holds_at_most_the_tokens_allowed_until_one_is_revoked() {
    let app = TestApp::spawn_with(|s| s.per_user.tokens = 3).await;
    let two = two_slices(&app).await;
    // Alice holds the fixture's token; two more fit.
    let mut minted = Vec::new();
    for n in 0..2 {
        let payload = app.mutate(&two.token_a, "createToken", CREATE_TOKEN, json!({ "name": format!("t{n}"), "role": "USER" })).await;
        minted.push(payload["token"]["id"].as_str().expect("id").to_owned());
    }
    let before = egs_entities::access_token::Entity::find().count(&app.db).await.expect("count");
    let over = app.gql(&two.token_a, CREATE_TOKEN, json!({ "input": { "name": "one too many", "role": "USER" } })).await;
    let errors = &over["data"]["createToken"]["userErrors"];
    assert_eq!(errors[0]["code"], "LIMIT_EXCEEDED", "{over}");
    assert!(errors[0]["message"].as_str().is_some_and(|m| m.contains("at most 3")), "{over}");
    assert!(over["data"]["createToken"]["secret"].is_null(), "{over}");
    // Nor may an admin mint one more for her; Bob is not affected.
    let alice_id = app.ok(&two.token_a, "{ viewer { id } }", json!({})).await["viewer"]["id"].clone();
    let by_admin = app.gql(&app.admin_token, CREATE_TOKEN, json!({ "input": { "name": "admin's", "role": "USER", "userId": alice_id } })).await;
    assert_eq!(by_admin["data"]["createToken"]["userErrors"][0]["code"], "LIMIT_EXCEEDED", "{by_admin}");
    assert_eq!(egs_entities::access_token::Entity::find().count(&app.db).await.expect("count"), before, "nothing stored");
    let bobs = app.gql(&two.token_b, CREATE_TOKEN, json!({ "input": { "name": "bob's", "role": "USER" } })).await;
    assert!(bobs["data"]["createToken"]["secret"].is_string(), "{bobs}");
    // A revoked token frees its place.
    app.mutate(
        &two.token_a,
        "revokeToken",
        "mutation($input: RevokeTokenInput!) { revokeToken(input: $input) { token { id } userErrors { field message code } } }",
        json!({ "id": minted[0] }),
    )
    .await;
    let again = app.mutate(&two.token_a, "createToken", CREATE_TOKEN, json!({ "name": "after revoking", "role": "USER" })).await;
    assert!(again["secret"].is_string(), "{again}");
    app.finish().await;
}
