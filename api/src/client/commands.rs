//! What each client command does. Answers are turned into JSON values as the API gave them
//! (`--output json` prints those), and tables are read off the same values.

use super::args::*;
use super::operations::*;
use super::{Failure, Result, Saved, Session, table};
use serde_json::Value;
use std::time::Duration;

pub async fn run(command: ClientCommand) -> Result<()> {
    match command {
        ClientCommand::Login(args) => login(args).await,
        ClientCommand::Gpr { command, connection } => {
            let session = Session::open(&connection)?;
            gpr(&session, command).await
        }
        ClientCommand::Events(args) => {
            let session = Session::open(&args.connection)?;
            events(&session, args).await
        }
        ClientCommand::Gpus(args) => {
            let session = Session::open(&args.connection)?;
            gpus(&session, args).await
        }
        ClientCommand::WhatIf(args) => {
            let session = Session::open(&args.connection)?;
            what_if(&session, args).await
        }
    }
}

fn print_json(value: &Value) {
    println!("{}", serde_json::to_string_pretty(value).unwrap_or_default());
}

/// A value as text for people (see [`super::printable`]).
fn text(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(s) => super::printable(s),
        other => other.to_string(),
    }
}

async fn login(args: LoginArgs) -> Result<()> {
    let connection = &args.connection;
    let server = connection.server.clone().ok_or_else(|| Failure::Usage("give the gateway's URL: egs login --server URL".into()))?;
    let token = match (&args.token_file, super::given_token(connection)) {
        (Some(path), _) if path.as_os_str() == "-" => {
            let mut token = String::new();
            std::io::stdin().read_line(&mut token).map_err(|e| Failure::Other(e.into()))?;
            token
        }
        (Some(path), _) => std::fs::read_to_string(path).map_err(|e| Failure::Usage(format!("cannot read {}: {e}", path.display())))?,
        (None, Some(token)) => token,
        (None, None) => return Err(Failure::Usage("give a token: EGS_TOKEN or --token-file (or --token)".into())),
    };
    let token = token.trim().to_owned();
    let session = Session::with(&server, &token, connection)?;
    let viewer = session.run::<EgsCliViewer>(egs_cli_viewer::Variables).await?["viewer"].clone();
    let path = super::save(connection.config.as_ref(), &Saved { server: server.trim_end_matches('/').to_owned(), token })?;
    match session.output {
        Output::Json => print_json(&viewer),
        Output::Table => println!("signed in to {server} as {} ({}); saved in {}", text(&viewer["name"]), text(&viewer["role"]), path.display()),
    }
    Ok(())
}

/// The id of the object of `list` named `given` (or whose id it is).
fn id_named(list: &Value, given: &str) -> Option<String> {
    list.as_array().into_iter().flatten().find(|o| o["name"] == given || o["id"] == given).map(|o| text(&o["id"]))
}

/// A slice's id from its name (or the id itself).
async fn slice_id(session: &Session, given: &str) -> Result<String> {
    let slices = session.run::<EgsCliSlices>(egs_cli_slices::Variables).await?;
    id_named(&slices["slices"]["nodes"], given).ok_or_else(|| Failure::NotFound(format!("no slice `{given}` that you may see")))
}

/// A template's id from its name within the slice (or the id itself).
async fn template_id(session: &Session, slice: &str, given: &str) -> Result<String> {
    let templates = session.run::<EgsCliTemplates>(egs_cli_templates::Variables { slice_id: Some(slice.to_owned()) }).await?;
    id_named(&templates["gprTemplates"], given).ok_or_else(|| Failure::NotFound(format!("no profile `{given}` is published to this slice")))
}

/// The slice and the template (if any) an ask names, as ids.
async fn ask_ids(session: &Session, ask: &Ask) -> Result<(String, Option<String>)> {
    let slice = slice_id(session, &ask.slice).await?;
    let template = match &ask.template {
        Some(name) => Some(template_id(session, &slice, name).await?),
        None => None,
    };
    Ok((slice, template))
}

