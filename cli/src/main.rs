//! The `loadproof` binary: a thin `main` over `run`, which returns the exit code.

mod args;
mod audit_cmd;
mod bad_input;
mod buffers;
mod companions;
mod compare_cmd;
mod decompress;
mod fire;
mod gate;
mod halves;
mod http_client;
mod input;
mod key_cmd;
mod output;
mod plan_cmd;
mod playbook;
mod receipt_cmd;
mod render;
mod secret;
mod serve;
mod sim;
mod stream_out;
mod synth_cmd;
mod tls;
mod trace_cmd;
mod user_file;

use std::io::{self, Write};
use std::process::ExitCode;

use clap::Parser;

use args::{
    Cli, Command, KeyCommand, PlanSubcommand, PlaybookCommand, ReceiptCommand, TraceCommand,
};

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    match &cli.command {
        Command::Trace(TraceCommand::Inspect(a)) => trace_cmd::inspect(a, &mut out)?,
        Command::Trace(TraceCommand::Synth(a)) => synth_cmd::synth(a, &mut out)?,
        Command::Sim(a) => sim::run(a)?,
        Command::Gate(a) => gate::run(a)?,
        Command::Key(KeyCommand::New(a)) => key_cmd::new(a, &mut out)?,
        Command::Fire(a) => {
            let code = fire::fire(a, &mut out)?;
            out.flush()?;
            return Ok(code);
        }
        Command::Receipt(r) => {
            let code = match r {
                ReceiptCommand::Import(a) => receipt_cmd::import(a, &mut out)?,
                ReceiptCommand::Verify(a) => receipt_cmd::verify(a, &mut out)?,
                ReceiptCommand::Audit(a) => audit_cmd::audit(a, &mut out)?,
                ReceiptCommand::CaptureCheck(a) => audit_cmd::capture_check(a, &mut out)?,
                ReceiptCommand::Qualify(a) => audit_cmd::qualify(a, &mut out)?,
                ReceiptCommand::Compare(a) => compare_cmd::compare_cmd(a, &mut out)?,
                ReceiptCommand::Upgrade(a) => receipt_cmd::upgrade(a, &mut out)?,
                ReceiptCommand::Extract(a) => receipt_cmd::extract(a, &mut out)?,
            };
            out.flush()?;
            return Ok(code);
        }
        Command::Playbook(p) => {
            let code = match p {
                PlaybookCommand::Row(a) => playbook::row(a, &mut out)?,
                PlaybookCommand::Match(a) => playbook::matches(a, &mut out)?,
                PlaybookCommand::Examples(a) => playbook::examples(a, &mut out)?,
                PlaybookCommand::Publish(a) => playbook::publish(a, &mut out)?,
            };
            out.flush()?;
            return Ok(code);
        }
        Command::Plan(p) => {
            let code = match &p.check {
                Some(PlanSubcommand::Check(a)) => plan_cmd::check(a, &mut out)?,
                None => plan_cmd::plan(&p.make, &mut out)?,
            };
            out.flush()?;
            return Ok(code);
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
    })
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            #[allow(clippy::print_stderr)]
            {
                eprintln!("loadproof: error: {err:#}");
            }
            ExitCode::from(2)
        }
    }
}
