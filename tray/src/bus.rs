//! The tray's one session-bus connection (Linux and the BSDs), kept: made with a bounded wait
//! for every method call ([`CALL_TIMEOUT`], not D-Bus's 25 s default, so a peer that takes a
//! call and never answers holds nothing up for long), watched, and made again with backoff
//! when it is lost (the bus daemon dropped us, or restarted). Whoever uses the bus (the
//! notifier, the tray item) follows the current connection through a `watch` channel and
//! sets itself up again on each new one.
//!
//! Without a session bus address there is nothing to connect to: said once, no retries.

use std::time::Duration;

use tokio::sync::watch;
use zbus::Connection;

/// The longest any D-Bus method call of ours waits for its answer.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(3);
/// The longest connecting (and authenticating) may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// The first wait before connecting again; it doubles up to [`RETRY_MAX`].
pub const RETRY_FIRST: Duration = Duration::from_millis(500);
/// The longest wait between two attempts.
pub const RETRY_MAX: Duration = Duration::from_secs(30);

/// The current connection (`None` while there is none).
pub type BusWatch = watch::Receiver<Option<Connection>>;

/// Connects now and keeps a connection for as long as the thread runs (must run inside a
/// `LocalSet`).
pub fn connect_and_keep() -> BusWatch {
    let (tx, rx) = watch::channel(None);
    tokio::task::spawn_local(keep(tx));
    rx
}

async fn keep(tx: watch::Sender<Option<Connection>>) {
    if std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_none_or(|a| a.is_empty()) {
        tracing::warn!(
            "no session bus (DBUS_SESSION_BUS_ADDRESS is not set): no notifications and no tray item"
        );
        return;
    }
    let mut wait = RETRY_FIRST;
    let mut said = false;
    loop {
        match connect().await {
            Ok(bus) => {
                tracing::info!("connected to the session bus");
                wait = RETRY_FIRST;
                said = false;
                if tx.send(Some(bus.clone())).is_err() {
                    return;
                }
                bus.closed().await;
                tracing::warn!("lost the session bus; connecting again");
                if tx.send(None).is_err() {
                    return;
                }
            }
            Err(error) => {
                if !said {
                    tracing::warn!(%error, "cannot connect to the session bus; trying again");
                    said = true;
                }
            }
        }
        tokio::time::sleep(wait).await;
        wait = (wait * 2).min(RETRY_MAX);
    }
}

async fn connect() -> Result<Connection, String> {
    let build = async {
        zbus::connection::Builder::session()
            .method_timeout(CALL_TIMEOUT)
            .build()
            .await
    };
    match tokio::time::timeout(CONNECT_TIMEOUT, build).await {
        Ok(Ok(bus)) => Ok(bus),
        Ok(Err(error)) => Err(error.to_string()),
        Err(_) => Err(format!(
            "the session bus did not answer in {} s",
            CONNECT_TIMEOUT.as_secs()
        )),
    }
}

/// Waits (at most about as long as connecting may take) for the first connection; returns
/// at once without a bus to wait for.
pub async fn first(bus: &mut BusWatch) {
    let limit = CONNECT_TIMEOUT + Duration::from_secs(1);
    let _ = tokio::time::timeout(limit, bus.wait_for(Option::is_some)).await;
}

/// The connection after the current one changed (`None` inside: the bus was lost);
/// `None` once nobody keeps a connection any more.
pub async fn next(bus: &mut BusWatch) -> Option<Option<Connection>> {
    bus.changed().await.ok()?;
    Some(bus.borrow_and_update().clone())
}
