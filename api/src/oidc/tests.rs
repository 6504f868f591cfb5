use super::*;
use jsonwebtoken::{EncodingKey, Header};

// Two P-256 keys made for these tests (openssl ecparam -name prime256v1), and their public
// halves as an issuer publishes them.
const KEY_1: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgwj5PtFdUU03ywHM/
uo7i0VMS1kTozZ1mfjHVfjGyIN2hRANCAAScXz8z3SKtuJWklBX6BNRp0V4bLzKz
Ey0hkrWQcCBB5Q+a2hZRwMPXfMpv3PDCDIE6CVIYRHL3bFlnK9BDwrTY
-----END PRIVATE KEY-----
";
const KEY_2: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgygs6J6CV+L0esmGx
uya1wkrwCrC0YOJPsn1CmZrzcT2hRANCAARsJd8QGtmcs7fJDYlFlN2iyc/A69we
pDehhc8C72apXIe3YIgnWSCHLDrwFLRYe8vSVZd8wmRhxc7HqNMZX8Cl
-----END PRIVATE KEY-----
";
const ISSUER: &str = "https://idp.example.com";

fn jwks() -> JwkSet {
    serde_json::from_value(serde_json::json!({ "keys": [
            { "kty": "EC", "crv": "P-256", "kid": "one", "alg": "ES256", "use": "sig",
              "x": "nF8_M90irbiVpJQV-gTUadFeGy8ysxMtIZK1kHAgQeU", "y": "D5raFlHAw9d8ym_c8MIMgToJUhhEcvdsWWcr0EPCtNg" },
            { "kty": "EC", "crv": "P-256", "kid": "two", "alg": "ES256", "use": "sig",
              "x": "bCXfEBrZnLO3yQ2JRZTdosnPwOvcHqQ3oYXPAu9mqVw", "y": "h7dgiCdZIIcsOvAUtFh7y9JVl3zCZGHFzseo0xlfwKU" },
        ] }))
    .expect("a key set")
}

fn claims(changes: Value) -> Value {
    let now = chrono::Utc::now().timestamp();
    let mut c = serde_json::json!({
        "iss": ISSUER, "aud": "egs", "sub": "u-42", "iat": now, "exp": now + 300, "nonce": "n1",
        "preferred_username": "Ann.Lee", "email": "ann@example.com", "groups": ["ml", "ops"],
    });
    for (k, v) in changes.as_object().expect("changes") {
        if v.is_null() {
            c.as_object_mut().expect("claims").remove(k);
        } else {
            c[k] = v.clone();
        }
    }
    c
}

fn signed(key: &str, kid: &str, claims: &Value) -> String {
    let mut header = Header::new(Algorithm::ES256);
    header.kid = Some(kid.into());
    jsonwebtoken::encode(&header, claims, &EncodingKey::from_ec_pem(key.as_bytes()).expect("a key")).expect("signed")
}

fn verify(token: &str, kid: &str) -> Result<Identity, SignInError> {
    let keys = jwks();
    let jwk = keys.find(kid).expect("published");
    verify_id_token(token, jwk, Algorithm::ES256, ISSUER, "egs", "n1", "groups")
}

#[test]
fn a_token_the_issuer_signed_for_this_client_and_sign_in_names_its_user_and_groups() {
    let identity = verify(&signed(KEY_1, "one", &claims(serde_json::json!({}))), "one").expect("valid");
    assert_eq!((identity.issuer.as_str(), identity.subject.as_str(), identity.username.as_str()), (ISSUER, "u-42", "Ann.Lee"));
    assert_eq!(identity.groups, vec!["ml", "ops"]);
    let no_name = verify(&signed(KEY_1, "one", &claims(serde_json::json!({ "preferred_username": null, "groups": "solo" }))), "one").expect("valid");
    assert_eq!((no_name.username.as_str(), no_name.groups.as_slice()), ("ann", &["solo".to_owned()][..]));
}

