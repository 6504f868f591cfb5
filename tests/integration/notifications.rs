//! Notification channels: a user's and a slice's, Slack and signed JSON webhooks and e-mail
//! (through a real SMTP server), milestones delivered once across replicas, retries, refusals
//! and failures the owner sees, the test button.

use egs_tests::TestApp;
use egs_tests::fixtures::*;
use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::Sha256;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One POST a receiver got: the status it answered, the EGS headers, the body.
#[derive(Clone, Debug)]
struct Post {
    status: u16,
    delivery: String,
    timestamp: String,
    signature: String,
    raw: Vec<u8>,
    body: Value,
}

type Seen = Arc<Mutex<Vec<Post>>>;

/// A receiver that answers `statuses` in turn to its first POSTs, then 200, and records them.
async fn receiver(statuses: Vec<u16>) -> (String, Seen) {
    use axum::extract::State;
    use axum::http::{HeaderMap, StatusCode};
    type Shared = (Seen, Arc<Vec<u16>>);
    async fn hook(State((seen, statuses)): State<Shared>, headers: HeaderMap, raw: axum::body::Bytes) -> StatusCode {
        let mut seen = seen.lock().expect("not poisoned");
        let status = statuses.get(seen.len()).copied().unwrap_or(200);
        let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
        seen.push(Post {
            status,
            delivery: header("x-egs-delivery"),
            timestamp: header("x-egs-timestamp"),
            signature: header("x-egs-signature"),
            body: serde_json::from_slice(&raw).unwrap_or(Value::Null),
            raw: raw.to_vec(),
        });
        StatusCode::from_u16(status).unwrap_or(StatusCode::OK)
    }
    let seen: Seen = Arc::default();
    let router = axum::Router::new().route("/hook/secret-path", axum::routing::post(hook)).with_state((seen.clone(), Arc::new(statuses)));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}/hook/secret-path", listener.local_addr().expect("addr"));
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    (url, seen)
}

fn posts(seen: &Seen) -> Vec<Post> {
    seen.lock().expect("not poisoned").clone()
}