/// A payload with `userErrors`: its `gpr`, or the refusal.
fn payload_gpr(payload: &Value) -> Result<Value> {
    let errors = payload["userErrors"].as_array().cloned().unwrap_or_default();
    if errors.is_empty() {
        return Ok(payload["gpr"].clone());
    }
    let lines: Vec<String> = errors
        .iter()
        .map(|e| {
            let field: Vec<String> =
                e["field"].as_array().into_iter().flatten().filter_map(|f| f.as_str()).filter(|f| *f != "input").map(str::to_owned).collect();
            let message = text(&e["message"]);
            if field.is_empty() { message } else { format!("{}: {message}", field.join(".")) }
        })
        .collect();
    let has = |code: &str| errors.iter().any(|e| e["code"] == code);
    Err(if has("NOT_FOUND") {
        Failure::NotFound(lines.join("; "))
    } else if has("FORBIDDEN") {
        Failure::Denied(lines.join("; "))
    } else {
        Failure::Refused(lines.join("; "))
    })
}

const GPR_COLUMNS: [&str; 8] = ["ID", "NAME", "SLICE", "PHASE", "NODES", "SHAPE", "PRIORITY", "STARTS / ENDS"];

fn gpr_row(g: &Value) -> Vec<String> {
    let when = match g["phase"].as_str() {
        Some("PROVISIONED") => format!("ends {}", text(&g["exitAt"])),
        Some("QUEUED") => match (g["estimatedStartAt"].as_str(), g["startNoLaterThan"].as_str()) {
            (Some(expected), Some(promise)) => format!("~{expected} (by {promise})"),
            _ => "being planned".to_owned(),
        },
        _ => text(&g["reason"]),
    };
    let shape = g["assignedGpuShape"].as_str().or(g["gpuShape"].as_str()).unwrap_or("any").to_owned();
    vec![text(&g["id"]), text(&g["name"]), text(&g["slice"]["name"]), text(&g["phase"]), text(&g["nodeCount"]), shape, text(&g["priority"]), when]
}

fn print_gprs(session: &Session, gprs: &[Value]) {
    match session.output {
        Output::Json => print_json(&Value::Array(gprs.to_vec())),
        Output::Table => table::print(&GPR_COLUMNS, &gprs.iter().map(gpr_row).collect::<Vec<_>>()),
    }
}

fn print_gpr(session: &Session, g: &Value) {
    match session.output {
        Output::Json => print_json(g),
        Output::Table => {
            let fields = [
                ("id", "id"),
                ("name", "name"),
                ("phase", "phase"),
                ("reason", "reason"),
                ("nodes", "nodeCount"),
                ("shape", "gpuShape"),
                ("assigned shape", "assignedGpuShape"),
                ("priority", "priority"),
                ("duration", "duration"),
                ("queue position", "queuePosition"),
                ("expected start", "estimatedStartAt"),
                ("starts no later than", "startNoLaterThan"),
                ("provisioned at", "provisionedAt"),
                ("exits at", "exitAt"),
                ("extended by", "extendedBy"),
                ("extension requested", "extensionRequested"),
                ("version", "version"),
            ];
            let mut rows: Vec<Vec<String>> = vec![vec!["slice".into(), text(&g["slice"]["name"])]];
            rows.extend(fields.iter().filter(|(_, key)| !g[*key].is_null()).map(|(label, key)| vec![(*label).to_owned(), text(&g[*key])]));
            if let Some(template) = g["template"]["name"].as_str() {
                rows.push(vec!["profile".into(), template.to_owned()]);
            }
            table::print(&["FIELD", "VALUE"], &rows);
        }
    }
}

fn labels(given: &[String]) -> Result<Vec<egs_cli_create_gpr::LabelInput>> {
    given
        .iter()
        .map(|l| match l.split_once('=') {
            Some((key, value)) => Ok(egs_cli_create_gpr::LabelInput { key: key.to_owned(), value: value.to_owned() }),
            None => Err(Failure::Usage(format!("label `{l}` is not key=value"))),
        })
        .collect()
}