#[test]
fn an_e_mail_is_the_users_only_when_the_provider_verified_it() {
    let email = |changes: Value| verify(&signed(KEY_1, "one", &claims(changes)), "one").expect("valid").email;
    assert_eq!(email(serde_json::json!({})), None, "no email_verified claim");
    assert_eq!(email(serde_json::json!({ "email_verified": false })), None);
    assert_eq!(email(serde_json::json!({ "email_verified": "false" })), None);
    assert_eq!(email(serde_json::json!({ "email_verified": true })).as_deref(), Some("ann@example.com"));
    assert_eq!(email(serde_json::json!({ "email_verified": "true" })).as_deref(), Some("ann@example.com"), "some providers send a string");
}

#[test]
fn a_forged_misaddressed_expired_or_replayed_token_is_refused() {
    let refused = |token: String, kid: &str, why: &str| {
        let error = verify(&token, kid).expect_err(why);
        assert!(matches!(error, SignInError::IdToken(_)), "{why}: {error}");
    };
    // Signed with another key than the one its header names.
    refused(signed(KEY_2, "one", &claims(serde_json::json!({}))), "one", "a signature by another key");
    refused(signed(KEY_1, "one", &claims(serde_json::json!({ "iss": "https://evil.example.com" }))), "one", "another issuer");
    refused(signed(KEY_1, "one", &claims(serde_json::json!({ "aud": "another-app" }))), "one", "another audience");
    refused(signed(KEY_1, "one", &claims(serde_json::json!({ "aud": ["egs", "other"], "azp": "other" }))), "one", "issued to another client");
    let past = chrono::Utc::now().timestamp() - 3600;
    refused(signed(KEY_1, "one", &claims(serde_json::json!({ "exp": past, "iat": past - 60 }))), "one", "expired");
    refused(signed(KEY_1, "one", &claims(serde_json::json!({ "nonce": "another-sign-in" }))), "one", "another sign-in's nonce");
    refused(signed(KEY_1, "one", &claims(serde_json::json!({ "nonce": null }))), "one", "no nonce");
    refused(signed(KEY_1, "one", &claims(serde_json::json!({ "sub": null }))), "one", "no subject");
    // Altered after signing: the payload says another user.
    let token = signed(KEY_1, "one", &claims(serde_json::json!({})));
    let mut parts: Vec<&str> = token.split('.').collect();
    let forged = B64.encode(serde_json::to_vec(&claims(serde_json::json!({ "sub": "admin" }))).expect("json"));
    parts[1] = &forged;
    refused(parts.join("."), "one", "a payload changed after signing");
    // `alg: none` and shared-secret algorithms are not taken, whatever the key set holds.
    let mut none = Header::new(Algorithm::HS256);
    none.kid = Some("one".into());
    let hs = jsonwebtoken::encode(&none, &claims(serde_json::json!({})), &EncodingKey::from_secret(b"guess")).expect("signed");
    assert!(!ALGORITHMS.contains(&jsonwebtoken::decode_header(&hs).expect("header").alg));
}

#[test]
fn a_key_is_found_by_its_id_or_as_the_only_one_for_the_algorithm() {
    let keys = jwks();
    assert_eq!(find_key(&keys, Some("two"), Algorithm::ES256).and_then(|k| k.common.key_id), Some("two".into()));
    assert!(find_key(&keys, Some("three"), Algorithm::ES256).is_none(), "a key the issuer does not publish");
    assert!(find_key(&keys, None, Algorithm::ES256).is_none(), "two keys and no id: ambiguous");
    let one: JwkSet = serde_json::from_value(serde_json::json!({ "keys": [serde_json::to_value(keys.find("one")).expect("json")] })).expect("set");
    assert!(find_key(&one, None, Algorithm::ES256).is_some());
}

