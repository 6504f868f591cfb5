//! The `Mailer` port over SMTP (lettre): e-mail notification channels send through the
//! operator's server, named by `EGS_SMTP_URL`.

use async_trait::async_trait;
use egs_domain::outbound::Outcome;
use egs_domain::ports::Mailer;
use lettre::message::{Mailbox, header::ContentType};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use std::time::Duration;

pub struct SmtpMailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
    /// Scheme, host and port, for logs (the URL may hold a password).
    shown: String,
}

impl SmtpMailer {
    /// From `smtp://`, `smtp://…?tls=required` or `smtps://` URLs; errors never echo the URL.
    pub fn new(url: &str, from: &str) -> anyhow::Result<Self> {
        let parsed = url::Url::parse(url.trim()).map_err(|_| anyhow::anyhow!("the SMTP URL is not a URL (smtp://host:port or smtps://…)"))?;
        let shown = format!("{}://{}:{}", parsed.scheme(), parsed.host_str().unwrap_or_default(), parsed.port().unwrap_or(25));
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(url.trim())
            .map_err(|e| anyhow::anyhow!("the SMTP URL {shown} cannot be used: {}", e.to_string().lines().next().unwrap_or_default()))?
            .timeout(Some(Duration::from_secs(15)))
            .build();
        let from: Mailbox = from.parse().map_err(|e| anyhow::anyhow!("`{from}` is not a sender address for notification e-mails: {e}"))?;
        Ok(Self { transport, from, shown })
    }

    pub fn shown(&self) -> &str {
        &self.shown
    }
}

#[async_trait]
impl Mailer for SmtpMailer {
    async fn send(&self, to: &str, subject: &str, body: &str) -> Outcome {
        let Ok(to) = to.parse::<Mailbox>() else { return Outcome::GiveUp(format!("`{to}` is not an e-mail address")) };
        let message = Message::builder().from(self.from.clone()).to(to).subject(subject).header(ContentType::TEXT_PLAIN).body(body.to_owned());
        let message = match message {
            Ok(message) => message,
            Err(error) => return Outcome::GiveUp(format!("the message cannot be built: {error}")),
        };
        match self.transport.send(message).await {
            Ok(_) => Outcome::Delivered,
            // 5xx: the server refuses this message or recipient for good; the rest may pass.
            Err(error) if error.is_permanent() => Outcome::GiveUp(format!("{} refused it: {error}", self.shown)),
            Err(error) => Outcome::Retry(format!("{}: {error}", self.shown)),
        }
    }
}