async fn gpr(session: &Session, command: GprCommand) -> Result<()> {
    match command {
        GprCommand::Create(args) => create(session, args).await,
        GprCommand::List(args) => list(session, args).await,
        GprCommand::Show(args) => {
            let g = session.run::<EgsCliGpr>(egs_cli_gpr::Variables { id: args.id }).await?["gpr"].clone();
            print_gpr(session, &g);
            Ok(())
        }
        GprCommand::Edit(args) => {
            let current = session.run::<EgsCliGpr>(egs_cli_gpr::Variables { id: args.id.clone() }).await?["gpr"].clone();
            let version = current["version"].as_i64().unwrap_or_default() as i64;
            let input = egs_cli_update_gpr::UpdateGprInput {
                id: args.id,
                version,
                name: args.name,
                node_count: args.nodes.map(i64::from),
                duration: args.duration,
                priority: args.priority.map(i64::from),
                gpu_shape: args.shape,
                ..Default::default()
            };
            let payload = session.run::<EgsCliUpdateGpr>(egs_cli_update_gpr::Variables { input }).await?;
            print_gpr(session, &payload_gpr(&payload["updateGpr"])?);
            Ok(())
        }
        GprCommand::Cancel(args) => {
            let input = egs_cli_cancel_gpr::GprActionInput { id: args.id, version: None };
            let payload = session.run::<EgsCliCancelGpr>(egs_cli_cancel_gpr::Variables { input }).await?;
            print_gpr(session, &payload_gpr(&payload["cancelGpr"])?);
            Ok(())
        }
        GprCommand::Release(args) => {
            let input = egs_cli_release_gpr::GprActionInput { id: args.id, version: None };
            let payload = session.run::<EgsCliReleaseGpr>(egs_cli_release_gpr::Variables { input }).await?;
            print_gpr(session, &payload_gpr(&payload["earlyReleaseGpr"])?);
            Ok(())
        }
        GprCommand::Extend(args) => {
            let input = egs_cli_extend_gpr::ExtendGprInput { id: args.id, by: args.by, version: None };
            let payload = session.run::<EgsCliExtendGpr>(egs_cli_extend_gpr::Variables { input }).await?;
            print_gpr(session, &payload_gpr(&payload["extendGpr"])?);
            Ok(())
        }
        GprCommand::WaitTime(args) => wait_time(session, args).await,
    }
}

async fn create(session: &Session, args: CreateArgs) -> Result<()> {
    let wait_for = egs_wire::duration::parse(&args.wait_timeout).map_err(|e| Failure::Usage(format!("--wait-timeout: {e}")))?;
    let (slice, template) = ask_ids(session, &args.ask).await?;
    let input = egs_cli_create_gpr::CreateGprInput {
        slice_id: slice,
        name: args.name,
        template_id: template,
        node_count: args.ask.nodes.map(i64::from),
        duration: args.ask.duration,
        gpu_shape: args.ask.shape,
        gpus_per_node: args.ask.gpus_per_node.map(i64::from),
        priority: args.ask.priority.map(i64::from),
        idle_timeout: args.idle_timeout,
        labels: labels(&args.labels)?,
        preemptible: !args.not_preemptible,
        ..Default::default()
    };
    let payload = session.run::<EgsCliCreateGpr>(egs_cli_create_gpr::Variables { input }).await?;
    let created = payload_gpr(&payload["createGpr"])?;
    if !args.wait {
        print_gpr(session, &created);
        return Ok(());
    }
    if session.output == Output::Table {
        eprintln!("created {} ({}); waiting until it is provisioned…", text(&created["name"]), text(&created["id"]));
    }
    let done = wait_provisioned(session, &text(&created["id"]), wait_for).await;
    match done {
        Ok(g) => {
            print_gpr(session, &g);
            Ok(())
        }
        Err(failure) => Err(failure),
    }
}

