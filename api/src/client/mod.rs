//! `egs login | gpr | events | gpus`: the command-line client users script EGS with. Every
//! command is one or a few GraphQL operations over HTTP ([`operations`], typed from the
//! schema), prints a table or (`--output json`) the data as the API gave it, and exits with a
//! code a script can act on ([`Failure::code`]).

pub mod args;
mod commands;
pub mod operations;
mod table;

pub use args::{ClientCommand, Connection, Output};

use graphql_client::{GraphQLQuery, Response};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::process::ExitCode;

/// Why a command did not do what it was asked, and the exit code that says so.
#[derive(Debug)]
pub enum Failure {
    /// Exit 1: the gateway could not be reached, or failed.
    Other(anyhow::Error),
    /// Exit 2: the command line itself is wrong (clap uses 2 for its own errors too).
    Usage(String),
    /// Exit 3: the gateway refused the input (`userErrors`, `INVALID_INPUT`, `CONFLICT`).
    Refused(String),
    /// Exit 4: no such object, or not one the token may see.
    NotFound(String),
    /// Exit 5: not signed in, a bad or expired token, or not allowed.
    Denied(String),
    /// Exit 6: `--wait` ended without the GPR provisioned (it failed, was cancelled or
    /// rejected, or the wait timed out).
    NotProvisioned(String),
}

impl Failure {
    pub fn code(&self) -> u8 {
        match self {
            Failure::Other(_) => 1,
            Failure::Usage(_) => 2,
            Failure::Refused(_) => 3,
            Failure::NotFound(_) => 4,
            Failure::Denied(_) => 5,
            Failure::NotProvisioned(_) => 6,
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Other(error) => write!(f, "{error:#}"),
            Failure::Usage(m) | Failure::Refused(m) | Failure::NotFound(m) | Failure::Denied(m) | Failure::NotProvisioned(m) => f.write_str(m),
        }
    }
}

impl From<reqwest::Error> for Failure {
    fn from(error: reqwest::Error) -> Self {
        Failure::Other(anyhow::Error::new(error).context("the gateway could not be reached"))
    }
}

pub type Result<T> = std::result::Result<T, Failure>;

/// Runs a client command; prints what it did (stdout) or why not (stderr).
pub async fn run(command: ClientCommand) -> ExitCode {
    match commands::run(command).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("error: {failure}");
            ExitCode::from(failure.code())
        }
    }
}

/// What `egs login` keeps: the gateway and the token, in a file only its owner can read.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Saved {
    pub server: String,
    pub token: String,
}

/// `--config`, else `$XDG_CONFIG_HOME/egs/cli.json`, else `~/.config/egs/cli.json`.
pub fn config_path(given: Option<&PathBuf>) -> Option<PathBuf> {
    if let Some(path) = given {
        return Some(path.clone());
    }
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".config")))?;
    Some(base.join("egs").join("cli.json"))
}

fn load(path: Option<&PathBuf>) -> Option<Saved> {
    let text = std::fs::read_to_string(config_path(path)?).ok()?;
    serde_json::from_str(&text).ok()
}

fn save(path: Option<&PathBuf>, saved: &Saved) -> Result<PathBuf> {
    let path = config_path(path).ok_or_else(|| Failure::Usage("no place for the login: set HOME, XDG_CONFIG_HOME or --config".into()))?;
    let text = serde_json::to_string_pretty(saved).map_err(|e| Failure::Other(e.into()))?;
    crate::bootstrap::write_private_file(&path, &format!("{text}\n")).map_err(Failure::Other)?;
    Ok(path)
}

/// Times a query is asked again when the gateway answers 503 (its database not answering).
const QUERY_RETRIES: usize = 3;

/// The token the flags or the environment give: `--token` (with a warning: any user of the
/// machine can read a command line), else `EGS_TOKEN`.
pub(crate) fn given_token(connection: &Connection) -> Option<String> {
    if let Some(token) = &connection.token {
        eprintln!("warning: a token given with --token is visible to every user of this machine; use EGS_TOKEN or `egs login --token-file`");
        return Some(token.clone());
    }
    std::env::var("EGS_TOKEN").ok().filter(|t| !t.trim().is_empty())
}

