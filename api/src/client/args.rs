//! The client commands' flags.

use clap::{Args, Subcommand, ValueEnum};
use std::path::PathBuf;

/// Where to send requests, as whom, and how to print answers; shared by every client command.
#[derive(Args, Debug, Clone)]
pub struct Connection {
    /// The gateway's URL, e.g. `http://localhost:8080` (default: the one `egs login` saved).
    #[arg(long, env = "EGS_SERVER", global = true)]
    pub server: Option<String>,
    /// An access token (default: `EGS_TOKEN`, else the one `egs login` saved). On the command
    /// line it is visible to every user of the machine (`ps`): prefer `EGS_TOKEN` or
    /// `egs login --token-file`.
    #[arg(long, global = true)]
    pub token: Option<String>,
    /// Send the token over plain `http://` to a host other than this machine (it can then be
    /// read on the way).
    #[arg(long, global = true)]
    pub insecure_http: bool,
    /// Where `egs login` keeps the server and token (default `~/.config/egs/cli.json`).
    #[arg(long, env = "EGS_CONFIG", global = true)]
    pub config: Option<PathBuf>,
    /// `table` for people, `json` for scripts (the data as the API gives it).
    #[arg(long, short = 'o', value_enum, default_value_t = Output::Table, global = true)]
    pub output: Output,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum Output {
    Table,
    Json,
}

#[derive(Subcommand, Debug)]
pub enum ClientCommand {
    /// Check a token against a gateway and keep both for the next commands.
    Login(LoginArgs),
    /// GPU Provision Requests: create, list, show, edit, cancel, release, extend, wait times.
    Gpr {
        #[command(subcommand)]
        command: GprCommand,
        #[command(flatten)]
        connection: Connection,
    },
    /// GPR events, newest last; `--follow` keeps printing new ones.
    Events(EventsArgs),
    /// GPUs with their latest samples, hot spots first with `--hot`.
    Gpus(GpusArgs),
    /// Admins: which waiting GPRs' promises would move if nodes were added, removed or
    /// cordoned, or a GPR raised; changes nothing.
    WhatIf(WhatIfArgs),
}

#[derive(Args, Debug)]
pub struct WhatIfArgs {
    /// More nodes in a pool: `CLUSTER/INSTANCE_TYPE/GPU_SHAPE=COUNT` (the cluster by name or id);
    /// repeatable.
    #[arg(long = "add-nodes", value_name = "POOL=COUNT")]
    pub add_nodes: Vec<String>,
    /// Fewer nodes in a pool, the same way.
    #[arg(long = "remove-nodes", value_name = "POOL=COUNT")]
    pub remove_nodes: Vec<String>,
    /// A node cordoned, by id; repeatable.
    #[arg(long, value_name = "NODE_ID")]
    pub cordon: Vec<String>,
    /// A waiting GPR at another priority: `GPR_ID=PRIORITY`; repeatable.
    #[arg(long, value_name = "GPR_ID=PRIORITY")]
    pub priority: Vec<String>,
    #[command(flatten)]
    pub connection: Connection,
}

impl ClientCommand {
    /// Whether this is a client command (it talks to a gateway over the API).
    pub fn connection(&self) -> &Connection {
        match self {
            ClientCommand::Login(args) => &args.connection,
            ClientCommand::Gpr { connection, .. } => connection,
            ClientCommand::Events(args) => &args.connection,
            ClientCommand::Gpus(args) => &args.connection,
            ClientCommand::WhatIf(args) => &args.connection,
        }
    }
}

#[derive(Args, Debug)]
pub struct LoginArgs {
    /// Read the token from this file (`-` for standard input) instead of `--token`.
    #[arg(long)]
    pub token_file: Option<PathBuf>,
    #[command(flatten)]
    pub connection: Connection,
}

#[derive(Subcommand, Debug)]
pub enum GprCommand {
    /// Ask for nodes: `--nodes` and `--duration`, or a `--template` (profile) that gives them.
    Create(CreateArgs),
    /// Your GPRs (every GPR for admins), newest first.
    List(ListArgs),
    /// One GPR.
    Show(IdArgs),
    /// Change a pending GPR (only the flags given change).
    Edit(EditArgs),
    /// Withdraw a pending GPR.
    Cancel(IdArgs),
    /// Give a provisioned GPR's nodes back now.
    Release(IdArgs),
    /// Make a provisioned GPR's window longer.
    Extend(ExtendArgs),
    /// When a GPR like this would start, in every pool the slice may use.
    WaitTime(WaitTimeArgs),
}

#[derive(Args, Debug)]
pub struct IdArgs {
    /// The GPR's id.
    pub id: String,
}

/// What a GPR asks for (create and wait-time take the same).
#[derive(Args, Debug, Clone)]
pub struct Ask {
    /// The slice, by name or id.
    #[arg(long)]
    pub slice: String,
    /// A profile published to the slice, by name or id: what the other flags leave out.
    #[arg(long)]
    pub template: Option<String>,
    /// Whole nodes.
    #[arg(long)]
    pub nodes: Option<i32>,
    /// The reserved window, e.g. `6h` or `PT6H`.
    #[arg(long)]
    pub duration: Option<String>,
    /// GPU shape (default: the scheduler picks).
    #[arg(long)]
    pub shape: Option<String>,
    #[arg(long)]
    pub gpus_per_node: Option<i32>,
    /// 1–300, higher runs first.
    #[arg(long)]
    pub priority: Option<i32>,
}

#[derive(Args, Debug)]
pub struct CreateArgs {
    /// A DNS label, e.g. `llama-finetune-3`.
    #[arg(long)]
    pub name: String,
    #[command(flatten)]
    pub ask: Ask,
    /// Release after the GPUs stay idle this long (default: the template's or the slice's).
    #[arg(long)]
    pub idle_timeout: Option<String>,
    /// `key=value`; repeatable.
    #[arg(long = "label")]
    pub labels: Vec<String>,
    /// May not be preempted by higher priorities.
    #[arg(long)]
    pub not_preemptible: bool,
    /// Wait until it is provisioned: exit 0 then, 6 if it fails, is cancelled or rejected, or
    /// `--wait-timeout` passes first.
    #[arg(long)]
    pub wait: bool,
    #[arg(long, default_value = "24h")]
    pub wait_timeout: String,
}

#[derive(Args, Debug)]
pub struct ListArgs {
    /// Only this slice's, by name or id.
    #[arg(long)]
    pub slice: Option<String>,
    /// Only in these phases (e.g. `QUEUED`); repeatable.
    #[arg(long = "phase")]
    pub phases: Vec<String>,
    /// At most this many (newest first).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub limit: u32,
}

#[derive(Args, Debug)]
pub struct EditArgs {
    pub id: String,
    #[arg(long)]
    pub name: Option<String>,
    #[arg(long)]
    pub nodes: Option<i32>,
    #[arg(long)]
    pub duration: Option<String>,
    #[arg(long)]
    pub priority: Option<i32>,
    #[arg(long)]
    pub shape: Option<String>,
}

#[derive(Args, Debug)]
pub struct ExtendArgs {
    pub id: String,
    /// How much longer, e.g. `30m`.
    #[arg(long)]
    pub by: String,
}

#[derive(Args, Debug)]
pub struct WaitTimeArgs {
    #[command(flatten)]
    pub ask: Ask,
}

#[derive(Args, Debug)]
pub struct EventsArgs {
    /// Only this GPR's (by id).
    #[arg(long)]
    pub gpr: Option<String>,
    /// Only this slice's, by name or id.
    #[arg(long)]
    pub slice: Option<String>,
    /// Only these kinds (e.g. `PROVISIONED`); repeatable.
    #[arg(long = "kind")]
    pub kinds: Vec<String>,
    /// Only those whose message or actor contains this (ignoring case).
    #[arg(long)]
    pub text: Option<String>,
    /// How many of the newest to print first.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(i32).range(0..=100))]
    pub last: i32,
    /// Keep printing new events as they happen (until interrupted).
    #[arg(long, short = 'f')]
    pub follow: bool,
    #[command(flatten)]
    pub connection: Connection,
}

#[derive(Args, Debug)]
pub struct GpusArgs {
    /// Hottest first (then highest power).
    #[arg(long)]
    pub hot: bool,
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(i32).range(1..=100))]
    pub first: i32,
    #[command(flatten)]
    pub connection: Connection,
}