/// Polls the GPR until it is provisioned (its answer), or a phase it cannot be provisioned
/// from, or the timeout.
async fn wait_provisioned(session: &Session, id: &str, timeout: Duration) -> Result<Value> {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let g = session.run::<EgsCliGpr>(egs_cli_gpr::Variables { id: id.to_owned() }).await?["gpr"].clone();
        match g["phase"].as_str().unwrap_or_default() {
            "PROVISIONED" => return Ok(g),
            phase @ ("FAILED" | "CANCELLED" | "REJECTED" | "COMPLETED" | "RELEASING") => {
                return Err(Failure::NotProvisioned(format!("GPR {id} is {phase}: {}", text(&g["reason"]))));
            }
            _ => {}
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(Failure::NotProvisioned(format!("GPR {id} is still {} after the --wait-timeout", text(&g["phase"]))));
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

async fn list(session: &Session, args: ListArgs) -> Result<()> {
    let slice = match &args.slice {
        Some(s) => Some(slice_id(session, s).await?),
        None => None,
    };
    let phases = args
        .phases
        .iter()
        .map(|p| match serde_json::from_value::<egs_cli_gprs::GprPhase>(Value::String(p.to_uppercase())) {
            Ok(egs_cli_gprs::GprPhase::Other(_)) | Err(_) => Err(Failure::Usage(format!("`{p}` is not a GPR phase"))),
            Ok(phase) => Ok(phase),
        })
        .collect::<Result<Vec<_>>>()?;
    let filter = egs_cli_gprs::GprFilter { slice_id: slice, phases: (!phases.is_empty()).then_some(phases), awaiting_decision: false };
    let mut all = Vec::new();
    let mut after = None;
    loop {
        let want = (args.limit as usize - all.len()).min(100) as i64;
        let vars = egs_cli_gprs::Variables { filter: Some(filter.clone()), first: Some(want), after };
        let page = session.run::<EgsCliGprs>(vars).await?;
        all.extend(page["gprs"]["nodes"].as_array().cloned().unwrap_or_default());
        let more = page["gprs"]["pageInfo"]["hasNextPage"].as_bool().unwrap_or(false);
        after = page["gprs"]["pageInfo"]["endCursor"].as_str().map(str::to_owned);
        if !more || after.is_none() || all.len() >= args.limit as usize {
            break;
        }
    }
    print_gprs(session, &all);
    Ok(())
}

async fn wait_time(session: &Session, args: WaitTimeArgs) -> Result<()> {
    let (slice, template) = ask_ids(session, &args.ask).await?;
    let input = egs_cli_wait_time::WaitTimeInput {
        slice_id: slice,
        template_id: template,
        node_count: args.ask.nodes.map(i64::from),
        duration: args.ask.duration,
        gpu_shape: args.ask.shape,
        gpus_per_node: args.ask.gpus_per_node.map(i64::from),
        priority: args.ask.priority.map(i64::from),
        ..Default::default()
    };
    let rows = session.run::<EgsCliWaitTime>(egs_cli_wait_time::Variables { input }).await?["waitTimeEstimates"].clone();
    match session.output {
        Output::Json => print_json(&rows),
        Output::Table => {
            let rows: Vec<Vec<String>> = rows
                .as_array()
                .into_iter()
                .flatten()
                .map(|r| {
                    vec![
                        text(&r["cluster"]["name"]),
                        text(&r["gpuShape"]),
                        text(&r["instanceType"]),
                        text(&r["freeNodes"]),
                        text(&r["estimatedWait"]),
                        text(&r["estimatedStartAt"]),
                        format!("{} – {}", text(&r["startRange"]["p10"]), text(&r["startRange"]["p90"])),
                        text(&r["startNoLaterThan"]),
                    ]
                })
                .collect();
            table::print(&["CLUSTER", "SHAPE", "INSTANCE TYPE", "FREE", "WAIT", "EXPECTED START", "LIKELY (P10 – P90)", "NO LATER THAN"], &rows);
        }
    }
    Ok(())
}

fn print_events(session: &Session, events: &[Value]) {
    match session.output {
        // One JSON object per line, so `--follow` can be piped into a line reader.
        Output::Json => {
            for e in events {
                println!("{e}");
            }
        }
        Output::Table => {
            for e in events {
                println!("{}  {:<20}  {:<24}  {}", text(&e["createdAt"]), text(&e["kind"]), text(&e["gpr"]["name"]), text(&e["message"]));
            }
        }
    }
}

async fn events(session: &Session, args: EventsArgs) -> Result<()> {
    let slice = match &args.slice {
        Some(s) => Some(slice_id(session, s).await?),
        None => None,
    };
    let kinds = args
        .kinds
        .iter()
        .map(|k| match serde_json::from_value::<egs_cli_events::GprEventKind>(Value::String(k.to_uppercase())) {
            Ok(egs_cli_events::GprEventKind::Other(_)) | Err(_) => Err(Failure::Usage(format!("`{k}` is not a GPR event kind"))),
            Ok(kind) => Ok(kind),
        })
        .collect::<Result<Vec<_>>>()?;
    let vars = |first: Option<i64>, after: Option<String>, last: Option<i64>| egs_cli_events::Variables {
        gpr_id: args.gpr.clone(),
        slice_id: slice.clone(),
        kinds: (!kinds.is_empty()).then(|| kinds.clone()),
        text: args.text.clone(),
        first,
        after,
        last,
    };
    let page = session.run::<EgsCliEvents>(vars(None, None, Some(i64::from(args.last)))).await?;
    print_events(session, page["gprEvents"]["nodes"].as_array().map(Vec::as_slice).unwrap_or_default());
    if !args.follow {
        return Ok(());
    }
    // New events, as they are stored: the page after the last one seen, every second.
    let mut cursor = page["gprEvents"]["pageInfo"]["endCursor"].as_str().map(str::to_owned);
    if cursor.is_none() {
        let newest = session.run::<EgsCliEvents>(vars(None, None, Some(1))).await?;
        cursor = newest["gprEvents"]["pageInfo"]["endCursor"].as_str().map(str::to_owned);
    }
    loop {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let page = session.run::<EgsCliEvents>(vars(Some(100), cursor.clone(), None)).await?;
        print_events(session, page["gprEvents"]["nodes"].as_array().map(Vec::as_slice).unwrap_or_default());
        if let Some(end) = page["gprEvents"]["pageInfo"]["endCursor"].as_str() {
            cursor = Some(end.to_owned());
        }
        use std::io::Write;
        let _ = std::io::stdout().flush();
    }
}

async fn gpus(session: &Session, args: GpusArgs) -> Result<()> {
    let order = if args.hot { egs_cli_hot_gpus::GpuOrder::HOT_SPOTS_FIRST } else { egs_cli_hot_gpus::GpuOrder::ID };
    let page = session.run::<EgsCliHotGpus>(egs_cli_hot_gpus::Variables { first: Some(i64::from(args.first)), order_by: order }).await?;
    let gpus = page["gpus"]["nodes"].clone();
    match session.output {
        Output::Json => print_json(&gpus),
        Output::Table => {
            let rows: Vec<Vec<String>> = gpus
                .as_array()
                .into_iter()
                .flatten()
                .map(|g| {
                    let s = &g["latestSample"];
                    vec![
                        text(&g["node"]["name"]),
                        text(&g["index"]),
                        text(&g["model"]),
                        text(&s["temperature"]),
                        text(&s["power"]),
                        text(&s["util"]),
                        text(&s["time"]),
                    ]
                })
                .collect();
            table::print(&["NODE", "GPU", "MODEL", "TEMP °C", "POWER W", "UTIL %", "SAMPLED"], &rows);
        }
    }
    Ok(())
}

/// `CLUSTER/INSTANCE_TYPE/GPU_SHAPE=COUNT` as a what-if pool change, the cluster by name or id.
fn pool_change(clusters: &Value, given: &str) -> Result<egs_cli_what_if::WhatIfNodesInput> {
    let usage = || Failure::Usage(format!("`{given}`: give CLUSTER/INSTANCE_TYPE/GPU_SHAPE=COUNT"));
    let (pool, count) = given.rsplit_once('=').ok_or_else(usage)?;
    let mut parts = pool.splitn(3, '/');
    let (cluster, instance_type, gpu_shape) = (parts.next().ok_or_else(usage)?, parts.next().ok_or_else(usage)?, parts.next().ok_or_else(usage)?);
    let cluster_id = id_named(clusters, cluster).ok_or_else(|| Failure::Usage(format!("no cluster named `{cluster}`")))?;
    let count: i64 = count.parse().map_err(|_| usage())?;
    Ok(egs_cli_what_if::WhatIfNodesInput { cluster_id, instance_type: instance_type.into(), gpu_shape: gpu_shape.into(), count })
}

async fn what_if(session: &Session, args: WhatIfArgs) -> Result<()> {
    use egs_cli_what_if::{WhatIfChangeInput, WhatIfInput, WhatIfPriorityInput};
    let clusters = if args.add_nodes.is_empty() && args.remove_nodes.is_empty() {
        Value::Null
    } else {
        session.run::<EgsCliClusters>(egs_cli_clusters::Variables).await?["clusters"].clone()
    };
    let mut changes = Vec::new();
    for given in &args.add_nodes {
        changes.push(WhatIfChangeInput { add_nodes: Some(pool_change(&clusters, given)?), ..Default::default() });
    }
    for given in &args.remove_nodes {
        changes.push(WhatIfChangeInput { remove_nodes: Some(pool_change(&clusters, given)?), ..Default::default() });
    }
    for node in &args.cordon {
        changes.push(WhatIfChangeInput { cordon_node: Some(node.clone()), ..Default::default() });
    }
    for given in &args.priority {
        let (gpr_id, priority) = given.split_once('=').ok_or_else(|| Failure::Usage(format!("`{given}`: give GPR_ID=PRIORITY")))?;
        let priority = priority.parse().map_err(|_| Failure::Usage(format!("`{given}`: the priority is a number from 1 to 300")))?;
        changes.push(WhatIfChangeInput { gpr_priority: Some(WhatIfPriorityInput { gpr_id: gpr_id.into(), priority }), ..Default::default() });
    }
    if changes.is_empty() {
        return Err(Failure::Usage("weigh at least one change: --add-nodes, --remove-nodes, --cordon or --priority".into()));
    }
    let moves = session.run::<EgsCliWhatIf>(egs_cli_what_if::Variables { input: WhatIfInput { changes } }).await?["whatIf"].clone();
    match session.output {
        Output::Json => print_json(&moves),
        Output::Table => {
            let rows: Vec<Vec<String>> = moves
                .as_array()
                .into_iter()
                .flatten()
                .map(|m| {
                    let shift = m["promiseShiftSeconds"].as_i64().map_or_else(String::new, |s| {
                        let sign = if s < 0 { "-" } else { "+" };
                        format!("{sign}{}", egs_wire::duration::format_human(s.abs()))
                    });
                    vec![
                        text(&m["gpr"]["name"]),
                        text(&m["gpr"]["slice"]["name"]),
                        text(&m["promiseBefore"]),
                        text(&m["promiseAfter"]),
                        shift,
                        text(&m["expectedAfter"]),
                    ]
                })
                .collect();
            table::print(&["GPR", "SLICE", "PROMISE NOW", "PROMISE AFTER", "SHIFT", "EXPECTED AFTER"], &rows);
        }
    }
    Ok(())
}