#[test]
fn the_state_cookie_is_refused_when_altered_or_expired_and_the_return_path_stays_on_this_site() {
    let settings = OidcArgs { issuer: Some(ISSUER.into()), client_id: Some("egs".into()), ..Default::default() };
    let oidc = Oidc::from_settings(&settings, [7; 32]).expect("settings").expect("on");
    let pending = Pending {
        state: "s".into(),
        nonce: "n".into(),
        verifier: "v".into(),
        redirect_uri: "https://egs/auth/oidc/callback".into(),
        return_to: "/".into(),
        expires: 1_000,
    };
    let sealed = oidc.seal(&pending);
    assert!(oidc.open(&sealed, 999).is_some_and(|p| p.state == "s"));
    assert!(oidc.open(&sealed, 1_000).is_none(), "expired");
    let (body, sig) = sealed.split_once('.').expect("two parts");
    let mut changed = pending;
    changed.return_to = "/admin".into();
    let other_body = oidc.seal(&changed).split_once('.').expect("two parts").0.to_owned();
    assert!(oidc.open(&format!("{other_body}.{sig}"), 999).is_none(), "a body under another body's signature");
    let other_key = Oidc::from_settings(&settings, [8; 32]).expect("settings").expect("on");
    assert!(other_key.open(&format!("{body}.{sig}"), 999).is_none(), "another deployment's key");
    for (given, kept) in [
        ("/queue", Some("/queue")),
        ("/gprs/R3By?tab=events", Some("/gprs/R3By?tab=events")),
        ("/a b/é", Some("/a%20b/%C3%A9")),
        ("/./queue/../slices", Some("/slices")),
        ("//evil.com", None),
        ("https://evil.com", None),
        ("/\\evil", None),
        ("/\\/evil", None),
        // Browsers drop tabs and newlines: these are `//evil.host/steal`.
        ("/\t/evil.host/steal", None),
        ("/\n/evil.host", None),
        ("/\r\n/evil.host", None),
        ("/\u{1}x", None),
        ("/x\u{7f}", None),
        ("/\u{85}x", None),
        ("/#frag", None),
        ("queue", None),
        ("", None),
    ] {
        assert_eq!(local_path(given).as_deref(), kept, "{given:?}");
    }
    assert_eq!(local_path(&format!("/{}", "a".repeat(MAX_RETURN_PATH))), None, "too long");
}

#[test]
fn a_callback_is_refused_before_any_session_when_its_return_path_leaves_this_site() {
    let pending = |return_to: &str| Pending {
        state: "s".into(),
        nonce: "n".into(),
        verifier: "v".into(),
        redirect_uri: "https://egs/auth/oidc/callback".into(),
        return_to: return_to.into(),
        expires: 1_000,
    };
    let query = |state: &str, code: Option<&str>| CallbackQuery {
        code: code.map(str::to_owned),
        state: Some(state.into()),
        error: None,
        error_description: None,
    };
    let accepted = accept_callback(Some(pending("/queue")), &query("s", Some("c"))).expect("a good callback");
    assert_eq!((accepted.1.as_str(), accepted.2.as_str()), ("c", "/queue"));
    // A cookie sealed with a path a browser reads as another host (as an older gateway could
    // have): refused before the code is exchanged, so no session exists to leak.
    for bad in ["/\t/evil.host/steal", "//evil.host", "/\u{1}x", "https://evil.host/"] {
        let refused = accept_callback(Some(pending(bad)), &query("s", Some("c")));
        assert!(matches!(refused, Err(SignInError::ReturnPath)), "{bad:?}: {:?}", refused.err());
    }
    // No cookie, another state, no code, an error from the issuer: each refused too.
    assert!(matches!(accept_callback(None, &query("s", Some("c"))), Err(SignInError::State)));
    assert!(matches!(accept_callback(Some(pending("/")), &query("t", Some("c"))), Err(SignInError::State)));
    assert!(matches!(accept_callback(Some(pending("/")), &query("s", None)), Err(SignInError::Provider(_))));
    let denied = CallbackQuery { error: Some("access_denied".into()), error_description: Some("a\nforged".into()), ..query("s", Some("c")) };
    assert!(matches!(accept_callback(Some(pending("/")), &denied), Err(SignInError::Provider(m)) if !m.contains('\n')));
}

#[test]
fn error_text_from_outside_cannot_forge_a_log_line_or_run_long() {
    assert_eq!(plain("access_denied"), "access_denied");
    assert_eq!(plain("no\nINFO egs: signed in user=admin"), "no INFO egs: signed in user=admin");
    assert_eq!(plain("a\r\n\u{1b}[31mred\u{7}"), "a   [31mred ");
    let long = plain(&"x".repeat(5_000));
    assert_eq!(long.chars().count(), MAX_ERROR_TEXT + 1);
    assert!(long.ends_with('…'));
}