/// Refuses a gateway URL the token should not be sent to: not http(s), or plain `http://` to
/// another machine (anyone on the way reads the token) unless `--insecure-http` says so.
fn check_server(server: &str, insecure_http: bool) -> Result<()> {
    let url = reqwest::Url::parse(server).map_err(|_| Failure::Usage(format!("`{server}` is not an http:// or https:// URL")))?;
    match url.scheme() {
        "https" => Ok(()),
        "http" => {
            let local = match url.host() {
                Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
                Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
                Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
                None => false,
            };
            if local || insecure_http {
                Ok(())
            } else {
                Err(Failure::Usage(format!(
                    "`{server}` is plain http:// to another machine: the token would cross the network readable; use https://, or --insecure-http if you must"
                )))
            }
        }
        _ => Err(Failure::Usage(format!("`{server}` is not an http:// or https:// URL"))),
    }
}

/// A name from the gateway as a terminal may show it: control characters (escape sequences
/// an agent could have put in a node's name, line breaks) become spaces.
pub fn printable(text: &str) -> String {
    text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect()
}

/// A signed-in connection to one gateway.
pub struct Session {
    http: reqwest::Client,
    endpoint: String,
    token: String,
    pub output: Output,
}

impl Session {
    /// From the flags (`--server`, `--token`, or `EGS_SERVER`, `EGS_TOKEN`), else what
    /// `egs login` saved.
    pub fn open(connection: &Connection) -> Result<Self> {
        let saved = load(connection.config.as_ref());
        let server = connection.server.clone().or_else(|| saved.as_ref().map(|s| s.server.clone()));
        let token = given_token(connection).or_else(|| saved.as_ref().map(|s| s.token.clone()));
        let (Some(server), Some(token)) = (server, token) else {
            return Err(Failure::Denied("not signed in: run `egs login --server URL` (or set EGS_SERVER and EGS_TOKEN)".into()));
        };
        Self::with(&server, &token, connection)
    }

    fn with(server: &str, token: &str, connection: &Connection) -> Result<Self> {
        let server = server.trim_end_matches('/');
        check_server(server, connection.insecure_http)?;
        let output = connection.output;
        let http = reqwest::Client::builder()
            .timeout(std::time::Duration::from_secs(60))
            .user_agent(concat!("egs-cli/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| Failure::Other(e.into()))?;
        Ok(Self { http, endpoint: format!("{server}/graphql"), token: token.trim().to_owned(), output })
    }

    /// Runs one operation; its `data` as JSON, or the failure its first error's code says.
    pub async fn run<Q: GraphQLQuery>(&self, variables: Q::Variables) -> Result<serde_json::Value> {
        let body = Q::build_query(variables);
        // A query that meets a database not answering (503) is asked again after the wait the
        // gateway gives; a mutation is not, since it may have been stored before the answer.
        let is_query = body.query.contains(&format!("query {}", body.operation_name));
        let mut attempt = 0;
        let response = loop {
            let response = self
                .http
                .post(&self.endpoint)
                .bearer_auth(&self.token)
                .header("accept", "application/graphql-response+json, application/json")
                .json(&body)
                .send()
                .await?;
            if !(is_query && response.status() == reqwest::StatusCode::SERVICE_UNAVAILABLE && attempt < QUERY_RETRIES) {
                break response;
            }
            attempt += 1;
            let wait = response.headers().get("retry-after").and_then(|v| v.to_str().ok()?.parse::<u64>().ok()).unwrap_or(1).min(10);
            tokio::time::sleep(std::time::Duration::from_secs(wait)).await;
        };
        let status = response.status();
        let text = response.text().await?;
        let parsed: Response<serde_json::Value> = match serde_json::from_str(&text) {
            Ok(parsed) => parsed,
            Err(_) if status == reqwest::StatusCode::UNAUTHORIZED => {
                return Err(Failure::Denied("the token was refused; run `egs login` again".into()));
            }
            Err(_) => return Err(Failure::Other(anyhow::anyhow!("the gateway answered {status}: {}", text.chars().take(300).collect::<String>()))),
        };
        if let Some(error) = parsed.errors.as_ref().and_then(|errors| errors.first()) {
            let code = error.extensions.as_ref().and_then(|e| e.get("code")).and_then(|c| c.as_str()).unwrap_or_default();
            let message = error.message.clone();
            return Err(match code {
                "UNAUTHENTICATED" | "FORBIDDEN" => Failure::Denied(message),
                "NOT_FOUND" => Failure::NotFound(message),
                "INVALID_INPUT" | "CONFLICT" | "GRAPHQL_VALIDATION_FAILED" | "BAD_USER_INPUT" | "TOO_MANY_REQUESTS" => Failure::Refused(message),
                _ if status.is_client_error() => Failure::Refused(message),
                _ => Failure::Other(anyhow::anyhow!(message)),
            });
        }
        parsed.data.ok_or_else(|| Failure::Other(anyhow::anyhow!("the gateway answered {status} without data")))
    }
}