async fn wait_posts(seen: &Seen, what: &str, done: impl Fn(&[Post]) -> bool) -> Vec<Post> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let now = posts(seen);
        if done(&now) {
            return now;
        }
        assert!(tokio::time::Instant::now() < deadline, "{what}: {now:#?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

const CHANNEL: &str = "id name kind target milestones enabled signed failing failuresInARow lastError lastDeliveredAt slice { name }";

fn create_channel_op() -> String {
    format!(
        "mutation($input: CreateNotificationChannelInput!) {{ createNotificationChannel(input: $input) {{ channel {{ {CHANNEL} }} signingSecret userErrors {{ field message code }} }} }}"
    )
}

async fn create_channel(app: &TestApp, token: &str, input: Value) -> Value {
    app.mutate(token, "createNotificationChannel", &create_channel_op(), input).await
}

/// The payload, refused or not.
async fn try_create_channel(app: &TestApp, token: &str, input: Value) -> Value {
    app.ok(token, &create_channel_op(), json!({ "input": input })).await["createNotificationChannel"].clone()
}

fn milestones_of(posted: &[Post]) -> Vec<String> {
    posted.iter().filter(|p| p.status == 200).map(|p| p.body["milestone"].as_str().unwrap_or_default().to_owned()).collect()
}

#[tokio::test]
async fn a_users_webhook_hears_each_milestone_of_their_gprs_once_signed_across_replicas() {
    let app = TestApp::spawn().await;
    // A second replica: it hears the same events and runs the same outbox.
    let replica = app.spawn_replica().await;
    let two = two_slices(&app).await;
    let (url, seen) = receiver(vec![]).await;
    let made = create_channel(
        &app,
        &two.token_a,
        json!({ "kind": "WEBHOOK", "name": "my gprs", "target": url, "milestones": ["QUEUED", "PROVISIONED", "RELEASED"] }),
    )
    .await;
    let secret = made["signingSecret"].as_str().expect("the signing key, shown once").to_owned();
    let channel = &made["channel"];
    assert_eq!(channel["target"], url.rsplit_once("/hook").map(|(origin, _)| origin).unwrap_or_default(), "the path is never shown: {channel}");
    assert_eq!((channel["signed"].as_bool(), channel["slice"].is_null()), (Some(true), true), "{channel}");
    // Bob's GPR (another slice) is not Alice's business.
    create_gpr(&app, &two.token_b, &two.slice_b, "bobs", json!({})).await;
    let gpr = create_gpr(&app, &two.token_a, &two.slice_a, "alices", json!({ "duration": "1h" })).await;
    let id = id_of(&gpr);
    provisioned(&app, &two.token_a, &id).await;
    let release = "mutation($input: GprActionInput!) { earlyReleaseGpr(input: $input) { gpr { id } userErrors { message } } }";
    app.mutate(&two.token_a, "earlyReleaseGpr", release, json!({ "id": id })).await;

    wait_posts(&seen, "queued, provisioned and released", |p| milestones_of(p).len() >= 3).await;
    // Both replicas had the chance to send a second copy.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let posted = posts(&seen);
    assert_eq!(milestones_of(&posted), ["QUEUED", "PROVISIONED", "RELEASED"], "each once, in order: {posted:#?}");
    for post in &posted {
        assert_eq!(post.body["gpr"]["id"], id.as_str(), "only Alice's GPR: {:#?}", post.body);
        assert_eq!(post.body["gpr"]["slice"], "team-a");
        assert!(post.body["headline"].as_str().unwrap_or_default().contains("alices"), "{:#?}", post.body);
        let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("a key");
        mac.update(format!("{}.", post.timestamp).as_bytes());
        mac.update(&post.raw);
        let expected: String = mac.finalize().into_bytes().iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(post.signature, format!("sha256={expected}"), "the signature covers the timestamp and the body");
        assert!(!post.delivery.is_empty() && post.delivery == post.body["delivery"], "a delivery id to drop repeats by");
    }
    let distinct: std::collections::HashSet<&str> = posted.iter().map(|p| p.delivery.as_str()).collect();
    assert_eq!(distinct.len(), posted.len());
    let page = app
        .ok(
            &two.token_a,
            "query { notificationChannels { name lastDeliveredAt failing deliveries { milestone state attempts gpr { name } } } }",
            json!({}),
        )
        .await;
    let deliveries = &page["notificationChannels"][0]["deliveries"];
    assert_eq!(deliveries.as_array().map(Vec::len), Some(3), "{page}");
    assert!(
        deliveries.as_array().into_iter().flatten().all(|d| d["state"] == "DELIVERED" && d["attempts"] == 1 && d["gpr"]["name"] == "alices"),
        "{page}"
    );
    assert_eq!(page["notificationChannels"][0]["failing"], false);
    replica.finish().await;
    app.finish().await;
}

#[tokio::test]
async fn a_slices_slack_channel_is_its_owners_and_hears_every_gpr_of_the_slice() {
    let app = TestApp::spawn().await;
    let two = two_slices(&app).await;
    let (_, owner) = member(&app, "olga", &two.slice_a, "OWNER").await;
    let (url, seen) = receiver(vec![]).await;
    let input = json!({ "sliceId": two.slice_a, "kind": "SLACK", "name": "team-a alerts", "target": url, "milestones": ["PROVISIONED"] });
    // An editor of the slice may not speak for it; someone of another slice does not see it.
    let refused = app.gql(&two.token_a, &create_channel_op(), json!({ "input": input })).await;
    assert_eq!(refused["errors"][0]["extensions"]["code"], "FORBIDDEN", "{refused}");
    let hidden = app.gql(&two.token_b, &create_channel_op(), json!({ "input": input })).await;
    assert_eq!(hidden["errors"][0]["extensions"]["code"], "NOT_FOUND", "{hidden}");
    let made = create_channel(&app, &owner, input.clone()).await;
    assert!(made["signingSecret"].is_null(), "Slack messages are not signed: {made}");
    let channel_id = id_of(&made["channel"]);
    for token in [&two.token_a, &two.token_b] {
        let read = app.gql(token, "query($id: ID!) { notificationChannel(id: $id) { name } }", json!({ "id": channel_id })).await;
        assert_eq!(read["errors"][0]["extensions"]["code"], "NOT_FOUND", "only its owners manage it: {read}");
    }
    let listed = app.ok(&app.admin_token, "query($s: ID) { notificationChannels(sliceId: $s) { name } }", json!({ "s": two.slice_a })).await;
    assert_eq!(listed["notificationChannels"], json!([{ "name": "team-a alerts" }]));

    let gpr = create_gpr(&app, &two.token_a, &two.slice_a, "by-alice", json!({})).await;
    provisioned(&app, &two.token_a, &id_of(&gpr)).await;
    let posted = wait_posts(&seen, "the provisioned message", |p| !p.is_empty()).await;
    let text = posted[0].body["text"].as_str().unwrap_or_default();
    assert!(text.contains("GPR `by-alice` in slice `team-a` is provisioned"), "{:#?}", posted[0].body);
    let fields = &posted[0].body["attachments"][0]["fields"];
    assert!(fields.as_array().into_iter().flatten().any(|f| f["title"] == "Milestone" && f["value"] == "PROVISIONED"), "{fields}");
    app.finish().await;
}

#[tokio::test]
async fn a_slices_channel_falls_silent_when_its_maker_no_longer_owns_the_slice() {
    let app = TestApp::spawn().await;
    let two = two_slices(&app).await;
    let (olga_id, owner) = member(&app, "olga", &two.slice_a, "OWNER").await;
    // The slice keeps an owner when olga goes.
    member(&app, "owen", &two.slice_a, "OWNER").await;
    let (url, seen) = receiver(vec![]).await;
    let input = json!({ "sliceId": two.slice_a, "kind": "WEBHOOK", "name": "team-a", "target": url, "milestones": ["QUEUED"] });
    create_channel(&app, &owner, input).await;
    create_gpr(&app, &two.token_a, &two.slice_a, "while-owner", json!({})).await;
    wait_posts(&seen, "the first GPR's QUEUED", |p| !p.is_empty()).await;

    // Demoted to viewer: the channel hears nothing more.
    let set_role = "mutation($input: AddSliceMemberInput!) { addSliceMember(input: $input) { slice { id } userErrors { message } } }";
    app.mutate(&app.admin_token, "addSliceMember", set_role, json!({ "sliceId": two.slice_a, "userId": olga_id, "role": "VIEWER" })).await;
    create_gpr(&app, &two.token_a, &two.slice_a, "after-demotion", json!({})).await;
    // Removed altogether: still nothing.
    let remove = "mutation($input: RemoveSliceMemberInput!) { removeSliceMember(input: $input) { slice { id } userErrors { message } } }";
    app.mutate(&app.admin_token, "removeSliceMember", remove, json!({ "sliceId": two.slice_a, "userId": olga_id })).await;
    create_gpr(&app, &two.token_a, &two.slice_a, "after-removal", json!({})).await;
    // A channel an admin made for the slice still hears it: the outbox runs, and it is this
    // channel's maker that stopped it.
    let (admin_url, admin_seen) = receiver(vec![]).await;
    let admins = json!({ "sliceId": two.slice_a, "kind": "WEBHOOK", "name": "team-a (ops)", "target": admin_url, "milestones": ["QUEUED"] });
    create_channel(&app, &app.admin_token, admins).await;
    create_gpr(&app, &two.token_a, &two.slice_a, "heard-by-ops", json!({})).await;
    wait_posts(&admin_seen, "the admin's channel hears the slice", |p| !p.is_empty()).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let heard: Vec<String> = posts(&seen).iter().map(|p| p.body["gpr"]["name"].as_str().unwrap_or_default().to_owned()).collect();
    assert_eq!(heard, ["while-owner"], "only while olga owned the slice");
    app.finish().await;
}

#[tokio::test]
async fn a_token_scoped_to_some_slices_cannot_reach_its_users_own_channels() {
    let app = TestApp::spawn().await;
    let two = two_slices(&app).await;
    let (url, seen) = receiver(vec![]).await;
    let mine = create_channel(&app, &two.token_a, json!({ "kind": "WEBHOOK", "name": "mine", "target": url, "milestones": ["QUEUED"] })).await;
    let mine_id = id_of(&mine["channel"]);
    let create = "mutation($input: CreateTokenInput!) { createToken(input: $input) { secret userErrors { message } } }";
    let scoped = app
        .mutate(
            &two.token_a,
            "createToken",
            create,
            json!({ "name": "ci", "role": "USER", "sliceScopes": [{ "sliceId": two.slice_a, "role": "EDITOR" }] }),
        )
        .await["secret"]
        .as_str()
        .expect("a scoped token")
        .to_owned();
    // Alice's own channels hear every slice of hers: the scoped token neither makes, sees,
    // tests, redirects nor deletes one.
    let made = app.gql(&scoped, &create_channel_op(), json!({ "input": { "kind": "WEBHOOK", "name": "x", "target": url } })).await;
    assert_eq!(made["errors"][0]["extensions"]["code"], "FORBIDDEN", "{made}");
    let listed = app.ok(&scoped, "{ notificationChannels { id } }", json!({})).await;
    assert_eq!(listed["notificationChannels"], json!([]), "{listed}");
    for operation in [
        "mutation($id: ID!) { updateNotificationChannel(input: { id: $id, target: \"http://127.0.0.1:9/elsewhere\" }) { channel { id } } }",
        "mutation($id: ID!) { deleteNotificationChannel(input: { id: $id }) { channel { id } } }",
        "mutation($id: ID!) { testNotificationChannel(input: { id: $id }) { delivered } }",
    ] {
        let answer = app.gql(&scoped, operation, json!({ "id": mine_id })).await;
        assert_eq!(answer["errors"][0]["extensions"]["code"], "NOT_FOUND", "{operation}: {answer}");
    }
    // Unchanged, and still Alice's with her own token.
    let read = app.ok(&two.token_a, "query($id: ID!) { notificationChannel(id: $id) { target enabled } }", json!({ "id": mine_id })).await;
    assert_eq!(read["notificationChannel"]["enabled"], true, "{read}");
    assert!(posts(&seen).iter().all(|p| !p.body["text"].as_str().unwrap_or_default().contains("Test message")), "no test was sent");
    app.finish().await;
}

#[tokio::test]
async fn failures_are_retried_then_given_up_and_shown_to_the_owner() {
    let app = TestApp::spawn().await;
    let two = two_slices(&app).await;
    // Two server errors then success: delivered on the third attempt.
    let (flaky, flaky_seen) = receiver(vec![503, 500]).await;
    // A 404 will not pass by waiting: given up at once.
    let (gone, gone_seen) = receiver(vec![404]).await;
    let only_queued = json!(["QUEUED"]);
    create_channel(&app, &two.token_a, json!({ "kind": "WEBHOOK", "name": "flaky", "target": flaky, "milestones": only_queued })).await;
    create_channel(&app, &two.token_a, json!({ "kind": "SLACK", "name": "gone", "target": gone, "milestones": only_queued })).await;
    create_gpr(&app, &two.token_a, &two.slice_a, "retried", json!({})).await;

    let flaky_posts = wait_posts(&flaky_seen, "delivered after two failures", |p| p.iter().any(|p| p.status == 200)).await;
    assert_eq!(flaky_posts.iter().map(|p| p.status).collect::<Vec<_>>(), [503, 500, 200]);
    assert!(flaky_posts.windows(2).all(|w| w[0].delivery == w[1].delivery), "one delivery, tried three times");
    let query = "query { notificationChannels { name failing failuresInARow lastError lastFailedAt deliveries { state attempts lastError } } }";
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let channels = loop {
        let channels = app.ok(&two.token_a, query, json!({})).await["notificationChannels"].clone();
        if channels.as_array().into_iter().flatten().any(|c| c["failing"] == true) {
            break channels;
        }
        assert!(tokio::time::Instant::now() < deadline, "the 404 was never recorded: {channels}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let by_name = |name: &str| channels.as_array().into_iter().flatten().find(|c| c["name"] == name).cloned().unwrap_or_default();
    let failed = by_name("gone");
    assert_eq!((failed["failuresInARow"].as_i64(), failed["deliveries"][0]["state"].as_str()), (Some(1), Some("FAILED")), "{failed}");
    assert_eq!(failed["deliveries"][0]["attempts"], 1, "not retried: {failed}");
    assert!(failed["lastError"].as_str().unwrap_or_default().contains("HTTP 404"), "{failed}");
    assert_eq!(posts(&gone_seen).len(), 1);
    let recovered = by_name("flaky");
    assert_eq!((recovered["failing"].as_bool(), recovered["deliveries"][0]["attempts"].as_i64()), (Some(false), Some(3)), "{recovered}");

    // The test button: a 404 says so at once (and counts), a working receiver clears it.
    let test = "mutation($input: NotificationChannelRef!) { testNotificationChannel(input: $input) { delivered error channel { failing failuresInARow } userErrors { message code } } }";
    let gone_id = app.ok(&two.token_a, "query { notificationChannels { id name } }", json!({})).await["notificationChannels"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["name"] == "gone")
        .map(id_of)
        .expect("the channel");
    let tried = app.mutate(&two.token_a, "testNotificationChannel", test, json!({ "id": gone_id })).await;
    assert_eq!(
        (tried["delivered"].as_bool(), tried["channel"]["failuresInARow"].as_i64()),
        (Some(true), Some(0)),
        "the receiver answers 200 now: {tried}"
    );
    let test_post = posts(&gone_seen).pop().expect("the test message");
    assert!(test_post.body["text"].as_str().unwrap_or_default().contains("Test message for channel `gone`"), "{:#?}", test_post.body);
    // Each test is a POST someone receives: at most 30 an hour.
    for _ in 1..30 {
        app.mutate(&two.token_a, "testNotificationChannel", test, json!({ "id": gone_id })).await;
    }
    let over = app.ok(&two.token_a, test, json!({ "input": { "id": gone_id } })).await["testNotificationChannel"].clone();
    assert_eq!(over["userErrors"][0]["code"], "LIMIT_EXCEEDED", "{over}");
    assert_eq!(posts(&gone_seen).iter().filter(|p| p.body["text"].as_str().unwrap_or_default().contains("Test message")).count(), 30);
    // Someone else's channel cannot be tested (or found).
    let foreign = app.gql(&two.token_b, test, json!({ "input": { "id": gone_id } })).await;
    assert_eq!(foreign["errors"][0]["extensions"]["code"], "NOT_FOUND", "{foreign}");
    app.finish().await;
}

#[tokio::test]
async fn bad_channels_are_refused_and_change_nothing() {
    let app = TestApp::spawn().await;
    let two = two_slices(&app).await;
    let (url, _) = receiver(vec![]).await;
    let cases = [
        (json!({ "kind": "WEBHOOK", "name": " ", "target": url }), "name"),
        (json!({ "kind": "WEBHOOK", "name": "x", "target": "hooks.slack.com/services/T/B/x" }), "target"),
        (json!({ "kind": "SLACK", "name": "x", "target": format!("{url}?{}", "a".repeat(2100)) }), "target"),
        (json!({ "kind": "WEBHOOK", "name": "x", "target": url.replace("http://", "http://user:pw@") }), "target"),
        (json!({ "kind": "WEBHOOK", "name": "x", "target": url, "milestones": [] }), "milestones"),
        (json!({ "kind": "WEBHOOK", "name": "x", "target": url, "estimateMovedMinutes": 0 }), "estimateMovedMinutes"),
        // No SMTP server configured on this gateway.
        (json!({ "kind": "EMAIL", "name": "x", "target": "ada@example.com" }), "kind"),
    ];
    for (input, field) in cases {
        let refused = try_create_channel(&app, &two.token_a, input.clone()).await;
        assert_eq!(refused["userErrors"][0]["field"], json!(["input", field]), "{input}: {refused}");
        assert!(refused["channel"].is_null());
    }
    let listed = app.ok(&two.token_a, "query { notificationChannels { id } }", json!({})).await;
    assert_eq!(listed["notificationChannels"], json!([]), "nothing was stored");
    for n in 0..20 {
        create_channel(&app, &two.token_a, json!({ "kind": "WEBHOOK", "name": format!("c{n}"), "target": url })).await;
    }
    let over = try_create_channel(&app, &two.token_a, json!({ "kind": "WEBHOOK", "name": "c20", "target": url })).await;
    assert_eq!(over["userErrors"][0]["code"], "LIMIT_EXCEEDED", "{over}");
    let update = "mutation($input: UpdateNotificationChannelInput!) { updateNotificationChannel(input: $input) { channel { name milestones } userErrors { field code } } }";
    let first = app.ok(&two.token_a, "query { notificationChannels { id } }", json!({})).await["notificationChannels"][0].clone();
    let bad =
        app.ok(&two.token_a, update, json!({ "input": { "id": id_of(&first), "name": "ok", "milestones": [] } })).await["updateNotificationChannel"]
            .clone();
    assert_eq!(bad["userErrors"][0]["field"], json!(["input", "milestones"]), "{bad}");
    let after = app.ok(&two.token_a, "query($id: ID!) { notificationChannel(id: $id) { name } }", json!({ "id": id_of(&first) })).await;
    assert_eq!(after["notificationChannel"]["name"], "c0", "a refused change changes nothing");
    let foreign = app.gql(&two.token_b, update, json!({ "input": { "id": id_of(&first), "name": "mine" } })).await;
    assert_eq!(foreign["errors"][0]["extensions"]["code"], "NOT_FOUND", "{foreign}");
    let delete = "mutation($input: NotificationChannelRef!) { deleteNotificationChannel(input: $input) { channel { name } userErrors { message } } }";
    let foreign = app.gql(&two.token_b, delete, json!({ "input": { "id": id_of(&first) } })).await;
    assert_eq!(foreign["errors"][0]["extensions"]["code"], "NOT_FOUND", "{foreign}");
    let deleted = app.mutate(&two.token_a, "deleteNotificationChannel", delete, json!({ "id": id_of(&first) })).await;
    assert_eq!(deleted["channel"]["name"], "c0");
    app.finish().await;
}

#[tokio::test]
async fn without_private_targets_users_cannot_point_the_gateway_at_its_own_network() {
    let app = TestApp::spawn_with(|s| s.notify.allow_private_targets = false).await;
    let two = two_slices(&app).await;
    let options = app.ok(&two.token_a, "query { notificationOptions { publicTargetsOnly email } }", json!({})).await;
    assert_eq!(options["notificationOptions"], json!({ "publicTargetsOnly": true, "email": false }));
    for target in [
        "https://169.254.169.254/latest/meta-data/",
        "https://127.0.0.1:6379/",
        "https://[::1]:5432/",
        "https://10.0.0.5/hook",
        "https://localhost:8080/graphql",
        // Plain http would carry the team's GPR details in the clear.
        "http://hooks.example.com/x",
    ] {
        let refused = try_create_channel(&app, &two.token_a, json!({ "kind": "WEBHOOK", "name": "x", "target": target })).await;
        assert_eq!(refused["userErrors"][0]["field"], json!(["input", "target"]), "{target}: {refused}");
    }
    app.finish().await;
}

/// A real SMTP server (aiosmtpd, from PyPI, in a venv the test makes once per target dir)
/// writing what it receives to a Maildir.
struct SmtpServer {
    child: tokio::process::Child,
    port: u16,
    maildir: std::path::PathBuf,
}

impl SmtpServer {
    async fn start() -> Self {
        let python =
            tokio::task::spawn_blocking(|| egs_tests::python_venv("smtp-venv", "aiosmtpd", &["aiosmtpd>=1.4,<2"])).await.expect("the venv is made");
        let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).expect("a free port");
        let maildir = std::env::temp_dir().join(format!("egs-maildir-{}-{port}", std::process::id()));
        let child = tokio::process::Command::new(python)
            .args(["-m", "aiosmtpd", "-n", "-l", &format!("127.0.0.1:{port}"), "-c", "aiosmtpd.handlers.Mailbox"])
            .arg(&maildir)
            .kill_on_drop(true)
            .spawn()
            .expect("aiosmtpd starts");
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        while tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_err() {
            assert!(tokio::time::Instant::now() < deadline, "aiosmtpd did not listen on {port}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Self { child, port, maildir }
    }

    fn messages(&self) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(self.maildir.join("new")) else { return Vec::new() };
        entries.filter_map(|e| e.ok()).filter_map(|e| std::fs::read_to_string(e.path()).ok()).collect()
    }
}

#[tokio::test]
async fn email_channels_send_through_the_smtp_server() {
    let mut smtp = SmtpServer::start().await;
    let url = format!("smtp://127.0.0.1:{}", smtp.port);
    let app = TestApp::spawn_with(|s| {
        s.notify.smtp_url = Some(url.into());
        s.notify.email_domains = vec!["example.com".into()];
    })
    .await;
    let two = two_slices(&app).await;
    let bad =
        try_create_channel(&app, &two.token_a, json!({ "kind": "EMAIL", "name": "mail", "target": "ada@example.com\r\nBcc: eve@example.com" })).await;
    assert_eq!(bad["userErrors"][0]["field"], json!(["input", "target"]), "one plain address: {bad}");
    // Not a domain the operator allows, nor alice's own address: no mail to strangers.
    let stranger = try_create_channel(&app, &two.token_a, json!({ "kind": "EMAIL", "name": "spam", "target": "victim@elsewhere.org" })).await;
    assert!(stranger["userErrors"][0]["message"].as_str().unwrap_or_default().contains("your own address"), "{stranger}");
    // A user's own address, whatever its domain.
    let erin = app
        .mutate(
            &app.admin_token,
            "createUser",
            "mutation($input: CreateUserInput!) { createUser(input: $input) { user { id } userErrors { message } } }",
            json!({ "name": "erin", "email": "Erin@personal.net" }),
        )
        .await["user"]["id"]
        .clone();
    let token = "mutation($input: CreateTokenInput!) { createToken(input: $input) { secret userErrors { message } } }";
    let erin = app.mutate(&app.admin_token, "createToken", token, json!({ "name": "erin", "role": "USER", "userId": erin })).await["secret"]
        .as_str()
        .expect("a token")
        .to_owned();
    create_channel(&app, &erin, json!({ "kind": "EMAIL", "name": "me", "target": "erin@personal.net" })).await;
    let made =
        create_channel(&app, &two.token_a, json!({ "kind": "EMAIL", "name": "mail", "target": "alice@example.com", "milestones": ["PROVISIONED"] }))
            .await;
    assert_eq!(made["channel"]["target"], "alice@example.com", "{made}");
    let test = "mutation($input: NotificationChannelRef!) { testNotificationChannel(input: $input) { delivered error userErrors { message } } }";
    let tried = app.mutate(&two.token_a, "testNotificationChannel", test, json!({ "id": id_of(&made["channel"]) })).await;
    assert_eq!(tried["delivered"], true, "{tried}");
    let gpr = create_gpr(&app, &two.token_a, &two.slice_a, "mailed", json!({})).await;
    provisioned(&app, &two.token_a, &id_of(&gpr)).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while smtp.messages().len() < 2 {
        assert!(tokio::time::Instant::now() < deadline, "mail did not arrive: {:?}", smtp.messages());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let messages = smtp.messages();
    assert!(messages.iter().all(|m| m.contains("To: alice@example.com")), "{messages:#?}");
    assert!(messages.iter().any(|m| m.contains("Subject: [EGS] Test message for channel mail")), "{messages:#?}");
    let milestone = messages.iter().find(|m| m.contains("Subject: [EGS] GPR mailed in slice team-a is provisioned")).expect("the milestone mail");
    assert!(milestone.contains("Milestone: PROVISIONED"), "{milestone}");
    let _ = smtp.child.kill().await;
    let _ = std::fs::remove_dir_all(&smtp.maildir);
    app.finish().await;
}

#[tokio::test]
async fn a_user_removed_from_the_slice_hears_no_more_of_its_gprs() {
    let app = TestApp::spawn().await;
    let two = two_slices(&app).await;
    let (url, seen) = receiver(vec![]).await;
    create_channel(&app, &two.token_a, json!({ "kind": "WEBHOOK", "name": "mine", "target": url, "milestones": ["QUEUED", "RELEASED"] })).await;
    let gpr = create_gpr(&app, &two.token_a, &two.slice_a, "before", json!({})).await;
    wait_posts(&seen, "queued", |p| milestones_of(p) == ["QUEUED"]).await;
    provisioned(&app, &two.token_a, &id_of(&gpr)).await;
    let alice = app.ok(&app.admin_token, "query { users { id name } }", json!({})).await["users"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|u| u["name"] == "alice")
        .map(id_of)
        .expect("alice");
    let remove = "mutation($input: RemoveSliceMemberInput!) { removeSliceMember(input: $input) { slice { id } userErrors { message } } }";
    app.mutate(&app.admin_token, "removeSliceMember", remove, json!({ "sliceId": two.slice_a, "userId": alice })).await;
    let release = "mutation($input: GprActionInput!) { earlyReleaseGpr(input: $input) { gpr { id } userErrors { message } } }";
    app.mutate(&app.admin_token, "earlyReleaseGpr", release, json!({ "id": id_of(&gpr) })).await;
    let completed = "query($id: ID!) { gpr(id: $id) { phase } }";
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    while app.ok(&app.admin_token, completed, json!({ "id": id_of(&gpr) })).await["gpr"]["phase"] != "COMPLETED" {
        assert!(tokio::time::Instant::now() < deadline, "not released");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(milestones_of(&posts(&seen)), ["QUEUED"], "nothing after the removal");
    app.finish().await;
}

#[tokio::test]
async fn a_promise_that_moves_by_more_than_the_threshold_is_news() {
    let app = TestApp::spawn().await;
    let cluster = register_cluster(&app, "c1").await;
    add_nodes(&app, &cluster, "h", 1, SHAPE_H100, 8).await;
    let slice = create_slice(&app, "team-a", &cluster, json!({})).await;
    let (_, token) = member(&app, "alice", &slice, "EDITOR").await;
    let (url, seen) = receiver(vec![]).await;
    let input = json!({ "kind": "WEBHOOK", "name": "moves", "target": url, "milestones": ["ESTIMATE_MOVED"], "estimateMovedMinutes": 30 });
    create_channel(&app, &token, input).await;
    // The only node is A's for two hours; B waits for it, and C for B.
    let a = id_of(&create_gpr(&app, &token, &slice, "a", json!({ "duration": "2h" })).await);
    provisioned(&app, &token, &a).await;
    let b = id_of(&create_gpr(&app, &token, &slice, "b", json!({ "duration": "1h" })).await);
    let c = id_of(&create_gpr(&app, &token, &slice, "c", json!({ "duration": "1h" })).await);
    let promise = "query($id: ID!) { gpr(id: $id) { startNoLaterThan } }";
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    while app.ok(&token, promise, json!({ "id": c })).await["gpr"]["startNoLaterThan"].is_null() {
        assert!(tokio::time::Instant::now() < deadline, "C never got a promise");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Small moves (none so far) are not news; A's early release moves C's promise two hours earlier.
    assert!(posts(&seen).is_empty(), "{:#?}", posts(&seen));
    let release = "mutation($input: GprActionInput!) { earlyReleaseGpr(input: $input) { gpr { id } userErrors { message } } }";
    app.mutate(&token, "earlyReleaseGpr", release, json!({ "id": a })).await;
    provisioned(&app, &token, &b).await;
    let posted = wait_posts(&seen, "C's promise moved", |p| p.iter().any(|p| p.body["gpr"]["id"] == c.as_str())).await;
    let moved = posted.iter().find(|p| p.body["gpr"]["id"] == c.as_str()).expect("C's news");
    assert_eq!(moved.body["milestone"], "ESTIMATE_MOVED");
    let secs = moved.body["event"]["estimateMovedSeconds"].as_i64().unwrap_or_default();
    assert!(secs <= -30 * 60, "earlier by more than the threshold: {:#?}", moved.body);
    assert!(moved.body["headline"].as_str().unwrap_or_default().contains("has a new start estimate"), "{:#?}", moved.body);
    app.finish().await;
}
